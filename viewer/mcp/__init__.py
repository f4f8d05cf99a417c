"""The MCP server: read-only tools and resources over the sessions, for agents to read their own history.

`agentview mcp DIR` serves them over stdio (stdio.py); `agentview serve` at /mcp (http.py). Both answer with the
same tools (server.py), built on the read functions the pages use (reads/, web/resource_views.py).
"""
