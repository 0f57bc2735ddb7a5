"""The UI in a real browser: login, every page a user reaches from the URL the SDK printed, paging, live
refresh, untrusted content that must not run, and another workspace's pages answering 404."""

from __future__ import annotations

import html
import json
import re
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.cookiejar import CookieJar
from typing import Any

from evalkit.scoring.experiments import STATUSES
from tests.captures import corpus
from tests.trajectory_service.conftest import chat, http, root
from tests.ui.conftest import Tab, World


def _replayed(world: World, name: str, agent_name: str) -> tuple[str, corpus.Capture, dict[str, Any]]:
    """A capture replayed into a new agent of its own: (the agent, the capture, its session's trajectory)."""
    capture = corpus.load(name)
    agent = world.served.ok("POST", "/api/agents", {"name": agent_name, "workspace": "acme",
                                                     "trajectory_wait_seconds": 10}, token=world.token)["agent"]
    key = world.served.ok("POST", f"/api/agents/{agent}/keys", {}, token=world.token)["key"]
    corpus.replay(capture, world.served.otlp, key)
    document = json.loads(http("GET", f"{world.served.api}/api/agents/{agent}/sessions/{capture.session_id}"
                                      "/trajectory?wait=10", token=world.token).text)
    return agent, capture, document


def test_login_is_required_and_keeps_the_token_out_of_urls(tab: Tab, world: World) -> None:
    tab.go("/experiments")
    assert tab.page.url.startswith(world.served.api + "/login?next=")
    tab.page.fill("#token", "evk_not_a_token")
    tab.page.click("form.login button[type=submit]")
    assert "unknown or revoked" in tab.page.inner_text("#error-message")
    tab.shot("login-refused")

    tab.page.fill("#token", world.token)
    tab.page.click("form.login button[type=submit]")
    tab.page.wait_for_load_state()
    assert tab.page.url == world.served.api + "/experiments"  # back where the login was asked for
    assert world.token not in tab.page.url and world.token not in tab.page.content()
    cookies = {c["name"]: c for c in tab.page.context.cookies()}
    session = cookies["evalkit_session"]
    assert session["httpOnly"] and session["sameSite"] == "Lax" and world.token not in session["value"]
    assert tab.page.evaluate("document.cookie") == ""  # nothing readable by script
    tab.shot("experiments")

    tab.page.click("header .who button")  # log out (a POST with the CSRF token)
    tab.page.wait_for_load_state()
    assert tab.page.url == world.served.api + "/login"
    tab.go("/")
    assert "/login" in tab.page.url


def test_forms_without_the_csrf_token_are_refused(world: World) -> None:
    jar = CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(world.served.api + "/login").read()  # sets the CSRF cookie
    body = urllib.parse.urlencode({"token": world.token, "csrf": "forged", "next": "/"}).encode()
    try:
        opener.open(world.served.api + "/login", data=body)
        raise AssertionError("a login without the right CSRF token was accepted")
    except urllib.error.HTTPError as exc:
        assert exc.code == 403 and "CSRF" in exc.read().decode()
    assert "evalkit_session" not in {c.name for c in jar}


def test_experiment_from_the_printed_url_then_a_run_and_its_trajectory(tab: Tab, world: World) -> None:
    assert world.printed_url == f"{world.served.api}/experiments/{world.experiment_id}"
    tab.login(world.token, next_path="/")
    response = tab.go(world.printed_url)
    assert response.status == 200
    page = tab.page
    assert page.inner_text("h1").startswith(f"Experiment #{world.experiment_id}")
    row = page.locator("tr.evaluator[data-evaluator=same_answer]")
    # Candidate: capital 2/2, sum 1/2, colour 0/2, xss 0/2 -> 3 of 8 passed.
    assert "37.5%" in row.inner_text() and "(3/8)" in row.inner_text()
    # The interval of a pass rate is in percent like the rate beside it, never fractions.
    assert re.search(r"\[\d+\.\d%, \d+\.\d%\]", row.locator("td").nth(2).inner_text()), row.inner_text()
    assert row.locator("svg.interval circle.point").count() == 1  # the interval drawn as an error bar
    assert page.locator("figure.histogram svg").count() == 3  # cost, tokens, duration
    assert page.locator("table.matrix td.cell.pass").count() == 3
    assert page.locator("table.matrix td.cell.fail").count() == 5
    tab.shot("experiment")

    page.locator("table.matrix tr", has_text="xss").locator("td.cell a").first.click()
    page.wait_for_load_state()
    assert "/runs/" in page.url and page.inner_text("h1").startswith("Case xss")
    assert "'hi'" in page.inner_text("table.evaluations")  # the evaluator's explanation
    assert page.locator(".answer").inner_text().startswith("<script>")  # shown as text, never run
    assert tab.xss_ran() is None and tab.dialogs == []
    tab.shot("run")

    page.click("#session-link")
    page.wait_for_load_state()
    assert page.url.startswith(f"{world.served.api}/agents/{world.agent}/sessions/")
    assert page.locator("dl.summary-bar").count() == 1 and page.locator("article.step").count() >= 1
    tab.shot("run-session")
    assert tab.console_errors == []  # no failed load (a missing favicon was one on every page)


def test_compare_page_puts_regressions_first_with_the_gate(tab: Tab, world: World) -> None:
    tab.login(world.token)
    tab.go(f"/experiments/{world.experiment_id}/compare?baseline={world.baseline_id}&max_regressions=0")
    page = tab.page
    assert "Gate: failed" in page.inner_text("#gate")
    row = page.locator("table.comparison tbody tr").first
    assert "same_answer" in row.inner_text() and row.locator("svg.interval").count() == 1
    # Pass rates in percent, their difference and its interval in percentage points (as `evalkit experiments
    # compare` prints them), not fractions.
    cells = row.locator("td").all_inner_texts()
    assert cells[1].endswith("%") and cells[2].endswith("%"), cells
    assert cells[3].endswith(" pp") and re.fullmatch(r"\[[+-]\d+\.\d pp, [+-]\d+\.\d pp\]", cells[4]), cells
    kinds = page.locator("details.case-diff .badge").all_inner_texts()
    assert kinds[:3] == ["regressed"] * 3 and set(kinds[3:]) == {"same"}  # colour, sum, xss got worse
    xss = page.locator("details.case-diff", has_text="xss")
    # jsdiff marked the words that changed: baseline said "hi", the candidate the payload.
    assert xss.locator("pre.diff-old del").first.inner_text().strip() == "hi"
    assert xss.locator("pre.diff-new ins").count() >= 1
    assert tab.xss_ran() is None and tab.dialogs == []
    tab.shot("compare")

    twin = json.loads(http("GET", f"{world.served.api}/api/experiments/{world.experiment_id}/compare"
                                   f"?baseline_id={world.baseline_id}&allow_incomplete=true", token=world.token).text)
    assert twin["evaluators"][0]["regressed_count"] == 3


def test_the_compare_gate_takes_min_pairs_as_its_pairs_check_asks(tab: Tab, world: World) -> None:
    """With 4 cases the gate's "pairs" check fails, saying to lower min_pairs: the page's form takes it (as
    `evalkit experiments gate --min-pairs` does), and a threshold that is not a finite number is refused."""
    tab.login(world.token)
    page = tab.page
    base = f"/experiments/{world.experiment_id}/compare?baseline={world.baseline_id}"
    tab.go(base + "&gate=1")
    pairs = page.locator("#gate li", has_text="pairs")
    assert pairs.count() == 1 and "lower min_pairs" in pairs.inner_text() and "bad" in pairs.get_attribute("class")
    tab.shot("compare-gate-pairs")
    page.fill("input[name=min_pairs]", "4")
    page.click("text=Apply gate")
    page.wait_for_load_state()
    assert "min_pairs=4" in page.url and page.input_value("input[name=min_pairs]") == "4"
    assert pairs.count() == 1 and "ok" in pairs.get_attribute("class"), pairs.inner_text()
    # A bad threshold is named with its value and what it may be, never an exception's class name.
    for bad in ("min_score=nan", "min_score=inf", "min_score=x", "min_pairs=0", "min_pairs=x", "max_regressions=1e99"):
        response = tab.go(f"{base}&{bad}")
        message = page.inner_text("#error-message")
        name, _, value = bad.partition("=")
        assert response.status == 400 and f"{name}=" in message and value in message, (bad, message)
        assert "Error" not in message, (bad, message)


