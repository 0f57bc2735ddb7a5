"""Re-record: the Anthropic Python SDK with Anthropic's code execution and web fetch server tools, traced by
OpenInference.

    python3 -m venv /tmp/cap-anthropic-sdk_openinference_code-execution && \\
        /tmp/cap-anthropic-sdk_openinference_code-execution/bin/pip install \\
        anthropic==2.17.0 openinference-instrumentation-anthropic==3.1.0 openinference-instrumentation==0.1.72 \\
        openinference-semantic-conventions==0.1.42 opentelemetry-sdk==1.45.2 \\
        opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-anthropic-sdk_openinference_code-execution/bin/python \\
        tests/captures/anthropic-sdk_openinference_code-execution/record.py

Anthropic's server tools as its docs show them: the beta Messages API (`client.beta.messages`, `betas=
["code-execution-2025-08-25", "web-fetch-2025-09-10"]`) with `{"type": "code_execution_20250825", "name":
"code_execution"}` and `{"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 3}` beside two client tools.
The API runs them itself, within the answer: each a `server_tool_use` block (`bash_code_execution` with the command,
`text_editor_code_execution` with the file it writes, `web_fetch` with the url) and its result block
(`bash_code_execution_tool_result`: stdout, stderr, return code and the files the command made;
`text_editor_code_execution_tool_result`; `web_fetch_tool_result`: the page as a `document`, a PDF's base64, or an
error); the answer names the `container` the code ran in, which the loop passes to its next requests (as the docs
say, to keep the files), and `usage.server_tool_use.web_fetch_requests` counts the fetches. The loop re-sends every
block of an answer unchanged as the next request's assistant message.

Two user turns of one session (`using_session`), each its own trace under an application AGENT span, the client tools
`OITracer.tool` TOOL spans. Turn one (`beta.messages.create`): the model fetches a ridership page, writes its table to
a file, runs a command that fails (return code 1, polars not installed) and one that works (pandas), then calls
`get_exchange_rate` and `get_population` in parallel; `get_exchange_rate` raises (the rates service times out) and the
loop sends the model a `tool_result` with `is_error: true`; the model says it retries and calls it again, which
answers; then it runs a command that prints the figures and saves a chart (a file of the container) and answers. Turn
two (`beta.messages.stream`, read to the end: each command's input as `input_json_delta`, each result block whole in
its `content_block_start`, the container in the `message_delta`): the model fetches the operator's report page (the
fetch fails: `url_not_accessible`), fetches the report's PDF and runs a command comparing the years, and answers. Four
model calls; three fetches, four commands, one file written. As in the other OpenInference captures the application's
tracer provider is passed to the instrumentor only, so the SDK's own tracing (on by default) goes to the no-op global
provider. These are the newest releases on PyPI (anthropic 2.17.0, openinference-instrumentation-anthropic 3.1.0); the
versions recorded are in meta.json.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

MODEL = "claude-sonnet-4-5"
SESSION_ID = "oi-anthropic-code-execution-1"
BETAS = ["code-execution-2025-08-25", "web-fetch-2025-09-10"]
SYSTEM = ("You are a terse data analyst. Read pages with web_fetch and compute with code execution; use the tools for "
          "exchange rates and populations.")
RIDERSHIP_URL = "https://dados.lisboa.pt/ferries/ridership-2025"
QUESTIONS = [f"From {RIDERSHIP_URL}: the mean monthly ferry riders per Lisbon resident, and the fares in USD?",
             "Does the operator's 2024 annual report (ttsl.pt) agree?"]
TABLE = ("month,riders,revenue_eur\n2025-01,1180200,442575\n2025-02,1102400,413400\n2025-03,1251900,469462\n"
         "2025-04,1297300,486487\n2025-05,1334800,500550\n2025-06,1353200,507450\n")
RIDERSHIP_PAGE = f"Transtejo and Soflusa ferry ridership, January to June 2025 (monthly, all lines)\n\n{TABLE}"


def _report_pdf() -> bytes:
    """A one-page PDF of the operator's report, made here so that the fetch's document is a real PDF."""
    text = "Relatorio e Contas 2024. Passageiros transportados: 14 652 000."
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    pdf, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(pdf))
        pdf += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(pdf)
    pdf += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    pdf += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    return pdf + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


def _bash(command: str, stdout: str = "", stderr: str = "", return_code: int = 0,
          files: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"name": "bash_code_execution", "input": {"command": command},
            "result": {"type": "bash_code_execution_result", "stdout": stdout, "stderr": stderr,
                       "return_code": return_code,
                       "content": [{"type": "bash_code_execution_output", "file_id": file} for file in files]}}


def _fetched(url: str, title: str, source: dict[str, Any], retrieved_at: str) -> dict[str, Any]:
    return {"name": "web_fetch", "input": {"url": url},
            "result": {"type": "web_fetch_result", "url": url, "retrieved_at": retrieved_at,
                       "content": {"type": "document", "source": source, "title": title}}}


REPORT_URL = "https://ttsl.pt/docs/relatorio-e-contas-2024.pdf"
REPLIES = [
    {"server_tools": [
        _fetched(RIDERSHIP_URL, "Ferry ridership 2025 | Lisboa Aberta",
                 {"type": "text", "media_type": "text/plain", "data": RIDERSHIP_PAGE}, "2025-10-09T08:51:02Z"),
        {"name": "text_editor_code_execution",
         "input": {"command": "create", "path": "/tmp/ridership.csv", "file_text": TABLE},
         "result": {"type": "text_editor_code_execution_create_result", "is_file_update": False}},
        _bash("python3 -c \"import polars as pl; d = pl.read_csv('/tmp/ridership.csv'); "
              "print(d['riders'].mean(), d['revenue_eur'].sum())\"",
              stderr="Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
                     "ModuleNotFoundError: No module named 'polars'\n", return_code=1),
        _bash("python3 -c \"import pandas as pd; d = pd.read_csv('/tmp/ridership.csv'); "
              "print(d.riders.mean(), d.revenue_eur.sum())\"", stdout="1253300.0 2819924\n")],
     "text": "January to June: 1,253,300 riders a month on average, EUR 2,819,924 in fares. Getting the rate and "
             "Lisbon's population.",
     "tool_calls": [{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "USD"}},
                    {"name": "get_population", "arguments": {"city": "Lisbon"}}]},
    {"text": "The rates service timed out; trying again.",
     "tool_calls": [{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "USD"}}]},
    {"server_tools": [
        _bash("python3 -c \"import pandas as pd, matplotlib; matplotlib.use('Agg'); "
              "d = pd.read_csv('/tmp/ridership.csv'); d.plot(x='month', y='riders').figure.savefig("
              "'/tmp/outputs/riders.png'); print(round(d.revenue_eur.sum() * 1.0842), "
              "round(d.riders.mean() / 545923, 2))\"", stdout="3057362 2.3\n", files=("file_011CRiders2025png",))],
     "text": "About 2.3 ferry trips a month per resident (545,923 residents), and USD 3,057,362 in fares at 1.0842. "
             "Chart: riders.png."},
    {"server_tools": [
        {"name": "web_fetch", "input": {"url": "https://ttsl.pt/relatorio-2024"},
         "result": {"type": "web_fetch_tool_result_error", "error_code": "url_not_accessible"}},
        _fetched(REPORT_URL, "Relatorio e Contas 2024",
                 {"type": "base64", "media_type": "application/pdf",
                  "data": base64.b64encode(_report_pdf()).decode()}, "2025-10-09T09:02:47Z"),
        _bash("python3 -c \"print(round((1253300 * 12 / 14652000 - 1) * 100, 1))\"", stdout="2.6\n")],
     "text": "Broadly: the 2024 report gives 14,652,000 riders (1.22 million a month); 2025's first half runs 2.6% "
             "ahead of that pace."},
]
FAILS_ONCE = "get_exchange_rate"
TOOLS = [
    {"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 3},
    {"type": "code_execution_20250825", "name": "code_execution"},
    {"name": "get_exchange_rate", "description": "The exchange rate between two currencies",
     "input_schema": {"type": "object", "properties": {"base": {"type": "string"}, "quote": {"type": "string"}},
                      "required": ["base", "quote"]}},
    {"name": "get_population", "description": "A city's resident population",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
]
PACKAGES = ["anthropic", "openinference-instrumentation-anthropic", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("Anthropic's code execution (code_execution_20250825) and web fetch (web_fetch_20250910, max_uses 3) server "
         "tools on the beta Messages API (betas code-execution-2025-08-25, web-fetch-2025-09-10) beside two client "
         "tools: each run a server_tool_use block (bash_code_execution: the command; text_editor_code_execution: the "
         "file written; web_fetch: the url) and its result block in the answer (bash_code_execution_tool_result: "
         "stdout, stderr, return_code, the files made; text_editor_code_execution_tool_result; web_fetch_tool_result: "
         "a document, text or a PDF's base64, or web_fetch_tool_result_error), the answer's container passed to the "
         "next requests, usage.server_tool_use.web_fetch_requests; every answer's blocks re-sent unchanged as the next "
         "request's assistant message. Two turns of one session (two traces, an application AGENT span each, "
         "OITracer.tool spans): turn one beta.messages.create, a fetch, a file written, a command failing (return "
         "code 1) and one working, get_exchange_rate and get_population in parallel, get_exchange_rate raising (sent "
         "back as an is_error tool_result), then retried with text, then a command saving a chart and the answer; "
         "turn two beta.messages.stream, a fetch failing (url_not_accessible), a PDF fetched, a command, the answer. "
         "The SDK's own tracing uses the global tracer provider, which this app does not set: none of its spans are "
         "exported")


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="anthropic-sdk", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION_ID, notes=NOTES) as rec:
        rec.env()
        import anthropic
        from openinference.instrumentation import OITracer, TraceConfig, using_session
        from openinference.instrumentation.anthropic import AnthropicInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "ferry-analyst"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        AnthropicInstrumentor().instrument(tracer_provider=provider)
        tracer = OITracer(provider.get_tracer("ferry-analyst"), config=TraceConfig())
        failures = {FAILS_ONCE: 1}

        @tracer.tool(name="get_exchange_rate")
        def get_exchange_rate(base: str, quote: str) -> str:
            if failures[FAILS_ONCE]:
                failures[FAILS_ONCE] -= 1
                raise TimeoutError("the rates service did not answer in time")
            return f"1 {base} = 1.0842 {quote}"

        @tracer.tool(name="get_population")
        def get_population(city: str) -> str:
            return f"{city}: 545,923 residents (2021 census)"

        functions: dict[str, Any] = {"get_exchange_rate": get_exchange_rate, "get_population": get_population}
        client = anthropic.Anthropic()

        def ask(streamed: bool, **request: Any) -> Any:
            if not streamed:
                return client.beta.messages.create(**request)
            with client.beta.messages.stream(**request) as stream:
                for event in stream:  # input_json_delta, text_delta; the result blocks whole
                    if event.type == "content_block_start" and event.content_block.type.endswith("_tool_result"):
                        print("server tool result:", event.content_block.type)
                return stream.get_final_message()

        def run_tool(block: Any) -> dict[str, Any]:
            try:
                return {"type": "tool_result", "tool_use_id": block.id,
                        "content": functions[block.name](**block.input)}
            except Exception as exc:  # the model is told, as a real loop would
                return {"type": "tool_result", "tool_use_id": block.id, "is_error": True,
                        "content": f"{type(exc).__name__}: {exc}"}

        messages: list[dict[str, Any]] = []
        container: dict[str, Any] = {}  # the code's container once an answer names one: its files stay for later runs
        for turn, question in enumerate(QUESTIONS):
            messages.append({"role": "user", "content": question})
            with using_session(SESSION_ID), tracer.start_as_current_span(
                    "ferry-analyst", openinference_span_kind="agent") as agent:
                agent.set_input(question)
                while True:
                    answer = ask(turn == 1, model=MODEL, max_tokens=2048, system=SYSTEM, messages=messages,
                                 tools=TOOLS, betas=BETAS, **container)
                    if answer.container is not None:
                        container = {"container": answer.container.id}
                    # Every block back: the commands, what they printed, the pages fetched.
                    messages.append({"role": "assistant",
                                     "content": [b.model_dump(exclude_none=True) for b in answer.content]})
                    # Only the client tools are the loop's to run: the API ran the code and the fetches.
                    uses = [b for b in answer.content if b.type == "tool_use"]
                    if not uses:
                        break
                    messages.append({"role": "user", "content": [run_tool(b) for b in uses]})
                agent.set_output("".join(b.text for b in answer.content if b.type == "text"))
        rec.flush(provider)


if __name__ == "__main__":
    main()
