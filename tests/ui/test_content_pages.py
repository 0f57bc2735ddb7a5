"""What this session's new captures hold, on the session page in a real browser: audio a model was sent (played from
this site) and its spoken answers, a context compaction, a retriever's documents, Anthropic's web searches and their
citations, tokens by modality, and map-reduce branches told apart. Each test reads its expectations from the page's
JSON twin (the trajectory), so the page is checked against what the session holds."""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

from tests.captures import corpus
from tests.trajectory_service.conftest import http
from tests.ui.conftest import Tab, World


def _replayed(world: World, name: str, agent_name: str) -> tuple[str, str]:
    """A capture replayed into a new agent of its own: (the agent, its session's page)."""
    capture = corpus.load(name)
    agent = world.served.ok("POST", "/api/agents", {"name": agent_name, "workspace": "acme",
                                                     "trajectory_wait_seconds": 10}, token=world.token)["agent"]
    key = world.served.ok("POST", f"/api/agents/{agent}/keys", {}, token=world.token)["key"]
    corpus.replay(capture, world.served.otlp, key)
    # Settled before the page is read: its twin is then the trajectory the page was drawn from.
    reply = http("GET", f"{world.served.api}/api/agents/{agent}/sessions/{capture.session_id}/trajectory?wait=10",
                 token=world.token)
    assert reply.status == 200, reply.text
    return agent, f"/agents/{agent}/sessions/{capture.session_id}"


def _twin(tab: Tab, page: str) -> dict[str, Any]:
    """The page's JSON twin, read with the browser's login (not opened as a page: no favicon fetched, no 404)."""
    reply = tab.page.request.get(tab.base + page + "?format=json")
    assert reply.status == 200, reply.text()
    twin: dict[str, Any] = reply.json()
    return twin