def test_sessions_page_through_filter_and_refresh_while_sessions_arrive(tab: Tab, world: World) -> None:
    tab.login(world.token)
    tab.go(f"/agents/{world.agent}/sessions")
    page = tab.page
    first = page.locator("a.session-link").all_inner_texts()
    assert len(first) == 50
    # The count is of LLM calls; a trajectory's steps count the user's messages too, so "steps" would disagree.
    assert "LLM calls" in page.locator("table.sessions thead").inner_text()
    tab.shot("sessions")
    # "Next" follows the list's keyset cursor (a deep page costs a page), "previous" goes back by offset.
    assert "cursor=" in (page.locator("nav.pager a.next").get_attribute("href") or "")
    page.click("nav.pager a.next")
    page.wait_for_load_state()
    second = page.locator("a.session-link").all_inner_texts()
    assert second and not set(first) & set(second)
    assert page.locator("nav.pager a.prev").count() == 1
    assert "sessions 51–" in page.locator("nav.pager").inner_text()
    page.click("nav.pager a.prev")
    page.wait_for_load_state()
    assert page.locator("a.session-link").all_inner_texts() == first
    api = json.loads(http("GET", f"{world.served.api}/api/agents/{world.agent}/sessions?limit=1000",
                          token=world.token).text)
    assert set(first + second) == {s["session_id"] for s in api["sessions"]}

    tab.go(f"/agents/{world.agent}/sessions?q=paged-00&sort=spans")
    assert sorted(page.locator("a.session-link").all_inner_texts()) == [f"paged-00{i}" for i in range(10)]

    # Live: the first page re-reads itself; a session that arrives now shows up without a reload.
    tab.go(f"/agents/{world.agent}/sessions")
    assert page.locator("body[data-live]").count() == 1
    world.served.send(world.key, [root(900, 1, "arrived-live", 5000, 5001), chat(900, 2, 1, 5000.2)])
    page.wait_for_selector("a.session-link:text-is('arrived-live')", timeout=15_000)


def test_a_session_not_arrived_yet_can_be_waited_for_as_its_404_says(tab: Tab, world: World) -> None:
    """The 404 of a session whose spans are not in says "ask again with ?wait=SECONDS": the page takes it."""
    tab.login(world.token)
    page = tab.page
    response = tab.go(f"/agents/{world.agent}/sessions/arrives-late")
    assert response.status == 404 and "?wait=SECONDS" in page.inner_text("#error-message")
    timer = threading.Timer(1.0, world.served.send, (world.key, [root(901, 1, "arrives-late", 6000, 6001),
                                                                  chat(901, 2, 1, 6000.2, text="here now")]))
    timer.start()
    try:
        response = tab.go(f"/agents/{world.agent}/sessions/arrives-late?wait=15")
    finally:
        timer.join()
    assert response.status == 200 and "here now" in page.inner_text("div.steps")
    assert tab.go(f"/agents/{world.agent}/sessions/arrives-late?wait=-1").status == 400


def test_trajectory_viewer_pages_steps_and_shows_raw_spans(tab: Tab, world: World) -> None:
    tab.login(world.token)
    tab.go(f"/agents/{world.agent}/sessions/{world.long_session}")
    page = tab.page
    assert page.locator("article.step").count() == 100
    assert "460" in page.inner_text("dl.summary-bar")  # 230 user + 230 agent steps
    page.locator("nav.steps-pager a.page-2").first.click()
    page.wait_for_load_state()
    assert page.locator("article.step").first.get_attribute("id") == "step-101"

    tab.go(f"/agents/{world.agent}/sessions/{world.xss_session}")
    assert page.locator("article.step.has-error").count() == 1 and page.locator(".tool.has-error").count() == 1
    assert '"query"' in page.locator(".tool-call pre.json").inner_text()
    tab.shot("trajectory")
    with page.expect_download() as download:
        page.click("#download")
    document = json.loads(open(download.value.path()).read())
    assert document["session_id"] == world.xss_session and len(document["steps"]) == 5
    api = json.loads(http("GET", f"{world.served.api}/api/agents/{world.agent}/sessions/{world.xss_session}"
                                 "/trajectory", token=world.token).text)
    assert document["steps"] == api["steps"] and document["final_metrics"] == api["final_metrics"]

    page.click("#tab-spans")
    page.wait_for_load_state()
    assert page.locator("table.spans > tbody > tr").count() == 4
    assert page.locator("table.spans > tbody > tr > td.d1").count() == 3  # the root's children, indented
    root_x = page.locator("table.spans > tbody > tr > td.d0 > details > summary").bounding_box()["x"]
    child_x = page.locator("table.spans > tbody > tr > td.d1 > details > summary").first.bounding_box()["x"]
    assert child_x > root_x
    assert page.locator("svg.waterfall rect.bar-error").count() == 1
    page.locator("table.spans summary", has_text="execute_tool search").click()
    assert "gen_ai.tool.call.id" in page.inner_text("table.spans")
    tab.shot("spans")


def test_a_langgraph_subgraph_opens_in_place_at_its_handoff(tab: Tab, world: World) -> None:
    """A real LangGraph capture: the subgraph's handoff is a result with no tool call of its own, and the
    subagent it names opens in place there, as one named on a tool call's result does."""
    agent, capture, document = _replayed(world, "langgraph_openinference_subgraph", "graph")
    (sub,) = document["subagent_trajectories"]
    handoff = next(s for s in document["steps"] if not s.get("tool_calls") and any(
        r.get("subagent_trajectory_ref") for r in (s.get("observation") or {}).get("results") or []))
    sub_answer = next(s["message"] for s in reversed(sub["steps"]) if s["source"] == "agent" and s["message"])

    tab.login(world.token)
    tab.go(f"/agents/{agent}/sessions/{capture.session_id}")
    page = tab.page
    opened = page.locator(f"article#step-{handoff['step_id']} details.subagent")
    assert opened.count() == 1, page.inner_text(f"article#step-{handoff['step_id']}")
    assert f"({len(sub['steps'])} steps)" in opened.locator(":scope > summary").inner_text()
    opened.locator(":scope > summary").click()
    assert sub_answer[:40] in opened.inner_text()
    assert tab.console_errors == []


def test_workflow_agents_open_at_every_depth_and_their_work_is_counted(tab: Tab, world: World) -> None:
    """A real Google ADK capture of workflow agents (a SequentialAgent running a ParallelAgent of two LLM agents,
    then a summariser): the top trajectory only delegates. Each delegation reads as what it is, not as a folded
    system prompt; the parallel agent's own subagents (embedded in its trajectory, not the session's) open
    inside it, the failing hotel lookup with them; the bar counts the tool calls and steps made below the top."""
    agent, capture, document = _replayed(world, "google-adk_native_workflow-agents", "workflow")
    subagents = list(_within(document))
    research = next(t for t in document["subagent_trajectories"] if t["subagent_trajectories"])
    hotel = next(t for t in research["subagent_trajectories"] if t["agent"]["name"] == "hotel_agent")
    hotel_call = next(c for s in hotel["steps"] for c in s.get("tool_calls") or [])
    first = document["steps"][0]
    assert first["source"] == "system" and not first.get("tool_calls")

    tab.login(world.token)
    tab.go(f"/agents/{agent}/sessions/{capture.session_id}")
    page = tab.page
    bar = page.inner_text("dl.summary-bar")
    calls = sum(len(s.get("tool_calls") or []) for t in (document, *subagents) for s in t["steps"])
    assert calls > 0 and not any(s.get("tool_calls") for s in document["steps"])
    assert f"TOOL CALLS\n{calls}" in bar.upper(), bar
    assert (f"(+{sum(len(t['steps']) for t in subagents)} in {len(subagents)} subagents)") in bar, bar
    article = page.locator(f"article#step-{first['step_id']}").first
    assert article.locator(":scope > details.system").count() == 0
    assert first["message"] in article.locator(":scope > p.delegation").inner_text()

    opened = article.locator(":scope > details.subagent")
    opened.locator(":scope > summary").click()
    inner = opened.locator("details.subagent", has_text="Subagent hotel_agent")
    assert inner.count() == 1, opened.inner_text()
    inner.locator(":scope > summary").click()
    assert hotel_call["function_name"] in inner.inner_text()
    assert "subagent: " not in opened.inner_text()  # an id said again beside the subagent it opens
    assert tab.console_errors == []
    tab.shot("workflow-agents")


