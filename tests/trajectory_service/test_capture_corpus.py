"""Every recorded framework capture, replayed through a running service, is the conversation that happened.

For each capture in `tests/captures/` and each OTLP encoding: replay the exports exactly as the
framework's exporter sent them, read the session's trajectory, and compare it with the fake LLM's
log (`corpus.compare`): one agent step per LLM call with the model's text and tool calls, every tool
result on its own call, token totals (prompt-cache reads and writes too), every question a call was
asked anew a user step of that call's trajectory before its step (`questions.missing_questions`), every image it
was sent an image part of a user step or a tool result, once, with the bytes sent (`images.missing_images`); its
cost equals genai-prices called directly on the log's usage; it validates under Harbor's models; the
session list's row (read from the columns ingest computed, not from the trajectory) counts the same
calls, tokens (cached ones too), cost and models, and errors where the trajectory flags a failure.

What a capture does not get right yet is listed in KNOWN_GAPS with the reason, and marked a strict
xfail: the day it comes out right the test fails until the entry is removed (and the fidelity table
in docs/trajectories.md updated).
"""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from datetime import datetime
from decimal import Decimal
from urllib.parse import quote

import genai_prices
import pytest
import pytest_asyncio

from evalkit.trajectory.summary import summarise
from tests.captures import corpus, images, questions
from tests.conftest import databases_dropped_after
from tests.trajectory_service.conftest import ADMIN_TOKEN, Service, assert_schema_and_atif_valid, running_service

