"""Datasets: those the caller can read, and one dataset's versions and a version's cases with their reviews."""

from __future__ import annotations

import asyncio
from urllib.parse import quote

from aiohttp import web

from evalkit.ui.page import Page, page, query_int, with_query
from evalkit.ui.twin import twin

CASES_PER_PAGE = 100


@page
async def datasets(request: web.Request) -> Page:
    workspace = request.query.get("workspace") or None
    listed = await twin(request, "/api/datasets", {"workspace": workspace})
    return Page("datasets.html", {"datasets": listed["datasets"], "workspace": workspace}, listed,
                api="/api/datasets", title="Datasets")


@page
async def dataset(request: web.Request) -> Page:
    name = request.match_info["dataset"]
    path = f"/api/datasets/{quote(name, safe='@')}"
    version = request.query.get("version")
    shown, versions = await asyncio.gather(twin(request, path, {"version": version}),
                                           twin(request, path + "/versions"))
    cases = shown["cases"]
    pages = max(1, -(-len(cases) // CASES_PER_PAGE))
    number = query_int(request, "page", 1, low=1, high=pages)
    reviews: dict[str, int] = {}
    for c in cases:
        state = c["review"]["state"]
        reviews[state] = reviews.get(state, 0) + 1
    # The newest page of versions (the API's default, 50): a dataset pushed more often says where the rest are.
    context = {"name": name, "dataset": shown, "versions": versions["versions"], "more_versions": versions["has_more"],
               "reviews": reviews,
               "cases": cases[(number - 1) * CASES_PER_PAGE:number * CASES_PER_PAGE], "page": number, "pages": pages,
               "prev_url": with_query(request, page=number - 1) if number > 1 else None,
               "next_url": with_query(request, page=number + 1) if number < pages else None}
    return Page("dataset.html", context, {**shown, "versions": versions["versions"],
                                          "more_versions": versions["has_more"]}, api=path,
                title=f"Dataset {name}")


def add_routes(app: web.Application) -> None:
    app.router.add_get("/datasets", datasets)
    app.router.add_get("/datasets/{dataset}", dataset)
