"""Gryvia for agents: the Model Context Protocol server of `gryvia mcp` (docs/agent-skill.md)."""
