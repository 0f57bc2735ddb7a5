"""The UI's rendering without a server: Markdown of untrusted text, and the trajectory macros on real ATIF."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from evalkit.scoring.scorecard import ExperimentRecords, RunMetrics, RunRecord, build_scorecard
from evalkit.ui.charts import histogram, interval_bar
from evalkit.ui.experiment_pages import case_mean, cost_per_run, run_metrics
from evalkit.ui.render import environment, evaluator_version, markdown, seconds
from evalkit.ui.session_pages import (
    TEMPLATE_GLOBALS,
    _preamble,
    errors_of,
    has_error,
    span_rows,
    step_view,
    steps_page,
    subagents_of,
    trajectory_summary,
)
from tests.trajectory.span_fixtures import capture_document

ATIF = Path(__file__).parents[1] / "trajectory" / "data" / "atif"  # real trajectories, kept with the tests


@pytest.mark.parametrize(("text", "forbidden"), [
    ("<script>alert(1)</script>", "<script"),
    ("<img src=x onerror=alert(1)>", "<img"),
    ("[x](javascript:alert(1))", 'href="javascript'),
    ("[x](JaVaScRiPt:alert(1))", "href=\"javascript"),
    ("[x](vbscript:msgbox(1))", "href=\"vbscript"),
    ("[x](data:text/html;base64,PHNjcmlwdD4=)", 'href="data:'),
    ("![x](javascript:alert(1))", 'src="javascript'),
    ("<a href=\"javascript:alert(1)\">x</a>", "<a href"),
    ("<iframe src=x></iframe>", "<iframe"),
])
def test_markdown_never_passes_html_or_script_links(text: str, forbidden: str) -> None:
    html = str(markdown(text)).lower()
    assert forbidden.lower() not in html, html


def test_markdown_keeps_what_markdown_is_for() -> None:
    text = "**bold**, `code`, [docs](https://example.com/a?b=1), [rel](/x)\n\n| a | b |\n|---|---|\n| 1 | 2 |"
    html = str(markdown(text))
    assert "<strong>bold</strong>" in html and "<code>code</code>" in html and "<table>" in html
    assert 'rel="nofollow noopener noreferrer" href="https://example.com/a?b=1"' in html and 'href="/x"' in html


def _reference(name: str) -> dict[str, Any]:
    return json.loads((ATIF / name).read_text())  # type: ignore[no-any-return]


class _Request:
    def __init__(self, query: dict[str, str]) -> None:
        self.query = query
        from yarl import URL

        self.rel_url = URL("/agents/a@w/sessions/s").with_query(query)


def test_steps_pair_tool_calls_with_results_and_open_subagents_in_place() -> None:
    document = _reference("fast-agent__harbor_multiagent_v1_7.json")
    view = step_view(document["steps"][1])
    calls = {p["call"]["function_name"]: p["result"]["content"] for p in view["calls"]}
    assert calls == {"worker": "worker complete", "shell": "/workspace"}  # paired by id, not by position
    subagents = subagents_of(document)
    assert subagents, "the reference trajectory embeds its subagent"
    env = _environment()
    html = env.from_string('{% from "_macros.html" import steps_list %}{{ steps_list(views, subagents, page, '
                           'pages, page_urls) }}').render(subagents=subagents, **steps_page(_Request({}), document))
    assert '<details class="subagent">' in html
    child = next(iter(subagents.values()))
    assert f"({len(child['steps'])} steps)" in html
    summary = trajectory_summary(document)
    assert summary["steps"] == len(document["steps"]) and summary["tool_calls"] == 2


def _environment() -> Any:
    """The templates' environment with the globals the routes add (routes.add_routes)."""
    env = environment()
    env.globals.update(TEMPLATE_GLOBALS)
    return env


def test_a_closed_subagent_says_it_holds_a_failure() -> None:
    """A real Agno team under OpenLIT: the member's tool failed once, inside the subagent the delegation opens.
    Folded, the subagent's summary says so; the other, with no failure, says nothing."""
    document = capture_document("agno_openlit", "agno-openlit-trip-1")
    (member,) = document["subagent_trajectories"]
    assert errors_of(member) == 1 and errors_of(document) == 1
    html = _environment().from_string(
        '{% from "_macros.html" import steps_list %}{{ steps_list(views, subagents, page, pages, page_urls) }}'
    ).render(subagents=subagents_of(document), **steps_page(_Request({}), document))
    (summary,) = re.findall(r'<details class="subagent[^"]*"><summary>(.*?)</summary>', html)
    assert f"Subagent {member['agent']['name']}" in summary and "1 error<" in summary, summary
    assert '<details class="subagent has-error">' in html

    member["steps"] = [s for s in member["steps"] if not has_error(s)]
    html = _environment().from_string(
        '{% from "_macros.html" import steps_list %}{{ steps_list(views, subagents, page, pages, page_urls) }}'
    ).render(subagents=subagents_of(document), **steps_page(_Request({}), document))
    assert "error" not in re.findall(r'<details class="subagent[^"]*"><summary>(.*?)</summary>', html)[0]


