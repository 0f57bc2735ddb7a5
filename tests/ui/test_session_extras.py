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


def _user_steps(pairs: list[tuple[dict[str, Any], Any]]) -> list[tuple[dict[str, Any], Any]]:
    return [(s, a) for s, a in pairs if s["source"] == "user"]


def _tool(article: Any, call: dict[str, Any]) -> Any:
    """A tool call's box on its step (by its call id, which the box shows)."""
    return article.locator(".tool", has_text=call["tool_call_id"])


def test_gemini_clis_router_reads_as_its_own_work_and_its_failed_read_as_an_error(tab: Tab, world: World) -> None:
    """Gemini CLI's own export (`gemini-cli_native`): before each question the CLI's router asks a lite model how hard
    it is (`extra.framework_work`: by Gemini CLI, model routing), then the main model answers; a `read_file` of a
    missing file fails. The page draws each router call as the CLI's work (badge, note, quieter, its JSON folded), the
    person's two questions as user steps, and the failed read as an error."""
    _, page = _replayed(world, "gemini-cli_native", "geminicli")
    tab.login(world.token)
    document = _twin(tab, page)
    assert tab.go(page).status == 200
    pairs = _articles(tab, document)
    work = [(s, a) for s, a in pairs if (s.get("extra") or {}).get("framework_work")]
    assert len(work) == 2 == tab.page.locator("article.step.framework").count()
    plain = next(a for s, a in pairs if s["source"] == "agent" and not (s.get("extra") or {}).get("framework_work"))
    for s, article in work:
        assert s["extra"]["framework_work"] | {} == {"by": "Gemini CLI", "purpose": "model routing",
                                                    "role": "utility_router"}
        assert article.locator("> header .badge.framework").inner_text() == "Gemini CLI's own call"
        assert article.locator("p.framework-note").inner_text().startswith(
            "Gemini CLI: model routing · a call Gemini CLI made for its own work, not the agent's reasoning")
        assert article.locator(".markdown.message").count() == 0  # its JSON is not the agent's answer
        # Quieter than the agent's own calls, as CrewAI's are: a dashed border on the soft background.
        look = "e => [getComputedStyle(e).borderTopStyle, getComputedStyle(e).backgroundColor]"
        assert article.evaluate(look)[0] == "dashed" != plain.evaluate(look)[0]
        assert article.evaluate(look)[1] != plain.evaluate(look)[1]
        folded = article.locator("details.framework-answer")
        assert folded.get_attribute("open") is None
        folded.locator("summary").click()
        assert json.loads(folded.locator("pre").inner_text()) == json.loads(s["message"])
    asked = _user_steps(pairs)
    assert len(asked) == 2
    questions = ["What does this project do? Check its readme.", "How many lines does tides.py have?"]
    for (s, article), question in zip(asked, questions, strict=True):
        assert article.locator("> header .badge.source").inner_text() == "user"
        assert s["message"].endswith(question)
        # The person's words are the message; the context the CLI put before the first is folded above them.
        assert article.locator("pre.message").inner_text() == question
    context = asked[0][1].locator("details.preamble")
    assert context.locator("summary code").inner_text() == "<session_context>"
    assert not context.locator("pre").is_visible()
    context.locator("summary").click()
    assert context.locator("pre").inner_text() == asked[0][0]["message"][:-len(questions[0])].strip()
    assert asked[1][1].locator("details.preamble").count() == 0
    failed = [(s, a, c, r) for s, a in pairs for c in s.get("tool_calls") or ()
              for r in (s.get("observation") or {}).get("results") or ()
              if r.get("source_call_id") == c["tool_call_id"] and (r.get("extra") or {}).get("is_error")]
    assert [(c["function_name"], c["arguments"]) for _, _, c, _ in failed] == [
        ("read_file", {"file_path": "readme.md"})]
    for _, article, call, result in failed:
        tool = _tool(article, call)
        assert "has-error" in (tool.get_attribute("class") or "")
        assert tool.locator(".tool-result > .label .badge").inner_text() == "error"
        assert tool.locator(".tool-result pre.observation").inner_text() == result["content"]
        assert "File not found" in result["content"]
    assert tab.page.locator("article.step.has-error").count() == 1
    tab.shot("trajectory-gemini-cli")
    assert tab.console_errors == []