def _steps(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Every step of the document, its subagents' (at any depth) too."""
    found = list(document.get("steps") or [])
    for sub in document.get("subagent_trajectories") or []:
        found += _steps(sub)
    return found


def _open_subagents(tab: Tab) -> None:
    closed = tab.page.locator("details.subagent:not([open]) > summary")
    while closed.count():
        closed.first.click()


def test_audio_plays_from_this_site_and_a_spoken_answer_says_so(tab: Tab, world: World) -> None:
    """A real capture of a voice note sent to gpt-audio, answered in speech (`openai-sdk_openinference_audio`).
    Before, the user step read `[audio: audio/wav]`, the spoken answers were unmarked (one an empty step) and the
    audio tokens were nowhere. Now the clip plays in an `<audio>` whose bytes come from the media route through the page
    itself (the CSP as served allows media from this site), each spoken answer says so (its length and format, or why it
    was not recorded), and each call's audio tokens are beside its tokens."""
    _, page = _replayed(world, "openai-sdk_openinference_audio", "voice")
    tab.login(world.token)
    document = _twin(tab, page)
    requested: list[str] = []
    tab.page.on("request", lambda request: requested.append(request.url))
    response = tab.go(page)
    assert "media-src 'self' data:" in response.headers["content-security-policy"]
    (asked,) = [s for s in document["steps"] if s["source"] == "user" and isinstance(s["message"], list)]
    (part,) = [p for p in asked["message"] if p["type"] == "audio"]
    step = tab.page.locator(f"article#step-{asked['step_id']}")
    assert "[audio" not in tab.page.locator("main").inner_text()
    assert step.locator("pre.message").inner_text() == asked["message"][0]["text"]
    player = step.locator("figure.audio audio")
    assert player.count() == 1 and player.get_attribute("controls") is not None
    assert player.get_attribute("src").startswith("?media=evalkit-span")
    player.scroll_into_view_if_needed()
    player.evaluate("a => a.load()")
    tab.page.wait_for_function("a => a.readyState >= 1 || a.error !== null", arg=player.element_handle())
    assert player.evaluate("a => a.error && a.error.code") is None
    assert abs(player.evaluate("a => a.duration") - part["source"]["duration_sec"]) < 0.01  # the 0.5 s WAV played
    assert any("?media=evalkit-span" in url and url.startswith(world.served.api) for url in requested)
    caption = step.locator("figure.audio figcaption").inner_text()
    assert caption == f"audio the model was sent · audio/wav · {part['source']['duration_sec']:g} s"

    spoken = [s for s in document["steps"] if (s.get("extra") or {}).get("audio_answer")]
    assert len(spoken) == 2
    for s in spoken:
        answer = s["extra"]["audio_answer"]
        note = tab.page.locator(f"article#step-{s['step_id']} p.audio-answer").inner_text()
        if answer.get("not_recorded"):
            assert note == f"Spoken answer ({answer['format'].upper()}), not recorded: {answer['not_recorded']}"
        else:
            assert note.startswith(f"Spoken answer, {answer['duration_sec']:g} s ({answer['format'].upper()})")
            assert "below is its transcript" in note
            shown = tab.page.locator(f"article#step-{s['step_id']} .markdown.message").inner_text()
            assert shown == s["message"] != ""
    assert tab.page.locator("p.audio-answer").count() == 2

    for s in (s for s in document["steps"] if s.get("metrics")):
        usage = s["metrics"]["extra"]
        tokens = tab.page.locator(f"article#step-{s['step_id']} .metric.tokens").inner_text()
        expected = f"{s['metrics']['prompt_tokens']:,} in ({usage['input_audio_tokens']} audio) / " \
                   f"{s['metrics']['completion_tokens']:,} out"
        if usage.get("output_audio_tokens"):
            expected += f" ({usage['output_audio_tokens']} audio)"
        assert tokens == expected
    tab.shot("trajectory-audio")
    assert tab.console_errors == []


def test_a_context_compaction_reads_as_the_framework_summarizing(tab: Tab, world: World) -> None:
    """A real capture of LangChain's SummarizationMiddleware compacting the context twice
    (`langgraph_openinference_summarization`). Before, each summary read as an answer to the traveller, in Markdown
    like the real answers. Now the step says the context was compacted, by what, how many messages were summarized
    and kept, and shows the summary as its text, apart from the answers."""
    _, page = _replayed(world, "langgraph_openinference_summarization", "compacting")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    compactions = [s for s in document["steps"] if (s.get("extra") or {}).get("context_compaction")]
    assert len(compactions) == 2
    for s in compactions:
        c = s["extra"]["context_compaction"]
        step = tab.page.locator(f"article#step-{s['step_id']}")
        assert step.locator(".badge.compaction").inner_text() == "context compacted"
        assert step.locator("p.compaction-note").inner_text().startswith(
            f"Context compacted by {c['by']}: {c['summarized_messages']} messages summarized, "
            f"{c['kept_messages']} kept.")
        assert step.locator("pre.compaction-summary").inner_text() == s["message"]
        assert step.locator(".markdown.message").count() == 0  # not shown as an answer is
    assert tab.page.locator("p.compaction-note").first.inner_text().startswith(
        "Context compacted by SummarizationMiddleware: 4 messages summarized, 4 kept.")
    assert tab.page.locator("article.step.compaction").count() == 2
    tab.shot("trajectory-context-compaction")
    assert tab.console_errors == []


def test_a_retrievers_documents_are_listed_not_raw_json(tab: Tab, world: World) -> None:
    """A real LlamaIndex capture: a FunctionAgent calls a query engine, whose subagent's first step is its
    retriever's search (no LLM call; its result the documents found as JSON). Before, that result was a block of raw
    JSON. Now the step says it is a retrieval and lists each document: its id, score and metadata, the start of its
    text, the whole text one click away (the JSON as recorded folded below)."""
    _, page = _replayed(world, "llamaindex_openinference_rag", "rag")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    _open_subagents(tab)
    retrievals = [s for s in _steps(document) if s.get("llm_call_count") == 0 and s.get("tool_calls")]
    assert len(retrievals) == tab.page.locator(".badge.retrieval").count() == 2
    shown = tab.page.locator("article.step:has(> header .badge.retrieval)")  # in the order the twin has them
    for n, s in enumerate(retrievals):
        (result,) = s["observation"]["results"]
        found = json.loads(result["content"])
        listed = shown.nth(n).locator("ol.documents > li")
        assert listed.count() == len(found) == 2
        for i, d in enumerate(found):
            item = listed.nth(i)
            assert item.locator(".document-id").inner_text() == d["id"]
            assert item.locator(".score").inner_text() == f"score {d['score']:.3f}"
            assert item.locator(".metadata").inner_text() == f"source: {d['metadata']['source']}"
            text = item.locator("details.document-text")
            excerpt = text.locator("summary .excerpt")
            assert excerpt.is_visible() and excerpt.inner_text().endswith("…")
            assert d["content"].startswith(excerpt.inner_text()[:-1])
            assert not text.locator("p.document-text").is_visible()
            text.locator("summary").click()
            assert text.locator("p.document-text").inner_text() == d["content"]
            assert not excerpt.is_visible()
    # The raw JSON is only folded away, under each list.
    raw = tab.page.locator("pre.observation", has_text='"score"')
    assert raw.count() == 2 and not any(raw.nth(i).is_visible() for i in range(raw.count()))
    tab.shot("trajectory-retrieval")
    assert tab.console_errors == []


def test_anthropic_web_searches_read_as_the_providers_with_their_citations(tab: Tab, world: World) -> None:
    """A real capture of Anthropic's web_search server tool. Before, its searches read as tools the agent ran with a
    raw JSON result, the answer's citations (`web_search_result_location`) were not listed (only OpenAI's
    `url_citation`), and the searches the call counted were nowhere. Now each search says the provider ran it (as
    OpenAI's hosted search does) with the pages it found as links, the answer lists the pages it cites with the passages
    quoted, and the call says how many web searches it ran."""
    _, page = _replayed(world, "anthropic-sdk_openinference_web-search", "websearch")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    searches = [(s, c) for s in document["steps"] for c in s.get("tool_calls") or ()
                if (c.get("extra") or {}).get("run_by") == "provider"]
    assert len(searches) == tab.page.locator(".badge.provider").count() == 3
    assert tab.page.locator("p.provider-run").count() == 3
    for s, call in searches:
        (result,) = [r for r in s["observation"]["results"] if r["source_call_id"] == call["tool_call_id"]]
        pages = json.loads(result["content"])
        tool = tab.page.locator(f"article#step-{s['step_id']} .tool", has_text=call["tool_call_id"])
        assert tool.locator("p.provider-run").inner_text().startswith(
            f"run by the provider: {len(pages)} page{'s' if len(pages) != 1 else ''} found")
        links = tool.locator("ol.documents a")
        assert [links.nth(i).get_attribute("href") for i in range(links.count())] == [p["url"] for p in pages]
        assert [links.nth(i).inner_text() for i in range(links.count())] == [p["title"] for p in pages]
    cited = [s for s in document["steps"] if (s.get("extra") or {}).get("annotations")]
    assert len(cited) == 2
    for s in cited:
        notes = s["extra"]["annotations"]
        box = tab.page.locator(f"article#step-{s['step_id']} .citations")
        links = box.locator("a")
        assert [links.nth(i).get_attribute("href") for i in range(links.count())] == \
            list(dict.fromkeys(n["url"] for n in notes))
        quotes = box.locator("q.cited")
        assert [quotes.nth(i).inner_text() for i in range(quotes.count())] == [n["cited_text"] for n in notes]
    for s in document["steps"]:
        count = ((s.get("metrics") or {}).get("extra") or {}).get("web_search_requests")
        shown = tab.page.locator(f"article#step-{s['step_id']} .metric.web-searches")
        if count:
            assert shown.inner_text() == f"{count} web search{'es' if count != 1 else ''}"
        else:
            assert shown.count() == 0
    assert tab.page.locator(".metric.web-searches").all_inner_texts() == ["1 web search", "2 web searches"]
    tab.shot("trajectory-anthropic-web-search")
    assert tab.console_errors == []


def test_prompt_tokens_by_modality_show_beside_the_tokens(tab: Tab, world: World) -> None:
    """A real Gemini capture of photos sent to the model (`google-genai_otel-genai_image`): each call counts its
    prompt tokens by modality. Before, only the total was shown. Now each call says how many were the images'."""
    _, page = _replayed(world, "google-genai_otel-genai_image", "photos")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    calls = [s for s in document["steps"] if s.get("metrics")]
    assert calls
    for s in calls:
        by = s["metrics"]["extra"]["prompt_tokens_by_modality"]
        shown = tab.page.locator(f"article#step-{s['step_id']} .metric.tokens").inner_text()
        assert shown == f"{s['metrics']['prompt_tokens']:,} in ({by['image']:,} image) / " \
                        f"{s['metrics']['completion_tokens']:,} out"
    first = tab.page.locator(f"article#step-{calls[0]['step_id']} .metric.tokens").inner_text()
    assert first == "815 in (774 image) / 8 out"
    # The photo Gemini was given as a bucket's address is named as stored elsewhere, not as a file of the agent's.
    assert "gs://" in tab.page.locator("p.image.external").inner_text()
    assert "stored elsewhere, not loaded here" in tab.page.locator("p.image.external").inner_text()
    tab.shot("trajectory-tokens-by-modality")
    assert tab.console_errors == []


def test_map_reduce_branches_of_one_name_are_told_apart(tab: Tab, world: World) -> None:
    """A real LangGraph map-reduce capture: five parallel branches, every one a subagent named `research`. Before,
    the page listed "Subagent research" five times. Now each says beside its name the line of its first user message
    that is its own: its subtopic."""
    _, page = _replayed(world, "langgraph_openinference_map-reduce", "mapreduce")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    branches = document["subagent_trajectories"]
    assert len(branches) == 5 and {b["agent"]["name"] for b in branches} == {"research"}
    subtopics = []
    for b in branches:
        (first, *_) = [s for s in b["steps"] if s["source"] == "user"]
        subtopics.append(first["message"].splitlines()[0])
    assert all(t.startswith("Subtopic: ") for t in subtopics) and len(set(subtopics)) == 5
    summaries = tab.page.locator("details.subagent > summary")
    assert summaries.count() == 5
    assert [summaries.nth(i).locator(".branch").inner_text() for i in range(5)] == subtopics
    assert summaries.first.inner_text().startswith("Subagent research Subtopic: weather (5 steps)")
    assert summaries.first.locator(".branch").get_attribute("title") == \
        next(s for s in branches[0]["steps"] if s["source"] == "user")["message"]
    tab.shot("trajectory-map-reduce")
    assert tab.console_errors == []


def test_a_retriever_tools_documents_are_listed_under_what_the_model_was_shown(tab: Tab, world: World) -> None:
    """A real LangChain capture: a `create_agent` calls a retriever tool over a vector store, which returns the
    documents' text joined. Before, the result was that text alone: which retriever ran, for what query, and which
    documents it found were nowhere. Now the text (what the model was shown) says so, and under it each retrieval reads
    "2 documents found by VectorStoreRetriever for “…”" with its documents listed as a LlamaIndex retrieval's are."""
    _, page = _replayed(world, "langchain_openinference_rag", "lcrag")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    found = [(s, r) for s in document["steps"] for r in (s.get("observation") or {}).get("results") or ()
             if (r.get("extra") or {}).get("retrievals")]
    assert len(found) == 2 and tab.page.locator("div.retrieval").count() == 2
    for s, result in found:
        (call,) = [c for c in s["tool_calls"] if c["tool_call_id"] == result["source_call_id"]]
        tool = tab.page.locator(f"article#step-{s['step_id']} .tool", has_text=call["tool_call_id"])
        assert tool.locator(".tool-result > .label").inner_text() == "result (what the model was shown)"
        assert tool.locator("pre.observation").first.inner_text() == result["content"]
        (retrieval,) = result["extra"]["retrievals"]
        shown = tool.locator("div.retrieval")
        assert shown.locator("p.documents-found").inner_text() == \
            f"{len(retrieval['documents'])} documents found by {retrieval['retriever']} for “{retrieval['query']}”"
        assert retrieval["query"] == call["arguments"]["query"]
        listed = shown.locator("ol.documents > li.document")
        assert listed.count() == len(retrieval["documents"]) == 2
        for i, d in enumerate(retrieval["documents"]):
            item = listed.nth(i)
            assert item.locator(".document-id").inner_text() == d["id"]
            assert item.locator(".metadata").all_inner_texts() == [f"{k}: {v}" for k, v in d["metadata"].items()]
            text = item.locator("details.document-text")
            assert text.locator("summary .excerpt").is_visible()
            assert not text.locator("p.document-text").is_visible()
            text.locator("summary").click()
            assert text.locator("p.document-text").inner_text() == d["content"]
    # A tool's result with no retrieval (the weather's) is only its text, unlabelled.
    weather = tab.page.locator(".tool", has_text="get_weather").last
    assert weather.locator(".tool-result > .label").inner_text() == "result"
    assert weather.locator("div.retrieval").count() == 0
    tab.shot("trajectory-retriever-tool")
    assert tab.console_errors == []


def test_gemini_google_search_shows_its_suggestions_as_links_and_its_grounding_cited(tab: Tab, world: World) -> None:
    """A real capture of Gemini grounding its answers in Google Search (`google-genai_openinference_google-search`).
    Before, the Search Suggestions Google sends with a grounded answer were nowhere and the answer's grounding supports
    were not listed as citations. Now the search's queries read as Google's suggestions, each a link to Google's results
    for it, built from the call's queries: the HTML Google sent is never inserted (no element of it, no style of it in
    the page; it is folded as text); and the answer lists the pages it cites, each passage they support quoted."""
    _, page = _replayed(world, "google-genai_openinference_google-search", "grounding")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    searches = [(s, c) for s in document["steps"] for c in s.get("tool_calls") or ()
                if (c.get("extra") or {}).get("search_entry_point")]
    assert len(searches) == 2
    for s, call in searches:
        tool = tab.page.locator(f"article#step-{s['step_id']} .tool", has_text=call["tool_call_id"])
        assert tool.locator(".badge.provider").inner_text() == "run by the provider"
        chips = tool.locator(".search-suggestions a.chip")
        queries = call["arguments"]["queries"]
        assert chips.all_inner_texts() == queries
        assert [chips.nth(i).get_attribute("href") for i in range(chips.count())] == \
            ["https://www.google.com/search?q=" + urllib.parse.quote_plus(q) for q in queries]
        assert all(chips.nth(i).get_attribute("rel") == "nofollow noopener noreferrer" for i in range(chips.count()))
        raw = tool.locator(".search-suggestions details.as-recorded pre")
        assert not raw.is_visible() and raw.text_content() == call["extra"]["search_entry_point"]
        (result,) = [r for r in s["observation"]["results"] if r["source_call_id"] == call["tool_call_id"]]
        pages = json.loads(result["content"])
        assert tool.locator("p.provider-run").inner_text().startswith(f"run by the provider: {len(pages)} pages found")
    # Google's HTML is text only: none of its elements, and its style not applied (the CSP would refuse it anyway).
    assert tab.page.locator("div.carousel, div.headline, style").count() == 0

    cited = [s for s in document["steps"] if (s.get("extra") or {}).get("annotations")]
    assert len(cited) == 2
    for s in cited:
        notes = [n for n in s["extra"]["annotations"] if n["type"] == "grounding_support"]
        assert notes == s["extra"]["annotations"]
        box = tab.page.locator(f"article#step-{s['step_id']} .citations")
        pages = list(dict.fromkeys(n["url"] for n in notes))
        links = box.locator("li > a")
        assert [links.nth(i).get_attribute("href") for i in range(links.count())] == pages
        for i, url in enumerate(pages):
            passages = list(dict.fromkeys(s["message"][n["start_index"]:n["end_index"]] for n in notes
                                          if n["url"] == url))
            item = box.locator("li").nth(i)
            assert item.locator("a").inner_text() == next(n["title"] for n in notes if n["url"] == url)
            assert item.locator("q.cited").all_inner_texts() == passages
            assert all(p in s["message"] for p in passages)
    first = tab.page.locator(f"article#step-{cited[0]['step_id']} .citations li").first
    assert first.locator("q.cited").inner_text() == "runs from 28 May to 15 June in Parque Eduardo VII"
    tab.shot("trajectory-google-search")
    assert tab.console_errors == []


def test_mastra_working_memory_is_a_folded_note_not_the_message(tab: Tab, world: World) -> None:
    """A real Mastra capture with working memory (`mastra_native_memory`): a later turn's first call is sent the note
    the agent stored (`extra.working_memory`, Markdown). Before, the note was nowhere on the page. Now that step holds a
    folded "Working memory (as sent this turn)" with the note as Markdown, apart from what the model answered; Mastra's
    ~2 KB of working-memory instructions, a system step, are folded as every system prompt is."""
    _, page = _replayed(world, "mastra_native_memory", "memory")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    noted = [s for s in document["steps"] if (s.get("extra") or {}).get("working_memory")]
    assert len(noted) == 2 and tab.page.locator("details.working-memory").count() == 2
    for s in noted:
        step = tab.page.locator(f"article#step-{s['step_id']}")
        box = step.locator("details.working-memory")
        assert box.locator("summary").inner_text() == "Working memory (as sent this turn)"
        assert box.get_attribute("open") is None and not box.locator(".markdown").is_visible()
        box.locator("summary").click()
        note = s["extra"]["working_memory"]
        assert box.locator(".markdown h1").inner_text() == note.splitlines()[0].lstrip("# ")
        shown = box.locator(".markdown li").all_inner_texts()
        assert shown == [line[2:].replace("**", "") for line in note.splitlines() if line.startswith("- ")]
        # The note is not the step's message: the answer (or nothing, for a step that only called tools) is.
        message = step.locator(".markdown.message")
        assert message.inner_text() == s["message"]
        assert "Home city" not in message.inner_text()
    # The turn that changed the note is sent the note as it was, and stores the new one by calling the tool.
    assert "Paris, next week" in noted[0]["extra"]["working_memory"]
    (instructions,) = [s for s in document["steps"] if s["source"] == "system"
                       and "updateWorkingMemory" in s["message"]]
    folded = tab.page.locator(f"article#step-{instructions['step_id']} details.system")
    assert folded.get_attribute("open") is None and not folded.locator("pre.message").is_visible()
    assert len(instructions["message"]) > 1500
    tab.shot("trajectory-working-memory")
    assert tab.console_errors == []


def test_compactions_by_claude_code_and_strands_say_what_compacted(tab: Tab, world: World) -> None:
    """Real captures of Claude Code's `/compact` (`claude-code_native_compaction`) and Strands'
    SummarizingConversationManager with a summarization agent (`strands_native_summarizing`). Claude Code's reads
    "Context compacted by /compact: 5 messages summarized." (it records no count kept). Before, Strands' read "Context
    compacted by SummarizingConversationManager: …", the agent that wrote the summary unsaid; now "… by
    SummarizingConversationManager (its agent summarizer): 5 messages summarized, 2 kept."."""
    tab.login(world.token)
    for capture, agent_name in (("claude-code_native_compaction", "claudecompact"),
                                ("strands_native_summarizing", "strandscompact")):
        _, page = _replayed(world, capture, agent_name)
        document = _twin(tab, page)
        tab.go(page)
        compactions = [s for s in _steps(document) if (s.get("extra") or {}).get("context_compaction")]
        assert compactions and tab.page.locator("article.step.compaction").count() == len(compactions)
        for s in compactions:
            c = s["extra"]["context_compaction"]
            expected = f"Context compacted by {c['by']}"
            if c.get("agent"):
                expected += f" (its agent {c['agent']})"
            expected += f": {c['summarized_messages']} messages summarized"
            if c.get("kept_messages") is not None:
                expected += f", {c['kept_messages']} kept"
            note = tab.page.locator(f"article#step-{s['step_id']} p.compaction-note").inner_text()
            assert note.startswith(expected + "."), note
            summary = tab.page.locator(f"article#step-{s['step_id']} pre.compaction-summary").inner_text()
            assert summary == corpus.message_text(s["message"]) != ""
        tab.shot(f"trajectory-compaction-{capture.split('_')[0]}")
    notes = tab.page.locator("p.compaction-note").all_inner_texts()
    assert notes and all(n.startswith("Context compacted by SummarizingConversationManager (its agent summarizer): "
                                      "5 messages summarized, 2 kept.") for n in notes), notes
    assert tab.console_errors == []


def _results(document: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """Each tool call of the document's steps with its step and result, in order."""
    found = []
    for s in _steps(document):
        by_call = {r.get("source_call_id"): r for r in (s.get("observation") or {}).get("results") or ()}
        found.extend((s, c, by_call[c["tool_call_id"]]) for c in s.get("tool_calls") or ()
                     if c["tool_call_id"] in by_call)
    return found


def test_an_encrypted_compaction_reads_once_as_the_providers(tab: Tab, world: World) -> None:
    """A real capture of openai-agents' OpenAIResponsesCompactionSession compacting with `responses.compact`
    (`openai-agents_openinference_compaction`): the summary is an item only the provider can read, the compaction's call
    in no span. Before, the step said it twice (the note, then the same sentence in a summary box) and said later calls
    are sent "this summary", which no one can read. Now one note says what happened: the provider compacted N items
    into an encrypted item (its id and size), M user messages kept, later calls sent that item, its call's tokens and
    cost not counted; no summary box."""
    _, page = _replayed(world, "openai-agents_openinference_compaction", "encrypted")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    (s,) = [s for s in document["steps"] if (s.get("extra") or {}).get("context_compaction")]
    c = s["extra"]["context_compaction"]
    assert c["kind"] == "encrypted" and c["call_recorded"] is False
    step = tab.page.locator(f"article#step-{s['step_id']}")
    assert step.locator(".badge.compaction").inner_text() == "context compacted"
    assert step.locator("p.compaction-note").inner_text() == (
        f"Context compacted by {c['by']}: the provider compacted {c['summarized_messages']} items into an encrypted "
        f"item {c['item_id']} ({c['encrypted_chars']} characters), {c['kept_user_messages']} user messages kept. The "
        "model's later calls are sent that item instead; only the provider can read it. The compaction's own call is "
        "in no span: its tokens and cost are not counted in this session's.")
    # Said once: no summary box, the step's own sentence not shown again, nothing saying a summary is sent.
    assert step.locator("pre.compaction-summary").count() == 0 and step.locator(".markdown.message").count() == 0
    shown = step.inner_text()
    assert shown.count("Context compacted") == 1 and s["message"] not in shown and "this summary" not in shown
    assert tab.page.locator("article.step.compaction").count() == 1
    tab.shot("trajectory-compaction-encrypted")
    assert tab.console_errors == []


def test_anthropic_code_execution_reads_as_a_terminal_and_fetches_as_documents(tab: Tab, world: World) -> None:
    """A real capture of Anthropic's code execution and web fetch server tools
    (`anthropic-sdk_openinference_code-execution`). Before, each command and its output were JSON with `\\n` escapes,
    a file edit's text one escaped line, a failed fetch raw JSON, and the fetches counted and the container named on
    the step were nowhere. Now a command reads `$ command`, its result its return code (not 0: flagged), stdout and
    stderr as text and the files it made; a file edit its path and text, its result "Created …"; a fetched page a
    document, a PDF its size; a failed fetch its error code; the step says "2 web fetches" and where its code ran."""
    _, page = _replayed(world, "anthropic-sdk_openinference_code-execution", "codeexec")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)

    def tool(s: dict[str, Any], c: dict[str, Any]) -> Any:
        return tab.page.locator(f"article#step-{s['step_id']} .tool", has_text=c["tool_call_id"])

    commands = [(s, c, r) for s, c, r in _results(document) if c["function_name"] == "bash_code_execution"]
    assert len(commands) == 4
    for s, call, result in commands:
        ran = json.loads(result["content"])
        shown = tool(s, call)
        assert shown.locator("pre.command").inner_text() == "$ " + call["arguments"]["command"]
        code = shown.locator("p.return-code")
        assert code.inner_text().startswith(f"return code {ran['return_code']}")
        assert ("failed" in (code.get_attribute("class") or "")) == (ran["return_code"] != 0) \
            == bool(result["extra"].get("is_error"))
        for stream in ("stdout", "stderr"):
            text = shown.locator(f"pre.{stream}")
            if ran[stream]:
                assert text.is_visible() and text.text_content() == ran[stream]
            else:
                assert text.count() == 0
        files = shown.locator("p.files-made code.file-id")
        assert files.all_inner_texts() == ran.get("files", [])
        # The JSON as recorded is only folded away; nothing visible is escaped JSON.
        assert not shown.locator(".tool-result details.as-recorded pre").is_visible()
        assert "\\n" not in shown.inner_text() and '"stdout"' not in shown.inner_text()
    (failed,) = [(s, c) for s, c, r in commands if r["extra"].get("is_error")]
    assert tool(*failed).locator("p.return-code").inner_text() == "return code 1 (the command failed)"
    assert "ModuleNotFoundError: No module named 'polars'" in tool(*failed).locator("pre.stderr").inner_text()

    ((s, call, result),) = [(s, c, r) for s, c, r in _results(document) if c["function_name"] ==
                            "text_editor_code_execution"]
    shown = tool(s, call)
    assert shown.locator("p.file-command").inner_text() == f"create {call['arguments']['path']}"
    assert shown.locator("pre.file-text").text_content() == call["arguments"]["file_text"]
    assert json.loads(result["content"]) == {"is_file_update": False}
    assert shown.locator("p.file-edit").inner_text() == f"Created {call['arguments']['path']} (a new file)"

    fetches = [(s, c, r) for s, c, r in _results(document) if c["function_name"] == "web_fetch"]
    assert len(fetches) == 3
    for s, call, result in fetches:
        shown = tool(s, call)
        if result["extra"].get("is_error"):
            assert shown.locator("p.provider-failure").inner_text() == \
                f"run by the provider, and it failed: {result['extra']['error']['type']}"
            continue
        (got,) = json.loads(result["content"])
        assert shown.locator("p.provider-run").inner_text() == "run by the provider: 1 document fetched, as its " \
                                                                "answer records it"
        link = shown.locator("ol.documents a.document-title")
        assert (link.inner_text(), link.get_attribute("href")) == (got["title"], got["url"])
        assert shown.locator(".fetched").inner_text().startswith("fetched " + got["retrieved_at"][:10])
        if got["text"].startswith("[application/pdf"):
            assert shown.locator("p.document-omitted").inner_text() == \
                "application/pdf, 638 bytes (its content is not kept)"
            assert shown.locator(".document-text").count() == 0
        else:
            shown.locator("details.document-text > summary").click()
            assert shown.locator("p.document-text").text_content() == got["text"]

    for s in (s for s in document["steps"] if s["source"] == "agent"):
        fetched = s["metrics"]["extra"].get("web_fetch_requests")
        step = tab.page.locator(f"article#step-{s['step_id']}")
        assert step.locator(".metric.web-fetches").all_inner_texts() == (
            [f"{fetched} web fetch{'es' if fetched != 1 else ''}"] if fetched else [])
        container = (s.get("extra") or {}).get("container")
        assert step.locator(".metric.container").all_inner_texts() == ([f"code ran in {container}"] if container
                                                                      else [])
    assert tab.page.locator(".metric.web-fetches").all_inner_texts() == ["1 web fetch", "2 web fetches"]
    tab.shot("trajectory-code-execution")
    assert tab.console_errors == []


def test_openai_file_search_lists_documents_with_scores_and_cites_the_files(tab: Tab, world: World) -> None:
    """A real capture of the Responses API's hosted file search (`openai-agents_openinference_file-search`): each search
    the provider's call, the chunks it found its result; each answer's `file_citation` annotations a file id and name at
    one `index` of the text. The documents already read as documents (id, score, text, metadata); before, the
    citations were listed nowhere (only a web page's were). Now each answer lists the files it cites by name and id,
    no passage of them (an index is a point of the answer, not a range)."""
    _, page = _replayed(world, "openai-agents_openinference_file-search", "filesearch")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    searches = [(s, c, r) for s, c, r in _results(document) if c["function_name"] == "file_search"]
    assert len(searches) == 2
    for s, call, result in searches:
        found = json.loads(result["content"])
        shown = tab.page.locator(f"article#step-{s['step_id']} .tool", has_text=call["tool_call_id"])
        assert shown.locator("p.provider-run").inner_text() == \
            f"run by the provider ({call['extra']['status']}): {len(found)} documents found, as its answer records them"
        items = shown.locator("ol.documents > li.document")
        assert items.count() == len(found)
        for i, d in enumerate(found):
            assert items.nth(i).locator(".document-id").inner_text() == d["id"]
            assert items.nth(i).locator(".score").inner_text() == f"score {d['score']:.3f}"
            assert f"filename: {d['metadata']['filename']}" in items.nth(i).locator(".metadata").all_inner_texts()
            assert items.nth(i).locator(".document-text").inner_text() == d["content"]
    cited = [s for s in document["steps"] if (s.get("extra") or {}).get("annotations")]
    assert len(cited) == 2
    for s in cited:
        notes = s["extra"]["annotations"]
        assert {n["type"] for n in notes} == {"file_citation"} and all(isinstance(n["index"], int) for n in notes)
        box = tab.page.locator(f"article#step-{s['step_id']} .citations")
        files = list(dict.fromkeys((n["filename"], n["file_id"]) for n in notes))
        assert box.locator("li .cited-file").all_inner_texts() == [name for name, _ in files]
        assert box.locator("li code.file-id").all_inner_texts() == [file_id for _, file_id in files]
        assert box.locator("q.cited").count() == 0 and box.locator("a").count() == 0  # a point, no passage, no link
    tab.shot("trajectory-file-search")
    assert tab.console_errors == []


def test_agno_knowledge_documents_are_titled_by_their_names(tab: Tab, world: World) -> None:
    """A real capture of an Agno agent searching its knowledge base (`agno_openinference_knowledge`): each search's
    result lists the documents found (`extra.retrievals`), each a name, a text and metadata, no id and no score.
    Before, the listed documents had no title (a name was not read); now each is titled by its name, its metadata and
    text under it, below the text the model was shown."""
    _, page = _replayed(world, "agno_openinference_knowledge", "knowledge")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    found = [(s, c, r) for s, c, r in _results(document) if (r.get("extra") or {}).get("retrievals")]
    assert len(found) == 2
    for s, call, result in found:
        (retrieval,) = result["extra"]["retrievals"]
        shown = tab.page.locator(f"article#step-{s['step_id']} .tool", has_text=call["tool_call_id"])
        assert shown.locator(".tool-result > .label").inner_text() == "result (what the model was shown)"
        assert shown.locator("p.documents-found").inner_text() == \
            f"{len(retrieval['documents'])} documents found by {retrieval['retriever']} for “{retrieval['query']}”"
        items = shown.locator("div.retrieval ol.documents > li.document")
        assert items.count() == len(retrieval["documents"]) == 2
        for i, d in enumerate(retrieval["documents"]):
            item = items.nth(i)
            assert item.locator(".document-title").inner_text() == d["name"]
            assert item.locator(".document-id").count() == 0 and item.locator(".score").count() == 0
            assert item.locator(".metadata").all_inner_texts() == [f"{k}: {v}" for k, v in d["metadata"].items()]
            assert d["content"].startswith(item.locator(".document-text").first.inner_text().rstrip("…"))
    assert tab.page.locator(".document-title").all_inner_texts() == [
        "baggage-allowance", "cabin-baggage", "pets-in-cabin", "cabin-baggage"]
    tab.shot("trajectory-knowledge")
    assert tab.console_errors == []


def _results_of(names: list[str]) -> str:
    """Cleared results as the note lists them: "a (id)", "a (id) and b (id)", "a (id), b (id) and c (id)"."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def test_context_editing_says_which_results_the_model_no_longer_saw(tab: Tab, world: World) -> None:
    """A real capture of LangChain's ContextEditingMiddleware clearing old tool results to "[cleared]"
    (`langgraph_openinference_context-editing`). Before, the steps' `extra.context_edit` was shown nowhere: nothing
    on the page said which results the model no longer saw, from which call on. Now that call's step says so (by what
    and how, each result cleared by its tool and call id, linked to the result on the page, how many results the call
    was sent cleared in all), and each result cleared says "hidden from the model from step N", linked to that step."""
    _, page = _replayed(world, "langgraph_openinference_context-editing", "ctxedit")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    edits = [s for s in document["steps"] if (s.get("extra") or {}).get("context_edit")]
    assert [len(s["extra"]["context_edit"]["cleared_tool_results"]) for s in edits] == [1, 1, 2]
    holder = {r["source_call_id"]: s["step_id"] for s in document["steps"]
              for r in (s.get("observation") or {}).get("results") or ()}
    hidden_from: dict[str, int] = {}
    for s in edits:
        e = s["extra"]["context_edit"]
        cleared = e["cleared_tool_results"]
        (placeholder,) = {c["placeholder"] for c in cleared}
        names = [f"{c['function_name']} ({c['tool_call_id']})" for c in cleared]
        step = tab.page.locator(f"article#step-{s['step_id']}")
        n = e["results_sent_cleared"]
        assert step.locator("p.context-edit-note").inner_text() == (
            f"Context editing ({e['by']}, {e['strategy']}): from this call on the model was sent “{placeholder}” "
            f"instead of the result{'s' if len(cleared) != 1 else ''} of {_results_of(names)}; "
            f"{n} result{'s' if n != 1 else ''} sent cleared in all.")
        links = step.locator("p.context-edit-note a.cleared-call")
        assert links.all_inner_texts() == [c["tool_call_id"] for c in cleared]
        for link, c in zip(links.all(), cleared, strict=True):
            # Each id links the result shown on its call, in the step that holds it.
            target = tab.page.locator(link.get_attribute("href"))
            assert target.count() == 1
            assert target.evaluate("e => e.closest('article.step').id") == f"step-{holder[c['tool_call_id']]}"
            assert target.evaluate("e => e.closest('.tool').querySelector('.tool-call .muted').textContent") == \
                c["tool_call_id"]
            hidden_from.setdefault(c["tool_call_id"], s["step_id"])
    assert hidden_from and len(hidden_from) == 4
    marks = tab.page.locator(".tool-result .hidden-from")
    assert marks.count() == len(hidden_from)
    for call_id, step_id in hidden_from.items():
        mark = tab.page.locator(f"article#step-{holder[call_id]} .tool").filter(
            has=tab.page.locator(".tool-call .muted", has_text=call_id)).locator(".hidden-from")
        assert mark.inner_text() == f"hidden from the model from step {step_id}"
        assert mark.locator("a").get_attribute("href") == f"#step-{step_id}"
    # Following a link lands on the result.
    first = tab.page.locator("p.context-edit-note a.cleared-call").first
    first.click()
    assert tab.page.evaluate("location.hash") == first.get_attribute("href")
    assert tab.page.locator(".tool-result:target .hidden-from").count() == 1
    tab.page.evaluate("window.scrollTo(0, 0)")
    tab.shot("trajectory-context-editing")
    assert tab.console_errors == []


def test_a_compaction_of_no_recorded_call_says_its_tokens_are_not_counted(tab: Tab, world: World) -> None:
    """A real capture of Strands' SummarizingConversationManager with no agent of its own
    (`strands_native_summarizing_default`): each compaction's summary is readable (the step holds it) but the call that
    wrote it is in no span (`call_recorded: false`). Before, the note said nothing of it, as if the session's totals
    held that call; now it says its tokens and cost are not counted, as the encrypted compaction's note does."""
    _, page = _replayed(world, "strands_native_summarizing_default", "strandsdefault")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    compactions = [s for s in document["steps"] if (s.get("extra") or {}).get("context_compaction")]
    assert len(compactions) == 2
    for s in compactions:
        c = s["extra"]["context_compaction"]
        assert c["kind"] == "summary" and c["call_recorded"] is False and not s.get("llm_call_count")
        step = tab.page.locator(f"article#step-{s['step_id']}")
        assert step.locator("p.compaction-note").inner_text() == (
            f"Context compacted by {c['by']}: {c['summarized_messages']} messages summarized, {c['kept_messages']} "
            "kept. The model's later calls are sent this summary instead of those messages; it answers no one. The "
            "compaction's own call is in no span: its tokens and cost are not counted in this session's.")
        assert step.locator("pre.compaction-summary").inner_text() == corpus.message_text(s["message"]) != ""
        assert step.locator(".metric.tokens").count() == 0  # no call of its own to show
    tab.shot("trajectory-compaction-unrecorded-call")
    assert tab.console_errors == []


