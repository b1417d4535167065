"""The data plane: WebSocket protocol, Project resolution, pools and sessions."""
