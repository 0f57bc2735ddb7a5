"""The service drives harness agents: for each pending run it calls the agent's harness
(docs/harness.md), waits for the run's session to settle, records the run, then scores.

One driver task per experiment, at most `max_concurrent_runs` harness calls at
once. On shutdown the drivers are cancelled and every run in flight is recorded
as failed ("interrupted: evalkit server shut down"); the experiment is marked
failed and can be resumed.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

import aiohttp

from evalkit.access import Agent
from evalkit.api import Caller
from evalkit.outbound import OutboundPolicy

from .datasets import Case
from .experiments import Experiment
from .models import EvaluateRequest, RecordRun
from .runs import Run
from .service import HARNESS_HOLDER, INTERRUPTED, ScoringService
from .trajectories import wait_for_session

log = logging.getLogger("evalkit.scoring.harness")
SERVER = Caller("evalkit-server", "admin")
# Fixture bytes travel inline; past this a harness should fetch them from the blob routes.
INLINE_FILE_LIMIT = 8 * 1024 * 1024


async def capabilities(url: str, outbound: OutboundPolicy, timeout: float = 10.0) -> dict[str, Any]:
    """`GET {harness}/capabilities`; raises ValueError saying what went wrong."""
    try:
        async with outbound.session(timeout=aiohttp.ClientTimeout(total=timeout)) as http, \
                http.get(url.rstrip("/") + "/capabilities") as response:
            if response.status != 200:
                raise ValueError(f"GET {url}/capabilities answered {response.status}")
            body = await response.json(content_type=None)
    except (TimeoutError, aiohttp.ClientError) as exc:
        raise ValueError(f"the harness at {url} did not answer GET /capabilities ({exc or type(exc).__name__}); "
                         "start it, or fix the agent's harness_url") from exc
    if not isinstance(body, dict):
        raise ValueError(f"GET {url}/capabilities must answer a JSON object")
    return body


@dataclass
class Driver:
    experiment: Experiment
    agent: Agent
    task: asyncio.Task[None] | None = None
    # (case, repetition, attempt) → (session id, start time) of the runs being called now.
    in_flight: dict[tuple[str, int, int], tuple[str, float]] = field(default_factory=dict)
    # Used by every recorded attempt, earlier passes' too (for run_settings.max_tokens): the limits hold over the
    # experiment, so a resumed pass starts from what was spent, or it would spend the whole budget again.
    tokens: int = 0
    cost_usd: float = 0.0  # what the priced attempts cost (for budget_usd); unpriced ones add nothing
    stopped: str | None = None  # why no more calls start, when a limit was reached

    @property
    def settings(self) -> dict[str, Any]:
        """The experiment's run_settings (`evalkit run --timeout/--retries/--concurrency/...`)."""
        return dict(self.experiment.config.get("run_settings") or {})