def _within(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for sub in document.get("subagent_trajectories") or []:
        yield sub
        yield from _within(sub)


def test_prompt_cache_reads_and_writes_show_beside_the_prompt_tokens(tab: Tab, world: World) -> None:
    """A real Anthropic capture with prompt caching: the bar and each call's step say how many of the prompt
    tokens were read from the cache and written to it, the numbers of the trajectory's JSON."""
    agent, capture, document = _replayed(world, "anthropic-sdk_openinference_prompt-cache", "cached")
    final = document["final_metrics"]
    written = final["extra"]["total_cache_creation_input_tokens"]
    assert final["total_cached_tokens"] > 0 and written > 0

    tab.login(world.token)
    tab.go(f"/agents/{agent}/sessions/{capture.session_id}")
    page = tab.page
    assert (f"{final['total_prompt_tokens']:,} in ({final['total_cached_tokens']:,} cached, {written:,} written "
            "to cache)") in page.inner_text("dl.summary-bar")
    for step in corpus.llm_steps(document):
        metrics = step["metrics"]
        note = ", ".join(part for part in (
            f"{metrics['cached_tokens']:,} cached" if metrics.get("cached_tokens") else "",
            f"{metrics['extra']['cache_creation_input_tokens']:,} written to cache"
            if (metrics.get("extra") or {}).get("cache_creation_input_tokens") else "") if part)
        assert note and f"({note})" in page.inner_text(f"article#step-{step['step_id']} > header")
    tab.shot("trajectory-prompt-cache")


def test_untrusted_content_never_runs(tab: Tab, world: World) -> None:
    tab.login(world.token)
    page = tab.page
    response = tab.go(f"/agents/{world.agent}/sessions/{world.xss_session}")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    message = page.locator("article#step-2 .message")
    assert "<script>window.__xss" in message.inner_text()  # the payload is there, as text
    assert message.locator("script, img, iframe, b[onmouseover]").count() == 0
    assert page.locator("a[href^='javascript' i], [onerror], [onmouseover], iframe").count() == 0
    page.hover("article#step-2 .message")
    assert tab.xss_ran() is None and tab.dialogs == []
    # Every script on the page is one of ours, from /static.
    sources = page.eval_on_selector_all("script", "els => els.map(e => e.getAttribute('src'))")
    assert sources and all(s and s.startswith("/static/") for s in sources)
    for path in (f"/agents/{world.agent}/sessions/{world.xss_session}?tab=spans",
                 f"/experiments/{world.experiment_id}"):
        tab.go(path)
        assert tab.xss_ran() is None and tab.dialogs == []


def test_a_reader_of_another_workspace_gets_404(tab: Tab, world: World) -> None:
    tab.login(world.other_token)
    page = tab.page
    assert world.agent not in page.inner_text("main")  # the home page lists only mallory's workspaces
    for path in (f"/agents/{world.agent}/sessions", f"/agents/{world.agent}/sessions/{world.xss_session}",
                 f"/experiments/{world.experiment_id}", f"/experiments/{world.experiment_id}/runs/{world.run_ids[0]}",
                 f"/experiments/{world.experiment_id}/compare?baseline={world.baseline_id}",
                 f"/datasets/{world.dataset}", f"/experiments/{world.experiment_id}?format=json"):
        response = tab.go(path)
        assert response.status == 404, (path, response.status)
        assert "not visible" in page.content() or "Not found" in page.inner_text("h1")  # the twin: JSON
    tab.go(f"/agents/{world.agent}/sessions/{world.xss_session}")
    assert "not visible to this token" in page.inner_text("#error-message")
    tab.shot("not-found")


def test_home_dataset_and_json_twins(tab: Tab, world: World) -> None:
    tab.login(world.token)
    page = tab.page
    # The home page lists the ten latest experiments: which they are depends on the tests that ran before in this
    # process (the world is shared), so the page is held to its twin and the twin to the API.
    text = page.inner_text("main")
    home = tab.go("/?format=json").json()
    every = json.loads(http("GET", f"{world.served.api}/api/experiments", token=world.token).text)["experiments"]
    shown = [e["experiment_id"] for e in home["experiments"]]
    assert len(shown) == min(10, len(every)) and set(shown) <= {e["experiment_id"] for e in every}
    assert world.agent in text and all(f"#{eid}" in text for eid in shown), (shown, text[:2000])
    tab.go("/")
    tab.shot("home")
    page.click("nav >> text=Datasets")
    assert page.url.endswith("/datasets")
    page.click(f"a[href='/datasets/{urllib.parse.quote(world.dataset, safe='')}']")
    assert page.locator("table.cases tbody tr").count() == 4
    tab.shot("dataset")
    twin: dict[str, Any] = tab.go(f"/experiments/{world.experiment_id}?format=json").json()
    api = json.loads(http("GET", f"{world.served.api}/api/experiments/{world.experiment_id}", token=world.token).text)
    assert twin["experiment_id"] == api["experiment_id"] and twin["progress"] == api["progress"]
    assert twin["scores"] == api["scores"]
    listed = tab.go("/experiments?format=json").json()["experiments"]
    api_listed = json.loads(http("GET", f"{world.served.api}/api/experiments", token=world.token).text)["experiments"]
    assert listed == api_listed  # the same rows the API lists, progress and scores included
    assert {str(e["experiment_id"]) for e in listed} >= {str(world.experiment_id), str(world.baseline_id)}
    sessions = tab.go(f"/agents/{world.agent}/sessions?format=json").json()
    assert len(sessions["sessions"]) == 50 and re.fullmatch(r"[\w-]+", sessions["sessions"][0]["session_id"])
    assert time.time() > 0


def test_a_dataset_page_shows_the_newest_page_of_versions_and_where_the_rest_are(tab: Tab, world: World) -> None:
    """`GET /api/datasets/{d}/versions` answers a page (50 unless asked): a dataset pushed 52 times shows its 50
    newest versions and says how to list every one, and its twin says there are more."""
    for i in range(52):
        world.served.ok("POST", "/api/datasets/many-versions@acme", {"cases": [{"id": "c", "input": f"x{i}"}]},
                        token=world.token)
    tab.login(world.token)
    tab.go("/datasets/many-versions@acme")
    assert tab.page.locator("h2:text-is('Versions') + table tbody tr").count() == 50
    said = tab.page.inner_text("#more-versions")
    assert said == "The newest 50 versions; list every one with evalkit datasets versions many-versions@acme.", said
    twin = tab.go("/datasets/many-versions@acme?format=json").json()
    assert len(twin["versions"]) == 50 and twin["more_versions"] is True
    tab.go(f"/datasets/{world.dataset}")
    assert tab.page.locator("#more-versions").count() == 0


def test_bad_input_gets_a_page_that_says_what_to_do(world: World) -> None:
    """Never a 500: each odd address answers 4xx with the reason, as HTML, and keeps the login."""
    jar = CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    form = opener.open(world.served.api + "/login").read().decode()
    csrf = re.search(r'name="csrf" value="([^"]+)"', form)
    assert csrf is not None
    opener.open(world.served.api + "/login", data=urllib.parse.urlencode(
        {"csrf": csrf.group(1), "token": world.token, "next": "/"}).encode()).read()
    cases = {
        f"/agents/{world.agent}/sessions?since=yesterday": (400, "ISO 8601"),
        f"/agents/{world.agent}/sessions?status=done": (400, "valid, partial, invalid"),
        f"/agents/{world.agent}/sessions/no-such-session": (404, "evalkit sessions list"),
        f"/agents/{world.agent}/sessions/{world.long_session}?page=99": (400, "out of range"),
        "/agents/not-an-agent-id/sessions": (400, "name@workspace"),
        "/experiments/twelve": (400, "whole number"),
        f"/experiments/{world.experiment_id}/compare": (400, "?baseline=N"),
        f"/experiments/{world.experiment_id}/runs/nope": (404, "runs matrix"),
        "/experiments/999999": (404, "GET /api/experiments"),
        f"/experiments/{world.experiment_id}?evaluator=nope": (400, "same_answer"),
        # "dataset nope@alice does not exist", and no next step: now where the datasets are, and how to name one.
        "/datasets/nope": (404, "list the datasets with `evalkit datasets list` (or on the /datasets page) and name "
                                "one as name@workspace (a name without @workspace is looked up in your personal "
                                "workspace, alice)"),
        "/datasets/nope@acme": (404, "`evalkit datasets list`"),
        f"/datasets/{world.dataset}?version=zzz": (404, f"`evalkit datasets versions {world.dataset}`"),
    }
    for path, (status, hint) in cases.items():
        try:
            opener.open(world.served.api + path)
            raise AssertionError(f"{path} answered 200")
        except urllib.error.HTTPError as exc:
            body = exc.read().decode()
            assert exc.code == status, (path, exc.code, body[:500])
            assert exc.headers["Content-Type"].startswith("text/html") and hint in body, (path, body[:2000])


def test_a_json_twin_fails_as_json_as_its_api_route_does(world: World) -> None:
    """`?format=json` is for scripts: an error there is the API's JSON error (same status, same message), not the
    HTML error page."""
    status, _, _, opener = _login_form(world, world.token)
    assert status == 200
    cases = {"/experiments/999999?format=json": "/api/experiments/999999",
             f"/agents/{world.agent}/sessions/no-such-session?format=json":
                 f"/api/agents/{world.agent}/sessions/no-such-session/trajectory",
             "/agents/nobody@acme/sessions?format=json": "/api/agents/nobody@acme/sessions"}
    for path, api_path in cases.items():
        api = http("GET", world.served.api + api_path, token=world.token)
        try:
            opener.open(world.served.api + path)
            raise AssertionError(f"{path} answered 200")
        except urllib.error.HTTPError as exc:
            assert exc.headers["Content-Type"].startswith("application/json"), (path, exc.headers["Content-Type"])
            assert (exc.code, json.loads(exc.read())) == (api.status, json.loads(api.text)), path
    try:
        opener.open(world.served.api + "/experiments/twelve?format=json")
        raise AssertionError("/experiments/twelve answered 200")
    except urllib.error.HTTPError as exc:
        assert exc.code == 400 and "whole number" in json.loads(exc.read())["error"]["message"]


def _login_form(world: World, token: str) -> tuple[int, str, CookieJar, urllib.request.OpenerDirector]:
    jar = CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    form = opener.open(world.served.api + "/login").read().decode()
    csrf = re.search(r'name="csrf" value="([^"]+)"', form)
    assert csrf is not None
    try:
        with opener.open(world.served.api + "/login", data=urllib.parse.urlencode(
                {"csrf": csrf.group(1), "token": token, "next": "/"}).encode()) as response:
            return response.status, response.read().decode(), jar, opener
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), jar, opener