def test_copied_context_is_marked_as_such() -> None:
    """A real Strands Graph: turn two's node agents are re-sent turn one (copied context). Each such step says so on
    the page, and no step the run itself made does."""
    from tests.captures import corpus

    name = "strands_native_graph"
    document = capture_document(name, str(corpus.load(name).session_id))
    steps = [step for sub in document["subagent_trajectories"] for step in sub["steps"]]
    copied = [step for step in steps if step.get("is_copied_context")]
    assert copied and len(copied) < len(steps)
    env = _environment()
    for step in steps:
        html = env.from_string('{% from "_macros.html" import step %}{{ step(view, {}) }}').render(
            view=step_view(step))
        assert ("copied context</span>" in html) == bool(step.get("is_copied_context")), step
        assert (" copied" in html.split(">", 1)[0]) == bool(step.get("is_copied_context"))


def test_a_summary_counts_a_step_as_erring_exactly_when_its_view_shows_an_error() -> None:
    failed = {"extra": {"is_error": True}, "content": "boom"}
    steps = [
        {"source": "agent", "extra": {"error": "rate limited"}},  # the step itself failed
        {"source": "agent", "metrics": {"extra": {"error": "x"}}},  # an error the view shows, but not as has_error
        {"source": "agent", "tool_calls": [{"tool_call_id": "a"}],
         "observation": {"results": [{"source_call_id": "a", **failed}]}},  # paired by id
        {"source": "agent", "tool_calls": [{"tool_call_id": "a"}],
         "observation": {"results": [failed]}},  # paired by position
        {"source": "agent", "tool_calls": [{"tool_call_id": "a"}],
         "observation": {"results": [{"source_call_id": "b", **failed}]}},  # an orphan: not the call's error
        {"source": "agent", "observation": {"results": [failed]}},  # no call to pair with
        {"source": "agent", "tool_calls": [{"tool_call_id": "a"}],
         "observation": {"results": [{"source_call_id": "a", "content": "ok"}]}},
    ]
    assert [has_error(s) for s in steps] == [step_view(s)["has_error"] for s in steps]
    assert [has_error(s) for s in steps] == [True, False, True, True, False, False, False]
    assert trajectory_summary({"steps": steps})["errors"] == 3


def test_long_trajectories_are_paged_on_the_server() -> None:
    document = {"steps": [{"step_id": i + 1, "source": "user", "message": f"m{i}"} for i in range(3000)]}
    page = steps_page(_Request({"page": "30"}), document)
    assert page["pages"] == 30 and len(page["views"]) == 100 and page["views"][0]["step"]["step_id"] == 2901
    assert sorted(page["page_urls"]) == [1, 20, 29, 30]


def test_span_tree_nests_children_under_parents_in_start_order() -> None:
    spans = [{"span_id": "c2", "parent_span_id": "r", "start_time_unix_nano": 30, "end_time_unix_nano": 40},
             {"span_id": "r", "parent_span_id": None, "start_time_unix_nano": 0, "end_time_unix_nano": 100},
             {"span_id": "g", "parent_span_id": "c1", "start_time_unix_nano": 15, "end_time_unix_nano": 20},
             {"span_id": "c1", "parent_span_id": "r", "start_time_unix_nano": 10, "end_time_unix_nano": 25},
             {"span_id": "orphan", "parent_span_id": "gone", "start_time_unix_nano": 50, "end_time_unix_nano": 60}]
    rows = span_rows(spans)
    assert [(r["span"]["span_id"], r["depth"]) for r in rows] == [
        ("r", 0), ("c1", 1), ("g", 2), ("c2", 1), ("orphan", 0)]
    assert rows[1]["left"] == 10.0 and rows[1]["width"] == 15.0


@pytest.mark.parametrize("name", sorted(p.name for p in ATIF.glob("*.json")))
def test_every_kept_trajectory_renders(name: str) -> None:
    """Each real ATIF document (Harbor's golden ones, v1.5 to v1.7) renders on the session page's template."""
    document = _reference(name)
    html = _environment().get_template("session.html").render(
        agent_id="a@w", session_id="s", document=document, summary=trajectory_summary(document),
        subagents=subagents_of(document), path="/", csrf="", **steps_page(_Request({}), document))
    assert html.count('<article class="step') >= min(len(document["steps"]), 100)


def test_charts_count_every_value_and_say_what_is_unknown() -> None:
    svg = str(histogram([0.0, 1.0, 1.0, 2.0, None, None], title="Cost <per> run", bins=2))
    assert "(2 unknown)" in svg and "Cost &lt;per&gt; run" in svg
    assert "1 runs from 0" in svg and "3 runs from 1" in svg  # [0, 1) and [1, 2]: the top edge is in the last bin
    assert "4 runs from 5" in str(histogram([5.0] * 4, title="same", bins=3))
    assert "no values" in str(histogram([None], title="none"))
    # Axis ends written as the page writes durations, and one value labelled once.
    durations = str(histogram([0.01408, 0.1687], title="Duration per run", shown=seconds))
    assert ">14 ms</text>" in durations and ">169 ms</text>" in durations and "0.01408" not in durations
    assert str(histogram([120.0] * 3, title="Tokens per run")).count(">120</text>") == 1
    bar = str(interval_bar(0.5, 0.25, 0.75, width=112))  # the axis runs 6..106: 0.5 sits at 56
    assert 'cx="56.00"' in bar and 'x1="31.00"' in bar and 'x2="81.00"' in bar
    assert "no value" in str(interval_bar(None, None, None))


def test_an_evaluator_version_is_shown_once_named() -> None:
    assert evaluator_version("contains/1/f7591471b69b3474", "contains") == "v1/f7591471b69b3474"
    assert evaluator_version("1", "mentions_expected") == "v1"
    assert evaluator_version("other/2", "contains") == "vother/2"  # another evaluator's name is kept


