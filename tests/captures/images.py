"""The images each LLM call was sent anew, read from the fake LLM's log, and whether a trajectory shows each, once.

An image the model was sent is a question's (an image part of a user message: OpenAI's `image_url` / `input_image`,
Anthropic's `image` block, Gemini's `inlineData` / `fileData` part) or a tool's. A tool's image is sent inside its
result (an Anthropic `tool_result` block's content, a Responses `function_call_output`'s output, a Gemini
`functionResponse`'s parts, a tool message's content parts) or, where the tool channel is text only, forwarded by the
framework in a user message after the results: pydantic-ai's `<pyai:tool_result …>` frame, Agno's "The tool call above
generated the attached media.", smolagents' `Observation:` message, or a user message of images alone right after the
tool results (ADK through LiteLLM, Strands' OpenAIModel).

A request re-sends its conversation so far; what it sends anew comes after the last answer it re-sends (every message
of a first call, or of a Responses call whose conversation the provider holds): re-sent history counts once, and an
image a framework attaches anew to each step (smolagents re-attaches the task's images to every observation) counts
each time, as `questions.asked_anew` counts questions.

`missing_images` checks that the trajectory shows each image sent anew as one ATIF image part (never in a copied step):
a question's on a user step, one sent inside a tool's result on a tool result, one a framework forwarded on a tool
result or a user step (no span may say which tool's it was: Agno's message after several tools). Its bytes must be what
the model was sent: an inline data URL's, a reference's (`evalkit-span://…`) read back from its span
(`media.referenced_image`), or the same URL. A part showing an image more times than the model was sent it, or one it
never was, is a problem too.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_to_bytes

from tests.captures import questions
from tests.captures.corpus import all_trajectories

Key = tuple[str, str]  # ("bytes", sha256 of the image's bytes) or ("url", the URL or file id the model was sent)
USER, RESULT = "a user step", "a tool result"
# Reads a reference back: the image's bytes, or why it holds none (a str).
Reader = Callable[[str], bytes | str]
_STANDARD_BASE64 = str.maketrans("-_", "+/")  # the URL-safe alphabet's two characters, as the standard one writes them


@dataclass(frozen=True)
class SentImage:
    seq: int  # the call that sent it anew
    n: int  # its position among the images that call sent anew, from 0
    key: Key
    size: str  # how a problem names it: "a 4,908-byte image/png", or its URL
    places: tuple[str, ...]  # where the trajectory may show it: USER, RESULT

    @property
    def name(self) -> str:
        whose = "question" if self.places == (USER,) else "tool"
        return f"call {self.seq}'s image {self.n} ({self.size}, a {whose}'s)"


def _data_url_key(url: str) -> tuple[Key, str] | None:
    header, comma, payload = url[5:].partition(",")
    if not comma:
        return None
    try:
        data = base64.b64decode(payload) if header.endswith(";base64") else unquote_to_bytes(payload)
    except (binascii.Error, ValueError):
        return None
    return _bytes_key(data, header.split(";", 1)[0] or "image")


def _bytes_key(data: bytes, media_type: str) -> tuple[Key, str]:
    return ("bytes", hashlib.sha256(data).hexdigest()), f"a {len(data):,}-byte {media_type}"


def _url_key(url: str) -> tuple[Key, str] | None:
    if not url:
        return None
    if url.startswith("data:"):
        return _data_url_key(url)
    return ("url", url), url if len(url) <= 80 else url[:77] + "..."


def _image_of(part: Any) -> tuple[Key, str] | None:
    """The image a content part sends, in any of the APIs' shapes; None for any other part."""
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if kind == "image_url":  # OpenAI chat completions
        given = part.get("image_url")
        return _url_key(given.get("url", "") if isinstance(given, dict) else str(given or ""))
    if kind == "input_image":  # OpenAI Responses
        return _url_key(str(part.get("image_url") or "")) or (
            (("url", f"file:{part['file_id']}"), f"file {part['file_id']}") if part.get("file_id") else None)
    if kind == "image":  # Anthropic messages
        source = part.get("source") or {}
        if source.get("type") == "base64":
            try:
                return _bytes_key(base64.b64decode(source.get("data") or ""), str(source.get("media_type")))
            except (binascii.Error, ValueError):
                return None
        if source.get("type") == "url":
            return _url_key(str(source.get("url") or ""))
        if source.get("file_id"):
            return ("url", f"file:{source['file_id']}"), f"file {source['file_id']}"
        return None
    inline = part.get("inlineData") or part.get("inline_data")  # Gemini
    if isinstance(inline, dict):
        media_type = str(inline.get("mimeType") or inline.get("mime_type") or "")
        if not media_type.startswith("image/"):
            return None
        try:
            # Bytes in proto3 JSON, either base64 alphabet: google-genai sends the URL-safe one (pydantic's bytes).
            data = str(inline.get("data") or "").translate(_STANDARD_BASE64)
            return _bytes_key(base64.b64decode(data), media_type)
        except (binascii.Error, ValueError):
            return None
    stored = part.get("fileData") or part.get("file_data")
    if isinstance(stored, dict) and str(stored.get("mimeType") or stored.get("mime_type") or "").startswith("image/"):
        return _url_key(str(stored.get("fileUri") or stored.get("file_uri") or ""))
    return None