def test_a_result_wrapped_in_json_reads_as_its_text_and_the_json_sent_is_folded(tab: Tab, world: World) -> None:
    """Gemini CLI sends a tool's output to the model as `{"output": "…"}` (`gemini-cli_native`: `list_directory`'s
    listing, `read_file`'s file, `run_shell_command`'s output). Before, each read as one line of JSON with its line
    breaks escaped (`\\n`). Now the output is shown as its text, line by line, noted as the `output` of the JSON the
    model was sent, and that JSON, exactly as sent, is folded under it. The failed read (`{"error": "File not
    found: …"}`, one line) is shown as before: its JSON as sent."""
    _, page = _replayed(world, "gemini-cli_native", "geminiwrapped")
    tab.login(world.token)
    document = _twin(tab, page)
    assert tab.go(page).status == 200
    pairs = _articles(tab, document)
    wrapped = [(a, c, r) for s, a in pairs for c in s.get("tool_calls") or ()
               for r in (s.get("observation") or {}).get("results") or ()
               if r.get("source_call_id") == c["tool_call_id"] and r["content"].startswith('{"output": ')]
    assert [c["function_name"] for _, c, _ in wrapped] == ["list_directory", "read_file", "run_shell_command"]
    for article, call, result in wrapped:
        output = json.loads(result["content"])["output"]
        assert "\n" in output
        shown = _tool(article, call).locator(".tool-result")
        text = shown.locator("> pre.observation")
        assert text.inner_text() == output  # its lines are lines, no `\n` escaped
        assert shown.locator("p.wrapped-note").inner_text() == "the output of the JSON the model was sent"
        folded = shown.locator("details.as-sent")
        assert folded.get_attribute("open") is None
        assert not folded.locator("pre").is_visible()
        folded.locator("summary").click()
        assert folded.locator("pre").inner_text() == result["content"]  # exactly as the model saw it
    listing = _tool(wrapped[0][0], wrapped[0][1]).locator(".tool-result > pre.observation").inner_text()
    assert listing.splitlines()[1:] == ["README.md (48 bytes)", "tides.py (52 bytes)"]
    # A one-line JSON result (the failed read's) is shown as today: its text as sent, nothing folded.
    failed = [(a, c) for s, a in pairs for c in s.get("tool_calls") or ()
              for r in (s.get("observation") or {}).get("results") or ()
              if r.get("source_call_id") == c["tool_call_id"] and r["content"].startswith('{"error": ')]
    assert len(failed) == 1
    assert _tool(*failed[0]).locator("details.as-sent, p.wrapped-note").count() == 0
    assert tab.console_errors == []


