"""OpenLIT's ag2 instrumentation (scope `openlit.instrumentation.ag2`, as of openlit 1.45), as it records AG2 Classic.

It wraps AG2 Classic's `ConversableAgent` (module `autogen`, the `ag2` distribution up to 0.14; AG2 1.x's `Agent`
is not wrapped: `trajectory/mappers/ag2.py` reads AG2's own tracing of it) and leaves the model calls to the
client's instrumentation (OpenLIT's OpenAI one: `chat <model>` spans, read by `trajectory/mappers/openlit.py`). A
two-agent chat (`initiate_chat`) is AG2's `send` → the other agent's `receive` → its `generate_reply`, then its own
`send` of the reply, each inside the last: the spans nest as deep as the chat is long. Every span is named
`execute_task <agent>` whatever it wraps, `gen_ai.agent.message_type` saying which (openlit/instrumentation/ag2):

- `generate_reply` (operation `chat`): the agent making one reply, an LLM agent's model call (the client's `chat`
  span) under it, a tool-executing agent's tools (no spans of their own) run in it. One reply of that agent: its
  run, named by `gen_ai.agent.name`. It records no content, no model (`llm_config.get("model")` when the config is a
  dict, else `unknown`, which names no model) and no call: its `gen_ai.usage.*` are made up (`len(str(messages))
  // 4` and `len(str(reply)) // 4`, `process_agent_generate_reply`), read as a call's they made every reply an LLM
  step of model `unknown` with those tokens, the tool-executing agent's too. The session's agent is named after its
  first run, the first agent to reply: the one `initiate_chat` was sent to, not the agent starting the chat, whose
  `send` is every trace's root (read as the session's, the user proxy's name was the agent's). A tool-executing
  agent's replies are runs with no call or content: no steps.
- `send` / `receive` (operation `chat`): a message passing between the agents. The wrapper takes the message from
  the wrong argument (`args[1]`: for `send(message, recipient)` the recipient, for `receive(message, sender)` the
  sender), so `gen_ai.output.messages` / `gen_ai.input.messages` hold the other agent's name (`str()` of it) and
  `gen_ai.agent.recipient` / `gen_ai.agent.sender` say `Unknown`: no content, no step.
- `ConversableAgent.__init__`: `create_agent <name>`, a trace of its own (setting an agent up; `<name>` is
  `unknown_agent` when the name is passed positionally). For an agent with `llm_config=False` the wrapper fails
  (`False.get`): an errored span with OpenLIT's own exception, no failure of the application's. No step.

The instrumentation also wraps `ConversableAgent.run` (`execute_task <agent>`, no message type; AG2 runs the chat in
a thread of its own and returns at once), `GroupChatManager.run_chat` (`invoke_workflow GroupChat_<n>_agents`) and
`GroupChat.select_speaker` (`invoke_agent speaker_selection`); no capture records them: left to the GenAI reading.

What the model was shown for a tool (AG2's `execute_function` sends "Error: <exception>" for one that raised) is only
in the next call's input: no span records a tool's execution.

Every span restates the provider (`ag2`), `unknown` models, a made-up `server.*` (`127.0.0.1:80`), the duration as
time to first token, the framework's version and `gen_ai.request.stream` (always false): bookkeeping.
"""

from __future__ import annotations

from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, Operation
from evalkit.trajectory.span import Span

SCOPE = "openlit.instrumentation.ag2"
MESSAGE_TYPE = "gen_ai.agent.message_type"
REPLY = "generate_reply"  # the one message type that is an agent's work; `send` and `receive` pass messages
_CREATE_AGENT = "create_agent "  # the span's name: an errored one has no operation name
_NO_MODEL = "unknown"  # what the wrapper writes when the agent's `llm_config` is not a dict
_BOOKKEEPING = ("gen_ai.provider.name", "gen_ai.request.model", "gen_ai.response.model", "gen_ai.request.stream",
                "gen_ai.usage.cost")
# Which agent a message came from or went to, and the message passed (OpenLIT writes the other agent's name there).
_MESSAGE_ENDS = ("gen_ai.agent.sender", "gen_ai.agent.recipient", "gen_ai.input.messages", "gen_ai.output.messages")


def is_ag2(span: Span) -> bool:
    return span.scope_name == SCOPE


def map_span(reader: SpanReader, emitter: str) -> Operation | None:
    """One span of the instrumentation's, OpenLIT's common bookkeeping already read (`openlit.map_span`)."""
    reader.consume(*_BOOKKEEPING, *otel_genai.IDENTITY_KEYS)  # the identity: the builder's to read
    message_type = reader.text(MESSAGE_TYPE)
    if message_type == REPLY:
        return reply_run(reader, emitter)
    if message_type is not None or reader.span.name.startswith(_CREATE_AGENT):
        # A message passed (`send`, `receive`), or an agent set up: no step.
        reader.consume(MESSAGE_TYPE, *_MESSAGE_ENDS, "error.type")
        reader.consume_prefix("gen_ai.")
        reader.read_events("exception")
        return None
    found = otel_genai.map_span(reader, ())
    if found is not None:
        found.emitter = emitter
    return found


def reply_run(reader: SpanReader, emitter: str) -> AgentRun:
    """`generate_reply`: one reply of the agent, its model call (if it has a model) under it; no call itself."""
    run = otel_genai.agent_run(reader, emitter)  # its made-up `gen_ai.usage.*` consumed, not counted
    if run.model == _NO_MODEL:
        run.model = None
    reader.consume(MESSAGE_TYPE, *_MESSAGE_ENDS)
    return run