def test_an_ingest_key_logs_in_only_with_the_read_scope(world: World) -> None:
    reader = world.served.ok("POST", f"/api/agents/{world.agent}/keys", {"scopes": ["ingest", "read"]},
                             token=world.token)["key"]
    status, body, jar, _ = _login_form(world, reader)
    assert status == 200 and "evalkit_session" in {c.name for c in jar}  # followed the 303 to the home page
    assert world.agent in body and world.other_agent not in body
    writer_only = world.served.ok("POST", f"/api/agents/{world.agent}/keys", {"scopes": ["ingest"]},
                                  token=world.token)["key"]
    status, body, jar, _ = _login_form(world, writer_only)
    assert status == 403 and "read" in body and "evalkit_session" not in {c.name for c in jar}


def test_a_running_experiment_page_follows_its_progress(tab: Tab, world: World) -> None:
    created = world.served.ok("POST", "/api/experiments", {
        "agent": world.agent, "dataset": world.dataset, "name": "live", "evaluators": ["same_answer"],
        "lease": {"holder": "ui-test", "ttl_seconds": 300}}, token=world.token)
    experiment_id = created["experiment_id"]
    tab.login(world.token)
    tab.go(f"/experiments/{experiment_id}")
    page = tab.page
    assert page.locator("body[data-live]").count() == 1 and "0/4 runs" in page.inner_text("#live-region")
    world.served.ok("POST", f"/api/experiments/{experiment_id}/runs", {
        "lease_holder": "ui-test", "case_id": "capital", "repetition": 0, "session_id": "live-run-1",
        "status": "completed", "answer": "Paris", "trajectory_pending": True}, token=world.token)
    # (A locator, not wait_for_function: the page's CSP forbids the eval that one needs.)
    page.locator("#live-region", has_text="1/4 runs").wait_for(timeout=15_000)
    assert page.locator("table.matrix tr", has_text="capital").locator("td.cell a").count() == 1


def test_the_experiments_list_tells_a_stopped_runner_and_one_nobody_runs_from_a_live_one(tab: Tab,
                                                                                            world: World) -> None:
    """Before: an experiment whose runner was killed (its lease ran out) read `running` in the list like one at
    work, and one whose runner gave its lease back after Ctrl-C read `running` too; the reason was on its page
    only."""
    def created(name: str, ttl: float) -> int:
        return int(world.served.ok("POST", "/api/experiments", {
            "agent": world.agent, "dataset": world.dataset, "name": name, "evaluators": ["same_answer"],
            "lease": {"holder": f"ui-{name}", "ttl_seconds": ttl}}, token=world.token)["experiment_id"])

    killed, interrupted, live = created("killed", 0.5), created("interrupted", 300), created("live", 300)
    world.served.ok("DELETE", f"/api/experiments/{interrupted}/lease?holder=ui-interrupted&reason=interrupted",
                    token=world.token)
    time.sleep(0.6)  # the killed runner's lease runs out
    tab.login(world.token)
    tab.go("/experiments")

    def status_cell(eid: int) -> Any:
        return tab.page.locator("table.list tbody tr", has=tab.page.locator(f'a[href="/experiments/{eid}"]')) \
            .locator("td").nth(3)

    assert status_cell(killed).inner_text() == "running nobody runs it"
    assert (status_cell(killed).get_attribute("title") or "").startswith("nobody runs it now: the lease of ui-killed")
    assert status_cell(interrupted).inner_text() == "stopped"
    assert (status_cell(interrupted).get_attribute("title") or "").startswith("interrupted: ui-interrupted gave its")
    assert status_cell(live).inner_text() == "running"
    assert status_cell(live).get_attribute("title") == "lease taken by ui-live"
    tab.shot("experiments-runner-states")


def test_a_failed_run_says_why_it_has_no_score(tab: Tab, world: World) -> None:
    """Evaluators judge completed runs only, so a failed run's page must not send the user to `evalkit evaluate`,
    which would leave it unscored again (the scorecard counts it as not passed)."""
    created = world.served.ok("POST", "/api/experiments", {
        "agent": world.agent, "dataset": world.dataset, "name": "crashes", "evaluators": ["same_answer"],
        "lease": {"holder": "ui-failed", "ttl_seconds": 300}}, token=world.token)
    experiment_id = created["experiment_id"]
    run = world.served.ok("POST", f"/api/experiments/{experiment_id}/runs", {
        "lease_holder": "ui-failed", "case_id": "capital", "repetition": 0, "session_id": "failed-run-1",
        "status": "failed", "error": "RuntimeError: tool backend reset"}, token=world.token)
    tab.login(world.token)
    tab.go(f"/experiments/{experiment_id}/runs/{run['run_id']}")
    table = tab.page.inner_text("table.evaluations")
    assert "evalkit evaluate" not in table, table
    assert "judge completed runs only" in table and "not passed" in table
    tab.shot("run-failed")


def test_show_more_experiments_keeps_the_filters(tab: Tab, world: World) -> None:
    """"Show more" lists more of the same filtered experiments; before, its link was `?limit=N` alone, which
    dropped agent, status and dataset and listed everyone's experiments."""
    tab.login(world.token)
    page = tab.page
    tab.go(f"/experiments?agent={urllib.parse.quote(world.agent)}&status=completed&limit=1")
    assert page.locator("table.list tbody tr").count() == 1
    page.click("text=Show more")
    page.wait_for_load_state()
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)
    assert query == {"agent": [world.agent], "status": ["completed"], "limit": ["2"]}, page.url
    agents = page.eval_on_selector_all("table.list tbody tr td:nth-child(3)", "tds => tds.map(td => td.innerText)")
    assert agents == [world.agent, world.agent]
    # The dataset filter narrows the listed page only: a page it empties still offers the larger one.
    tab.go("/experiments?dataset=no-such-dataset&limit=1")
    assert "No experiments match" in page.inner_text("main")
    assert page.locator("text=Show more").count() == 1


def test_form_posts_that_are_not_forms_are_refused_not_failed(world: World) -> None:
    bodies = [("multipart/form-data; boundary=x", b"garbage"), ("application/x-www-form-urlencoded", b"\xff\xfe%%%"),
              ("application/json", b'{"token": "x"}'), ("text/plain", b"")]
    for content_type, body in bodies:
        request = urllib.request.Request(world.served.api + "/login", data=body, method="POST",
                                         headers={"Content-Type": content_type})
        try:
            urllib.request.urlopen(request)
            raise AssertionError(f"a {content_type} body logged in")
        except urllib.error.HTTPError as exc:
            text = exc.read().decode()
            # Not a form at all: 400 saying so; a form without the CSRF token: 403 saying that.
            assert (exc.code, "not a form" in text or "CSRF" in text) in ((400, True), (403, True)), (
                content_type, exc.code, text[:3000])


def test_the_experiments_filter_knows_every_status_the_service_has(world: World) -> None:
    """`stopped` (a budget stopped it) and `evaluating` are the service's statuses: the filter offers and takes them."""
    status, _, _, opener = _login_form(world, world.token)
    assert status == 200
    page = opener.open(world.served.api + "/experiments").read().decode()
    offered = re.findall(r'<option value="([a-z]+)"', page.split('name="status"', 1)[1].split("</select>", 1)[0])
    assert offered == list(STATUSES)
    for name in ("stopped", "evaluating"):
        with opener.open(world.served.api + f"/experiments?status={name}") as response:
            assert response.status == 200


def test_an_address_with_no_page_answers_a_browser_with_the_ui_error_page(tab: Tab, world: World) -> None:
    """A mistyped address in the browser was the API's JSON 404 (pointing at /api/openapi.json): now the UI's
    error page with a way back; API clients, and every /api address, keep the JSON."""
    for path in ("/nope", f"/agents/{world.agent}", "/experiments/1/nope"):
        response = tab.go(path)
        assert response.status == 404 and response.headers["content-type"].startswith("text/html"), path
        assert f"no page at {path}" in tab.page.inner_text("#error-message"), path
        tab.shot("no-page")
        tab.page.click("main a[href='/']")
        tab.page.wait_for_load_state()
        assert urllib.parse.urlparse(tab.page.url).path in ("/", "/login"), tab.page.url
    response = tab.go("/api/nope")
    assert response.status == 404 and response.headers["content-type"].startswith("application/json")
    for accept in (None, "*/*", "application/json"):
        request = urllib.request.Request(world.served.api + "/nope", headers={"Accept": accept} if accept else {})
        try:
            urllib.request.urlopen(request)
            raise AssertionError("/nope answered 200")
        except urllib.error.HTTPError as exc:
            assert exc.code == 404 and "/api/openapi.json" in json.loads(exc.read())["error"]["message"], accept


def test_a_page_past_the_end_says_so_and_links_the_first_page(tab: Tab, world: World) -> None:
    """A sessions or raw-spans page past the end showed "sessions 1000000001–1000000000" over "No sessions
    match. Sessions appear when spans … arrive" (as if the agent had none), or "spans 100001–100000 of N"."""
    tab.login(world.token)
    page = tab.page
    tab.go(f"/agents/{world.agent}/sessions?offset=1000000000&sort=spans")
    text = page.inner_text("main")
    assert "past the end of the list" in text and "No sessions match" not in text, text
    assert "1000000001–" not in text and page.locator("nav.pager a.prev").count() == 0, text
    tab.shot("sessions-past-end")
    page.click("a.first-page")
    page.wait_for_load_state()
    assert page.locator("a.session-link").count() == 50 and "sort=spans" in page.url and "offset" not in page.url

    tab.go(f"/agents/{world.agent}/sessions/{world.xss_session}?tab=spans&offset=100000")
    text = page.inner_text("main")
    assert "past the end: the session has 4 spans" in text and "100001–" not in text, text
    page.click("a.first-page")
    page.wait_for_load_state()
    assert page.locator("table.spans > tbody > tr").count() == 4 and "tab=spans" in page.url


