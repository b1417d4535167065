"""What a connection may do, checked before the engine acts on it.

checks.py     a request's own fields: a client's attributes at hello, an ad-hoc pool's rules
tokens.py     a ``jwt`` credential checked against the Project's keys (the clock passed in)
ratelimit.py  the per-connection token bucket
"""
