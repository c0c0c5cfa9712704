"""recallmem over the Model Context Protocol: the memory tools (``tools``) and the server
that serves them to any MCP client (``server``: stdio for ``recallmem mcp``; the service
mounts the same server over streamable HTTP, :mod:`recallmem.server.routes.mcp_routes`)."""
