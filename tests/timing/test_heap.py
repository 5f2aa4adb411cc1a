"""``viewer.timing.heap``: the cyclic collector kept out of timed frames."""

from __future__ import annotations

import gc

from viewer.timing.heap import FULL_EVERY, FrameCollector


def test_the_frame_collector_collects_between_frames_only_and_restores_the_collector():
    """Inside the block the automatic collector is off; between_frames collects the young generations every
    ``every`` frames and all of them every FULL_EVERY-th time; after the block the collector is as it was."""
    seen = []

    def watch(phase, info):
        if phase == "start":
            seen.append(info["generation"])

    assert gc.isenabled()
    gc.callbacks.append(watch)
    try:
        with FrameCollector(every=4) as fc:
            assert not gc.isenabled()
            for _ in range(4 * FULL_EVERY):
                [[] for _ in range(2000)]  # allocations that would trigger the automatic collector
                fc.between_frames()
    finally:
        gc.callbacks.remove(watch)
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
