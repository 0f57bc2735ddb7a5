"""OpenLIT's Haystack instrumentation (scope `openlit.instrumentation.haystack`, as of openlit 1.45).

It wraps `Pipeline.run` / `AsyncPipeline.run_async` and the `run` of a few components (openlit/instrumentation/
haystack: the in-memory BM25 retriever, `PromptBuilder`, `OpenAIGenerator`, `OpenAIChatGenerator` and OpenAI's two
embedders), each span named `<operation> <component>`. It wraps neither the Agent nor its ToolInvoker: an Agent's
run has no span (each of its model calls is a trace of its own, the session's calls joined by the session id
`openlit.using_attributes` puts on each span) and its tools none (their results are only in the next call's input,
where OpenLIT's OpenAI instrumentation leaves out the answer that asked for them: `build._Context.llm_call` reads
such a call as its run's next, not a fresh run). Seen in a real capture: tests/captures/haystack_openlit.

- `OpenAIChatGenerator.run` (and `OpenAIGenerator.run`): `chat openai_chat_generator`, operation `chat`, the
  component's run around the OpenAI client's call, which OpenLIT's OpenAI instrumentation records inside it (`chat
  <model>`: the messages, model and usage, read in `trajectory/mappers/openlit.py`). Of the call it holds only that
  it happened: no model (OpenLIT reads the component's `model_name`, which Haystack's generators do not have), no
  messages (`gen_ai.prompt`, `str()` of the messages, only when they are passed positionally: an Agent passes them
  by keyword; not read here, a Python repr of Haystack's objects), no usage; `gen_ai.provider.name` is `haystack`,
  and `server.*` are made up (`localhost:8080`, `set_server_address_and_port`). Read as the call the generator
  made, to the provider its class calls: the builder does not count it again when the client's span is inside it
  (a framework's LLM span around the client library's) and counts it, empty, when it is alone (OpenLIT's OpenAI
  instrumentation disabled).
- on every component span, Haystack's bookkeeping: the class (`gen_ai.component.class_name`), the input and output
  types and sockets, senders and receivers, a visit count that is always 1, the number of replies
  (`gen_ai.framework.context.count`), the duration, Haystack's version as `gen_ai.sdk.version`.

The pipeline, retriever, prompt builder and embedder spans are in no capture yet: read by the GenAI mapper.
"""

from __future__ import annotations

from evalkit.trajectory.mappers import haystack, otel_genai
from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span

SCOPE = "openlit.instrumentation.haystack"
COMPONENT_CLASS = "gen_ai.component.class_name"
_COMPONENT_TYPE = "gen_ai.framework.component.type"
_GENERATOR = "generator"  # the component type of the generators' spans (`process_haystack_response`)
_BOOKKEEPING_PREFIXES = ("gen_ai.framework.", "gen_ai.component.")
_BOOKKEEPING = ("gen_ai.provider.name",)


def is_haystack(span: Span) -> bool:
    return span.scope_name == SCOPE


def is_generator_run(span: Span) -> bool:
    return is_haystack(span) and span.attributes.get(_COMPONENT_TYPE) == _GENERATOR


def generator_call(reader: SpanReader, emitter: str) -> LlmCall:
    """A generator component's run, OpenLIT's common bookkeeping already read (`openlit.map_span`): the call it made,
    of which it says only who it calls (see above)."""
    component = reader.text(COMPONENT_CLASS)
    call = LlmCall(span=reader.span, emitter=emitter, error=span_error(reader))
    if component:
        call.provider = haystack.generator_provider(component)
        call.extra["component"] = component
    reader.consume(*_BOOKKEEPING, *otel_genai.IDENTITY_KEYS)  # the identity: the builder's to read
    reader.consume_prefix(*_BOOKKEEPING_PREFIXES)
    return call