def test_every_status_badge_has_a_colour() -> None:
    """A status the service has (an experiment's, a run's, a trajectory's) is coloured, never a grey unknown."""
    from typing import get_args

    from evalkit.scoring.experiments import STATUSES
    from evalkit.scoring.models import RecordRun

    css = (Path(__file__).parents[2] / "ui" / "static" / "app.css").read_text()
    run = get_args(RecordRun.model_fields["status"].annotation)
    trajectory = ("valid", "partial", "invalid", "unavailable")
    missing = [s for s in (*STATUSES, *run, *trajectory) if f".status-{s}," not in css and f".status-{s} {{" not in css]
    assert missing == []


def scored_run(case: str, status: str = "completed", **metrics: float) -> RunRecord:
    return RunRecord(run_id=f"{case}#0", case_id=case, repetition=0, status=status,  # type: ignore[arg-type]
                     trajectory_status="valid", metrics=RunMetrics(**metrics))  # type: ignore[arg-type]


def test_the_comparison_page_sums_up_the_runs_as_the_scorecard_does() -> None:
    """One experiment, one cost: the comparison page's run figures are the scorecard's. A cancelled run's spend
    counts (it was spent), and a run's tokens are known only where both counts are."""
    runs = [scored_run("a", cost_usd=0.25, input_tokens=100, output_tokens=20, duration_seconds=3.0),
            scored_run("b", cost_usd=0.5, input_tokens=200, output_tokens=40, duration_seconds=5.0),
            scored_run("c", status="cancelled", cost_usd=0.125, input_tokens=50, duration_seconds=1.0)]
    records = ExperimentRecords(runs, [])
    sc = build_scorecard(records)
    page = run_metrics(records)
    assert page["cost_usd"] == sc.cost_usd
    assert page["cost_usd"].total == pytest.approx(0.875)  # the cancelled run's $0.125 included
    assert page["tokens"] == sc.tokens
    assert (page["tokens"].n, page["tokens"].missing, page["tokens"].total) == (2, 1, None)  # c: no output count
    assert page["duration_seconds"] == sc.duration_seconds


def test_the_comparison_never_shows_an_unpriced_case_or_experiment_as_cheap() -> None:
    """Case "a" ran twice: once unpriced, once failed before any LLM call ($0). Its cost is unknown, not the $0
    of the one priced run. The experiment's cost per run is its scorecard's: over the priced runs, saying how many
    (the unpriced one is never taken as $0), and unknown when none is priced."""
    def run(case: str, repetition: int, status: str, **metrics: Any) -> RunRecord:
        return RunRecord(run_id=f"{case}#{repetition}", case_id=case, repetition=repetition,
                         status=status, trajectory_status="valid", metrics=RunMetrics(**metrics))  # type: ignore[arg-type]

    records = ExperimentRecords([run("a", 0, "completed", cost_usd=None, duration_seconds=2.0),
                                 run("a", 1, "failed", cost_usd=0.0, duration_seconds=None),
                                 run("b", 0, "completed", cost_usd=0.25, duration_seconds=1.0),
                                 run("b", 1, "completed", cost_usd=0.75, duration_seconds=3.0)], [])
    assert case_mean(records, "a", "cost_usd") is None
    assert case_mean(records, "b", "cost_usd") == pytest.approx(0.5)
    assert case_mean(records, "a", "duration_seconds") == pytest.approx(2.0)  # a duration: the runs that know it
    assert cost_per_run(run_metrics(records)["cost_usd"]) == "$0.3333 (3 of 4 priced)"
    assert cost_per_run(run_metrics(ExperimentRecords(records.runs[2:], []))["cost_usd"]) == "$0.5000"
    assert cost_per_run(run_metrics(ExperimentRecords(records.runs[:1], []))["cost_usd"]) == "unknown"


def _capture(name: str) -> dict[str, Any]:
    from tests.captures import corpus

    return capture_document(name, str(corpus.load(name).session_id))


def _session_html(document: dict[str, Any], query: dict[str, str] | None = None) -> str:
    return _environment().get_template("session.html").render(
        agent_id="a@w", session_id="s", document=document, summary=trajectory_summary(document),
        subagents=subagents_of(document), path="/", csrf="", **steps_page(_Request(query or {}), document))


def _text(html: str) -> str:
    """What a reader sees of some HTML: its text, spaces collapsed."""
    import html as entities

    return " ".join(entities.unescape(re.sub(r"<[^>]+>", " ", html)).split())


def _article(html: str, step_id: int) -> str:
    """A top-level step's article (one without a subagent opened in it), up to the next step's."""
    start = html.index(f'id="step-{step_id}"')
    end = html.find('<article class="step', start)
    return html[html.rindex("<article", 0, start):end if end >= 0 else len(html)]