def test_the_runs_matrix_tells_a_failed_run_from_a_failed_verdict_and_says_what_to_do(tab: Tab, world: World) -> None:
    """Before, a run whose task raised and a run its evaluator judged wrong both read "failed" (cell, tooltip and
    the JSON twin's text), and nothing on the page said what to do about either or about an evaluator error."""
    holder = "ui-matrix"
    created = world.served.ok("POST", "/api/experiments", {
        "agent": world.agent, "dataset": world.dataset, "name": "mixed outcomes", "evaluators": ["same_answer"],
        "repetitions": 2, "lease": {"holder": holder, "ttl_seconds": 300}}, token=world.token)
    eid = created["experiment_id"]

    def record(case_id: str, rep: int, status: str, **more: Any) -> str:
        run = world.served.ok("POST", f"/api/experiments/{eid}/runs", {
            "lease_holder": holder, "case_id": case_id, "repetition": rep, "session_id": f"matrix-{case_id}-{rep}",
            "status": status, **more}, token=world.token)
        return str(run["run_id"])

    record("capital", 0, "failed", error="RuntimeError: tool backend reset")
    wrong = record("capital", 1, "completed", answer="Lyon")
    broken = record("sum", 0, "completed", answer="4")
    right = record("sum", 1, "completed", answer="4")
    world.served.ok("POST", f"/api/experiments/{eid}/evaluations", {"lease_holder": holder, "evaluations": [
        {"run_id": wrong, "evaluator": "same_answer", "score": 0.0, "passed": False, "explanation": "Lyon vs Paris"},
        {"run_id": broken, "evaluator": "same_answer", "error": "ConnectionError: grader unreachable"},
        {"run_id": right, "evaluator": "same_answer", "score": 1.0, "passed": True}]}, token=world.token)
    tab.login(world.token)
    tab.go(f"/experiments/{eid}")
    page = tab.page

    def cell(case_id: str, rep: int) -> Any:
        return page.locator("table.matrix tr", has_text=case_id).locator("td.cell").nth(rep)

    assert cell("capital", 0).inner_text() == "run failed"
    assert cell("capital", 1).inner_text() == "not passed"
    assert cell("sum", 0).inner_text() == "evaluator error"
    assert cell("sum", 1).inner_text() == "passed"
    failed_title = cell("capital", 0).locator("a").get_attribute("title")
    assert "RuntimeError: tool backend reset" in failed_title, failed_title
    rescore = f"`evalkit evaluate {eid} --evaluator MODULE:same_answer`"  # scoring again retries the errors
    assert rescore in cell("sum", 0).locator("a").get_attribute("title")
    steps = page.inner_text("ul.next-steps")
    assert "run failed" in steps and "open its cell for the error" in steps and rescore in steps, steps
    tab.shot("matrix-outcomes")
    # The failed run's cell leads to its error.
    cell("capital", 0).locator("a").click()
    page.wait_for_load_state()
    assert "RuntimeError: tool backend reset" in page.inner_text(".error-box")

    twin = tab.go(f"/experiments/{eid}?format=json").json()
    cells = {(row["case_id"], c["repetition"]): c for row in twin["matrix"]["rows"] for c in row["cells"]}
    assert (cells[("capital", 0)]["class"], cells[("capital", 0)]["text"]) == ("run-failed", "run failed")
    assert (cells[("capital", 1)]["class"], cells[("capital", 1)]["text"]) == ("fail", "not passed")
    assert "RuntimeError: tool backend reset" in cells[("capital", 0)]["next"]
    assert rescore in cells[("sum", 0)]["next"]
    assert cells[("color", 0)] == {"repetition": 0, "run_id": None, "class": "pending", "text": "not run yet",
                                   "next": None}


def test_per_run_cost_is_over_the_priced_runs_with_their_count(tab: Tab, world: World) -> None:
    """Before: with most runs unpriced and the priced few at $0 (they failed before any model call), the page's
    cost row read mean $0, p50 $0, p90 $0 beside "6 unpriced", as if a run cost nothing."""
    holder = "ui-cost"
    created = world.served.ok("POST", "/api/experiments", {
        "agent": world.agent, "dataset": world.dataset, "name": "mostly unpriced", "evaluators": ["same_answer"],
        "repetitions": 2,
        "lease": {"holder": holder, "ttl_seconds": 300}}, token=world.token)
    eid = created["experiment_id"]
    for i, case_id in enumerate(("capital", "sum", "color", "xss")):
        for rep in range(2):
            failed = i == 0  # capital: both repetitions failed before their first model call, priced at $0
            world.served.ok("POST", f"/api/experiments/{eid}/runs", {
                "lease_holder": holder, "case_id": case_id, "repetition": rep, "session_id": f"cost-{case_id}-{rep}",
                "status": "failed" if failed else "completed", "answer": None if failed else "x",
                "error": "RateLimitError: try later" if failed else None,
                "metrics": {"cost_usd": 0.0, "input_tokens": 0, "output_tokens": 0} if failed else
                {"input_tokens": 1000, "output_tokens": 100}}, token=world.token)
    tab.login(world.token)
    tab.go(f"/experiments/{eid}")
    row = tab.page.locator("table.metrics tr", has_text="cost")
    cells = [row.locator("td").nth(i).inner_text() for i in range(5)]
    assert cells == ["unknown", "$0 (2 of 8 priced)", "$0 (2 of 8 priced)", "$0 (2 of 8 priced)", "6 unpriced"], cells
    assert "mean, p50 and p90 are over the 2 priced run(s) only" in tab.page.inner_text("ul.notes")
    tab.shot("cost-mostly-unpriced")
    card = tab.go(f"/experiments/{eid}?format=json").json()["scorecard"]["cost_usd"]
    assert (card["n"], card["missing"], card["total"], card["mean"]) == (2, 6, None, 0.0)


def test_compare_cost_per_run_is_each_sides_priced_mean_with_its_count(tab: Tab, world: World) -> None:
    """Before: the comparison said "unknown" for a side's cost per run whenever any of its runs was unpriced, while
    that experiment's scorecard said "$0.0200 (2 of 8 priced)". Each side now says what its scorecard says, with how
    many runs its mean is over, and no difference of the two is shown (nor any unpriced run taken as $0)."""
    ids = []
    for name, priced in (("cost baseline", {("capital", 0), ("sum", 1)}), ("cost candidate", set())):
        holder = f"ui-{name.replace(' ', '-')}"
        created = world.served.ok("POST", "/api/experiments", {
            "agent": world.agent, "dataset": world.dataset, "name": name, "evaluators": ["same_answer"],
            "repetitions": 2, "lease": {"holder": holder, "ttl_seconds": 300}}, token=world.token)
        eid = created["experiment_id"]
        for case_id in ("capital", "sum", "color", "xss"):
            for rep in range(2):
                metrics: dict[str, float] = {"input_tokens": 1000, "output_tokens": 100}
                if (case_id, rep) in priced:
                    metrics["cost_usd"] = 0.02
                world.served.ok("POST", f"/api/experiments/{eid}/runs", {
                    "lease_holder": holder, "case_id": case_id, "repetition": rep, "status": "completed",
                    "session_id": f"compare-cost-{eid}-{case_id}-{rep}", "answer": "x", "metrics": metrics},
                    token=world.token)
        ids.append(eid)
    baseline, candidate = ids
    tab.login(world.token)
    tab.go(f"/experiments/{candidate}/compare?baseline={baseline}")
    row = tab.page.locator("table tr", has_text="cost per run")
    assert row.locator("td").all_inner_texts() == ["$0.0200 (2 of 8 priced)", "unknown"]
    assert tab.page.locator("table tr", has_text="cost total").locator("td").all_inner_texts() == ["unknown"] * 2
    note = tab.page.inner_text("#cost-note")
    assert "2 of 8 in the baseline, 0 of 8 in the candidate" in note and "not a like-for-like" in note, note
    # The baseline's own scorecard says the same.
    tab.go(f"/experiments/{baseline}")
    cells = tab.page.locator("table.metrics tr", has_text="cost").locator("td").all_inner_texts()
    assert cells[1] == "$0.0200 (2 of 8 priced)", cells
    tab.go(f"/experiments/{candidate}/compare?baseline={baseline}")
    tab.shot("compare-cost-partly-priced")
    twin = tab.go(f"/experiments/{candidate}/compare?baseline={baseline}&format=json").json()["cost_usd"]
    assert (twin["baseline"]["n"], twin["baseline"]["missing"], twin["baseline"]["total"]) == (2, 6, None)
    assert abs(twin["baseline"]["mean"] - 0.02) < 1e-12
    assert (twin["candidate"]["n"], twin["candidate"]["missing"], twin["candidate"]["mean"]) == (0, 8, None)


