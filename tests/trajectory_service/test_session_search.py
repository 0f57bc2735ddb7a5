"""`search=` on the session list: sessions whose id holds the text, in any case, from the list's own
index (not a page of it), under every sort and filter, paged by cursor like any list."""

from __future__ import annotations

from typing import Any

from tests.trajectory_service.conftest import Service, chat, root, span

# Many sessions, of which the ones a search for "alpha" finds are far apart in list order (most of them
# past the first read of the index that a page of 2 takes).
IDS = [f"{'Alpha' if i % 17 == 0 else 'beta'}-{i:03d}" for i in range(1, 121)]


def _sessions() -> list[Any]:
    spans = []
    for i, sid in enumerate(IDS, 1):
        spans += [chat(i, i * 10 + 1, i * 10, i * 10.0 + 1, inputs=100 * i),
                  root(i, i * 10, sid, i * 10.0, i * 10.0 + 5)]
        if i % 34 == 0:  # Alpha-034, Alpha-068 and Alpha-102 have a failing tool call
            spans.append(span(i, i * 10 + 2, i * 10, "execute_tool broken", i * 10.0 + 2, i * 10.0 + 3, error=True))
    # A trace with no session id is a session named by its trace id.
    spans += [span(999, 9990, None, "workflow", 2000.0, 2001.0), chat(999, 9991, 9990, 2000.5)]
    return spans


async def _all(svc: Service, url: str, limit: int = 2) -> list[str]:
    found, cursor = [], ""
    while True:
        body = (await svc.get(url + f"&limit={limit}" + (f"&cursor={cursor}" if cursor else ""))).body
        found += [row["session_id"] for row in body["sessions"]]
        if not body["has_more"]:
            return found
        cursor = body["next_cursor"]


async def test_search_finds_every_matching_session_in_any_case_under_every_sort(svc: Service) -> None:
    agent, key = await svc.new_agent()
    await svc.send(key, _sessions())
    base = f"/api/agents/{agent}/sessions?search=aLpHa"
    alphas = [sid for sid in IDS if sid.startswith("Alpha")]
    assert len(alphas) == 7
    newest_first = sorted(alphas, reverse=True)  # later sessions end later
    assert await _all(svc, base) == newest_first
    assert await _all(svc, base + "&sort=first_seen") == newest_first
    assert await _all(svc, base + "&sort=spans", limit=3) == sorted(
        alphas, key=lambda sid: (-(3 if int(sid[-3:]) % 34 == 0 else 2), sid))
    assert await _all(svc, base + "&sort=cost", limit=3) == newest_first  # cost grows with the input tokens
    assert await _all(svc, base + "&errors=true") == ["Alpha-102", "Alpha-068", "Alpha-034"]
    # The same pages by offset as by cursor.
    page = (await svc.get(base + "&limit=2&offset=2")).body
    assert [row["session_id"] for row in page["sessions"]] == newest_first[2:4]


async def test_search_matches_part_of_an_id_a_trace_id_and_nothing(svc: Service) -> None:
    agent, key = await svc.new_agent()
    await svc.send(key, _sessions())
    url = f"/api/agents/{agent}/sessions?limit=50"
    assert [r["session_id"] for r in (await svc.get(url + "&search=-05")).body["sessions"]] == [
        "Alpha-051" if i == 51 else f"beta-{i:03d}" for i in range(59, 49, -1)]
    sessionless = f"{999:032x}"
    assert [r["session_id"] for r in (await svc.get(url + f"&search={sessionless[-6:]}")).body["sessions"]] == [
        sessionless]
    nothing = (await svc.get(url + "&search=gamma")).body
    assert (nothing["sessions"], nothing["has_more"], nothing["next_cursor"]) == ([], False, None)
    everything = (await svc.get(f"/api/agents/{agent}/sessions?limit=1000&search=")).body["sessions"]
    assert len(everything) == len(IDS) + 1  # an empty search is no search
