"""Assembling a session pauses the cycle collector and always gives it back as it found it."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from evalkit.trajectory.assemble import cyclic_gc_paused


@pytest.fixture(autouse=True)
def _gc_restored() -> Iterator[None]:
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:  # pragma: no cover
        gc.disable()


def test_paused_inside_and_back_on_after_even_on_error() -> None:
    gc.enable()
    with cyclic_gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), cyclic_gc_paused():
        raise RuntimeError("a store error mid-build")
    assert gc.isenabled()


def test_left_off_when_it_was_off_and_nested_calls_do_not_turn_it_on_early() -> None:
    gc.disable()
    with cyclic_gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()  # someone else's choice stays
    gc.enable()
    with cyclic_gc_paused():
        with cyclic_gc_paused():  # a second session assembled meanwhile
            pass
        assert not gc.isenabled()  # the outer call still has it paused
    assert gc.isenabled()