def test_compare_says_when_cases_are_not_compared(tab: Tab, world: World) -> None:
    """Before: against a candidate that ran capital only (unscored) and not the other cases, every case was marked
    "same" (as if it did as well), and the comparison's own warning, "no case is scored in both experiments:
    nothing is compared" (which `evalkit experiments compare` prints), was not on the page."""
    holder = "ui-unpaired"
    created = world.served.ok("POST", "/api/experiments", {
        "agent": world.agent, "dataset": world.dataset, "name": "barely run", "evaluators": ["same_answer"],
        "repetitions": 2, "lease": {"holder": holder, "ttl_seconds": 300}}, token=world.token)
    eid = created["experiment_id"]
    world.served.ok("POST", f"/api/experiments/{eid}/runs", {
        "lease_holder": holder, "case_id": "capital", "repetition": 0, "session_id": f"unpaired-{eid}",
        "status": "completed", "answer": "Paris"}, token=world.token)
    tab.login(world.token)
    tab.go(f"/experiments/{eid}/compare?baseline={world.baseline_id}")
    page = tab.page
    assert "no case is scored in both experiments: nothing is compared" in page.inner_text("#comparison-warnings")
    kinds = {page.locator("details.case-diff", has_text=case).locator("summary .badge").inner_text()
             for case in ("color", "sum", "xss")}
    assert kinds == {"only in baseline"}, kinds
    capital = page.locator("details.case-diff", has_text="capital").locator("summary .badge").inner_text()
    assert capital == "not compared"
    assert page.locator("details.case-diff summary .badge", has_text="same").count() == 0
    # With no pair the verdict is "not compared", not "no significant difference" (which reads as evidence that
    # the two did alike); and the page says the candidate did not run its plan, as the API's 409 would.
    assert page.locator("table.comparison tbody tr strong.verdict").all_inner_texts() == ["not compared"]
    notice = page.inner_text("#incomplete")
    assert f"experiment {eid} did not run every planned run: 1 of 8 planned runs ran" in notice, notice
    assert f"--resume {eid}" in notice and "compares what there is" in notice
    tab.shot("compare-not-compared")
    twin = tab.go(f"/experiments/{eid}/compare?baseline={world.baseline_id}&format=json").json()
    assert {r["case_id"]: r["kind"] for r in twin["cases"]} == {
        "capital": "not compared", "color": "only in baseline", "sum": "only in baseline", "xss": "only in baseline"}
    assert len(twin["incomplete"]) == 1 and twin["comparison"]["evaluators"][0]["verdict"] == "not compared"


def test_pages_fit_a_narrow_window(browser: Any, world: World, artifacts: Any) -> None:
    """Before: at a phone's width (380 px) a wide table (sessions, scorecard, comparison, experiments) made the
    whole page two to three times wider than the screen, the header and text half off it. Now the table scrolls
    inside itself and the page is as wide as the window."""
    context = browser.new_context(viewport={"width": 380, "height": 800})
    try:
        tab = Tab(context.new_page(), world.served.api, artifacts)
        tab.login(world.token)
        run_id = world.run_ids[0]
        for path in ("/", f"/agents/{world.agent}/sessions", "/experiments", f"/experiments/{world.experiment_id}",
                     f"/experiments/{world.experiment_id}/compare?baseline={world.baseline_id}&gate=1",
                     "/datasets", f"/experiments/{world.experiment_id}/runs/{run_id}",
                     f"/agents/{world.agent}/sessions/{world.xss_session}?tab=spans"):
            assert tab.go(path).status == 200, path
            width = tab.page.evaluate("document.documentElement.scrollWidth")
            assert width <= 380, (path, width)
        tab.shot("narrow-spans")
    finally:
        context.close()


def test_a_new_users_empty_experiments_page_says_how_to_start(tab: Tab, world: World) -> None:
    """Before: a user with no experiment at all read "No experiments match." with no filter set, where the home
    page says how to run one."""
    token = world.served.ok("POST", "/api/users", {"name": "newcomer"})["token"]
    tab.login(token)
    tab.go("/experiments")
    empty = tab.page.inner_text("table.list tbody")
    assert "No experiments yet" in empty and "evalkit.run_experiment" in empty, empty
    tab.go("/experiments?status=failed")
    assert "No experiments match these filters" in tab.page.inner_text("table.list tbody")
    tab.page.click("text=Show all experiments")
    tab.page.wait_for_load_state()
    assert tab.page.url == world.served.api + "/experiments"


def test_a_sessions_duration_runs_to_the_end_of_its_last_step(tab: Tab, world: World) -> None:
    """Before: the trajectory's summary bar took the duration from the first step's start to the last step's
    start, so this real LangGraph capture (one 37 ms LLM call, its system and user steps at the same instant)
    read "duration 0 ms"."""
    agent, capture, document = _replayed(world, "langgraph_openinference_subgraph", "graph-duration")
    steps = document["steps"]
    assert {s["timestamp"] for s in steps} == {steps[0]["timestamp"]}  # every step starts at the same instant
    took_ms = max(float((s.get("extra") or {}).get("duration_ms") or 0) for s in steps)
    assert took_ms > 1
    tab.login(world.token)
    tab.go(f"/agents/{agent}/sessions/{capture.session_id}")
    duration = tab.page.locator("dl.summary-bar div", has_text="duration").locator("dd").inner_text()
    assert duration.startswith(f"{took_ms:.0f} ms"), duration


def test_a_status_filtered_sessions_page_and_its_json_agree(tab: Tab, world: World) -> None:
    """Before: page 2 of `status=valid` showed sessions 51-100 while its JSON twin said offset 0 and limit 1000 (the
    rows the filter scanned) with the scan's cursor; and a list with no session read "sessions 1–0"."""
    tab.login(world.token)
    path = f"/agents/{world.agent}/sessions?status=valid&offset=50"
    tab.go(path)
    shown = tab.page.locator("a.session-link").all_inner_texts()
    assert shown and "sessions 51–" in tab.page.locator("nav.pager").inner_text()
    twin = tab.go(path + "&format=json").json()
    assert [s["session_id"] for s in twin["sessions"]] == shown
    assert (twin["offset"], twin["limit"], twin["next_cursor"]) == (50, 50, None), {k: twin[k] for k in
                                                                                    ("offset", "limit", "next_cursor")}
    tab.go(f"/agents/{world.agent}/sessions?q=no-such-session-anywhere")
    assert "No sessions match" in tab.page.inner_text("table.sessions")
    assert "sessions 1–0" not in tab.page.inner_text("main")


def test_the_login_leads_only_to_a_path_of_this_site(world: World) -> None:
    """Before: `next` of "/<TAB>/evil.example" passed the check (it starts with one slash), then lost its tab in
    the redirect: `Location: //evil.example`, another site, right after the login."""
    class Kept(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None  # keep the 303 to read its Location

    for next_path, expected in (("/\t/evil.example", "/"), ("/\n/evil.example", "/"), ("//evil.example", "/"),
                                ("https://evil.example/", "/"), ("/\\evil.example", "/"),
                                (f"/experiments/{world.experiment_id}", f"/experiments/{world.experiment_id}")):
        jar = CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), Kept())
        opener.open(world.served.api + "/login").read()
        csrf = next(c.value for c in jar if c.name == "evalkit_csrf")
        body = urllib.parse.urlencode({"token": world.token, "csrf": csrf, "next": next_path}).encode()
        try:
            opener.open(world.served.api + "/login", data=body)
            raise AssertionError("the login did not redirect")
        except urllib.error.HTTPError as exc:
            assert exc.code == 303 and exc.headers["Location"] == expected, (next_path, exc.headers["Location"])
        # The form carries only a safe `next` too.
        form = opener.open(world.served.api + "/login?next=" + urllib.parse.quote(next_path, safe="")).read().decode()
        assert 'name="next" value="//' not in form and "evil.example" not in form, next_path


def test_a_failed_tool_in_a_subagent_counts_in_the_sessions_errors(tab: Tab, world: World) -> None:
    """Before: in this real OpenAI Agents capture the booking subagent's book_hotel tool fails; the sessions list
    said 1 error, the trajectory's summary bar "errors 0" (it counted the top-level steps only)."""
    agent, capture, document = _replayed(world, "openai-agents_openinference", "handoffs")

    def erring(steps: list[dict[str, Any]]) -> int:
        return sum(1 for s in steps if any((r.get("extra") or {}).get("is_error")
                                           for r in (s.get("observation") or {}).get("results") or []))

    assert erring(document["steps"]) == 0
    assert sum(erring(sub["steps"]) for sub in document["subagent_trajectories"]) == 1
    tab.login(world.token)
    tab.go(f"/agents/{agent}/sessions")
    listed = tab.page.locator("table.sessions tbody tr", has_text=capture.session_id).locator("td").nth(8)
    assert listed.inner_text() == "1"
    tab.go(f"/agents/{agent}/sessions/{capture.session_id}")
    errors = tab.page.locator("dl.summary-bar div", has_text="errors").locator("dd").inner_text()
    assert errors == "1", errors
    # The two count different things (failed spans, failed steps), and each says so where it is shown.
    bar_title = tab.page.locator("dl.summary-bar div", has_text="errors").get_attribute("title") or ""
    assert "steps that failed" in bar_title and "spans" in bar_title, bar_title
    tab.go(f"/agents/{agent}/sessions")
    header = tab.page.locator("table.sessions thead th", has_text="errors").get_attribute("title") or ""
    assert header.startswith("spans that failed: an error status") and "steps" in header, header