class HarnessRunner:
    def __init__(self, service: ScoringService, *, timeout_seconds: float = 600.0) -> None:
        self.service = service
        self.timeout_seconds = timeout_seconds
        self.drivers: dict[int, Driver] = {}
        service.start_harness = self.start

    def start(self, experiment: Experiment, agent: Agent) -> None:
        current = self.drivers.get(experiment.experiment_id)
        if current is not None and current.task is not None and not current.task.done():
            return
        driver = Driver(experiment, agent)
        driver.task = asyncio.get_running_loop().create_task(self._drive(driver),
                                                            name=f"harness-{experiment.experiment_id}")
        self.drivers[experiment.experiment_id] = driver

    async def _drive(self, driver: Driver) -> None:
        s = self.service
        e = driver.experiment
        try:
            pending = await asyncio.to_thread(s.pending, e)
            for run in await asyncio.to_thread(s.runs.attempts, e.experiment_id):
                driver.tokens += int(run.metrics.get("input_tokens") or 0) + int(run.metrics.get("output_tokens") or 0)
                driver.cost_usd += float(run.metrics.get("cost_usd") or 0.0)
            cases = {c.id: c for c in await asyncio.to_thread(s.pinned_cases, e)}
            gate = asyncio.Semaphore(max(1, driver.settings.get("concurrency") or driver.agent.max_concurrent_runs))
            timeout = driver.settings.get("timeout_seconds") or self.timeout_seconds
            async with s.outbound.session(timeout=aiohttp.ClientTimeout(total=timeout)) as http:
                await asyncio.gather(*(self._one(driver, http, gate, slot, cases[slot["case_id"]])
                                       for slot in pending))
            # The pass is over: the service moves its experiment on (a record never does it for a harness,
            # so a resumed pass is not moved on by its first run while others are in flight).
            async with s.lock(e.experiment_id):
                current = await asyncio.to_thread(s.experiments.get, e.experiment_id)
                if current is not None and current.status == "running" and driver.stopped:
                    left = await asyncio.to_thread(s.unrecorded, current)
                    current = await asyncio.to_thread(
                        s.set_status, current, "stopped", f"{driver.stopped}; {left} of {current.planned} "
                        f"run(s) not run; resume with `evalkit run {current.dataset} --agent {current.agent_id} "
                        f"--resume {current.experiment_id}` and a larger --max-cost-usd or --max-tokens (they count "
                        "what every pass spent)")
                if current is not None and current.status == "running":
                    current = await asyncio.to_thread(s.finish_running, current, "the harness ran every planned run")
            if current is not None and current.status == "evaluating":
                await s.evaluate(SERVER, current, EvaluateRequest())
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the driver must leave a trace, not die silently
            log.exception("harness driver of experiment %s failed", e.experiment_id)
            async with s.lock(e.experiment_id):
                current = await asyncio.to_thread(s.experiments.get, e.experiment_id)
                if current is not None and current.status == "running":
                    await asyncio.to_thread(s.set_status, current, "failed", f"harness driver failed: {exc}")

    async def _one(self, driver: Driver, http: aiohttp.ClientSession, gate: asyncio.Semaphore,
                   slot: dict[str, Any], case: Case) -> None:
        async with gate:
            attempt = int(slot["attempt"])
            # Each failed attempt is recorded, then the next one runs; only the last counts (runs.py).
            for left in range(int(driver.settings.get("retries") or 0), -1, -1):
                status = await self._attempt(driver, http, {**slot, "attempt": attempt}, case)
                if status in ("completed", None) or left == 0:
                    break
                attempt += 1

    async def _attempt(self, driver: Driver, http: aiohttp.ClientSession, slot: dict[str, Any], case: Case
                       ) -> str | None:
        """One harness call, recorded; its status, or None when a limit stopped it before it started."""
        s = self.service
        e = driver.experiment
        key = (slot["case_id"], slot["repetition"], slot["attempt"])
        max_tokens = driver.settings.get("max_tokens")
        if max_tokens and driver.tokens >= max_tokens:
            driver.stopped = f"max_tokens {max_tokens} reached ({driver.tokens} used)"
            return None
        budget = e.config.get("budget_usd")
        if budget is not None and driver.cost_usd >= budget:
            driver.stopped = f"budget ${budget:g} reached (${driver.cost_usd:.4f} spent by priced runs)"
            return None
        session_id = uuid.uuid4().hex
        started = time.time()
        driver.in_flight[key] = (session_id, started)
        body = {"experiment_id": e.experiment_id, "case_id": case.id, "repetition": slot["repetition"],
                "attempt": slot["attempt"], "session_id": session_id, "input": case.input,
                "model": e.model or None, "files": await asyncio.to_thread(self._files, e, case),
                "metadata": {"tags": case.tags, **case.metadata}}
        status, answer, output, error = await self._call(http, driver.agent.harness_url, body)
        ended = time.time()
        # Wait for the session to settle; recording then reads it once more, settled.
        await wait_for_session(s.store, e.agent_id, session_id,
                               wait_seconds=driver.settings.get("trajectory_wait_seconds",
                                                                driver.agent.trajectory_wait_seconds),
                               quiet_period=s.quiet_period, prices=s.prices)
        record = RecordRun(case_id=case.id, repetition=slot["repetition"], attempt=slot["attempt"],
                           session_id=session_id, status=status, answer=answer, output=output, error=error,
                           started_at=started, ended_at=ended, trajectory=None)
        async with s.lock(e.experiment_id):
            current = await asyncio.to_thread(s.experiments.get, e.experiment_id)
            if current is not None and current.status in ("running", "evaluating"):
                run, _ = await asyncio.to_thread(s.record_run, SERVER, current, record, internal=True)
                driver.tokens += int(run.metrics.get("input_tokens") or 0) + int(
                    run.metrics.get("output_tokens") or 0)
                driver.cost_usd += float(run.metrics.get("cost_usd") or 0.0)
        driver.in_flight.pop(key, None)
        return status

    def _files(self, e: Experiment, case: Case) -> list[dict[str, Any]]:
        files = []
        for f in case.files:
            data = self.service.blobs.read(e.config["dataset_workspace"], f.sha256)
            inline = data is not None and len(data) <= INLINE_FILE_LIMIT
            files.append({"name": f.name, "sha256": f.sha256, "context": f.context,
                          "content_base64": base64.b64encode(data).decode() if inline and data is not None else None})
        return files

    @staticmethod
    async def _call(http: aiohttp.ClientSession, url: str, body: dict[str, Any]
                    ) -> tuple[Literal["completed", "failed", "timeout"], str | None, Any, str | None]:
        """(status, answer, output, error) of one harness run; a harness failure is a failed run."""
        try:
            async with http.post(url.rstrip("/") + "/runs", json=body) as response:
                text = await response.text()
                if response.status != 200:
                    return "failed", None, None, f"harness answered {response.status}: {text[:500]}"
                reply = await response.json(content_type=None)
        except TimeoutError:
            return "timeout", None, None, "the harness did not answer within the run timeout"
        except (aiohttp.ClientError, ValueError) as exc:
            return "failed", None, None, f"harness call failed: {type(exc).__name__}: {exc}"
        if not isinstance(reply, dict):
            return "failed", None, None, "harness protocol violation: the reply is not a JSON object"
        error = reply.get("error")
        answer = reply.get("answer")
        output = reply.get("output")
        said = reply.get("status") or ("failed" if error else "completed")
        if said not in ("completed", "failed", "timeout"):
            return "failed", None, None, f"harness protocol violation: unknown status {said!r}"
        status: Literal["completed", "failed", "timeout"] = (
            "completed" if said == "completed" else "timeout" if said == "timeout" else "failed")
        if status == "completed" and answer is None and output is None:
            return "failed", None, None, "harness protocol violation: no answer, output or error"
        return status, None if answer is None else str(answer), output, None if error is None else str(error)

    async def resume_running(self) -> None:
        """At start: experiments left `running` by a crash are marked failed (they can be resumed)."""
        s = self.service
        for e in await asyncio.to_thread(s.experiments.running):
            if e.config.get("agent_kind") == "harness":
                await asyncio.to_thread(s.set_status, e, "failed", INTERRUPTED)
                await asyncio.to_thread(s.leases.release, e.experiment_id, HARNESS_HOLDER, time.time())

    async def stop(self) -> None:
        """Cancel every driver; record its runs in flight as failed and mark the experiment failed."""
        s = self.service
        for eid, driver in list(self.drivers.items()):
            if driver.task is None or driver.task.done():
                continue
            driver.task.cancel()
            try:
                await driver.task
            except asyncio.CancelledError:
                pass
            current = await asyncio.to_thread(s.experiments.get, eid)
            if current is None:
                continue
            # Failed first, then the runs: recording the last run must not move the experiment on.
            if current.status in ("running", "evaluating"):
                await asyncio.to_thread(s.set_status, current, "failed", INTERRUPTED)
            now = time.time()
            interrupted = [Run(eid, case_id, repetition, attempt, session_id, "failed", error=INTERRUPTED,
                               started_at=started, ended_at=now, trajectory_status="unavailable",
                               metrics={"duration_seconds": now - started}, recorded_by=SERVER.name, recorded_at=now)
                           for (case_id, repetition, attempt), (session_id, started) in driver.in_flight.items()]
            await asyncio.to_thread(s.runs.save, interrupted)
            await asyncio.to_thread(s.leases.release, eid, HARNESS_HOLDER, time.time())
