"""Framework tool-result wrappers, as recorded captures carry them, come off with their call id and error flag."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from evalkit.trajectory.mappers import tool_results
from tests.captures import corpus


def _tool_outputs(name: str, kind_key: str, kind: str, output_key: str) -> list[tuple[str, Any]]:
    """(tool span name, its recorded output, decoded) of a capture's tool spans."""
    found = []
    for export in corpus.load(name).exports:
        request = trace_service_pb2.ExportTraceServiceRequest()
        request.ParseFromString(export.body)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    attributes = {a.key: a.value.string_value for a in span.attributes}
                    if attributes.get(kind_key) == kind and output_key in attributes:
                        found.append((span.name, json.loads(attributes[output_key])))
    return found


def test_langchain_tool_messages_unwrap_to_what_the_model_was_shown() -> None:
    truth = corpus.GroundTruth.of(corpus.load("langchain_openinference").llm_log)
    outputs = _tool_outputs("langchain_openinference", "openinference.span.kind", "TOOL", "output.value")
    assert len(outputs) == len(truth.tool_results) == 5
    for name, recorded in outputs:
        output = tool_results.unwrap(recorded)
        assert output.call_id in truth.tool_results, recorded
        assert output.value == truth.tool_results[output.call_id]
        assert output.is_error == (name == "lookup_stock")
        assert output.wrapper == "langchain.ToolMessage"


def test_langchain_serialised_tool_messages_unwrap_too() -> None:
    truth = corpus.GroundTruth.of(corpus.load("langchain_openllmetry").llm_log)
    outputs = _tool_outputs("langchain_openllmetry", "traceloop.span.kind", "tool", "traceloop.entity.output")
    assert len(outputs) == len(truth.tool_results) == 5
    for name, recorded in outputs:
        output = tool_results.unwrap(recorded["output"])  # the callback's {"output", "kwargs"} opened
        shown = truth.tool_results[str(output.call_id)]
        assert (output.value, output.is_error) == (shown, name.endswith("lookup_stock"))


def test_llama_index_tool_output_unwraps_with_its_error_flag() -> None:
    outputs = _tool_outputs("llamaindex_openinference", "openinference.span.kind", "TOOL", "output.value")
    assert [tool_results.unwrap(recorded).value for _, recorded in outputs] == ["rainy, 9°C", "sunny, 21°C"]
    failed = {"blocks": [{"text": "boom"}], "tool_name": "t", "raw_input": {}, "raw_output": "boom", "is_error": True}
    assert tool_results.unwrap(failed) == tool_results.ToolOutput("boom", None, True, "llama_index.ToolOutput")


def test_anything_else_is_left_as_it_is() -> None:
    for value in ("sunny", {"type": "tool"}, {"content": "x"}, [{"type": "text", "text": "x"}], None, 3):
        assert tool_results.unwrap(value) == tool_results.ToolOutput(value)