def test_a_long_unbroken_error_or_answer_wraps_within_the_page(tab: Tab, world: World) -> None:
    """Before: a failed run whose error held one long word (a URL, a base64 blob, a long traceback line) made its
    run page about 2,300 px wide on a 1,360 px screen; the same for an answer of one long word."""
    holder = "ui-long-error"
    created = world.served.ok("POST", "/api/experiments", {
        "agent": world.agent, "dataset": world.dataset, "name": "long error", "evaluators": ["same_answer"],
        "lease": {"holder": holder, "ttl_seconds": 300}}, token=world.token)
    eid = created["experiment_id"]
    blob = "A" * 400
    failed = world.served.ok("POST", f"/api/experiments/{eid}/runs", {
        "lease_holder": holder, "case_id": "capital", "repetition": 0, "session_id": f"long-error-{eid}",
        "status": "failed", "error": f"ValueError: could not decode {blob}"}, token=world.token)
    answered = world.served.ok("POST", f"/api/experiments/{eid}/runs", {
        "lease_holder": holder, "case_id": "sum", "repetition": 0, "session_id": f"long-answer-{eid}",
        "status": "completed", "answer": f"https://example.com/{blob}"}, token=world.token)
    tab.login(world.token)
    for run in (failed, answered):
        tab.go(f"/experiments/{eid}/runs/{run['run_id']}")
        width = tab.page.evaluate("document.documentElement.scrollWidth")
        assert width <= 1360, (run["case_id"], width)
    tab.shot("run-long-answer")



def test_human_in_the_loop_reads_as_a_question_and_its_answer(tab: Tab, world: World) -> None:
    """A real LangGraph capture (HumanInTheLoopMiddleware): before, the step that stopped to ask for approval read
    as the agent's answer ("Tool execution requires approval Tool: book_hotel Args: …" run together) and the
    person's answer as a user typing `{"decisions": …}`. Now the first waits for a person, saying what it asked,
    the second is their answer, linked to the question, each decision with its tool call; the page's JSON holds
    both as the ATIF says them."""
    agent, capture, document = _replayed(world, "langgraph_openinference_interrupt", "hitl")
    (asking,) = [s for s in document["steps"] if (s.get("extra") or {}).get("interrupt")]
    (answer,) = [s for s in document["steps"] if (s.get("extra") or {}).get("from") == "resume"]
    tab.login(world.token)
    tab.go(f"/agents/{agent}/sessions/{capture.session_id}")
    page = tab.page
    asked = page.locator(f"article#step-{asking['step_id']}")
    assert asked.locator(".badge.waiting").inner_text() == "waiting for a person"
    assert asked.locator("pre.asked").inner_text() == asking["message"]  # its lines as the person saw them
    assert "Answers allowed: approve, edit, reject" in asked.inner_text()
    replied = page.locator(f"article#step-{answer['step_id']}")
    assert replied.locator(".badge.answer").inner_text() == "a person's answer"
    assert replied.locator("ul.decisions").inner_text() == "approve book_hotel"
    replied.locator("a.answers").click()
    assert page.url.endswith(f"#step-{asking['step_id']}")
    tab.shot("trajectory-human-in-the-loop")
    assert tab.console_errors == []
    twin = tab.go(f"/agents/{agent}/sessions/{capture.session_id}?format=json").json()
    by_id = {s["step_id"]: s for s in twin["steps"]}
    assert by_id[asking["step_id"]]["extra"]["interrupt"] == asking["extra"]["interrupt"]
    assert by_id[answer["step_id"]]["extra"]["from"] == "resume"


def test_a_guardrails_trip_is_a_stop_and_reasoning_says_its_effort(tab: Tab, world: World) -> None:
    """A real openai-agents capture on o4-mini with an input guardrail that trips on turn two: before, the tripped
    turn was a red box of JSON (`"status": "error"`) and no step said its reasoning effort or tokens. Now the turn
    reads "run stopped" with the tripwire's message; each reasoning says its effort and tokens, the bar the total."""
    agent, capture, document = _replayed(world, "openai-agents_openinference_guardrails", "guarded")
    (tripped,) = [s for s in document["steps"] if (s.get("extra") or {}).get("run_error")]
    first = next(s for s in document["steps"] if s.get("reasoning_content"))
    tab.login(world.token)
    tab.go(f"/agents/{agent}/sessions/{capture.session_id}")
    page = tab.page
    stopped = page.locator(f"article#step-{tripped['step_id']}")
    assert stopped.locator(".badge.stopped").inner_text() == "run stopped"
    assert stopped.locator(".error-box").inner_text() == tripped["extra"]["error"]["message"]
    reasoning = page.locator(f"article#step-{first['step_id']} details.reasoning")
    tokens = first["metrics"]["extra"]["reasoning_tokens"]
    assert reasoning.locator("summary").inner_text() == f"Reasoning · effort medium · {tokens} tokens"
    reasoning.locator("summary").click()
    assert first["reasoning_content"][:40] in reasoning.inner_text()
    assert "(560 reasoning)" in page.inner_text("dl.summary-bar")
    tab.shot("trajectory-guardrail-trip")
    assert tab.console_errors == []


# Values a hand-typed or mangled link can carry: empty, negative, not a number, out of every range, NaN,
# a control character, SQL, non-ASCII, and too long.
_ODD_VALUES = ("", "-1", "abc", "1e999", "nan", "\x00", "' OR 1=1 --", "é☃", "99999999999999999999999", "a" * 2000)


def _pages(world: World) -> dict[str, tuple[str, ...]]:
    """Every UI page (a route of ui/*_pages.py and ui/routes.py) and the query parameters its code reads (ui/page.py
    reads `format` and `download` for every page)."""
    return {
        "/": ("format", "download"),
        f"/agents/{world.agent}/sessions": ("q", "status", "sort", "offset", "cursor", "since", "until", "errors",
                                            "model", "min_cost", "format", "download"),
        f"/agents/{world.agent}/sessions/{world.long_session}": ("tab", "page", "wait", "format", "download"),
        f"/agents/{world.agent}/sessions/{world.long_session}?tab=spans": ("offset", "format", "download"),
        "/experiments": ("status", "limit", "workspace", "agent", "dataset", "format", "download"),
        f"/experiments/{world.experiment_id}": ("evaluator", "page", "format", "download"),
        f"/experiments/{world.experiment_id}/compare?baseline={world.baseline_id}": (
            "alpha", "page", "gate", "min_score", "max_regressions", "min_pairs", "allow_incomplete", "format",
            "download"),
        f"/experiments/{world.experiment_id}/compare": ("baseline", "baseline_id"),
        f"/experiments/{world.experiment_id}/runs/{world.run_ids[0]}": ("format", "download"),
        "/datasets": ("workspace", "format", "download"),
        f"/datasets/{world.dataset}": ("version", "page", "format", "download"),
        "/login": ("next", "format", "download"),
        "/logout": ("format", "download"),
    }


