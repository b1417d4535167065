"""``matchmaker simulate``: replay a trace of arrivals through the real matching core.

A designer tunes a policy here before players see it: the same
:class:`~matchmaker.core.Matchmaker` the server runs (its widening windows, fill
timeouts, TTLs and tie-breaks), on a simulated clock stepped from event to
event, as fast as the CPU allows. ::

    files.py      the policy file (as /admin takes it), the trace, outputs written whole
    run.py        the one caller of the core: a trace in, the groups formed out
    study.py      every policy checked, replayed and summarised
    stats.py      waits and spreads, the JSON document
    table.py      the same side by side (rich)
    main.py       the command: files in, figures printed, the report written
    report.py     one self-contained HTML page of charts (inline SVG)
"""
