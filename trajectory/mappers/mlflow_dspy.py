"""DSPy's spans as MLflow's DSPy autolog writes them (`mlflow.dspy.autolog()`, `mlflow/dspy/callback.py`).

A DSPy callback opens a span per module (`<Module>.forward`: ReAct AGENT, Predict LLM, any other CHAIN; a Predict's
and a ChainOfThought's `signature` beside), per LM call (`LM.__call__`, CHAT_MODEL, `mlflow.message.format` "dspy":
the request's messages in `mlflow.spanInputs`, the completions as a list of strings in `mlflow.spanOutputs`, the LM's
own arguments copied onto the span: `model`, `model_type`, `cache` and its kwargs such as `temperature`), per adapter
format / parse (PARSER) and per tool (`Tool.<name>`, TOOL: the tool's `name`, `description` and `args` schema beside
its keyword arguments; ReAct's own `finish` gets none). The LM call's messages are DSPy's ChatAdapter's, read as
DSPy's conventions are under any tracing (trajectory/mappers/dspy.py): a ReAct step's answer as its thought and the
call of the tool it names, the loop each request re-renders as those calls and results again. Seen in a real
capture: tests/captures/dspy_mlflow.
"""

from __future__ import annotations

from evalkit.trajectory.mappers import dspy
from evalkit.trajectory.mappers.reader import SpanReader, as_text, parse_json
from evalkit.trajectory.operations import LlmCall

_FORMAT = '"dspy"'  # `mlflow.message.format`, JSON-encoded as every MLflow attribute
# What the callback copies onto an LM call's span from the `dspy.LM` (its kwargs: the defaults DSPy sets).
_LM_ARGUMENTS = ("model_type", "cache", "temperature", "max_tokens")
_TOOL_PREFIX = "Tool."


def is_dspy_call(reader: SpanReader) -> bool:
    """Whether an LLM span is a DSPy LM call (its messages formatted by a DSPy adapter)."""
    return reader.attributes.get("mlflow.message.format") == _FORMAT


def read_call(call: LlmCall, reader: SpanReader) -> None:
    """A DSPy LM call's messages as DSPy's: the user message's re-rendered ReAct loop as its calls and results, a ReAct
    step's answer as its thought and tool call."""
    reader.consume(*_LM_ARGUMENTS)
    call.input_messages = dspy.read_react_trajectory(call.input_messages)
    dspy.read_call(call)


def tool_name(reader: SpanReader) -> str | None:
    """A DSPy tool span's tool: the `name` the callback records beside the span's `Tool.<name>`."""
    if not reader.span.name.startswith(_TOOL_PREFIX):
        return None
    name = as_text(parse_json(reader.get("name")))
    reader.consume("description", "args")  # the tool's definition, also in every ReAct call's system prompt
    return name or reader.span.name.removeprefix(_TOOL_PREFIX) or None


def read_module(reader: SpanReader) -> None:
    """A DSPy module's span: its inputs and outputs are the fields every call inside it was sent and answered, its
    signature the one those calls' system prompts spell out."""
    reader.consume("signature", "extended_signature")