def test_reasoning_says_its_effort_and_tokens() -> None:
    """A real openai-agents capture on o4-mini (effort medium; its guardrail's agent low): each step's reasoning says
    the effort its request asked and the tokens it spent, which its header counts within its output tokens; the
    bar sums them, the guardrail's agents' too, as it sums the output tokens."""
    document = _capture("openai-agents_openinference_guardrails")
    html = _session_html(document)
    reasoned = [s for s in document["steps"] if s.get("reasoning_content")]
    assert len(reasoned) == 4
    for step in reasoned:
        tokens, out = step["metrics"]["extra"]["reasoning_tokens"], step["metrics"]["completion_tokens"]
        text = _text(_article(html, step["step_id"]))
        assert f"{out:,} out ({tokens:,} reasoning)" in text, text
        assert f"Reasoning · effort {step['reasoning_effort']} · {tokens:,} tokens" in text, text
    every = [s for t in (document, *document["subagent_trajectories"]) for s in t["steps"]]
    total = sum((s.get("metrics") or {}).get("extra", {}).get("reasoning_tokens") or 0 for s in every)
    assert total == 560 and any(s.get("reasoning_effort") == "low" for s in every)
    bar = _text(html.split('<dl class="summary-bar">', 1)[1].split("</dl>", 1)[0])
    assert f"{document['final_metrics']['total_completion_tokens']:,} out ({total:,} reasoning)" in bar, bar


def test_reasoning_tokens_without_the_reasoning_say_it_was_not_recorded() -> None:
    """A real Google ADK capture on gemini-2.5-flash: Gemini counts its thinking but answers no thought text. The
    step says it reasoned, and that no text of it was recorded, rather than nothing."""
    document = _capture("google-adk_native_thinking")
    html = _session_html(document)
    unwritten = [s for s in document["steps"] if not s.get("reasoning_content")
                 and ((s.get("metrics") or {}).get("extra") or {}).get("reasoning_tokens")]
    assert unwritten
    for step in unwritten:
        text = _text(_article(html, step["step_id"]))
        assert f"Reasoning: no text recorded · {step['metrics']['extra']['reasoning_tokens']:,} tokens" in text, text


def test_a_run_that_stops_to_ask_a_person_and_their_answer() -> None:
    """A real LangGraph human-in-the-loop capture: the step that stopped to ask reads as waiting for a person, what
    it asked with its line breaks and the answers allowed; the resume step is the person's answer to it (linked),
    each decision with the tool call it decides on."""
    document = _capture("langgraph_openinference_interrupt")
    (asking,) = [s for s in document["steps"] if (s.get("extra") or {}).get("interrupt")]
    (answer,) = [s for s in document["steps"] if (s.get("extra") or {}).get("from") == "resume"]
    html = _session_html(document)
    asked = _article(html, asking["step_id"])
    assert "waiting for a person</span>" in asked and ' waiting"' in asked.split(">", 1)[0]
    assert f'<pre class="message asked">{asking["message"].replace(chr(39), "&#39;")}</pre>' in asked, asked
    assert "Answers allowed: approve, edit, reject" in _text(asked)
    assert '<div class="markdown message">' not in asked  # its lines kept, not run together as Markdown
    replied = _article(html, answer["step_id"])
    assert "a person's answer</span>" in replied
    assert f'href="#step-{asking["step_id"]}"' in replied and f"to #{asking['step_id']}" in _text(replied)
    assert "approve book_hotel" in _text(replied), _text(replied)

    # An edit names its new arguments as JSON text, a rejection its message; either is the person's text, escaped.
    edited = {**answer, "message": json.dumps({"decisions": [
        {"type": "edit", "edited_action": {"name": "book_hotel", "args": {"city": "<script>x</script>"}}}]})}
    html = _session_html({**document, "steps": [edited if s is answer else s for s in document["steps"]]})
    assert ('<li><strong>edit</strong> <code>book_hotel</code> <span class="muted">with the arguments</span> '
            "<code>{&#34;city&#34;: &#34;&lt;script&gt;x&lt;/script&gt;&#34;}</code></li>") in html
    rejected = {**answer, "message": json.dumps({"decisions": [{"type": "reject", "message": "not <b>now</b>"}]})}
    html = _session_html({**document, "steps": [rejected if s is answer else s for s in document["steps"]]})
    assert "<li><strong>reject</strong> <code>book_hotel</code>: not &lt;b&gt;now&lt;/b&gt;</li>" in html

    # The answer on a later page than the question links to the step on its page.
    steps = document["steps"]
    at = steps.index(answer)
    padded = {**document, "steps": [*steps[:at], *({"step_id": 0, "source": "user", "message": f"m{i}"}
                                                   for i in range(120)), *steps[at:]]}
    for i, step in enumerate(padded["steps"]):
        step["step_id"] = i + 1
    html = _session_html(padded, {"page": "2"})
    assert f'href="/agents/a@w/sessions/s?page=1#step-{asking["step_id"]}"' in _article(html, answer["step_id"])


def test_a_guardrails_trip_reads_as_the_run_stopping() -> None:
    """A real openai-agents capture whose input guardrail trips on turn two: the turn's step of no LLM call says the
    run stopped, with the tripwire's message as text, not a JSON object."""
    document = _capture("openai-agents_openinference_guardrails")
    (tripped,) = [s for s in document["steps"] if (s.get("extra") or {}).get("run_error")]
    text = _text(_article(_session_html(document), tripped["step_id"]))
    assert "run stopped" in text and tripped["extra"]["error"]["message"] in text, text
    assert '"status"' not in text, text