# capture name -> why its trajectory is not yet the conversation that happened
KNOWN_GAPS: dict[str, str] = {
    "codex-cli_native":
        "the Codex CLI 0.171 exports no answer's text or reasoning (its codex.sse_event records name the stream's "
        "events, none of their content, log_agent_responses and log_sse_deltas on or not) and each call's tokens only "
        "on the codex.sse_event of response.completed, a record linked to no trace, never read with the session: "
        "each call is a step with its tool calls (from the codex.tool_result events), each result on its call, the "
        "command exiting 1 flagged, both prompts user steps of one session (tests/trajectory/"
        "test_codex_cli_native.py), but 5 of 6 answers have no text, no step its reasoning, and each turn's token sums "
        "(session_task.turn) are on its last call (the others unpriced, so no total cost). The session list counts "
        "no LLM call, token or cost: its spans carry no GenAI key ingest reads (ingest/attribution.py); and without "
        "`[otel.span_attributes]` session.id each turn's trace is a session of its own (Codex's conversation.id is "
        "no session key)",
    "gemini-cli_native":
        "Gemini CLI 0.61 records on its llm_call span only Gemini's promptTokenCount and candidatesTokenCount: the "
        "thoughts (thoughtsTokenCount, 48) and the cache reads (cachedContentTokenCount, 30,720 of 73,356 prompt "
        "tokens) are only in its gemini_cli.api_response log event, which it emits outside any span (no trace id: a "
        "streamed answer's is logged from the stream's consumer, outside the call's context), and a session's log "
        "records are read by trace id: the trajectory has 132 completion tokens for 180, none cached, $0.0545 for "
        "$0.0339 (tests/trajectory/test_gemini_cli_native.py: everything else right; the session list agrees with the "
        "trajectory: tests/trajectory_service/test_genkit_gemini_cli_list.py). Needs ingest: log records with no trace "
        "id attributed to the session their session.id names",
    "claude-agent-sdk_openlit":
        "OpenLIT 1.45's claude_agent_sdk instrumentation makes its chat spans from the SDK's messages (each ending "
        "<1 µs before it starts: kept as lasting nothing, ingest/span_checks.py), and they fall short of the calls: of "
        "each answer only its last content block (the SDK yields one AssistantMessage per block, OpenLIT keeps the "
        "last buffered: two answers lose their text, one its first parallel tool call, on its execute_tool span "
        "alone), output tokens the stream's message_start count (1 a call; only each turn's main-agent sum is "
        "recorded), and no span for the subagent's closing answer (the SDK yields none); nor are the questions as the "
        "model was sent them: Claude Code's <system-reminder> blocks before the prompt are in no span, nor the "
        "subagent's prompt (its trajectory has no user step)",
    "claude-agent-sdk_openinference":
        "openinference-instrumentation-claude-agent-sdk 0.1.22 records no span of a model call (each turn's AGENT span "
        "holds the SDK's assistant messages, from which the calls are derived) and falls short of them: the turn's "
        "usage summed (on its last call; output tokens the stream's message_start count, 1 a message: 25 recorded for "
        "328), none of a subagent's messages (its get_forecast answer a tool step of no call, its 1,200 prompt tokens "
        "lost; its report is kept, from the Agent tool's output), Read's result the hook's structured file (the model "
        "read numbered lines) and the Agent call's the report alone (the model read it in Claude Code's hand-back "
        "frame); nor the system prompt, Claude Code's <system-reminder> blocks before the first prompt, or the "
        "subagent's task (its trajectory has no user step) (tests/trajectory/test_claude_agent_sdk_openinference.py). "
        "The session list "
        "counts no LLM call, token or cost: ingest's columns are read off LLM spans, and none is one",
    "vercel-ai_native":
        "a throwing tool's result is recorded (the next call's ai.prompt.messages) as {type: \"error-text\", value}; "
        "@ai-sdk/openai 4 sends the model {\"error\": value}, which no span records (the wrapping is the "
        "provider package's, and its version is not on the spans)",
    "vercel-ai_native_subagent":
        "the same gap in the subagent: its throwing get_weather's result is recorded as {type: \"error-text\", "
        "value}, and @ai-sdk/openai 4 sent the model {\"error\": value}, which no span records (the rest, the "
        "subagent under the research call and every call a step, is right: tests/trajectory/"
        "test_vercel_ai_native_subagent.py)",
    "vercel-ai_otel-genai":
        "the same gap under @ai-sdk/otel's GenAI-conventions integration: it writes a tool result's value alone, an "
        "error-text output's as a text output's (convertToolResultOutputToResponse), and @ai-sdk/openai 4 sent the "
        "model {\"error\": value}, which no span records (the rest, each step's reasoning and reasoning tokens among "
        "it, is right: tests/trajectory/test_vercel_ai_otel_genai.py)",
    "vercel-ai_langfuse":
        "the same gap under Langfuse's AI SDK 7 integration (@langfuse/vercel-ai-sdk delegates to @ai-sdk/otel's "
        "GenAI-conventions integration): a throwing tool's result is written as its text alone, and @ai-sdk/openai 4 "
        "sent the model {\"error\": value}, which no span records (the rest, every call a step, the session from "
        "Langfuse's propagated session.id, is right: tests/trajectory/test_vercel_ai_langfuse.py)",
    "vercel-ai_native_image":
        "the same gap: the throwing get_weather's result is recorded as {type: \"error-text\", value} and "
        "@ai-sdk/openai 4 sent the model {\"error\": value}, which no span records (the rest, the question's images "
        "and the map tool's image as image parts, one referenced and read back, is right: tests/trajectory/"
        "test_vercel_ai_native_image.py)",
    "llamaindex_openinference_image":
        "OpenInference's llama-index 4.6.1 records no tokens for a streamed OpenAIResponses call: the stream's last "
        "ChatResponse holds the usage as `additional_kwargs[\"usage\"]` (a ResponseUsage) and as `raw.response.usage` "
        "(raw the ResponseCompletedEvent), and its token counter reads `raw.usage` and additional_kwargs' top-level "
        "keys alone, so turn 2's two calls have no llm.token_count.* (the rest, the question's images and the map "
        "tool's image as image parts, one of each referenced and read back, is right: tests/trajectory/"
        "test_llamaindex_openinference_image.py)",
    "google-genai_otel-genai":
        "the trajectory is right, the session list not yet: the loop answers a failed call with {\"error\": …} in its "
        "function response, recorded only in the next call's gen_ai.input.messages (trajectory/mappers/google_genai.py "
        "flags it); ingest's `failed` column does not read that attribute for OpenTelemetry's google-genai scope, so "
        "the list shows no error until a migration reads it there "
        "(a rule parsing that JSON array, measured for migration 221, cost every flattening insert +70-85 MB "
        "peak engine memory and ~2 µs a span beside 216's and 220's rules, whatever scope check guards it: "
        "left out)",
    "google-genai_otel-genai_chat-afc":
        "the trajectory is right, the session list not yet: automatic function calling runs the tools in no span and "
        "records a raised one only as {\"error\": …} in the next call's gen_ai.input.messages (trajectory/mappers/"
        "google_genai.py flags it); ingest's `failed` column does not read that attribute for OpenTelemetry's "
        "google-genai scope, so the list shows no error until a migration reads it there "
        "(a rule parsing that JSON array, measured for migration 221, cost every flattening insert +70-85 MB "
        "peak engine memory and ~2 µs a span beside 216's and 220's rules, whatever scope check guards it: "
        "left out)",
    "google-genai_otel-genai_image":
        "the trajectory is right, the session list not yet (as google-genai_otel-genai): the loop answers Porto's "
        "timed-out weather call with {\"error\": …} in its function response, recorded only in the next call's "
        "gen_ai.input.messages (trajectory/mappers/google_genai.py flags it); ingest's `failed` column does not read "
        "that attribute for OpenTelemetry's google-genai scope, so the list shows no error until a migration reads it "
        "there (the images, the map aside (UNRECORDED_IMAGES), are right: tests/trajectory/"
        "test_google_genai_otel_genai_image.py)",
    "google-adk_native_thinking":
        "ADK 2.13's GenAI-conventions converter (telemetry/_experimental_semconv.py, _to_part) writes a Gemini "
        "thought part ({text, thought: true}) as a plain text part, in gen_ai.output.messages and in the next calls' "
        "gen_ai.input.messages alike, and records no thinking configuration on the span (schema 2): no span says which "
        "text the model thought, so each step's message starts with its thoughts and has no reasoning_content; the "
        "streamed turn's thought and answer chunks are one text, so its re-sent answer (two text parts) is a copied "
        "step after it. The rest is right (tests/trajectory/test_google_adk_native_thinking.py): each tool on its "
        "call, the reflected failure flagged, reasoning tokens within the output tokens",
    "google-adk_native_confirmation":
        "the same converter gap: each Gemini thought part is written as a plain text part (and no thinking "
        "configuration recorded), so each step's message starts with its thoughts and has no reasoning_content, a "
        "streamed answer's thought and text one text. The rest is right (tests/trajectory/"
        "test_google_adk_native_confirmation.py): the confirmation asked for both calls, the person's answers, the "
        "confirmed call's result and the rejection on their calls, each streamed call once, reasoning tokens within "
        "the output tokens",
    "dspy_mlflow":
        "MLflow 3.18's OTLP export drops the trace's session (mlflow.tracing.context(session_id=…) is trace metadata, "
        "as for mlflow_openai), so each turn's trace is a session of its own. Its DSPy autolog records no LM call's "
        "tokens, only the program's total on its root CHAIN span (mlflow.chat.tokenUsage): the trajectory's "
        "final_metrics take it (trajectory/run_totals.py), the session list not yet: its row sums the LLM call spans' "
        "token columns per (model, provider), and a run's total is on a span that is no call and names no model; "
        "taking it only for a trace none of whose calls has usage is a read-time rule over every span of the trace, "
        "in the list's query, the kept rows and the per-trace summary the sort by cost bounds with (its calls shown "
        "with 0 tokens, unpriced). The rest is right per trace (tests/trajectory/test_dspy_mlflow.py): one step per "
        "LM call, each ReAct step its thought and tool call with the tool's result, the raising tool flagged, each "
        "question once, the tokens and cost",
    "mlflow_openai":
        "MLflow 3.17's OTLP export drops the trace's session: update_current_trace(session_id=…) is trace metadata, "
        "which only its Databricks Unity Catalog processor copies onto the root span (session.id); so each turn's "
        "trace is a session of its own (each is checked in test_capture_sdks_and_sessions.py)",
    "openai-agents_openlit":
        "OpenLIT 1.45's OpenAI instrumentation ends a streamed Responses call's span only when its wrapped stream "
        "is iterated to the end; openai-agents 0.20 streams through responses.with_streaming_response.create() "
        "and .parse(), which the wrapper hands the unwrapped stream: the streamed turn's three calls (text, tool "
        "calls, tokens) are in no span, never exported (only their httpx POST children, whose parents never "
        "arrive, so the session stays partial)",
    "openai-agents_openinference_approval":
        "openai-agents 0.24 resumes an approved run (Runner.run(agent, state), in the process that paused it) in the "
        "paused run's trace, reattached without on_trace_start (tracing/context.py: ReattachedTrace), and "
        "OpenInference's openai-agents processor 2.6.0 records only spans of traces it saw start (_processor.py "
        "on_span_start): the resumed run's two calls (call 1's get_weather retry, call 2's answer, their 270 output "
        "tokens and 1,223 prompt tokens), the approved booking's execution and the rejection are in no span. Turn 2's "
        "history re-sends what they answered (copied steps with their reasoning, each booking's outcome on its call: "
        "tests/trajectory/test_openai_agents_openinference_approval.py); what the person decided is in no span",
    "openai-agents_otel-genai_hosted-tools":
        "opentelemetry-instrumentation-openai-agents-v2 0.1.0 writes an answer with text as its response.output_text "
        "alone (span_processor.py _normalize_output_messages_to_role_parts), and the SDK re-sends no item of the last "
        "answer: the streamed turn's web search (call 3's web_search_call, 'Bergen weather forecast Saturday') and its "
        "url_citation are in no span. The rest is right (tests/trajectory/test_openai_agents_otel_genai_hosted_tools"
        ".py): call 0's search a web_search call run by the provider beside book_hotel, call 2's citation read from "
        "turn 2's re-sent history, call 0's search counted and priced (OpenAI bills each; $0.01 at genai-prices' "
        "rate for gpt-4o) in the trajectory and the session list; call 3's, in no span, is neither",
    "openai-sdk_openlit_reasoning":
        "OpenLIT 1.45's OpenAI instrumentation on the Responses API: of a non-streamed answer's function calls it keeps"
        " the last (process_response_response sets _response_tools to each function_call item in turn), so call 0's "
        "get_weather is in no span but its @openlit.trace execution, which says nothing of a call; it records no input "
        "item but a message with text (build_input_messages), so the error text the loop sent as the raising tool's "
        "function_call_output is in no span; and an answer's output message re-sent as the SDK's object (input += "
        "response.output, as OpenAI's docs show) makes its format_content raise once the call returned (AttributeError:"
        " 'ResponseOutputText' object has no attribute 'get'): turn 2's two calls are failed spans with no input, "
        "output or usage (its question, two parallel calls, answer and 1,004 / 157 tokens lost)",
    "openai-sdk_openinference_audio":
        "openinference-instrumentation-openai 0.1.66's stream accumulator joins a streamed answer's content and "
        "tool_calls pieces but keeps any other string a delta holds as the last one given (_ValuesAccumulator "
        "replaces it): the streamed spoken answer's delta.audio transcript and data are their last pieces in "
        "output.value, so call 4's words (\"Rome is clear and 27°C, warmer than Paris's 21°C.\") are in no span (its "
        "step's message empty, extra.audio_answer saying so). The rest is right (its audio tokens priced at "
        "gpt-audio's audio rates, in the trajectory and the list; tests/trajectory/"
        "test_openai_sdk_openinference_audio.py): the voice note an "
        "audio part read back byte for byte, call 2's spoken answer its transcript with its clip noted, its re-sent "
        "{audio: {id}} no step, each step's audio tokens",
    "strands_native_image":
        "Strands 1.65's tracer records the agent's messages (Bedrock blocks) before the model class formats them, and "
        "writes every image's bytes as \"<replaced>\" (telemetry/tracer.py JSONEncoder): no span holds the user's two "
        "PNGs or the screenshots (each a marker saying so, tests/trajectory/test_strands_native_image.py); and "
        "OpenAIModel sent each screenshot's tool message with a note of its own after the tool's text (\"Tool "
        "successfully returned an image. The image is being provided in the following user message.\", the image in a "
        "user message after the tool messages: models/openai.py _split_tool_message_images), which no span records "
        "nor which model class formatted the request (OpenAIResponsesModel, also \"gpt-4o\", sends the image in the "
        "function_call_output, no note): the two screenshot results lack it",
}

