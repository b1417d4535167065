"""Wire messages of the data plane, as msgspec Structs (``docs/protocol.md`` is their prose form).

Every inbound frame is one JSON object decoded once by
:data:`~matchmaker.data.protocol.requests.REQUEST_DECODER` into the
:data:`~matchmaker.data.protocol.requests.Request` tagged union (tag field
``type``, unknown fields refused). Outbound frames are
:class:`~matchmaker.data.protocol.replies.Reply` (the answer to a request,
echoing its ``id``) and :class:`~matchmaker.data.protocol.events.EventFrame`
subclasses (pushes; the connection adds a per-client ``seq`` when it sends
them). ::

    payloads.py   what each request carries in ``data`` (HelloData, PoolEnterData, ...)
    requests.py   the request envelopes, the Request union and its decoder, decode_envelope
    replies.py    Reply, ErrorBody and each reply's data (HelloReply, ...); encode
    events.py     the pushes (SessionCreated, SessionMessage, ...) and ModeNotice

The package imports nothing itself: each module is imported where it is used.
"""
