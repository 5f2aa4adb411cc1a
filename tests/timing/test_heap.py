"""``viewer.timing.heap``: the cyclic collector kept out of timed frames."""

from __future__ import annotations

import gc
import weakref
from contextlib import contextmanager

import pytest

from viewer.timing.heap import FULL_EVERY, FrameCollector, collect_if_alive, collector_off


@contextmanager
def _collections_started():
    """The generation of every collection that starts inside the block, in order (a list filled as they start)."""
    seen: list[int] = []

    def watch(phase, info):
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(watch)
    try:
        yield seen
    finally:
        gc.callbacks.remove(watch)


def test_the_frame_collector_collects_between_frames_only_and_restores_the_collector():
    """Inside the block the automatic collector is off; between_frames collects the young generations every
    ``every`` frames and all of them every FULL_EVERY-th time; after the block the collector is as it was."""
    assert gc.isenabled()
    with _collections_started() as seen:
        with FrameCollector(every=4) as fc:
            assert not gc.isenabled()
            for _ in range(4 * FULL_EVERY):
                [[] for _ in range(2000)]  # allocations that would trigger the automatic collector
                fc.between_frames()
    assert gc.isenabled()
    assert seen == [1] * (FULL_EVERY - 1) + [2], seen
    assert fc.collections == FULL_EVERY
    gc.disable()
    try:
        with FrameCollector():
            pass
        assert not gc.isenabled()  # a caller's own choice is kept
    finally:
        gc.enable()


def test_collector_off_runs_no_collection_inside_and_restores_the_collector_even_on_an_error():
    """Inside ``collector_off`` no collection starts, however much the block allocates; after it the collector is
    as it was, also when the block raised, and a caller who had it off keeps it off."""
    assert gc.isenabled()
    with _collections_started() as seen:
        with pytest.raises(RuntimeError):
            with collector_off():
                assert not gc.isenabled()
                for _ in range(50):
                    [[] for _ in range(2000)]  # enough to trigger the automatic collector many times over
                raise RuntimeError("the block fails")
    assert seen == []
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_off():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_collect_if_alive_collects_only_when_a_released_object_survives_in_a_cycle():
    """No full collection when every object let go of was freed by its reference count; one when an object
    still lives, held by a reference cycle, and that collection frees it."""

    class Thing:
        pass

    plain, cyclic = Thing(), Thing()
    cyclic.me = cyclic
    refs = [weakref.ref(plain)]
    with _collections_started() as seen:
        del plain
        collect_if_alive(refs)
        assert 2 not in seen
        refs = [weakref.ref(cyclic)]
        del cyclic
        assert refs[0]() is not None  # only the collector frees a cycle
        collect_if_alive(refs)
    assert seen.count(2) == 1
    assert refs[0]() is None