# capture name -> why its emitter records no prompt-cache reads. The trajectory cannot show what no span says, so it
# is compared with the log as the emitter saw it (every prompt token, none cached; priced so); the day the
# emitter records them, the comparison fails (0 cached) until the entry is removed.
UNRECORDED_CACHE_READS: dict[str, str] = {
    "openai-sdk_otel-genai_prompt-cache":
        "opentelemetry-instrumentation-openai-v2 2.4b0 sets gen_ai.usage.input_tokens from usage.prompt_tokens (the "
        "cached ones included) and never reads usage.prompt_tokens_details.cached_tokens on chat completions, "
        "streamed or not, under either conventions (patch.py)",
}

# capture name -> why its emitter records no reasoning for some of its calls, and which (None: every call). Those
# steps may show none; what a step shows is still compared (corpus.compare). Strict: a step showing the reasoning of
# a listed call it could not see fails until the entry is corrected.
UNRECORDED_REASONING: dict[str, tuple[str, tuple[int, ...] | None]] = {
    "openai-agents_otel-genai_reasoning": (
        "opentelemetry-instrumentation-openai-agents-v2 0.1.0 writes an answer that has text as its output_text "
        "alone, dropping the reasoning item before it (an answer of function calls keeps it, as a repr)", (2, 4)),
    "openai-agents_otel-genai_guardrails": (
        "opentelemetry-instrumentation-openai-agents-v2 0.1.0 writes an answer that has text as its output_text "
        "alone, dropping the reasoning item before it (as openai-agents_otel-genai_reasoning): every topic check's "
        "verdict and the desk's two answers", (0, 3, 4, 5, 6)),
    "openai-sdk_openlit_reasoning": (
        "OpenLIT 1.45 records no reasoning of a Responses answer: process_response_response reads only its message "
        "and function_call items, the stream's reasoning_summary_text events are ignored, and a re-sent reasoning "
        "item (no text content) is left out of gen_ai.input.messages", None),
    "litellm_native_reasoning-content": (
        "LiteLLM 1.110's otel callback writes no reasoning_content in gen_ai.output.messages, and a streamed call's "
        "raw_gen_ai_request holds no response ('first stream response received'): a streamed answer's reasoning is "
        "recorded only in the raw request of a later call re-sending it, and the last answer is re-sent by none", (4,)),
    "autogen-agentchat_openinference_reasoning": (
        "AutoGen 0.7.5's OpenAI client drops the reasoning_content of an answer with tool calls, streamed or not "
        "(_openai_client.py: only a text answer's becomes the CreateResult's thought; beside tool calls the thought is "
        "the content), and the instrumentor records the CreateResult, not the response", (0, 1, 3)),
}

