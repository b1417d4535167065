"""The value rules both planes share, so a client, a token and an operator meet one rule.

attributes.py  an attribute's value (a client's in ``hello``, a token's mapped claim)
filters.py     a pool filter (an ad-hoc pool on the data plane, a policy in ``/admin``)
teams.py       a pool's teams, balance and regions (both planes, as filters)
"""