def test_a_failed_tool_that_answered_nothing_shows_its_error() -> None:
    """A real OpenLIT capture: the exchange-rate tool timed out and the model was sent no text. Its result shows the
    error its span recorded, with the exception folded, not an empty red box."""
    document = _capture("openai-sdk_openlit_reasoning")
    step = next(s for s in document["steps"] for r in (s.get("observation") or {}).get("results") or []
                if (r.get("extra") or {}).get("is_error") and not r.get("content"))
    article = _article(_session_html(document), step["step_id"])
    assert "TimeoutError: exchange-rate service timed out" in _text(article), _text(article)
    assert "1 exception recorded" in _text(article)


def test_a_request_every_attempt_at_which_failed_reads_as_one_failed_request() -> None:
    """A real LangChain capture whose `ModelRetryMiddleware` ran out of retries: the request is one step saying it
    failed, the attempts before its last listed on it as before this one (not "before this answer": none came)."""
    document = _capture("langgraph_openinference_model-retry-exhausted")
    (failed,) = [s for s in document["steps"] if (s.get("extra") or {}).get("failed_attempts")]
    text = _text(_article(_session_html(document), failed["step_id"]))
    assert "request failed" in text and "2 failed attempts before this one" in text, text
    assert "before this answer" not in text, text


def test_audio_inline_referenced_or_elsewhere_and_odd_shapes_never_fail() -> None:
    """The real audio capture's voice note as a small data URL inline (played as itself), as a reference (played
    through the page's `?media=`), at another site (a link, never loaded), and audio parts and spoken-answer notes of
    odd shapes: each renders, none as `[audio: …]` text, none raises."""
    document = _capture("openai-sdk_openinference_audio")
    (asked,) = [s for s in document["steps"] if s["source"] == "user" and isinstance(s["message"], list)]
    (part,) = [p for p in asked["message"] if p["type"] == "audio"]
    inline = "data:audio/wav;base64,UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="

    def with_audio(*sources: Any) -> str:
        message = [asked["message"][0], *({"type": "audio", "source": source} for source in sources)]
        changed = {**asked, "message": message}
        return _session_html({**document, "steps": [changed if s is asked else s for s in document["steps"]]})

    html = _article(with_audio({**part["source"], "path": inline}, part["source"],
                               {"media_type": "audio/mpeg", "path": "https://example.com/a.mp3", "duration_sec": 75},
                               {"media_type": "audio/wav", "path": "javascript:alert(1)", "duration_sec": "long"},
                               {"media_type": None, "path": None}, {}), asked["step_id"])
    sources = re.findall(r'<audio controls preload="metadata" src="([^"]+)"', html)
    assert sources == [inline, "?media=" + part["source"]["path"].replace(":", "%3A").replace("/", "%2F")], sources
    assert 'href="https://example.com/a.mp3"' in html and "<audio" not in html.split("example.com/a.mp3")[1]
    assert 'src="javascript' not in html and "[audio" not in _text(html)
    assert "audio/wav · 0.5 s" in _text(html)
    for odd in ("yes", None, {"format": 7, "duration_sec": "x", "bytes": True}, {"not_recorded": ""}):
        spoken = next(s for s in document["steps"] if (s.get("extra") or {}).get("audio_answer"))
        changed = {**spoken, "extra": {**spoken["extra"], "audio_answer": odd}}
        _session_html({**document, "steps": [changed if s is spoken else s for s in document["steps"]]})


def test_documents_are_told_by_their_shape_and_odd_results_stay_text() -> None:
    """What makes a result a list of documents is its shape: objects each with a text and an id or a score (a
    retriever's), or a web URL (a web search's pages); anything else (a list of numbers, objects with neither, one
    item not an object, a `javascript:` URL, a text that is no JSON) stays the text it is."""
    from evalkit.ui.session_pages import documents

    found = documents('[{"id": 3, "score": 0.5, "text": "' + "word " * 60 + '", "metadata": {"page": 2}}]')
    assert found is not None and found["kind"] == "documents"
    (item,) = found["items"]
    assert item["id"] == "3" and item["metadata"] == [("page", "2")] and item["excerpt"].endswith("…")
    assert len(item["excerpt"]) <= 141
    pages = documents([{"type": "text", "text": '[{"url": "https://a.example/x", "title": "A"}]'}])
    assert pages is not None and pages["kind"] == "pages"
    for odd in ("[1, 2]", '[{"text": "no id nor score"}]', '[{"id": 1, "text": "a"}, "b"]', "[]", "[not json",
                '[{"url": "javascript:alert(1)"}]', '{"id": 1, "text": "a"}', None, 7, [{"type": "image"}],
                '[{"id": true, "text": "a"}]', '[{"score": "high", "text": "a"}]'):
        assert documents(odd) is None, odd


def test_compactions_token_modalities_and_citations_of_odd_shapes_never_fail() -> None:
    """A real capture's compaction step, tokens and citations given odd shapes (what a pushed ATIF document may hold):
    the page still renders, showing what it can read."""
    document = _capture("langgraph_openinference_summarization")
    compacted = next(s for s in document["steps"] if (s.get("extra") or {}).get("context_compaction"))
    for odd in ("yes", [], {"kind": "trim", "kept_messages": 3}, {"summarized_messages": "4", "by": None}):
        changed = {**compacted, "extra": {**compacted["extra"], "context_compaction": odd},
                   "metrics": {**compacted["metrics"], "extra": {"prompt_tokens_by_modality": odd,
                                                                  "input_audio_tokens": "x",
                                                                  "web_search_requests": odd},
                               }}
        changed["extra"]["annotations"] = [odd, {"type": "web_search_result_location", "url": "https://a.example",
                                                 "cited_text": odd}]
        html = _article(_session_html({**document, "steps": [changed if s is compacted else s
                                                             for s in document["steps"]]}), compacted["step_id"])
        if odd == {"kind": "trim", "kept_messages": 3}:
            assert "Context compacted (trim): 3 messages kept." in _text(html), _text(html)
    view = step_view({"source": "agent", "metrics": {"prompt_tokens": 9, "extra": {
        "prompt_tokens_by_modality": {"TEXT": 1, "image": 5, "audio": 3}, "input_audio_tokens": 4}}})
    assert view["prompt_parts"] == ["5 image", "3 audio"]  # the counts by modality win over the audio count


