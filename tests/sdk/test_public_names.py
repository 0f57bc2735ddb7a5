"""`evalkit` re-exports `evalkit.sdk` (docs/sdk.md), the errors a script catches included."""

from __future__ import annotations

import evalkit
import evalkit.sdk


def test_evalkit_re_exports_every_sdk_name() -> None:
    # Before: `except evalkit.LeaseBusy` (and LeaseLost, ScoringError, ExperimentInterrupted) was an
    # AttributeError, and LeaseBusy was importable only from evalkit.sdk.lease.
    assert sorted(evalkit.__all__) == sorted(evalkit.sdk.__all__)
    for name in evalkit.sdk.__all__:
        assert getattr(evalkit, name) is getattr(evalkit.sdk, name), name
    assert issubclass(evalkit.LeaseBusy, evalkit.LeaseLost)