# capture name -> why its emitter records no span of some of its LLM calls, and which (the log's seq): the trajectory
# cannot show a call no span holds, nor count its tokens (nor can the session list), so it is compared with the log
# without them. Strict: a listed call shown as a step of an LLM call fails until the entry is corrected.
UNRECORDED_CALLS: dict[str, tuple[str, tuple[int, ...]]] = {
    "strands_native_summarizing_default": (
        "Strands 1.65's SummarizingConversationManager with no summarization agent asks the agent's model for each "
        "summary itself (context_compression.py generate_summary: ModelProxy(model).stream(...)), on purpose outside "
        "the agent's pipeline and so its tracing: the two summary calls (gpt-4o, 517 + 493 prompt and 62 + 51 "
        "completion tokens) are in no span. Each compaction is a step of no LLM call, its summary read from the next "
        "call's input (tests/trajectory/test_strands_native_summarizing_default.py)", (3, 6)),
}

# capture name -> why its emitter records no reasoning tokens (the output tokens count them, as billed, with no
# breakdown). Strict: the day a step shows them, the test fails until the entry is removed.
UNRECORDED_REASONING_TOKENS: dict[str, str] = {
    "openai-agents_otel-genai_reasoning":
        "opentelemetry-instrumentation-openai-agents-v2 0.1.0 reads no output_tokens_details (no reasoning attribute)",
    "openai-agents_otel-genai_guardrails":
        "opentelemetry-instrumentation-openai-agents-v2 0.1.0 reads no output_tokens_details (no reasoning attribute)",
    "strands_native_anthropic-thinking":
        "Strands 1.62's Usage has no reasoning field: models/anthropic.py keeps only the usage's top-level integers, "
        "dropping output_tokens_details.thinking_tokens",
    "strands_native_anthropic-thinking_latest-semconv":
        "Strands 1.62's Usage has no reasoning field (as strands_native_anthropic-thinking)",
    "autogen-agentchat_openinference_reasoning":
        "AutoGen 0.7.5's RequestUsage has prompt and completion tokens only (its OpenAI client never reads "
        "completion_tokens_details), the instrumentor's token counts are its",
    "agno_openinference_reasoning":
        "Agno 3.1.10's Claude._get_metrics keeps the usage's input, output and cache counts only, dropping "
        "output_tokens_details.thinking_tokens (its Metrics.reasoning_tokens stays 0), and "
        "openinference-instrumentation-agno 1.0.15 writes no llm.token_count.completion_details.reasoning anyway",
    "agno_openinference_confirmation":
        "openinference-instrumentation-agno 1.0.15 writes only llm.token_count.prompt / .completion (its model "
        "wrapper reads Metrics.input_tokens and output_tokens), never the reasoning tokens the Responses usage "
        "reported (output_tokens_details.reasoning_tokens): no span holds them",
}