def test_a_compaction_by_an_agent_names_no_mechanism(tab: Tab, world: World) -> None:
    """A real capture of pydantic-ai's summarizing history processor (`pydantic-ai_openai_history-processor`): a
    function of the user's has an agent summarize, so the compaction names the agent and no mechanism (`agent`, no
    `by`). Before, the note read "Context compacted by the agent summarizer: …", as if the agent were the mechanism;
    now "Context compacted: summarized by agent summarizer (5 messages summarized, 1 kept).", naming none."""
    _, page = _replayed(world, "pydantic-ai_openai_history-processor", "historyproc")
    tab.login(world.token)
    document = _twin(tab, page)
    tab.go(page)
    (s,) = [s for s in document["steps"] if (s.get("extra") or {}).get("context_compaction")]
    c = s["extra"]["context_compaction"]
    assert "by" not in c and c["agent"] == "summarizer"
    step = tab.page.locator(f"article#step-{s['step_id']}")
    note = step.locator("p.compaction-note").inner_text()
    expected = (f"Context compacted: summarized by agent {c['agent']} ({c['summarized_messages']} messages summarized, "
                f"{c['kept_messages']} kept).")
    assert expected == "Context compacted: summarized by agent summarizer (5 messages summarized, 1 kept)."
    assert note == expected + " The model's later calls are sent this summary instead of those messages; it answers " \
                              "no one.", note
    assert step.locator("pre.compaction-summary").inner_text() == corpus.message_text(s["message"]) != ""
    # Its call is recorded (its tokens are the step's): nothing says they are not counted.
    assert step.locator(".metric.tokens").count() == 1 and step.locator(".unrecorded-call").count() == 0
    tab.shot("trajectory-compaction-by-agent")
    assert tab.console_errors == []
