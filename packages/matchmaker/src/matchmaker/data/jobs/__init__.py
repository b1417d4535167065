"""The data plane's jobs, one collaborator each, composed by :class:`~..plane.DataPlane`.

::

    hooks.py        ClusterHooks: where a cluster member plugs in (--cluster)
    registry.py     Registry: the open connections, which client is on which
    delivery.py     Deliveries: events numbered and queued on their recipients
    waits.py        MatchWaits: the wait and match metrics read off delivered events
    timers.py       Timers: entry expiry and resume graces, heartbeats, the stop
    stopping.py     Stopping: a stop's close (3001 handed over, else 1001), the drain
    endpoints.py    AsgiEndpoint (/ws over ASGI), FrameSockets (picows's connections)
    writers.py      Writers: a WriterConnection opened with its writer task
    peers.py        Peers: server-side WebRTC peers, each data channel a connection
    remote.py       RemoteResumes: resumes across cluster members
    tasks.py        Background: the one task-spawning helper; a crash is logged
    clock.py        wall_clock_ms: the core's clock when no frame brought the time
"""
