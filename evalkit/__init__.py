"""evalkit: measure LLM agents."""
