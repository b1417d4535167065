"""The control plane: the ``/admin`` HTTP API on the management port, and ``/metrics``."""

from __future__ import annotations

from matchmaker.control.app import create_control_app
from matchmaker.control.live import Observers
from matchmaker.control.metrics_app import create_metrics_app
from matchmaker.control.openapi import openapi_document

__all__ = ["Observers", "create_control_app", "create_metrics_app", "openapi_document"]