# capture name -> why its trajectory does not show every question a call was asked anew (questions.py), where the
# spans hold it: a real fault left for the builder. The check is strict: the day they are all shown, the test fails
# until the entry is removed.
QUESTIONS_NOT_SHOWN: dict[str, str] = {}

# capture name -> what its emitter records of no image the model was sent, and which (call, n: the n-th image that call
# was sent anew, images.sent_anew): the trajectory cannot show an image no span holds (a marker says so where the span
# says it held one). Every other image sent is an image part of a user step or a tool result, once, with the bytes
# the model was sent (images.missing_images). Strict: a listed image shown fails until the entry is corrected.
UNRECORDED_IMAGES: dict[str, tuple[str, tuple[tuple[int, int], ...]]] = {
    "openai-sdk_openinference_image": (
        "openinference-instrumentation-openai 0.1.66 writes a base64 image over OPENINFERENCE_BASE64_IMAGE_MAX_LENGTH "
        "(32,000 characters by default) as __REDACTED__: turn 2's 50,086-character PNG data URL (37,546 bytes) is in "
        "no span (a marker saying so)", ((3, 0),)),
    "openai-sdk_openlit_image": (
        "OpenLIT 1.45's build_input_messages skips an image_url that is a data: URL, leaving no trace: turn 1's "
        "4,908-byte PNG and turn 2's 37,546-byte PNG are in no span (the https photo is shown)", ((0, 0), (3, 0))),
    "strands_native_image": (
        "Strands 1.65's tracer writes every image block's bytes as \"<replaced>\" (telemetry/tracer.py JSONEncoder): "
        "the question's two PNGs (5,920 and 182 bytes) and both screenshots (4,908 and 268 bytes) are in no span (each "
        "a marker saying so)", ((0, 0), (0, 1), (1, 0), (4, 0))),
    "google-adk_native_image": (
        "ADK 2.15's GenAI-conventions converter writes an inline image (a blob part) with its bytes replaced by "
        "\"<not serializable>\": the question's two PNGs (5,572 and 88 bytes) are markers saying so (its https image "
        "is shown); and it records no tool's media at all: each screenshot (457 and 409 bytes), which ADK moves to the "
        "FunctionResponse's parts and LiteLlm sends in a user message after the tool messages, is in no span",
        ((0, 0), (0, 1), (1, 0), (4, 0))),
    "google-genai_otel-genai_image": (
        "opentelemetry-instrumentation-google-genai 1.3b0 writes a function response as a tool_call_response part of "
        "its `response` alone (message.py _to_part), on the spans and in the log records alike: render_map's map, a "
        "128-byte PNG in the FunctionResponse's own parts (FunctionResponsePart, inline_data), which call 4 was sent, "
        "is in no span (its 258 tokens are in the call's gen_ai.usage.image.input_tokens; the question's two PNGs and "
        "gs:// photo are shown, the larger PNG referenced)",
        ((4, 0),)),
}

