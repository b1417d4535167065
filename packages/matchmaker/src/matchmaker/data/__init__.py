"""The data plane: the WebSocket shell around :mod:`matchmaker.core`, and its app.

::

    app.py          create_data_app: /ws, /healthz, /readyz, the playground (ASGI and frames)
    plane.py        DataPlane: the core, composed with one collaborator per job
    jobs/           the plane's jobs: registry, delivery, timers, stop, endpoints, peers
    connection.py   one WebSocket: frames decoded into core commands, effects carried out
    writer.py       a connection drained by a task through an ASGI-style send
    direct.py       a connection written straight to a frame server's socket (picows)
    protocol/       the wire Structs (docs/protocol.md): payloads, requests, replies, events
    translate.py    wire Structs to core commands, core answers and events to wire Structs
    runtime.py      tune_gc, raise_open_file_limit: process-wide settings for the launcher

The package imports nothing itself, so importing one module (say the wire
Structs) does not load the server library.
"""