def _get(opener: urllib.request.OpenerDirector, url: str) -> tuple[int, str, bytes, dict[str, str]]:
    """(status, content type, body, headers) of a GET, an error answer included."""
    try:
        with opener.open(url) as response:
            return response.status, response.headers["Content-Type"], response.read(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read(), dict(exc.headers)


def test_every_page_takes_only_a_format_it_serves_and_a_yes_or_no_download(world: World) -> None:
    """Before: `?format=xml` rendered the HTML page and `?download=zzz` (or `download=0`) downloaded the trajectory.
    Now every page checks both the one way (ui/page.py `page_query`): a format it does not serve or a download that
    is not a yes or no is a 400 saying what to use, as HTML, or as JSON when the request asked for JSON."""
    _, _, _, opener = _login_form(world, world.token)
    session = f"/agents/{world.agent}/sessions/{world.long_session}"
    for path in _pages(world):
        if path.endswith("/compare"):
            continue  # without its baseline: the page's own 400 comes first
        html_only = path in ("/login", "/logout")
        join = "&" if "?" in path else "?"
        for query, hint in (("format=xml", "format must be html; leave format out" if html_only
                             else "format must be html or json; try ?format=json"),
                            ("download=zzz", "download='zzz' is not a yes or no; use download=true"),
                            ("download=1", "the download is the session's trajectory" if path.startswith(session)
                             else "this page has no file to download")):
            if query == "download=1" and path == session:
                continue  # the one page with a download
            status, kind, body, _ = _get(opener, world.served.api + path + join + query)
            text = html.unescape(body.decode())
            assert status == 400 and kind.startswith("text/html") and hint in text, (path, query, status, text[:800])
            if query.startswith("format"):
                continue
            # Asked for JSON, the same refusal as JSON (the twin's errors are the API's shape).
            status, kind, body, _ = _get(opener, world.served.api + path + join + query + "&format=json")
            if html_only:
                assert status == 400 and kind.startswith("application/json"), (path, query, status)
                continue
            message = json.loads(body)["error"]["message"]
            assert status == 400 and kind.startswith("application/json") and hint in message, (path, query, message)
        # What the page serves is still served, any case.
        for query, served in (("format=html", "text/html"), ("format=JSON", "application/json"),
                              ("download=no", "text/html")):
            if html_only and query == "format=JSON":
                continue
            status, kind, _, _ = _get(opener, world.served.api + path + join + query)
            assert status == 200 and kind.startswith(served), (path, query, status, kind)
    # The session page's download: a yes downloads the trajectory, a no is the page.
    for query in ("download=1", "download=true", "download=YES"):
        status, kind, body, headers = _get(opener, world.served.api + session + "?" + query)
        assert status == 200 and kind.startswith("application/json"), (query, status, kind)
        assert headers["Content-Disposition"].endswith('.atif.json"') and json.loads(body)["steps"], query
    status, kind, _, headers = _get(opener, world.served.api + session + "?download=0")
    assert status == 200 and kind.startswith("text/html") and "Content-Disposition" not in headers


def test_no_page_answers_500_whatever_a_query_parameter_holds(world: World) -> None:
    """Every page, given an odd value in each query parameter it reads, answers a page (2xx/3xx) or a 4xx that
    says why; never a 500. The API's routes get the same from schemathesis (tests/api/test_schemathesis.py)."""
    _, _, _, opener = _login_form(world, world.token)
    pages = _pages(world)
    answered: dict[int, int] = {}
    for path, parameters in pages.items():
        for name in parameters:
            for value in _ODD_VALUES:
                url = world.served.api + path + ("&" if "?" in path else "?") + urllib.parse.urlencode({name: value})
                try:
                    with opener.open(url) as response:
                        status, body = response.status, b""
                except urllib.error.HTTPError as exc:
                    status, body = exc.code, exc.read()
                answered[status] = answered.get(status, 0) + 1
                assert status < 500, (path, name, value[:20], status, body[:500])
                if status >= 400:  # the reason, in the page's own form: the error page, or JSON for a twin
                    text = body.decode()
                    reason = (json.loads(text)["error"]["message"] if text.startswith("{")
                              else re.search(r'id="error-message">([^<]+)<', text))
                    assert reason, (path, name, value[:20], status, text[:500])
    # The sweep reached the pages' code, not only the login or a lookup that failed first.
    assert answered.get(200, 0) > 100 and answered.get(400, 0) > 20, answered


def test_the_images_a_model_was_shown_are_shown_from_this_site_only(tab: Tab, world: World) -> None:
    """A real capture of images sent to a model (`openai-sdk_openinference_image`): before, a user step read
    `[image: evalkit-span://…]` (or a whole data URL as text) and no image was seen. Now the PNG the trajectory
    references is shown, read back from its span through the page itself; the photo at another site is a link, not
    loaded (the page loads nothing from other sites); the image the instrumentation redacted says so."""
    agent, capture, document = _replayed(world, "openai-sdk_openinference_image", "images")
    first, second = [s for s in document["steps"] if s["source"] == "user"]
    tab.login(world.token)
    requested: list[str] = []
    tab.page.on("request", lambda request: requested.append(request.url))
    tab.go(f"/agents/{agent}/sessions/{capture.session_id}")
    asked = tab.page.locator(f"article#step-{first['step_id']}")
    assert asked.locator("pre.message").inner_text() == first["message"][0]["text"]
    shown = asked.locator("figure.image img")
    assert shown.count() == 1
    shown.scroll_into_view_if_needed()
    tab.page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=shown.element_handle())
    assert shown.evaluate("img => [img.naturalWidth, img.naturalHeight]") == [40, 40]  # record.py's PNG
    photo = first["message"][2]["source"]["path"]
    assert asked.locator("p.image.external a").get_attribute("href") == photo
    assert not any(url.startswith(photo) for url in requested)  # linked, never fetched
    later = tab.page.locator(f"article#step-{second['step_id']}")
    assert "[image: not recorded (redacted by OpenInference" in later.inner_text()
    assert later.locator("figure.image").count() == 0
    tab.shot("trajectory-images")
    assert tab.console_errors == []
    # The image's own URL answers the PNG to the logged-in browser, and nothing to a browser logged out.
    source = shown.get_attribute("src")
    assert source is not None and source.startswith("?media=evalkit-span")
    reply = tab.page.request.get(f"{world.served.api}/agents/{agent}/sessions/{capture.session_id}{source}")
    assert reply.status == 200 and reply.headers["content-type"] == "image/png" and reply.body()[:4] == b"\x89PNG"
    anonymous = urllib.request.urlopen(f"{world.served.api}/agents/{agent}/sessions/{capture.session_id}{source}")
    assert "/login" in anonymous.url and not anonymous.read().startswith(b"\x89PNG")


def test_plans_failed_attempts_and_the_providers_searches_read_as_what_they_are(tab: Tab, world: World) -> None:
    """Three real captures of steps that are more than a message and tool calls. Before, a smolagents plan read like
    any answer; a fallback model's failed requests were nowhere on the page (the step's `extra` only); a web search
    the Responses API ran itself read "no result recorded", as if lost, and the answer's cited pages were not shown.
    Now the plan says it is one, the step that answered after failures lists each with its model and error, the
    search says the provider ran it, and the answer lists the pages it cites."""
    tab.login(world.token)
    agent, capture, document = _replayed(world, "smolagents_openinference_planning", "planner")
    plans = [s for s in document["steps"] if (s.get("extra") or {}).get("planning")]
    tab.go(f"/agents/{agent}/sessions/{capture.session_id}")
    for plan in plans:
        badge = tab.page.locator(f"article#step-{plan['step_id']} .badge.planning")
        assert badge.inner_text() == plan["extra"]["planning"]
    assert tab.page.locator(".badge.planning").count() == len(plans) == 3
    tab.shot("trajectory-planning")

    agent, capture, document = _replayed(world, "pydantic-ai_openai_fallback-model", "fallback")
    answered = [s for s in document["steps"] if (s.get("extra") or {}).get("failed_attempts")]
    tab.go(f"/agents/{agent}/sessions/{capture.session_id}")
    assert tab.page.locator("details.failed-attempts").count() == len(answered) == 2
    for step in answered:
        (attempt,) = step["extra"]["failed_attempts"]
        shown = tab.page.locator(f"article#step-{step['step_id']} details.failed-attempts")
        assert shown.locator("> summary").inner_text() == "1 failed attempt before this answer"
        shown.locator("> summary").click()
        assert shown.locator(".attempt .model").inner_text() == attempt["model"] != step["model_name"]
        assert shown.locator(".error-box").first.inner_text().endswith(attempt["error"]["message"])
    # The bar's errors count them, as the session list counts their spans: the retried tool and the two attempts.
    assert tab.page.locator(".summary-bar .errors dd").inner_text() == "3"
    tab.shot("trajectory-fallback")

    agent, capture, document = _replayed(world, "openai-agents_openinference_hosted-tools", "searcher")
    searches = [(s, c) for s in document["steps"] for c in s.get("tool_calls") or ()
                if (c.get("extra") or {}).get("run_by") == "provider"]
    tab.go(f"/agents/{agent}/sessions/{capture.session_id}")
    assert tab.page.locator("p.provider-run").count() == len(searches) == 2
    assert tab.page.locator("p.provider-run").first.inner_text().startswith("run by the provider (completed)")
    cited = [s for s in document["steps"] if (s.get("extra") or {}).get("annotations")]
    for step in cited:
        links = tab.page.locator(f"article#step-{step['step_id']} .citations a")
        assert [links.nth(i).get_attribute("href") for i in range(links.count())] == \
            list(dict.fromkeys(a["url"] for a in step["extra"]["annotations"]))
    assert cited
    tab.shot("trajectory-hosted-search")
    assert tab.console_errors == []


def test_a_structured_answer_and_a_request_that_failed_read_as_what_they_are(tab: Tab, world: World) -> None:
    """Real captures: LangChain's structured output (the model answers by calling the schema's tool) and an
    openai-agents request answered HTTP 500. Before, the output tool's calls read as tools the agent ran and the object
    the run answered was nowhere on the page; the failed request was an empty agent step with a red box. Now the call
    says it is the answer, the object is shown beside it, and the failed request says so."""
    tab.login(world.token)
    agent, capture, document = _replayed(world, "langgraph_openinference_structured-output", "structured")
    answers = [(s, c) for s in document["steps"] for c in s.get("tool_calls") or ()
               if (c.get("extra") or {}).get("output_tool")]
    objects = [s for s in document["steps"] if (s.get("extra") or {}).get("structured_output") is not None]
    tab.go(f"/agents/{agent}/sessions/{capture.session_id}")
    assert tab.page.locator(".badge.output-tool").count() == len(answers) == 2
    for step in objects:
        shown = tab.page.locator(f"article#step-{step['step_id']} .structured-output pre")
        assert json.loads(shown.inner_text()) == step["extra"]["structured_output"]
    assert len(objects) == 2
    tab.shot("trajectory-structured-output")

    agent, capture, document = _replayed(world, "openai-agents_openinference_model-error", "failing")
    (failed,) = [s for s in document["steps"] if s["source"] == "agent" and not s.get("llm_call_count")
                 and (s.get("extra") or {}).get("error") and not (s.get("extra") or {}).get("run_error")]
    tab.go(f"/agents/{agent}/sessions/{capture.session_id}")
    step = tab.page.locator(f"article#step-{failed['step_id']}")
    assert step.locator(".badge.failed-request").inner_text() == "request failed"
    assert "Error code: 500" in step.locator(".error-box").first.inner_text()
    assert tab.page.locator(".badge.failed-request").count() == 1
    tab.shot("trajectory-failed-request")
    assert tab.console_errors == []