# capture name -> why its trajectory cannot name each tool call by the id the model gave it (every other capture's must:
# corpus.compare's `call_ids`). Strict: the day they all are, the test fails until the entry is removed.
_GEMINI_IDS = ("the Gemini API gives a function call no id (the fake LLM's are its own, answered only where a request "
               "named one): evalkit names it by the span and position")
_TEXT_FORMAT_IDS = ("a text-format agent: the model writes its actions in its text, with no id (the corpus makes them "
                    "up)")
CALL_IDS_NOT_RECORDED: dict[str, str] = {
    "gemini-cli_native": ("the Gemini API gives a function call no id: Gemini CLI names each itself "
                          "(`<name>_<time>_<index>`, the id its requests send), not the fake LLM's"),
    "dspy_mlflow": _TEXT_FORMAT_IDS,
    "dspy_openinference": _TEXT_FORMAT_IDS,
    "google-adk_openinference": _GEMINI_IDS,
    "google-adk_openinference_multi-agent": _GEMINI_IDS,
    "google-adk_openlit": _GEMINI_IDS,
    "google-genai_openinference": _GEMINI_IDS,
    "google-genai_openinference_google-search": _GEMINI_IDS,
    "google-genai_otel-genai": _GEMINI_IDS,
    "google-genai_otel-genai_chat-afc": _GEMINI_IDS,
    "google-genai_otel-genai_image": _GEMINI_IDS,
    "google-genai_otel-genai_prompt-cache": _GEMINI_IDS,
    "llamaindex_openinference_react": _TEXT_FORMAT_IDS,
    "llamaindex_openllmetry_react": _TEXT_FORMAT_IDS,
    "openai-agents_openlit": ("OpenLIT records one of an answer's parallel function calls only on its tool span, with "
                              "no id: restored under an id of evalkit's"),
    "openai-sdk_openlit_reasoning": ("OpenLIT keeps only the last of an answer's function calls (KNOWN_GAPS): each "
                                     "call it kept is named by its call_id (openlit.py), but call 1's retry is paired "
                                     "with call 0's step (the same tool and arguments), named by call 0's"),
    "openai-sdk_openllmetry_reasoning": "OpenLLMetry's openai instrumentation names a Responses function call by its "
                                        "item's id (fc_…), never its call_id, on every span",
}

# capture name -> why the session list's reasoning tokens (ingest's `reasoning_tokens` column, ingest/attribution.py)
# are not the steps' (`metrics.extra.reasoning_tokens`, which the mappers read). Strict: the day they agree, the test
# fails until the entry is removed.
LIST_REASONING_TOKENS_DIFFER: dict[str, str] = {
    "langgraph_openinference_anthropic-thinking":
        "OpenInference's LangChain tracer 0.1.80 reads a non-streamed ChatAnthropic call's counts from Anthropic's raw "
        "usage and no reasoning count there: the three calls' 97 + 88 + 76 are only in output.value (the LLMResult's "
        "usage_metadata, trajectory/mappers/langchain_openinference.py), so the list has the streamed calls' 128 of "
        "389. Reading it at ingest (scope-guarded JSONExtract of output.value) cost the flattening insert +1.6-2.3 µs "
        "a LangChain span (4 A/B runs, both orders, same peak memory; nothing on other spans): left out",
    "langgraph_openinference_interrupt":
        "the same tracer and model: the three non-streamed calls' 92 + 84 + 71 reasoning tokens are only in "
        "output.value, so the list has the streamed calls' 126 of 373 (as langgraph_openinference_anthropic-thinking)",
}

_PROVIDERS = {"openai.chat": "openai", "openai.responses": "openai", "anthropic.messages": "anthropic",
              "gemini.generate_content": "google", "bedrock.converse": "aws"}
# capture name -> the provider whose OpenAI-compatible chat API its chat calls stand for (the fake LLM serves them all
# alike): priced at that provider's rates, as the emitter names it (LiteLLM's `gen_ai.system`) or, naming none, the
# model does (AutoGen's `deepseek-r1`).
OPENAI_COMPATIBLE: dict[str, str] = {"litellm_native_reasoning-content": "deepseek",
                                     "autogen-agentchat_openinference_reasoning": "deepseek"}
