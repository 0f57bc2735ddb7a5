"""Emitter-specific readers of span attributes (OTel GenAI, OpenInference, OpenLLMetry, ...)."""
