"""What moving clients and sessions between processes does to the core's tables."""