# capture name -> the attribute its emitter records the session in where ingest's built-in keys (ingest/attribution.py,
# SESSION_KEYS) do not name it: set as the agent's session attribute before the replay, as its user sets it.
SESSION_ATTRIBUTES: dict[str, str] = {}


def expected_cost(truth: corpus.GroundTruth, chat_provider: str | None = None,
                  when: datetime | None = None) -> Decimal | None:
    """The calls' cost as genai-prices prices them at `when`, the time they were made: a provider's price may depend
    on it (DeepSeek's off-peak hours, 16:30-00:30 UTC, cost a quarter), and the service prices each call at its own."""
    total = Decimal(0)
    for call in truth.calls:
        try:
            price = genai_prices.calc_price(
                # genai-prices counts cached tokens within input_tokens, as the log does.
                genai_prices.Usage(input_tokens=call.input_tokens, output_tokens=call.output_tokens,
                                   cache_read_tokens=call.cache_read_tokens or None,
                                   cache_write_tokens=call.cache_write_tokens or None,
                                   # of those, the audio ones, at an audio model's rates of its own
                                   input_audio_tokens=call.input_audio_tokens or None,
                                   output_audio_tokens=call.output_audio_tokens or None,
                                   # and the web searches the provider ran, per search
                                   web_searches=call.web_search_requests or None),
                str(call.model),
                provider_id=chat_provider if chat_provider and call.api == "openai.chat" else _PROVIDERS[call.api],
                genai_request_timestamp=when)
        except LookupError:
            return None
        total += Decimal(str(price.total_price))
    return total