def _images_in(content: Any) -> list[tuple[Key, str]]:
    found = [_image_of(part) for part in content] if isinstance(content, list) else []
    return [image for image in found if image is not None]


# An image of a request's message: what it is, how a problem names it, where the trajectory may show it, and the index
# of the message's top-level part that holds it.
Found = tuple[Key, str, tuple[str, ...], int]
# One message of a request as the check reads it: whether it is an answer (the model's, re-sent), and its images.
Read = tuple[bool, list[Found]]


def _in_results(content: Any, blocks: Iterable[int], inner: Callable[[dict[str, Any]], Any]) -> list[Found]:
    """The images inside the tool results at `blocks` of a message's parts (`inner`: a result's own parts)."""
    return [(key, size, (RESULT,), index) for index in blocks
            for key, size in _images_in(inner(content[index]))]


def _user_images(parts: list[Any], skip: set[int], after_result: bool) -> tuple[list[Found], bool]:
    """The images of a user message's parts (but the tool results at `skip`) and where each may be shown, and whether
    the message is a tool's result as the framework forwards it. An image is a question's or a forwarded result's as
    the words nearest it are (`questions._user_text`): the text before it (a question's images follow its text,
    pydantic-ai's and Agno's framings come first), else the text after it (smolagents puts an observation's images
    before its text, and its merged messages run an observation into the next task). A message of images alone right
    after the tool results is those results' images."""
    texts = [(i, questions._user_text(str(p["text"]))) for i, p in enumerate(parts) if i not in skip
             and isinstance(p, dict) and p.get("type", "text") in ("text", "input_text")
             and isinstance(p.get("text"), str) and p["text"].strip()]
    found: list[Found] = []
    for index, part in enumerate(parts):
        image = None if index in skip else _image_of(part)
        if image is None:
            continue
        before = [kinds[-1][0] for i, kinds in texts if i < index and kinds]
        after = [kinds[0][0] for i, kinds in texts if i > index and kinds]
        alone = questions.RESULT if after_result else questions.QUESTION
        kind = before[-1] if before else after[0] if after else alone
        found.append((*image, (USER,) if kind == questions.QUESTION else (RESULT, USER), index))
    asked = any(kind == questions.QUESTION for _, kinds in texts for kind, _ in kinds)
    return found, not asked and (after_result or bool(texts))


