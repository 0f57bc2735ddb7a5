"""A running service per test (real engine, real HTTP servers) and the helpers to feed it spans."""

from __future__ import annotations

from tests.trajectory_service.conftest import start_service, svc

__all__ = ["start_service", "svc"]
