"""What a step's `extra` holds beyond its message, on the session page of real captures in a real browser: a
framework's own calls (CrewAI's memory and knowledge work) and what it retrieved into a call's prompt, OpenAI's code
interpreter's code and container, why a call has no price, a tool run no LLM call asked for, a failure ADK's
ReflectAndRetryToolPlugin answered for, a handoff's agent, how the prompt tokens were counted. Each test reads its
expectations from the page's JSON twin (the trajectory), as tests/ui/test_content_pages.py does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.ui.conftest import Tab, World
from tests.ui.test_content_pages import _open_subagents, _replayed, _twin


def _in_page_order(document: dict[str, Any], depth: int = 0) -> Iterator[dict[str, Any]]:
    """The steps as the page draws them: each step, then the subagents its results open in place (three deep)."""
    subagents = {str(t.get("trajectory_id")): t for t in _subagents(document)}
    yield from _walk(document, subagents, depth)


def _subagents(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for sub in document.get("subagent_trajectories") or []:
        yield sub
        yield from _subagents(sub)


def _walk(trajectory: dict[str, Any], subagents: dict[str, dict[str, Any]], depth: int) -> Iterator[dict[str, Any]]:
    for s in trajectory.get("steps") or []:
        yield s
        if depth >= 3:
            continue
        for r in (s.get("observation") or {}).get("results") or []:
            for ref in r.get("subagent_trajectory_ref") or []:
                sub = subagents.get(str(ref.get("trajectory_id")))
                if sub is not None:
                    yield from _walk(sub, subagents, depth + 1)


def _articles(tab: Tab, document: dict[str, Any]) -> list[tuple[dict[str, Any], Any]]:
    """Each step of the document with its `article` on the page (subagents opened), in the page's order."""
    _open_subagents(tab)
    steps = list(_in_page_order(document))
    shown = tab.page.locator("article.step")
    assert shown.count() == len(steps)
    return [(s, shown.nth(i)) for i, s in enumerate(steps)]


def test_a_frameworks_own_calls_read_as_its_work_and_what_it_retrieved_is_listed(tab: Tab, world: World) -> None:
    """CrewAI with knowledge and memory (`crewai_openinference_knowledge-memory`): 13 of its 20 calls are CrewAI's own
    (a knowledge query rewrite, memory extraction, a save analysis per statement: `extra.framework_work`), and the
    memories and knowledge chunks it appended to a task's prompt are `extra.retrievals` on the step first sent them.
    Before, each of CrewAI's calls read as the agent answering (its JSON in Markdown, as an answer is shown) and the
    retrievals were nowhere on the page. Now each says whose work it was and what for ("CrewAI: memory save analysis
    of “…”"), its answer folded as the framework's; and each retrieval is listed on its step as a retriever tool's
    is."""
    _, page = _replayed(world, "crewai_openinference_knowledge-memory", "crewmemory")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    pairs = _articles(tab, document)
    work = [(s, a) for s, a in pairs if (s.get("extra") or {}).get("framework_work")]
    assert len(work) == 13 == tab.page.locator("article.step.framework").count()
    for s, article in work:
        w = s["extra"]["framework_work"]
        assert article.locator("> header .badge.framework").inner_text() == f"{w['by']}'s own call"
        note = article.locator("p.framework-note").inner_text()
        expected = f"{w['by']}: {w['purpose']}" + (f" of “{w['content']}”" if w.get("content") else "")
        assert note.startswith(expected + " · a call CrewAI made for its own work, not the agent's reasoning"), note
        assert article.locator(".markdown.message").count() == 0  # not shown as the agent's answer
        folded = article.locator("details.framework-answer")
        assert folded.get_attribute("open") is None and not folded.locator("pre").is_visible()
        folded.locator("summary").click()
        answer = folded.locator("pre").inner_text()
        try:
            assert json.loads(answer) == json.loads(s["message"])
        except ValueError:
            assert answer == s["message"]
    assert {s["extra"]["framework_work"]["purpose"] for s, _ in work} == {
        "knowledge search query", "memory extraction", "memory save analysis"}

    retrieving = [(s, a) for s, a in pairs if (s.get("extra") or {}).get("retrievals")]
    assert len(retrieving) == 4
    for s, article in retrieving:
        box = article.locator("div.prompt-retrievals")
        assert box.locator("> .label").inner_text() == "Retrieved by the framework and sent in this call's prompt:"
        heads = box.locator("p.documents-found")
        assert heads.all_inner_texts() == [
            f"{len(r['documents'])} document{'s' if len(r['documents']) != 1 else ''} found by {r['retriever']} for "
            f"“{r['query']}” (put in the {r['from']})" for r in s["extra"]["retrievals"]]
        listed = box.locator("div.retrieval")
        for i, r in enumerate(s["extra"]["retrievals"]):
            items = listed.nth(i).locator("ol.documents > li.document")
            assert items.count() == len(r["documents"])
            for j, d in enumerate(r["documents"]):
                if d.get("score") is not None:
                    assert items.nth(j).locator(".score").inner_text() == f"score {d['score']:.3f}"
                excerpt = items.nth(j).locator("summary .excerpt, p.document-text").first.inner_text()
                assert d["content"].startswith(excerpt.rstrip("…"))
    # The second kickoff's researcher recalls the first's memories.
    assert "CrewAI memory" in tab.page.locator("div.prompt-retrievals").all_inner_texts()[2]
    tab.page.evaluate("window.scrollTo(0, 0)")
    tab.shot("trajectory-framework-work")
    assert tab.console_errors == []


