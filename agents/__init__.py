"""Labwright agents: the task agent (plans, approvals, checks) and per-instrument device agents.

Agents reach instruments only over MCP; they may import ``device_servers.contract``,
``policies`` and ``state_store``, nothing else of the device servers.
"""
