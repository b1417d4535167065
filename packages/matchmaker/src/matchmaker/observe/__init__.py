"""What an operator watches: Prometheus metrics, structured logs, the live view's shapes.

Nothing here imports the core, the data plane or the control plane: the data
plane records into :class:`~matchmaker.observe.metrics.Metrics`, the process
shell hands the control plane read-only functions built on it.
"""