def test_openai_code_interpreter_reads_as_code_in_its_container(tab: Tab, world: World) -> None:
    """pydantic-ai's builtin tools over the Responses API (`pydantic-ai_openai-responses_builtin-tools`): OpenAI's code
    interpreter runs `{"code": …}` in a container (`container_id` on the call). Before, the code was a JSON string of
    escaped lines and the container was nowhere; now the code reads as code (the JSON folded) and the call names its
    container, as Anthropic's code execution already did."""
    _, page = _replayed(world, "pydantic-ai_openai-responses_builtin-tools", "oaibuiltin")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    runs = [(s, c) for s in document["steps"] for c in s.get("tool_calls") or ()
            if (c.get("extra") or {}).get("run_by") == "provider" and "code" in (c.get("arguments") or {})]
    assert len(runs) == 3
    for s, call in runs:
        tool = tab.page.locator(f"article#step-{s['step_id']} .tool", has_text=call["tool_call_id"])
        assert tool.locator("pre.command.code").inner_text() == call["arguments"]["code"].rstrip("\n")
        assert tool.locator(".tool-call .container code").inner_text() == call["extra"]["container_id"]
        assert not tool.locator(".tool-call details.as-recorded pre.json").is_visible()
    assert tab.page.locator(".tool-call .container").count() == 3
    tab.shot("trajectory-code-interpreter")
    assert tab.console_errors == []


def test_an_unpriced_call_says_why_and_a_tool_no_call_asked_for_says_so(tab: Tab, world: World) -> None:
    """The Claude Agent SDK under OpenInference (`claude-agent-sdk_openinference`): the instrumentation records a
    turn's usage once, so the turn's other calls have no tokens (`unpriced_reason: "no token usage"`), and the
    subagent's tool ran with no call of its in a span (`extra.dispatch`). Before, those calls read "unknown
    (unpriced)" with no reason and the subagent's tool step was an agent step of no model, unexplained; now the cost
    says why it is unknown and the step says no LLM call asked for the tool."""
    _, page = _replayed(world, "claude-agent-sdk_openinference", "claudesdk")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    pairs = _articles(tab, document)
    unpriced = [(s, a) for s, a in pairs if ((s.get("metrics") or {}).get("extra") or {}).get("unpriced_reason")]
    assert len(unpriced) == 3
    for s, article in unpriced:
        extra = s["metrics"]["extra"]
        assert article.locator("> header .metric.cost").inner_text() == \
            f"unknown ({extra['price_source']}: {extra['unpriced_reason']})"
    dispatched = [(s, a) for s, a in pairs if (s.get("extra") or {}).get("dispatch")]
    assert len(dispatched) == 1 == tab.page.locator(".badge.dispatch").count()
    for s, article in dispatched:
        badge = article.locator("> header .badge.dispatch")
        assert badge.inner_text() == "tool run, no LLM call asked for it"
        assert badge.get_attribute("title") == s["extra"]["dispatch"]
    tab.shot("trajectory-unpriced-reason")
    assert tab.console_errors == []


