"""An image a trajectory references (`evalkit-span://…`, trajectory/media.py) read back over HTTP
(`GET /api/agents/{agent}/sessions/{id}/media?ref=…`) from a real capture (`openai-sdk_openinference_image`: a
6,566-character PNG data URL, over the inline limit, in turn one's question): the very bytes the model was sent, and a
clear error for every reference that names no image this session holds."""

from __future__ import annotations

import asyncio
import base64
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import pytest

from tests.captures import corpus
from tests.trajectory_service.conftest import ADMIN_TOKEN, Service, shared_svc
from tests.trajectory_service.test_capture_sdks_and_sessions import _replayed

pytestmark = pytest.mark.asyncio(loop_scope="module")
CAPTURE = "openai-sdk_openinference_image"


@pytest.fixture
def svc(module_service: Service) -> Service:
    return shared_svc(module_service)


def _get(url: str) -> tuple[int, bytes, dict[str, str]]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


def _sent_data_urls(log: list[dict[str, Any]]) -> list[str]:
    """Every data URL of an image the model was sent, each once, in the order first sent."""
    found: list[str] = []
    for entry in log:
        for message in entry["request"]["messages"]:
            for part in message.get("content") if isinstance(message.get("content"), list) else ():
                url = (part.get("image_url") or {}).get("url", "") if part.get("type") == "image_url" else ""
                if url.startswith("data:") and url not in found:
                    found.append(url)
    return found


async def test_a_referenced_image_is_read_back_as_the_bytes_the_model_was_sent(svc: Service) -> None:
    agent, document = await _replayed(svc, CAPTURE)
    media = f"{svc.api}/api/agents/{agent}/sessions/{corpus.load(CAPTURE).session_id}/media?ref="
    question = next(step for step in document["steps"] if step["source"] == "user")
    (reference,) = question["extra"]["media"]
    status, body, headers = await asyncio.to_thread(_get, media + urllib.parse.quote(reference["path"], safe=""))
    assert status == 200, body[:300]
    first_png = _sent_data_urls(corpus.load(CAPTURE).llm_log)[0]
    assert body == base64.b64decode(first_png.split(",", 1)[1])
    assert body.startswith(b"\x89PNG") and len(body) == reference["bytes"]
    assert headers["Content-Type"] == "image/png" and headers["X-Content-Type-Options"] == "nosniff"
    assert "private" in headers["Cache-Control"]


async def test_a_reference_naming_no_image_of_the_session_says_what_is_wrong(svc: Service) -> None:
    agent, document = await _replayed(svc, CAPTURE)
    session = corpus.load(CAPTURE).session_id
    media = f"{svc.api}/api/agents/{agent}/sessions/{session}/media?ref="
    question = next(step for step in document["steps"] if step["source"] == "user")
    path = question["extra"]["media"][0]["path"]
    trace, span, where, n = path.removeprefix("evalkit-span://").split("/")
    assert (where, n) == ("input", "0")  # the first call's first image

    async def error(ref: str, url: str = media) -> tuple[int, str]:
        status, body, _ = await asyncio.to_thread(_get, url + urllib.parse.quote(ref, safe=""))
        return status, body.decode()

    status, text = await error("https://example.com/cat.png")
    assert status == 400 and "is not an image reference of a trajectory" in text
    status, text = await error(f"evalkit-span://{trace}/{span}/output/0")
    assert status == 400 and "<input or result>" in text
    # The second media part of the first call's input is the https photo: named, not held.
    status, text = await error(f"evalkit-span://{trace}/{span}/input/1")
    assert status == 404 and "holds no data (it names https://" in text
    status, text = await error(f"evalkit-span://{trace}/{span}/input/7")
    assert status == 404 and "holds 2 media part(s), so none numbered 7" in text
    status, text = await error(f"evalkit-span://{trace}/{'0' * 16}/input/0")
    assert status == 404 and f"holds no span {'0' * 16}" in text
    status, text = await error(f"evalkit-span://{'0' * 32}/{span}/input/0")
    assert status == 404 and f"is not one of session {session}'s" in text
    other = f"{svc.api}/api/agents/{agent}/sessions/no-such-session/media?ref="
    status, text = await error(path, other)
    assert status == 404 and "has no session 'no-such-session'" in text
