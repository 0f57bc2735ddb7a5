"""A page of an experiment's runs (`GET /api/experiments/{id}/runs`): at most `limit` runs, in case, repetition
and attempt order, from a keyset cursor (the page's last run) or an offset, filtered as `run_results` filters.

The run filters (case, status, final attempts) are the engine's; the evaluation filters (`evaluator`, `failed`)
need each run's verdicts, so those pages are read in chunks until the page is full: a page costs about the runs
it skips, never the whole experiment.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from .evaluations import Evaluations
from .run_results import with_evaluations
from .runs import Run, Runs

# A slot's repetition and attempt are UInt32 columns: a cursor naming more is none this service gave out.
_MAX_UINT32 = 2**32 - 1
# How many runs an evaluation-filtered page reads at once (their verdicts are read per chunk).
_CHUNK = 500


class BadCursor(ValueError):
    pass


@dataclass(frozen=True)
class RunFilters:
    case_id: str | None = None
    status: str | None = None
    final_only: bool = True
    evaluator: str | None = None
    only_failed: bool = False


@dataclass
class RunPage:
    views: list[dict[str, Any]]
    more: bool
    last: Run | None

    @property
    def next_cursor(self) -> str | None:
        return encode_cursor(self.last) if self.more and self.last is not None else None


def encode_cursor(run: Run) -> str:
    raw = json.dumps({"c": run.case_id, "r": run.repetition, "a": run.attempt}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, int, int]:
    """The (case, repetition, attempt) after which the next page starts, from a cursor `encode_cursor` wrote."""
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        case_id, repetition, attempt = data["c"], data["r"], data["a"]
    except (ValueError, TypeError, KeyError, binascii.Error) as exc:
        raise BadCursor("cursor is not one this service gave out; start again without it") from exc
    if not (isinstance(case_id, str) and all(type(n) is int and 0 <= n <= _MAX_UINT32
                                             for n in (repetition, attempt))):
        raise BadCursor("cursor is not one this service gave out; start again without it")
    return case_id, repetition, attempt


def read_page(runs: Runs, evaluations: Evaluations, experiment_id: int, filters: RunFilters, *, limit: int,
              after: tuple[str, int, int] | None, offset: int, with_evaluations_shown: bool) -> RunPage:
    """The page of runs matching `filters`; `with_evaluations_shown`: each run with its latest verdicts."""
    f = filters
    if f.evaluator is None and not f.only_failed:
        got = runs.page(experiment_id, limit=limit + 1, after=after, offset=offset, case_id=f.case_id,
                        status=f.status, final_only=f.final_only)
        shown = got[:limit]
        if not with_evaluations_shown:
            views = [r.view() for r in shown]
        else:
            details = evaluations.details_by_run(experiment_id, None, [r.run_id for r in shown])
            views = list(with_evaluations(shown, details))
        return RunPage(views, len(got) > limit, shown[-1] if shown else None)
    kept: list[tuple[Run, dict[str, Any]]] = []
    skip = offset
    chunk = max(limit + 1, _CHUNK)
    while len(kept) <= limit:
        got = runs.page(experiment_id, limit=chunk, after=after, case_id=f.case_id, status=f.status,
                        final_only=f.final_only)
        if not got:
            break
        details = evaluations.details_by_run(experiment_id, [f.evaluator] if f.evaluator else None,
                                             [r.run_id for r in got])
        for run in got:
            for view in with_evaluations([run], details, evaluator=f.evaluator, only_failed=f.only_failed):
                if skip:
                    skip -= 1
                else:
                    kept.append((run, view))
            if len(kept) > limit:
                break
        if len(got) < chunk:
            break
        after = (got[-1].case_id, got[-1].repetition, got[-1].attempt)
    shown_runs = kept[:limit]
    return RunPage([view for _, view in shown_runs], len(kept) > limit, shown_runs[-1][0] if shown_runs else None)