def test_a_failure_a_plugin_answered_for_reads_as_the_error(tab: Tab, world: World) -> None:
    """ADK's ReflectAndRetryToolPlugin (`google-adk_openinference_multi-agent`): a tool that raised is answered for by
    the plugin, its result a JSON `ToolFailureResponse` (the error, the retry, a page of guidance). Before, that JSON
    was the result, one long line; now the error reads as an error, the retry and the plugin are named, the guidance
    the model was sent is Markdown folded, and the JSON as recorded is folded."""
    _, page = _replayed(world, "google-adk_openinference_multi-agent", "adkmulti")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    handled = []
    for s, article in _articles(tab, document):
        for r in (s.get("observation") or {}).get("results") or ():
            if "ERROR_HANDLED_BY_" in str(r.get("content")):
                handled.append((article, r, json.loads(r["content"])))
    assert len(handled) == 1
    for article, result, answer in handled:
        tool = article.locator(".tool", has_text=result["source_call_id"])
        assert tool.locator(".tool-result .error-box").inner_text() == \
            f"{answer['error_type']} {answer['error_details']}"
        assert tool.locator("p.handled-failure").inner_text() == (
            f"The reflect and retry plugin answered the model in the tool's place (retry {answer['retry_count']}), "
            "with guidance for its next attempt.")
        guidance = tool.locator("details.guidance")
        assert not guidance.locator(".markdown").is_visible()
        guidance.locator("summary").click()
        assert "Reflection Guidance:" in guidance.locator(".markdown").inner_text()
        assert not tool.locator("details.as-recorded pre").is_visible()
    tab.shot("trajectory-plugin-handled-failure")
    assert tab.console_errors == []


def test_a_handoff_names_its_agent_and_normalised_tokens_say_how(tab: Tab, world: World) -> None:
    """OpenAI Agents over LiteLLM (`openai-agents_openinference_litellm`): each transfer's result is the handoff
    (`extra.handoff_to`); and a Bedrock call's prompt tokens had the cache's added (`prompt_tokens_normalisation`,
    `bedrock-runtime_openllmetry`). Before, a handoff's result was only `{"assistant": …}` and nothing said how the
    prompt tokens were counted; now the result says "handoff to Booking agent" and the tokens say how on hover."""
    _, page = _replayed(world, "openai-agents_openinference_litellm", "oalitellm")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    handoffs = [(s, a, r) for s, a in _articles(tab, document)
                for r in (s.get("observation") or {}).get("results") or () if (r.get("extra") or {}).get("handoff_to")]
    assert len(handoffs) == 2 == tab.page.locator(".tool-result .handoff").count()
    for _, article, result in handoffs:
        tool = article.locator(".tool", has_text=result["source_call_id"])
        assert tool.locator(".tool-result > .label .handoff").inner_text() == \
            f"handoff to {result['extra']['handoff_to']}"
    tab.shot("trajectory-handoff")

    _, page = _replayed(world, "bedrock-runtime_openllmetry", "bedrockrt")
    document = _twin(tab, page)
    tab.go(page)
    calls = [s for s in document["steps"] if s.get("metrics")]
    assert calls and all(s["metrics"]["extra"].get("prompt_tokens_normalisation") for s in calls)
    for s in calls:
        tokens = tab.page.locator(f"article#step-{s['step_id']} .metric.tokens")
        assert tokens.get_attribute("title") == f"prompt tokens: {s['metrics']['extra']['prompt_tokens_normalisation']}"
    assert tab.console_errors == []