def test_retrievals_suggestions_grounding_and_working_memory_of_odd_shapes_never_fail() -> None:
    """The real captures' retrievals (LangChain), Google Search suggestions and grounding supports (Gemini) and
    working memory (Mastra) given odd shapes, what a pushed ATIF document may hold: each page renders what it can read,
    and Google's HTML and a query holding HTML stay text."""
    rag = _capture("langchain_openinference_rag")
    step = next(s for s in rag["steps"] for r in (s.get("observation") or {}).get("results") or ()
                if (r.get("extra") or {}).get("retrievals"))
    result = next(r for r in step["observation"]["results"] if (r.get("extra") or {}).get("retrievals"))
    for odd in ("yes", [7, None, {}], [{"retriever": None, "query": {"q": "<b>x</b>"}, "documents": "no"},
                                      {"documents": [{"content": "a text, no id"}, {"neither": 1}, 3],
                                       "error": {"message": "<script>x</script>", "type": "RetrieverError"}}]):
        changed = {**step, "observation": {"results": [
            {**r, "extra": {**r["extra"], "retrievals": odd}} if r is result else r
            for r in step["observation"]["results"]]}}
        html = _article(_session_html({**rag, "steps": [changed if s is step else s for s in rag["steps"]]}),
                        step["step_id"])
        if isinstance(odd, list) and len(odd) == 2:
            text = "".join(_text(html).split())  # tags split the text with spaces: compare without any
            assert "0documentsfoundbyaretrieverfor“{\"q\":\"<b>x</b>\"}”" in text, text
            assert "1documentfoundbyaretriever,thenitfailed:RetrieverError<script>x</script>atext,noid" in text, text
            assert "<script>x" not in html and "<b>x" not in html
    grounded = _capture("google-genai_openinference_google-search")
    answer = next(s for s in grounded["steps"] if (s.get("extra") or {}).get("annotations"))
    call = answer["tool_calls"][0]
    for queries in (None, "one", [1, "", "<img src=x onerror=alert(1)>", "<img src=x onerror=alert(1)>"]):
        changed = {**answer, "tool_calls": [{**call, "arguments": {"queries": queries},
                                             "extra": {**call["extra"], "search_entry_point": "<script>x()</script>"}}],
                   "extra": {**answer["extra"], "annotations": [
                       {"type": "grounding_support", "url": "https://a.example", "start_index": 5, "end_index": 2},
                       {"type": "grounding_support", "url": "https://a.example", "start_index": 0, "end_index": 99999},
                       {"type": "grounding_support", "url": "https://b.example", "start_index": True, "end_index": 3},
                       {"type": "grounding_support", "url": "https://c.example", "start_index": 0, "end_index": 3}]}}
        html = _article(_session_html({**grounded, "steps": [changed if s is answer else s
                                                             for s in grounded["steps"]]}), answer["step_id"])
        assert "<script>x" not in html and "<img src=x" not in html
        assert re.findall(r'<q class="cited">([^<]*)</q>', html) == [answer["message"][:3]]
        chips = re.findall(r'<a class="chip" href="([^"]+)"', html)
        assert chips == (["https://www.google.com/search?q=%3Cimg+src%3Dx+onerror%3Dalert%281%29%3E"]
                         if isinstance(queries, list) else [])
    memory = _capture("mastra_native_memory")
    noted = next(s for s in memory["steps"] if (s.get("extra") or {}).get("working_memory"))
    for odd in (7, "  ", {"note": "x"}, "<script>x</script> **kept**"):
        changed = {**noted, "extra": {**noted["extra"], "working_memory": odd}}
        html = _article(_session_html({**memory, "steps": [changed if s is noted else s for s in memory["steps"]]}),
                        noted["step_id"])
        assert ('class="working-memory"' in html) == (isinstance(odd, str) and bool(odd.strip()))
        assert "<script>x" not in html
    view = step_view({"source": "agent", "extra": {"context_compaction": {"agent": "summarizer"}}})
    html = _environment().from_string('{% from "_macros.html" import step %}{{ step(view, {}) }}').render(view=view)
    assert "Context compacted: summarized by agent summarizer." in _text(html), _text(html)


