"""A tool the provider defines, offered in a request, as an entry of the agent's tool definitions.

Besides the functions an application declares, a request may offer tools the provider defines itself, named and
configured by the request, never given a schema by the application:
- OpenAI's Responses API: an entry named by its `type` alone (`{"type": "web_search", "search_context_size": …}`,
  `{"type": "file_search", "vector_store_ids": […], "max_num_results": …}`, `code_interpreter`, `image_generation`,
  …); a function's entry is `{"type": "function", "name": …}` (`custom` alike). The Response echoes the request's
  `tools`, every option filled in, an unset one `null`;
- Anthropic's Messages API: a versioned `type` and the tool's `name` (`{"type": "web_search_20250305", "name":
  "web_search", "max_uses": 3}`, `web_fetch_20250910`, `code_execution_20250825`); a client tool has an
  `input_schema` instead of a type;
- Gemini: a `Tool` holding a kind of its own in place of `function_declarations` (`{"google_search": {}}`, the SDK's
  dump `null` for the kinds it does not hold), the kind's options its value.

Each such tool is listed (`definition`, `offered`) in the function-calling shape ATIF's `agent.tool_definitions` uses,
so that it is keyed by name as every other tool is: named as the request names it (the Responses tool's type,
Anthropic's `name`, Gemini's kind), no `parameters` (the model's arguments to it are the provider's business, not a
schema the request gave), and the entry as offered, its unset options left out, in the definition's `extra.offered`:
what a person asks of the agent's tools ("which vector stores could it search, how many results, how many uses").

Read wherever the spans record the offered tools: each instrumentation's tool list (`messages.openai_tool_definition`,
through which `llm.tools` and `gen_ai.tool.definitions` are read), the Response's echo for a Responses call whose
instrumentation lists only its functions (`openinference`), the request Gemini was sent (`gemini_grounding`).

Seen in real captures: tests/captures/openai-agents_openinference_hosted-tools, openai-agents_openinference_file-search,
anthropic-sdk_openinference_web-search, anthropic-sdk_openinference_code-execution,
google-genai_openinference_google-search.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import LlmCall

_CLIENT_TYPES = ("function", "custom")  # the Responses API's (and Chat Completions') tools the application runs
_CLIENT_SCHEMA_KEYS = ("function", "parameters", "input_schema", "inputSchema", "parameters_json_schema")
_GEMINI_FUNCTIONS = ("function_declarations", "functionDeclarations")  # a Gemini Tool's declared functions


def definition(tool: object) -> dict[str, Any] | None:
    """`tool`, one entry of a request's tools, as an ATIF tool definition if the provider defines it (a Gemini Tool of
    one kind); None for a function the application declared, or what is no tool."""
    found = definitions(tool)
    return found[0] if len(found) == 1 else None


def definitions(tool: object) -> list[dict[str, Any]]:
    """The provider's tools `tool`, one entry of a request's tools, offers: one, or none for a function the
    application declared; a Gemini Tool may hold several kinds."""
    tool = parse_json(tool)
    if not isinstance(tool, Mapping):
        return []
    given = {str(key): value for key, value in tool.items() if value is not None}
    if any(key in given for key in _CLIENT_SCHEMA_KEYS):
        return []
    kind = given.get("type")
    if isinstance(kind, str):
        if kind in _CLIENT_TYPES:
            return []
        name = given.get("name")  # Anthropic names its versioned type; the Responses API names the tool by its type
        return [_listed(name if isinstance(name, str) and name else kind, given)]
    if "name" in given:
        return []
    return [_listed(key, {key: options}) for key, options in given.items()
            if key not in _GEMINI_FUNCTIONS and isinstance(options, Mapping)]


def offered(call: LlmCall, tools: object) -> None:
    """The provider's tools among `tools` (a request's, or a Response's echo of them) listed among `call`'s tool
    definitions, each once: in place of an entry of its name that says less (a bare name), else after them."""
    listed = {_name(entry): index for index, entry in enumerate(call.tool_definitions)}
    tools = parse_json(tools)
    for tool in tools if isinstance(tools, list) else []:
        for found in definitions(tool):
            index = listed.get(_name(found))
            if index is None:
                listed[_name(found)] = len(call.tool_definitions)
                call.tool_definitions.append(found)
            elif call.tool_definitions[index] == {"type": "function", "function": {"name": _name(found)}}:
                call.tool_definitions[index] = found


def echoed(response: object) -> object:
    """The tools a Responses request offered, as the Response (`response`, its JSON) echoes them."""
    answer = parse_json(response)
    return answer.get("tools") if isinstance(answer, Mapping) else None


def _listed(name: str, given: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": _snake_case(name)}, "extra": {"offered": given}}


def _snake_case(name: str) -> str:
    """Gemini's kind as the SDK names it (`google_search`), the API's camelCase (`googleSearch`) read alike."""
    return "".join(f"_{char.lower()}" if char.isupper() else char for char in name).lstrip("_")


def _name(entry: dict[str, Any]) -> str:
    function = entry.get("function")
    return str(function.get("name")) if isinstance(function, Mapping) else ""
