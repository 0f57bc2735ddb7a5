"""Message parts the emitters record in the providers' own shapes (`trajectory/mappers/messages.py`), read from
real captures.

A Responses API `function_call` item has an id of its own (`fc_…`) beside the `call_id` (`call_…`) that its
`function_call_output` names: the call is named by its `call_id`, on both sides, whatever order the keys come in.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from span_fixtures import capture_spans

from evalkit.trajectory.mappers.messages import parse_part
from tests.captures import corpus


def _items(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _items(value)
    elif isinstance(node, list):
        for value in node:
            yield from _items(value)


def _recorded_items(name: str, kind: str) -> list[dict[str, Any]]:
    """The `kind` items of the Responses inputs an OpenInference span recorded whole (`input.value`)."""
    found = []
    for span in capture_spans(name):
        value = span.attributes.get("input.value")
        if isinstance(value, str) and f'"{kind}"' in value:
            found.extend(item for item in _items(json.loads(value)) if item.get("type") == kind)
    return found


def test_a_responses_function_call_and_its_output_are_named_by_the_call_id() -> None:
    # openai-agents re-sends its answers' items as the next call's input: recorded with the API's two ids.
    calls = _recorded_items("openai-agents_openinference", "function_call")
    outputs = _recorded_items("openai-agents_openinference", "function_call_output")
    model_ids = {c["id"] for entry in corpus.load("openai-agents_openinference").llm_log
                 for c in entry["response"]["tool_calls"]}
    assert calls and outputs
    assert all(item["id"] != item["call_id"] for item in calls)  # the capture holds both ids
    for item in calls:
        part = parse_part(item)
        assert part is not None and (part.kind, part.call_id) == ("tool_call", item["call_id"])
        assert part.call_id in model_ids
    for item in outputs:
        part = parse_part(item)
        assert part is not None and (part.kind, part.call_id) == ("tool_result", item["call_id"])