def test_code_runs_edits_fetches_file_citations_and_encrypted_compactions_of_odd_shapes_never_fail() -> None:
    """The real code-execution, file-search and compaction captures given odd shapes, what a pushed ATIF document may
    hold: a command's result with a return code that is no number or streams that are no text stays the text it is;
    output holding HTML stays text; a file citation with no file id is no citation, one with an index that is no
    number still its file; an encrypted compaction with nothing known still says what it can; none raises."""
    from evalkit.ui.session_pages import _code, _edited, _omitted, _ran, documents

    assert _ran('{"return_code": 0, "stdout": "a\\n", "stderr": ""}') == {
        "return_code": 0, "stdout": "a\n", "stderr": "", "files": []}
    for odd in ('{"return_code": "0", "stdout": "", "stderr": ""}', '{"return_code": true, "stdout": "", "stderr": ""}',
                '{"return_code": 0, "stdout": null, "stderr": ""}', '{"return_code": 0}', "[1]", "{not json", None, 7,
                [{"type": "image"}]):
        assert _ran(odd) is None, odd
    assert _ran('{"return_code": 2, "stdout": "", "stderr": "", "files": [1, true, null, "f"]}')["files"] == ["1", "f"]
    assert _code({"command": "ls"}) == {"command": "ls", "code": None, "path": None, "texts": [], "others": []}
    # The code interpreter's code (`{"code"}`) is code; a code that is no text is no code.
    assert _code({"code": "print(1)", "container_id": "c"}) == {
        "command": None, "code": "print(1)", "path": None, "texts": [], "others": [("container_id", '"c"')]}
    assert _code({"code": 1}) is None
    for odd in (None, "ls", {"command": 1}, {"command": "ls", "cwd": "/"}, {"command": "view", "path": 3}):
        assert _code(odd) is None, odd
    assert _edited({"path": "/a"}, '{"is_file_update": true}') == {"path": "/a", "updated": True, "text": None}
    assert _edited(None, '{"lines": ["-a", "+b"], "oldStart": 1}')["text"] == "-a\n+b"
    for odd in ('{"is_file_update": "yes"}', '{"is_file_update": false, "x": 1}', '{"lines": [1]}', "{}"):
        assert _edited({"path": "/a"}, odd) is None, odd
    assert _omitted("[application/pdf: 638 bytes, omitted]") == {"media_type": "application/pdf", "bytes": 638}
    assert _omitted("see [application/pdf: 638 bytes, omitted]") is None and _omitted(None) is None
    found = documents('[{"name": "a-name", "content": "t", "id": 1}, '
                      '{"title": "", "name": 7, "text": "u", "score": 1}]')
    assert found is not None and [d["title"] for d in found["items"]] == ["a-name", None]

    ran = _capture("anthropic-sdk_openinference_code-execution")
    step = next(s for s in ran["steps"] if (s.get("extra") or {}).get("container"))
    command = next(r for r in step["observation"]["results"] if '"return_code": 1' in r["content"])
    call = next(c for c in step["tool_calls"] if c["tool_call_id"] == command["source_call_id"])
    hostile = "<script>x()</script>"
    changed = {**step, "extra": {**step["extra"], "container": hostile},
               "metrics": {**step["metrics"], "extra": {**step["metrics"]["extra"], "web_fetch_requests": "2"}},
               "tool_calls": [{**c, "arguments": {"command": hostile}} if c is call else c for c in step["tool_calls"]],
               "observation": {"results": [
                   {**r, "content": json.dumps({"return_code": 1, "stdout": hostile, "stderr": "", "files": [hostile]})}
                   if r is command else r for r in step["observation"]["results"]]}}
    html = _article(_session_html({**ran, "steps": [changed if s is step else s for s in ran["steps"]]}),
                    step["step_id"])
    assert "<script>x" not in html and 'class="metric web-fetches"' not in html  # a count that is no number: none
    assert html.count("$ &lt;script&gt;x()&lt;/script&gt;") == 1 and "code ran in" in _text(html)
    assert _text(html).count("return code 1 (the command failed)") == 1

    searched = _capture("openai-agents_openinference_file-search")
    answer = next(s for s in searched["steps"] if (s.get("extra") or {}).get("annotations"))
    for notes, expected in (([{"type": "file_citation", "file_id": None, "filename": "x", "index": 3}], ""),
                            ([{"type": "file_citation", "file_id": "file-1", "filename": hostile, "index": True},
                              {"type": "file_citation", "file_id": "file-1", "index": 999999}],
                             f"Sources cited: {hostile} file-1"),
                            ([{"type": "file_citation", "file_id": "file-2", "filename": None}],
                             "Sources cited: file-2")):
        changed = {**answer, "extra": {**answer["extra"], "annotations": notes}}
        html = _article(_session_html({**searched, "steps": [changed if s is answer else s
                                                             for s in searched["steps"]]}), answer["step_id"])
        assert "<script>x" not in html
        assert (_text(html).split("Sources cited:")[1].strip() if expected else "") == \
            expected.removeprefix("Sources cited: "), _text(html)

    compacted = _capture("openai-agents_openinference_compaction")
    step = next(s for s in compacted["steps"] if (s.get("extra") or {}).get("context_compaction"))
    for odd, expected in (({"kind": "encrypted"}, "Context compacted: the provider compacted the conversation into an "
                           "encrypted item. The model's later calls are sent that item instead; only the provider can "
                           "read it."),
                          ({"kind": "encrypted", "by": hostile, "item_id": hostile, "encrypted_chars": "262",
                            "summarized_messages": 1, "kept_user_messages": True, "call_recorded": "no"},
                           f"Context compacted by {hostile}: the provider compacted 1 item into an encrypted item "
                           f"{hostile}. The model's later calls are sent that item instead; only the provider can read "
                           "it.")):
        changed = {**step, "extra": {**step["extra"], "context_compaction": odd}}
        html = _article(_session_html({**compacted, "steps": [changed if s is step else s
                                                              for s in compacted["steps"]]}), step["step_id"])
        assert "<script>x" not in html and "compaction-summary" not in html
        note = re.search(r'<p class="compaction-note">.*?</p>', html, re.S)
        # Tags split the text with spaces: compared without any.
        assert note is not None and "".join(_text(note.group(0)).split()) == "".join(expected.split()), note.group(0)


