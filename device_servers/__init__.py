"""Device servers: one MCP server per instrument, a twin, a ledger and an adapter each."""
