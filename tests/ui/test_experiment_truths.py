"""An experiment's page says what its JSON twin and the API say: no runs cost $0 in the header and the runs table
alike; an experiment compared with itself is said to be, and its gate fails. A session page's twin refuses the
`?page=` the page refuses."""

from __future__ import annotations

from tests.ui.conftest import Tab, World


def test_an_experiment_with_no_runs_cost_nothing_in_its_header_and_its_runs_table(tab: Tab, world: World) -> None:
    """Before: killed before its first run, its header said cost "$0" and its runs table "unknown"."""
    created = world.served.ok("POST", "/api/experiments", {
        "agent": world.agent, "dataset": world.dataset, "name": "no runs yet", "evaluators": ["same_answer"],
        "lease": {"holder": "ui-no-runs", "ttl_seconds": 300}}, token=world.token)
    eid = created["experiment_id"]
    tab.login(world.token)
    tab.go(f"/experiments/{eid}")
    header = tab.page.locator("dl.summary-bar div", has_text="cost").locator("dd").inner_text()
    row = tab.page.locator("table.metrics tr", has_text="cost")
    cells = [row.locator("td").nth(i).inner_text() for i in range(5)]
    assert (header, cells) == ("$0", ["$0", "–", "–", "–", "0"]), (header, cells)
    twin = tab.go(f"/experiments/{eid}?format=json").json()
    assert twin["cost_usd"] == 0.0 and twin["scorecard"]["cost_usd"]["total"] == 0.0, twin


def test_an_experiment_compared_with_itself_says_so_first(tab: Tab, world: World) -> None:
    """Before: every case "same", no word that the baseline was the experiment itself."""
    eid = world.experiment_id
    tab.login(world.token)
    tab.go(f"/experiments/{eid}/compare?baseline={eid}")
    said = tab.page.locator("#same-experiment").inner_text()
    assert said.startswith(f"⚠ This compares experiment #{eid} with itself"), said
    assert tab.page.locator("#same-experiment a[href='/experiments']").count() == 1
    assert tab.page.locator("#comparison-warnings").count() == 0  # said once
    twin = tab.go(f"/experiments/{eid}/compare?baseline={eid}&format=json").json()
    assert twin["comparison"]["same_experiment"] is True, twin["comparison"]
    other = tab.go(f"/experiments/{eid}/compare?baseline={world.baseline_id}&format=json").json()
    assert other["comparison"]["same_experiment"] is False
    # Its gate fails, saying why (it passed before: nothing regresses against itself), as the API and CLI refuse it.
    tab.go(f"/experiments/{eid}/compare?baseline={eid}&gate=1&min_pairs=1")
    gate = tab.page.inner_text("#gate")
    assert "Gate: failed" in gate and f"experiment {eid} is gated against itself" in gate, gate
    twin = tab.go(f"/experiments/{eid}/compare?baseline={eid}&gate=1&min_pairs=1&format=json").json()
    assert twin["gate"]["passed"] is False and twin["gate"]["checks"][0]["check"] == "baseline", twin["gate"]


def test_a_session_pages_twin_refuses_the_page_number_the_page_refuses(tab: Tab, world: World) -> None:
    """Before: `?format=json&page=0` (or `page=1e20`, or with `download=1`) answered 200 with the whole document,
    while the HTML page answered 400."""
    tab.login(world.token)
    path = f"/agents/{world.agent}/sessions/{world.long_session}"
    for query in ("format=json&page=0", "format=json&page=1e20", "format=json&page=99999", "download=1&page=0"):
        html = tab.go(f"{path}?{query.replace('format=json&', '').replace('download=1&', '')}")
        twin = tab.go(f"{path}?{query}")
        assert (html.status, twin.status) == (400, 400), (query, html.status, twin.status)
        if query.startswith("format=json"):
            assert "page=" in twin.json()["error"]["message"], twin.json()
    assert tab.go(f"{path}?format=json&page=1").status == 200
