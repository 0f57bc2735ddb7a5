"""Evaluators: built-in checks, HTTP evaluators and the LLM judge."""
