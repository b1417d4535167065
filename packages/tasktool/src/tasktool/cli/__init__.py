"""The command-line front end: the Click group (:mod:`tasktool.cli.main`) and its commands."""

__all__ = []
