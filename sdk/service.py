"""The service's routes the SDK uses, as methods (docs/api.md and the trajectory routes)."""

from __future__ import annotations

import json
from typing import Any

from evalkit.sdk.client import ServiceClient, ServiceError, segment


def dataset_workspace(dataset: str) -> str:
    """The workspace a dataset name lives in (`~` is the caller's personal one)."""
    return dataset.partition("@")[2] or "~"


class Service:
    def __init__(self, client: ServiceClient) -> None:
        self.client = client
        self.call = client.call

    @property
    def url(self) -> str:
        return self.client.url

    def experiment_url(self, experiment_id: int | str) -> str:
        """The experiment's web page (the UI's `/experiments/{id}`): what a person opens in a browser."""
        return f"{self.client.url}/experiments/{experiment_id}"

    async def info(self) -> dict[str, Any] | None:
        """`GET /api/info` (version, OTLP endpoints); None from a service that predates the route."""
        status, _, payload = await self.call("GET", "/api/info", raw=True, ok_statuses=(404, 405))
        if status != 200:
            return None
        try:
            data = json.loads(payload)
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    # -- agents -------------------------------------------------------------------------
    async def agent(self, agent: str) -> dict[str, Any]:
        return await self.call("GET", f"/api/agents/{segment(agent)}")  # type: ignore[no-any-return]

    async def create_key(self, agent: str) -> str:
        data = await self.call("POST", f"/api/agents/{segment(agent)}/keys", {})
        return str(data["key"])

    async def workspace_evaluators(self, workspace: str) -> list[str]:
        try:
            data = await self.call("GET", f"/api/workspaces/{segment(workspace)}/evaluators")
        except ServiceError as exc:
            if exc.status == 404:
                return []
            raise
        return [str(e["name"]) for e in data.get("evaluators", [])]

    # -- datasets and blobs ---------------------------------------------------------------
    async def has_blob(self, workspace: str, sha256: str) -> bool:
        status, _, _ = await self.call("HEAD", f"/api/workspaces/{segment(workspace)}/blobs/{sha256}", raw=True,
                                       ok_statuses=(404,))
        return bool(status == 200)

    async def put_blob(self, workspace: str, sha256: str, content: bytes) -> None:
        await self.call("PUT", f"/api/workspaces/{segment(workspace)}/blobs/{sha256}", data=content)

    async def get_blob(self, workspace: str, sha256: str) -> bytes:
        _, _, payload = await self.call("GET", f"/api/workspaces/{segment(workspace)}/blobs/{sha256}", raw=True)
        return bytes(payload)

    async def push_dataset(self, dataset: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self.call("POST", f"/api/datasets/{segment(dataset)}", body)  # type: ignore[no-any-return]

    async def dataset(self, dataset: str, version: str | None = None) -> dict[str, Any]:
        return await self.call("GET", f"/api/datasets/{segment(dataset)}",  # type: ignore[no-any-return]
                               params={"version": version})

    # -- experiments ------------------------------------------------------------------------
    async def create_experiment(self, body: dict[str, Any]) -> dict[str, Any]:
        return await self.call("POST", "/api/experiments", body)  # type: ignore[no-any-return]

    async def experiment(self, experiment_id: int) -> dict[str, Any]:
        return await self.call("GET", f"/api/experiments/{experiment_id}")  # type: ignore[no-any-return]

    async def pinned_cases(self, experiment_id: int) -> dict[str, Any]:
        return await self.call("GET", f"/api/experiments/{experiment_id}/cases")  # type: ignore[no-any-return]

    async def pending_runs(self, experiment_id: int) -> list[dict[str, Any]]:
        data = await self.call("GET", f"/api/experiments/{experiment_id}/runs/pending")
        return list(data["runs"])

    async def runs(self, experiment_id: int, attempts: str = "final") -> list[dict[str, Any]]:
        """Every run, page after page (the service answers at most 1000 a page)."""
        runs: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            data = await self.call("GET", f"/api/experiments/{experiment_id}/runs",
                                   params={"attempts": attempts, "limit": 1000, "cursor": cursor})
            runs.extend(data["runs"])
            cursor = data.get("next_cursor")
            if not cursor:
                return runs

    async def record_run(self, experiment_id: int, body: dict[str, Any]) -> dict[str, Any]:
        return await self.call("POST", f"/api/experiments/{experiment_id}/runs", body)  # type: ignore[no-any-return]

    async def lease(self, experiment_id: int, holder: str, ttl_seconds: float) -> dict[str, Any]:
        return await self.call("POST", f"/api/experiments/{experiment_id}/lease",  # type: ignore[no-any-return]
                               {"holder": holder, "ttl_seconds": ttl_seconds})

    async def release(self, experiment_id: int, holder: str, timeout: float | None = None,
                      attempts: int | None = None, reason: str | None = None) -> None:
        await self.call("DELETE", f"/api/experiments/{experiment_id}/lease",
                        params={"holder": holder, "reason": reason}, timeout=timeout, attempts=attempts)

    async def resume(self, experiment_id: int, holder: str, ttl_seconds: float, take_over: bool = False
                     ) -> dict[str, Any]:
        body: dict[str, Any] = {"holder": holder, "ttl_seconds": ttl_seconds}
        if take_over:
            body["take_over"] = True
        return await self.call("POST", f"/api/experiments/{experiment_id}/resume",  # type: ignore[no-any-return]
                               body)

    async def set_status(self, experiment_id: int, status: str, holder: str | None, reason: str = "") -> None:
        await self.call("PATCH", f"/api/experiments/{experiment_id}",
                        {"status": status, "lease_holder": holder, "reason": reason})

    async def to_score(self, experiment_id: int, evaluators: list[str], rescore: bool = False) -> list[dict[str, Any]]:
        data = await self.call("GET", f"/api/experiments/{experiment_id}/runs/to-score",
                               params={"evaluator": evaluators, "include_trajectory": True,
                                       "rescore": rescore or None})
        return list(data["runs"])

    async def publish(self, experiment_id: int, evaluations: list[dict[str, Any]],
                      holder: str | None) -> dict[str, Any]:
        return await self.call("POST", f"/api/experiments/{experiment_id}/evaluations",  # type: ignore[no-any-return]
                               {"lease_holder": holder, "evaluations": evaluations})

    async def evaluate(self, experiment_id: int, body: dict[str, Any]) -> dict[str, Any]:
        return await self.call("POST", f"/api/experiments/{experiment_id}/evaluate",  # type: ignore[no-any-return]
                               body, timeout=600)

    async def refetch(self, experiment_id: int) -> dict[str, Any]:
        return await self.call("POST", f"/api/experiments/{experiment_id}/trajectories/refetch",  # type: ignore[no-any-return]
                               {"statuses": ["partial", "unavailable"]}, timeout=600)

    async def scorecard(self, experiment_id: int, baseline_id: int | None = None) -> dict[str, Any]:
        return await self.call("GET", f"/api/experiments/{experiment_id}/scorecard",  # type: ignore[no-any-return]
                               params={"baseline_id": baseline_id})

    async def scorecard_text(self, experiment_id: int) -> str:
        _, _, payload = await self.call("GET", f"/api/experiments/{experiment_id}/scorecard",
                                        params={"format": "text"}, raw=True)
        return bytes(payload).decode("utf-8", "replace")

    # -- sessions and trajectories (trajectory routes) ---------------------------------------
    async def trajectory(self, agent: str, session_id: str, wait: float) -> tuple[str, dict[str, Any] | None]:
        """(status, ATIF document or None) of a session, long-polling up to `wait` seconds."""
        status, headers, payload = await self.call(
            "GET", f"/api/agents/{segment(agent)}/sessions/{segment(session_id)}/trajectory",
            params={"wait": wait}, raw=True, timeout=wait + 60, ok_statuses=(404,))
        document = json.loads(payload) if payload else None
        if status == 404:
            return "unavailable", None
        header = headers.get("X-Evalkit-Trajectory-Status") or headers.get("X-Trajectory-Status")
        extra = (document or {}).get("extra") or {}
        return str(header or extra.get("status") or "partial"), document

    async def session(self, agent: str, session_id: str) -> dict[str, Any] | None:
        try:
            return await self.call(  # type: ignore[no-any-return]
                "GET", f"/api/agents/{segment(agent)}/sessions/{segment(session_id)}")
        except ServiceError as exc:
            if exc.status == 404:
                return None
            raise
