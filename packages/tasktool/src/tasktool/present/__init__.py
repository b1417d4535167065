"""The present layer: tables, JSON/YAML output and graph rendering (rich loaded lazily).

Never imports a front end or a server library.
"""