def _read_back(url: str) -> bytes | str:
    """An image reference's bytes as the service answers them, or its error."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return bytes(response.read())
    except urllib.error.HTTPError as exc:
        return f"{exc.code}: {exc.read().decode(errors='replace')[:200]}"


def _encodings(name: str) -> tuple[str, ...]:
    """Every capture replayed as its exporter sent it (protobuf), and each framework and instrumentation's first
    scenario (`<framework>_<instrumentation>`, no variant) also as OTLP/JSON: the JSON decoding is the receiver's, the
    same for every scenario of an emitter (its attribute types are its instrumentation's), and replaying all 189 twice
    was a tenth of the suite."""
    return ("protobuf", "json") if name.count("_") == 1 else ("protobuf",)


def _params() -> list[object]:
    params = []
    for name in corpus.names():
        marks = [pytest.mark.xfail(reason=KNOWN_GAPS[name], strict=True)] if name in KNOWN_GAPS else []
        params.extend(pytest.param(name, encoding, id=f"{name}-{encoding}", marks=marks)
                      for encoding in _encodings(name))
    return params


def test_the_corpus_is_not_empty() -> None:
    assert len(corpus.names()) >= 1


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def service(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Service]:
    """One service for every replay: each is an agent of its own (in a workspace named for its encoding), and an
    agent reads only its own spans, so no replay sees another's. A service started for each was half this module's
    time (~1 s each, 140 times)."""
    with databases_dropped_after():
        async with running_service(tmp_path_factory.mktemp("corpus") / "service") as started:
            yield started


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(("name", "encoding"), _params())
async def test_capture_replays_to_the_conversation_that_happened(service: Service, name: str, encoding: str) -> None:
    capture = corpus.load(name)
    agent, key = await service.new_agent(name.replace("_", "-")[:60], workspace=encoding)
    if name in SESSION_ATTRIBUTES:
        status, body = await asyncio.to_thread(service.running.call, "PATCH", f"/api/agents/{agent}",
                                               {"session_attribute": SESSION_ATTRIBUTES[name]})
        assert status == 200, body
    await asyncio.to_thread(corpus.replay, capture, service.running.otlp_http, key, encoding)

    session = capture.session_id
    if session is None:  # a framework run with no session id: its trace is its session
        listed = await service.get(f"/api/agents/{agent}/sessions")
        assert listed.status == 200, listed.text
        assert len(listed.body["sessions"]) == 1, listed.body
        session = listed.body["sessions"][0]["session_id"]
    # Asked with a wait, as a client does, though nothing is left to wait for: the replay returns once every
    # export is acknowledged, a read waits until what was acknowledged is flattened, and the quiet period is 0
    # (`running_service`), so the first check of the wait finds the session settled or it never is. A wait of
    # 10 s only made each capture left partial or unknown (openai-agents_openlit, mlflow_openai) wait 10 s
    # before failing.
    reply = await service.trajectory(agent, str(session), "?wait=1")
    assert reply.status == 200, reply.text
    document = reply.body
    assert document["extra"]["status"] == "valid", document["extra"]

    truth = corpus.GroundTruth.of(capture.llm_log)
    if name in UNRECORDED_CALLS:
        unrecorded = UNRECORDED_CALLS[name][1]
        answers_shown = {corpus.message_text(s.get("message")).strip() for s in corpus.llm_steps(document)}
        assert all(c.text.strip() not in answers_shown for c in truth.calls if c.seq in unrecorded), \
            "a listed call is a step of an LLM call: correct its UNRECORDED_CALLS entry"
        truth = truth.without_calls(unrecorded)
    if name in UNRECORDED_CACHE_READS:
        assert truth.cache_read_tokens > 0, "the capture reads nothing from the cache: remove its entry"
        truth = truth.without_cache_reads()
    if name in UNRECORDED_REASONING:
        calls = UNRECORDED_REASONING[name][1]
        steps_shown = {s.get("reasoning_content") for s in corpus.llm_steps(document)}
        dropped = [c for c in truth.calls if calls is None or c.seq in calls]
        assert all(c.reasoning and c.reasoning not in steps_shown for c in dropped), \
            "a listed call's reasoning is shown: correct its UNRECORDED_REASONING entry"
        truth = truth.without_reasoning_recorded(calls)
    if name in UNRECORDED_REASONING_TOKENS:
        assert not any(((s.get("metrics") or {}).get("extra") or {}).get("reasoning_tokens")
                       for s in corpus.llm_steps(document)), "reasoning tokens are shown: remove the entry"
        assert any(c.reasoning_tokens for c in truth.calls), "the model reported no reasoning tokens: remove the entry"
        truth = truth.without_reasoning_tokens()
    if name in CALL_IDS_NOT_RECORDED:
        assert any(" named " in problem for problem in corpus.compare(document, truth, call_ids=True)), \
            "every call is named by the model's id: remove its CALL_IDS_NOT_RECORDED entry"
    assert corpus.compare(document, truth, call_ids=name not in CALL_IDS_NOT_RECORDED) == []
    # Every question a call was asked anew is a user step of that call's trajectory, before its step.
    missing = questions.missing_questions(document, capture.llm_log)
    if name in QUESTIONS_NOT_SHOWN:
        assert missing, "every question is shown: remove its QUESTIONS_NOT_SHOWN entry"
    else:
        assert missing == []
    # Every image the model was sent is an image part of a user step (or of a tool result, a tool's), once, with the
    # bytes it was sent: a reference read back as the session page reads it.
    lost = UNRECORDED_IMAGES.get(name, ("", ()))[1]
    media = f"{service.api}/api/agents/{agent}/sessions/{quote(str(session), safe='')}/media?ref="
    assert await asyncio.to_thread(images.missing_images, document, capture.llm_log,
                                   lambda ref: _read_back(media + quote(ref, safe="")), lost) == []

    # Priced at the time the session's calls were recorded, as the service prices them (not at the test's time).
    made = min((datetime.fromisoformat(step["timestamp"]) for step in corpus.llm_steps(document)
                if step.get("timestamp")), default=None)
    cost = expected_cost(truth, OPENAI_COMPATIBLE.get(name), made)
    total = (document.get("final_metrics") or {}).get("total_cost_usd")
    if cost is None:
        assert total is None
    else:
        assert total is not None and abs(Decimal(str(total)) - cost) < Decimal("1e-9"), (total, cost)
    assert_schema_and_atif_valid(document)

    # The session list sums the typed columns ingest computed (ingest/attribution.py), not the trajectory: it must
    # count what the trajectory counts.
    listed = await service.get(f"/api/agents/{agent}/sessions?search={quote(str(session))}")
    assert listed.status == 200, listed.text
    (row,) = [r for r in listed.body["sessions"] if r["session_id"] == session]
    steps = corpus.llm_steps(document)
    final = document.get("final_metrics") or {}
    assert (row["llm_calls"], row["prompt_tokens"], row["completion_tokens"], row["cached_tokens"]) == (
        len(steps), final.get("total_prompt_tokens") or 0, final.get("total_completion_tokens") or 0,
        final.get("total_cached_tokens") or 0), row
    # Every model a step names is listed (a wrapped call's span may name it too, as DSPy's `openai/gpt-4o`
    # over the client's `gpt-4o`: the list shows both names).
    assert {str(s["model_name"]) for s in steps if s.get("model_name")} <= set(row["models"]), row
    assert abs((row["cost_usd"] or 0) - (final.get("total_cost_usd") or 0)) < 1e-9, row
    # A session whose trajectory flags a failure (a failed step, a tool result flagged as an error) is listed with
    # errors, and one that flags none with none: the list counts spans (trajectory/tables.py, migration 212).
    flagged = summarise(document).errors
    assert (row["errors"] > 0) == (flagged > 0), (row["errors"], flagged)
    # ... and the reasoning tokens the steps count (of their output tokens).
    reasoning = sum(((s.get("metrics") or {}).get("extra") or {}).get("reasoning_tokens") or 0 for s in steps)
    if name in LIST_REASONING_TOKENS_DIFFER:
        assert row["reasoning_tokens"] != reasoning, "the list counts the steps' reasoning tokens: remove the entry"
    else:
        assert row["reasoning_tokens"] == reasoning, (row["reasoning_tokens"], reasoning)
