"""The web UI on the API port: server-rendered pages over the same services as the JSON API (docs/ui.md)."""