def _chat_message(message: dict[str, Any], after_result: bool) -> tuple[Read, bool]:
    """An OpenAI chat completions' or Anthropic messages' message, and whether what follows comes after results."""
    role, content = message.get("role"), message.get("content")
    parts = content if isinstance(content, list) else []
    if role == "assistant":
        return (True, []), False
    if role in ("tool", "function"):
        return (False, [(key, size, (RESULT,), i) for key, size, _, i in _user_images(parts, set(), True)[0]]), True
    if role != "user":
        return (False, []), after_result
    results = {i for i, b in enumerate(parts) if isinstance(b, dict) and b.get("type") == "tool_result"}
    own, forwarded = _user_images(parts, results, after_result or bool(results))
    return (False, _in_results(parts, sorted(results), lambda b: b.get("content")) + own), bool(results) or forwarded


def _responses_item(item: dict[str, Any], after_result: bool) -> tuple[Read, bool]:
    kind, role = item.get("type"), item.get("role")
    if role == "assistant" or kind in ("function_call", "reasoning", "item_reference"):
        return (True, []), False
    if kind == "function_call_output":
        output = item.get("output")
        return (False, _in_results([{"output": output}], [0], lambda b: b["output"])), True
    if role == "user" and kind in (None, "message"):
        content = item.get("content")
        own, forwarded = _user_images(content if isinstance(content, list) else [], set(), after_result)
        return (False, own), forwarded and isinstance(content, list)
    return (False, []), after_result


def _gemini_content(content: dict[str, Any], after_result: bool) -> tuple[Read, bool]:
    if content.get("role") == "model":
        return (True, []), False
    given = content.get("parts")
    parts: list[Any] = given if isinstance(given, list) else []
    results = {i for i, p in enumerate(parts) if isinstance(p, dict)
               and ("functionResponse" in p or "function_response" in p)}
    own, forwarded = _user_images(parts, results, after_result or bool(results))
    inner = _in_results(parts, sorted(results),
                        lambda p: (p.get("functionResponse") or p.get("function_response") or {}).get("parts"))
    return (False, inner + own), bool(results) or forwarded


def _messages(api: str, request: dict[str, Any]) -> list[Any]:
    """A request's conversation as it sends it: its messages, input items or contents."""
    given = request.get("input") if api == "openai.responses" else (
        request.get("contents") if api == "gemini.generate_content" else request.get("messages"))
    return given if isinstance(given, list) else []


def _read(api: str, messages: list[Any]) -> list[Read]:
    reader = (_responses_item if api == "openai.responses" else
              _gemini_content if api == "gemini.generate_content" else _chat_message)
    read: list[Read] = []
    after_result = False
    for message in messages:
        if isinstance(message, dict):
            one, after_result = reader(message, after_result)
        else:
            one = (False, [])
        read.append(one)
    return read


def _resent(messages: list[Any], index: int, part: int, earlier: list[list[Any]]) -> bool:
    """Whether an earlier request sent the same conversation up to this message's part `part`: this one re-sends it."""
    def parts(message: Any) -> list[Any]:
        content = message.get("content", message.get("parts")) if isinstance(message, dict) else None
        return content[:part + 1] if isinstance(content, list) else [content]

    return any(len(before) > index and before[:index] == messages[:index]
               and parts(before[index]) == parts(messages[index]) for before in earlier)


def sent_anew(log: list[dict[str, Any]]) -> list[SentImage]:
    """Every image a request sent anew, in the order of the calls: after the last answer it re-sends (all of them where
    the provider holds the conversation) and not where an earlier request sent the same conversation up to it (a
    framework that re-sends history without the answer of a failed step: smolagents)."""
    found: list[SentImage] = []
    earlier: list[list[Any]] = []
    for entry in log:
        request = entry["request"]
        messages = _messages(entry["api"], request)
        read = _read(entry["api"], messages)
        held = entry["api"] == "openai.responses" and (request.get("previous_response_id")
                                                       or request.get("conversation"))
        start = 0 if held else next((i + 1 for i in range(len(read) - 1, -1, -1) if read[i][0]), 0)
        new = [(key, size, places) for index in range(start, len(read)) for key, size, places, part in read[index][1]
               if held or not _resent(messages, index, part, earlier)]
        found.extend(SentImage(entry["seq"], n, key, size, places) for n, (key, size, places) in enumerate(new))
        earlier.append(messages)
    return found


