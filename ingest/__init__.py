"""OTLP receivers, decoding, agent attribution and the batching writer."""
