"""What a client (the CLI, the SDK) says when the address it was given answers, but not as evalkit's API does.

The usual cause is the address itself: EVALKIT_URL pointed at an OTLP port (4318 answers a 404 of its own to
`/api/...`) or at another server on the port. Its 404 alone reads as "no such experiment"; this says which address
to use instead. No imports: the thin SDK loads it without the server's packages.
"""

from __future__ import annotations

import json

# The statuses a server that is not evalkit's API answers an /api route with (evalkit answers its own 404s and
# 405s in JSON, saying what is missing).
NOT_THE_API_STATUSES = (404, 405)


def service_message(payload: bytes) -> str | None:
    """The message of evalkit's JSON error body (`{"error": {"message": ...}}`), or None for any other body."""
    try:
        return str(json.loads(payload)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return None


def not_the_api(url: str, path: str, answered: str) -> str:
    return (f"{url} {answered} to {path}, not as evalkit's API does: is {url} the API's address? "
            "`evalkit serve` prints it (\"API on http://127.0.0.1:8000\"; its OTLP ports, 4317 and 4318, only take "
            "spans); point EVALKIT_URL (or `evalkit login URL`) at it")