def test_a_spoken_question_and_an_answer_said_aloud_say_so(tab: Tab, world: World) -> None:
    """The Agents SDK's voice pipeline under OpenTelemetry's instrumentation (`openai-agents_otel-genai_voice`): each
    question was spoken and transcribed before the agent ran (`extra.spoken`, the transcription model), each answer
    said aloud (`extra.spoken_answer`, the speech model). Before, the page showed them as a typed question and a
    written answer; now each says how it was heard or said, and by which model, and what the emitter did not record
    on hover."""
    _, page = _replayed(world, "openai-agents_otel-genai_voice", "voicedesk")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    pairs = _articles(tab, document)
    heard = [(s, a) for s, a in pairs if (s.get("extra") or {}).get("spoken")]
    said = [(s, a) for s, a in pairs if (s.get("extra") or {}).get("spoken_answer")]
    assert len(heard) == 2 and said
    assert tab.page.locator(".badge.spoken").count() == len(heard) + len(said)
    for s, article in heard:
        note = s["extra"]["spoken"]
        badge = article.locator("> header .badge.spoken")
        assert badge.inner_text() == f"spoken, transcribed by {note['model']}"
        assert note["not_recorded"] in (badge.get_attribute("title") or "")
    for s, article in said:
        note = s["extra"]["spoken_answer"]
        assert article.locator("> header .badge.spoken").inner_text() == f"said aloud by {note['model']}"
    tab.shot("trajectory-voice")
    assert tab.console_errors == []


def test_context_adk_handed_an_agent_reads_as_from_that_agent_not_a_person(tab: Tab, world: World) -> None:
    """ADK's "For context:" messages (`google-adk_openinference_multi-agent`): each transfer's agent is sent the other
    agents' events as user messages (what they said, the tools they called and what those returned). Before, each was a
    user step, a person's bubble of preamble and quoted blocks (5 opening the booking agent, 6 the activities agent);
    now each is a system step marked `extra.handed_over_context`, which says "context from <agent>", lists what that
    agent said and did, and folds the message as the model was sent it."""
    _, page = _replayed(world, "google-adk_openinference_multi-agent", "adkcontext")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    pairs = _articles(tab, document)
    handed = [(s, a) for s, a in pairs if (s.get("extra") or {}).get("handed_over_context")]
    assert len(handed) == 11 == tab.page.locator("article.step.handed-over").count()
    for s, article in handed:
        mark = s["extra"]["handed_over_context"]
        assert article.locator("> header .badge.source").inner_text() == "system"
        assert article.locator("> header .badge.handed-over").inner_text() == f"context from {mark['from_agent']}"
        assert article.locator("p.handed-over-note").inner_text().startswith(
            f"Google ADK handed this agent what {mark['from_agent']} did")
        items = article.locator("li.handed-over-item")
        assert items.count() == len(mark["items"])
        for i, item in enumerate(mark["items"]):
            what = {"called tool": f"called {item.get('tool')} with",
                    "tool returned": f"{item.get('tool')} returned"}.get(item["kind"], item["kind"])
            assert items.nth(i).locator(".what").inner_text() == what
            assert items.nth(i).locator("pre.quoted").inner_text() == item["content"]
        assert article.locator("details.system").count() == 0  # not folded away as a system prompt
        sent = article.locator("details.as-sent")
        assert not sent.locator("pre").is_visible()
        sent.locator("summary").click()
        assert sent.locator("pre").inner_text() == s["message"]
    assert {s["extra"]["handed_over_context"]["from_agent"] for s, _ in handed} == {"trip_coordinator", "booking_agent"}
    people = [a.locator("pre.message").inner_text() for s, a in pairs if s["source"] == "user"]
    assert people and not any(text.startswith("For context:") for text in people)
    tab.page.locator("article.step.handed-over").first.scroll_into_view_if_needed()
    tab.shot("trajectory-handed-over-context")
    assert tab.console_errors == []
