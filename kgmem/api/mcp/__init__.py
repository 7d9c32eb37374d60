"""MCP: the agent tools, prompts and resources over stdio and streamable HTTP (:mod:`.server`)."""
