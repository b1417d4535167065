"""Where a member's sessions and clients live when members come and go, sans I/O.

    hosting.py     Hosting: a session hosted where most of its members are connected
                   (moved there when it forms), re-hosted when its host dies
    drain.py       Drain: a stopping member hands its clients and sessions over

Both work on the routing state (:class:`~matchmaker.cluster.routes.Routes`) like the
other collaborators of :class:`~matchmaker.cluster.routing.Router`.
"""
