"""The agent tools, written once (:mod:`.registry`: the list and the one way to call a tool)
over their argument parsers and schemas; every surface (REST, GraphQL, MCP, CLI) adapts them."""