def test_codex_commands_read_as_run_and_an_answer_codex_did_not_export_says_so(tab: Tab, world: World) -> None:
    """The Codex CLI's own export (`codex-cli_native`): each call's `exec_command`, a `cat` of a missing file exiting
    1, and answers whose text Codex 0.171 does not export (the turn's tokens on its last call only). The page shows each
    call's command and output, the failed `cat` as an error, both prompts as user steps, and each answer of no text
    recorded says so. Before, those answers were an empty box under their tokens, which read as a page broken."""
    _, page = _replayed(world, "codex-cli_native", "codexcli")
    tab.login(world.token)
    document = _twin(tab, page)
    assert tab.go(page).status == 200
    pairs = _articles(tab, document)
    asked = _user_steps(pairs)
    assert [a.locator("pre.message").inner_text() for _, a in asked] == [s["message"] for s, _ in asked] == [
        "greet.sh should print a greeting but something is off. Have a look and fix it.", "Run it to confirm."]
    runs = [(s, a, c) for s, a in pairs for c in s.get("tool_calls") or ()]
    assert [c["arguments"]["cmd"] for _, _, c in runs] == [
        "ls", "cat greeting.txt", "sed -i 's/Helo/Hello/' greet.sh && cat greet.sh", "bash greet.sh"]
    for s, article, call in runs:
        tool = _tool(article, call)
        assert json.loads(tool.locator(".tool-call pre.json").inner_text()) == call["arguments"]
        result = next(r for r in s["observation"]["results"] if r["source_call_id"] == call["tool_call_id"])
        assert tool.locator(".tool-result pre.observation").inner_text() == result["content"]
        failed = call["arguments"]["cmd"] == "cat greeting.txt"
        assert ("has-error" in (tool.get_attribute("class") or "")) is failed
        assert tool.locator(".tool-result > .label").inner_text() == ("error" if failed else "result")
    assert tab.page.locator("article.step.has-error").count() == 1
    silent = [(s, a) for s, a in pairs if s["source"] == "agent" and not s.get("message") and not s.get("tool_calls")]
    assert len(silent) == 2
    for s, article in silent:
        assert s["metrics"]["completion_tokens"] > 0  # the model did answer (the turn's tokens, on its last call)
        assert article.locator("p.unrecorded-answer").inner_text() == \
            "No answer text recorded: the emitter exported none for this call."
        assert article.locator("p.reasoning.unrecorded").inner_text().startswith("Reasoning: no text recorded")
    # A step whose call only ran a tool has no text to miss: nothing said.
    assert tab.page.locator("p.unrecorded-answer").count() == len(silent)
    tab.shot("trajectory-codex-cli")
    assert tab.console_errors == []


def test_genkit_thrown_tool_reads_as_its_error_and_both_turns_are_shown(tab: Tab, world: World) -> None:
    """Genkit's own spans (`genkit_native`): turn one's two parallel calls, `get_weather` throwing (the model sent the
    error) then retried, and the answer; turn two's one call and answer. The page shows both questions as user steps,
    each result on its call (the parallel ones ended in another order than they were asked), the thrown one an error
    with the text the model was sent, and both answers."""
    _, page = _replayed(world, "genkit_native", "genkitweather")
    tab.login(world.token)
    document = _twin(tab, page)
    assert tab.go(page).status == 200
    pairs = _articles(tab, document)
    assert [a.locator("pre.message").inner_text() for _, a in _user_steps(pairs)] == [
        "What's the weather and the local time in Paris?", "And the weather in Lyon?"]
    answers = [(s, a) for s, a in pairs if s["source"] == "agent" and s.get("message") and not s.get("tool_calls")]
    assert [a.locator(".markdown.message").inner_text() for _, a in answers] == [
        "Paris is sunny at 21°C, and it is 14:05 there.", "Lyon is cloudy at 17°C."]
    calls = [(s, a, c) for s, a in pairs for c in s.get("tool_calls") or ()]
    assert len(calls) == 4
    for s, article, call in calls:
        result = next(r for r in s["observation"]["results"] if r["source_call_id"] == call["tool_call_id"])
        tool = _tool(article, call)
        assert tool.locator(".tool-result pre.observation").inner_text() == result["content"]
        thrown = bool((result.get("extra") or {}).get("is_error"))
        assert ("has-error" in (tool.get_attribute("class") or "")) is thrown
        if thrown:
            assert (call["function_name"], result["content"]) == ("get_weather", "Error: weather service timed out")
            assert tool.locator(".tool-result > .label").inner_text() == "error"
    assert tab.page.locator("article.step.has-error").count() == 1
    assert tab.page.locator(".summary-bar .errors dd").inner_text() == "1"
    tab.shot("trajectory-genkit")
    assert tab.console_errors == []
