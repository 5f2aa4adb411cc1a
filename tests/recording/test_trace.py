"""A recording's frames as a Chrome Trace Event file: one process per culler, a track per stage, each span the
CSV's stage time, the frame numbers in the events' args, written whole at close."""

from __future__ import annotations

import json

import pytest

from viewer.frame.stages import STAGES
from viewer.recording import Recorder, TraceWriter, build_meta, read_run
from viewer.recording.trace import FRAME_TRACK, TRACE_FORMAT, stage_tracks

from tests.recording.test_recording import fake_row


def _rows(n: int) -> list[dict]:
    rows = []
    for k in range(n):
        row = fake_row(k)
        for j, s in enumerate(STAGES):  # awkward values: the CSV's 4 decimals decide, a zero stage has no span
            row[s.column] = 0.0 if j == 0 else 0.012345678 * (j + 1) * (k + 1)
        row["frame_ms"] = 2.0 + k
        row["gpu_ms"] = 0.5 * k
        rows.append(row)
    return rows


class _Row:
    def __init__(self, d: dict):
        self.__dict__.update(d)


def _recorded(tmp_path, rows):
    with Recorder(tmp_path / "a.csv", build_meta(index="brute", headless=True)) as rec:
        for r in rows:
            rec.append(r)
    return read_run(tmp_path / "a.csv")


def test_each_stage_span_is_the_csv_stage_time_frame_by_frame(tmp_path):
    rows = _rows(6)
    run = _recorded(tmp_path, rows)
    tw = TraceWriter(tmp_path / "t.json")
    for k, r in enumerate(rows):
        tw.add("brute", _Row(r), start=100.0 + k * 0.02)
    doc = json.loads(tw.close().read_text())
    spans = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    for k in range(len(rows)):
        mine = {e["name"]: e for e in spans if e["args"]["frame"] == k}
        assert mine[FRAME_TRACK]["dur"] == pytest.approx(run["frame_ms"][k] * 1e3, abs=1e-6)
        assert mine[FRAME_TRACK]["ts"] == pytest.approx(k * 0.02 * 1e6, abs=0.1)  # from the first frame's start
        for s in STAGES:
            csv_ms = run[s.column][k]
            if csv_ms == 0:
                assert s.name not in mine  # a stage that took no time draws no span
            else:
                assert mine[s.name]["dur"] == pytest.approx(csv_ms * 1e3, abs=1e-6)
                assert mine[s.name]["ts"] >= mine[FRAME_TRACK]["ts"]
    counters = [e for e in doc["traceEvents"] if e["ph"] == "C"]
    assert [c["args"]["gpu_ms"] for c in counters] == pytest.approx(list(run["gpu_ms"]))
    assert doc["otherData"]["format"] == TRACE_FORMAT and doc["otherData"]["frames"] == len(rows)


def test_stages_are_laid_end_to_end_in_pipeline_order_inside_the_frame(tmp_path):
    tw = TraceWriter(tmp_path / "t.json")
    tw.add("octree", _Row(_rows(1)[0]), start=5.0)
    spans = [e for e in tw.events if e["ph"] == "X" and e["cat"] == "stage"]
    assert [e["name"] for e in spans] == [s.name for s in STAGES if s.name in {e["name"] for e in spans}]
    for a, b in zip(spans, spans[1:]):
        assert b["ts"] == pytest.approx(a["ts"] + a["dur"], abs=0.11)
    frame = next(e for e in tw.events if e["ph"] == "X" and e["name"] == FRAME_TRACK)
    assert spans[-1]["ts"] + spans[-1]["dur"] <= frame["ts"] + frame["dur"]


def test_every_culler_is_a_process_with_one_named_track_per_stage(tmp_path):
    tw = TraceWriter(tmp_path / "t.json")
    for k in range(3):
        for name in ("octree", "gpu"):
            tw.add(name, _Row(_rows(3)[k]), start=float(k))
    meta = [e for e in tw.events if e["ph"] == "M"]
    processes = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    assert sorted(processes.values()) == ["gpu", "octree"]
    for pid in processes:
        threads = {e["tid"]: e["args"]["name"] for e in meta if e["name"] == "thread_name" and e["pid"] == pid}
        assert threads == {tid: name for name, tid in stage_tracks().items()}
        for e in tw.events:
            if e["ph"] == "X" and e["pid"] == pid:
                assert threads[e["tid"]] == e["name"]  # each span on its own stage's track


def test_nothing_is_written_until_close(tmp_path):
    tw = TraceWriter(tmp_path / "t.json")
    tw.add("brute", _Row(_rows(1)[0]), start=0.0)
    assert not (tmp_path / "t.json").exists()
    tw.close()
    assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]