@dataclass(frozen=True)
class ShownImage:
    step: str  # how a problem names it: "step 5 (user)", "step 3's result for call_0_0"
    place: str
    key: Key | None  # None: a reference that reads back nothing (`problem` says why)
    problem: str = ""


def _shown(document: dict[str, Any], read: Reader) -> list[ShownImage]:
    """Every image part of a user step's message or an agent step's tool result, copied history left out."""
    found: list[ShownImage] = []

    def parts(content: Any, step: str, place: str) -> Iterable[ShownImage]:
        for part in content if isinstance(content, list) else ():
            if not (isinstance(part, dict) and part.get("type") == "image"):
                continue
            path = str((part.get("source") or {}).get("path") or "")
            if path.startswith("evalkit-span://"):
                data = read(path)
                if isinstance(data, str):
                    yield ShownImage(step, place, None, f"{step}: image {path} reads back nothing: {data}")
                else:
                    yield ShownImage(step, place, _bytes_key(data, "image")[0])
            else:
                known = _url_key(path)
                yield ShownImage(step, place, known[0] if known else None,
                                 "" if known else f"{step}: an image part whose path is {path[:80]!r}")

    for trajectory in all_trajectories(document):
        for step in trajectory["steps"]:
            if step.get("is_copied_context"):
                continue
            name = f"step {step['step_id']}"
            if trajectory is not document:
                name += f" of {trajectory['agent']['name']!r}"
            if step["source"] == "user":
                found.extend(parts(step.get("message"), f"{name} (user)", USER))
            for result in (step.get("observation") or {}).get("results") or ():
                found.extend(parts(result.get("content"), f"{name}'s result for {result.get('source_call_id')}",
                                   RESULT))
    return found


def missing_images(document: dict[str, Any], log: list[dict[str, Any]], read: Reader,
                   unrecorded: Iterable[tuple[int, int]] = ()) -> list[str]:
    """How the trajectory's images differ from those the model was sent anew; empty when it shows each once, where it
    was sent, with the bytes it was sent. `unrecorded`: the images (call, n) the emitter records no bytes of, which
    the trajectory must not show (an entry to correct the day it does)."""
    lost = set(unrecorded)
    sent = sent_anew(log)
    shown = _shown(document, read)
    problems = [image.problem for image in shown if image.problem]
    remaining = [image for image in shown if not image.problem]
    matched: dict[SentImage, ShownImage] = {}
    # Those that may be shown in one place only first: a forwarded tool's image takes what is left.
    for image in sorted(sent, key=lambda s: len(s.places)):
        match = next((s for s in remaining if s.key == image.key and s.place in image.places), None)
        if match is not None:
            remaining.remove(match)
            matched[image] = match
    known = {image.key for image in sent}
    for image in sent:
        if (image.seq, image.n) in lost:
            if image in matched:
                problems.append(f"{image.name} is listed as unrecorded, and {matched[image].step} shows it")
            continue
        if image not in matched:
            elsewhere = [s.step for s in remaining if s.key == image.key]
            problems.append(f"{image.name} is not shown on {' or '.join(image.places)}"
                            + (f" (it is on {', '.join(elsewhere)})" if elsewhere else ""))
    for extra in remaining:
        if extra.key in known:
            problems.append(f"{extra.step}: an image shown more times than the model was sent it anew")
        else:
            problems.append(f"{extra.step}: an image the model was never sent")
    problems.extend(f"({call}, {n}) is listed as unrecorded, but call {call} sent no image {n} anew"
                    for call, n in sorted(lost - {(image.seq, image.n) for image in sent}))
    return problems