def test_context_edits_of_odd_shapes_never_fail_and_link_across_pages_and_not_in_subagents() -> None:
    """The real context-editing capture given odd shapes, what a pushed ATIF document may hold: cleared results that
    are no list, items with no call id or a call id that is no text, placeholders that differ or are missing, counts
    that are no number, HTML in every field; a result on another steps page linked there; a subagent's context edit
    noted without links (its step ids repeat the session's: no anchors there); none raises."""
    edited = _capture("langgraph_openinference_context-editing")
    step = next(s for s in edited["steps"] if (s.get("extra") or {}).get("context_edit"))
    hostile = "<script>x()</script>"

    def note(edit: Any, document: dict[str, Any] | None = None) -> str:
        changed = {**step, "extra": {**step["extra"], "context_edit": edit}}
        doc = document or edited
        html = _article(_session_html({**doc, "steps": [changed if s is step else s for s in doc["steps"]]}),
                        step["step_id"])
        assert "<script>x" not in html
        found = re.search(r'<p class="context-edit-note">.*?</p>', html, re.S)
        return "".join(_text(found.group(0)).split()) if found else ""

    for odd in (None, 7, "x", {}, {"cleared_tool_results": "call_0_0"}, {"cleared_tool_results": [None, 3, {}]},
                {"cleared_tool_results": [{"tool_call_id": 5}, {"tool_call_id": ""}]}):
        assert note(odd) == "", odd
    assert note({"by": hostile, "strategy": None, "results_sent_cleared": "2", "cleared_tool_results": [
        {"tool_call_id": "call_0_0", "function_name": hostile, "placeholder": ""},
        {"tool_call_id": hostile, "placeholder": None}]}) == "".join(
        f"Context editing ({hostile}): from this call on the model was not sent the results of {hostile} (call_0_0) "
        f"and {hostile}.".split())
    assert note({"cleared_tool_results": [{"tool_call_id": "a", "placeholder": "[x]"},
                                          {"tool_call_id": "b", "function_name": "f", "placeholder": "[y]"},
                                          {"tool_call_id": "c", "function_name": "g", "placeholder": "[y]"}],
                 "results_sent_cleared": 1, "cleared_input_tokens": 1200, "identified_by": "position"}) == "".join(
        "Context editing: from this call on the model was sent placeholders instead of the results of a (as “[x]”), "
        "f (b) (as “[y]”) and g (c) (as “[y]”); 1 result sent cleared in all (1,200 input tokens cleared). The API "
        "counts the results it cleared and names none: these are the oldest.".split())

    # Past 100 steps the result cleared is on page 1 and the step that hid it on page 2: each links the other's page.
    padding = [{"step_id": 1000 + i, "source": "user", "message": "pad"} for i in range(100)]
    steps = edited["steps"]
    at = steps.index(step)
    long = {**edited, "steps": steps[:at] + padding + steps[at:]}
    first, second = (_session_html(long, {"page": str(n)}) for n in (1, 2))
    (result,) = re.findall(r'<div class="tool-result" id="(result-3-call_0_0)">.*?</div>', first, re.S)
    assert f'hidden from the model from <a href="/agents/a@w/sessions/s?page=2#step-{step["step_id"]}">' in first
    assert f'href="/agents/a@w/sessions/s?page=1#{result}" class="cleared-call"' in second

    # A subagent's context edit: noted, its results marked, nothing linked (no anchors inside a subagent).
    sub = {**edited, "trajectory_id": "sub-1", "agent": {"name": "helper"}}
    caller = {"step_id": 1, "source": "agent", "message": "delegating", "tool_calls": [
        {"tool_call_id": "d1", "function_name": "helper", "arguments": {}}], "observation": {"results": [
            {"source_call_id": "d1", "content": "done", "subagent_trajectory_ref": [{"trajectory_id": "sub-1"}]}]}}
    outer = {**edited, "steps": [caller], "subagent_trajectories": [sub]}
    html = _session_html(outer)
    assert html.count('class="context-edit-note"') == 3 and html.count('class="hidden-from"') == 4
    assert 'class="cleared-call"' in html and '<a href="#result' not in html and 'id="result-' not in html.split(
        '<details class="subagent')[1]


def test_a_tool_s_tagged_blocks_before_a_question_fold_but_html_a_person_typed_does_not() -> None:
    folded = _preamble("<session_context>\nThis is the Gemini CLI.\n</session_context>\nWhat does this project do?")
    assert folded is not None and folded["rest"].strip() == "What does this project do?"
    assert [b["tag"] for b in folded["blocks"]] == ["session_context"]
    assert [b["tag"] for b in _preamble("<system-reminder>a</system-reminder> <system-reminder>b</system-reminder>"
                                        "\nhi")["blocks"]] == ["system-reminder", "system-reminder"]
    # A person's own HTML (a tag with no underscore or hyphen) is their question, shown whole; a block alone too.
    assert _preamble("<div>x</div> is not centred") is None
    assert _preamble("<session_context>only</session_context>") is None
