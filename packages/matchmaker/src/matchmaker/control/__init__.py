"""The control plane: the ``/admin`` HTTP API on the management port."""

from __future__ import annotations

from matchmaker.control.app import create_control_app
from matchmaker.control.openapi import openapi_document

__all__ = ["create_control_app", "openapi_document"]
