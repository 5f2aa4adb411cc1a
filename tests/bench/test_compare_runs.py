"""``viewer compare A B`` over two bench runs: rows paired by workload and index, each ratio with its interval and
test from the raw samples, "no significant difference" where there is none, and --fail-if gating on a significant
slowdown beyond its share (exit 1) or not (exit 0)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.support.cli import refused, run_cli


def _bench_run(path, scale: float, seed: int, commit: str = "a" * 40):
    """A bench directory whose octree queries are lognormal around ``scale`` us (2 rounds of 300 queries)."""
    from viewer.bench.result import IndexResult
    from viewer.bench.samples import write_samples

    rng = np.random.default_rng(seed)
    r = IndexResult("octree", "uniform-10k", 10_000)
    r.query_us = scale * rng.lognormal(0.0, 0.3, (2, 300))
    r.floor_us = np.full((2, 300), 0.1)
    path.mkdir()
    write_samples([r], path / "bench_samples.parquet")
    meta = {"format": "viewdist-bench", "format_version": 2,
            "provenance": {"project": "viewdist-testbed", "version": "0.1.0", "commit": commit, "dirty": False,
                           "machine": "machine: test", "platform": "test", "packages": {}},
            "machine": {"platform": "test", "cpu": "test"}, "packages": {}, "command": ["viewer", "bench"],
            "date": "2026-12-07T00:00:00+00:00",
            "config": {"scenes": ["uniform"], "sizes": [10_000], "indexes": ["octree"], "queries": 300, "rounds": 2,
                       "dynamic": [], "frames": 0, "seed": 0},
            "columns": ["workload", "index", "n", "query_median_us"],
            "rows": [{"workload": "uniform-10k", "index": "octree", "n": 10_000,
                      "query_median_us": float(np.median(r.query_us))}]}
    (path / "bench.json").write_text(json.dumps(meta))
    return path


def test_two_runs_alike_show_no_significant_difference_and_pass_the_gate(tmp_path):
    a, b = _bench_run(tmp_path / "a", 2.0, 1), _bench_run(tmp_path / "b", 2.0, 2)
    code, out, err = run_cli("compare", a, b, "--fail-if", "query:50%")
    assert code == 0, err
    assert "octree" in out and "no significant difference" in out
    assert "--fail-if query:50%: no significant slowdown beyond it" in out
    assert "different machines" not in err and "different commits" not in err


def test_a_slowdown_past_the_gate_is_found_and_exits_1(tmp_path):
    a, b = _bench_run(tmp_path / "a", 2.0, 1), _bench_run(tmp_path / "b", 2.8, 2, commit="b" * 40)
    code, out, err = run_cli("compare", a, b / "bench.json", "--fail-if", "query:20%")
    assert code == 1, err
    line = next(ln for ln in out.splitlines() if ln.startswith("uniform-10k") and " query " in ln)
    ratio, interval = float(line.split()[5]), line.split()[6]
    lo, hi = map(float, interval.split(".."))
    assert 1.2 < lo <= ratio <= hi < 1.6 and "slower by" in line
    assert "a significant slowdown beyond it" in out and "different commits" in err
    assert run_cli("compare", a, b, "--fail-if", "query:50%").returncode == 0  # 40% is within a 50% gate


@pytest.mark.parametrize("args, words", [
    (["--fail-if", "query"], ["--fail-if 'query'", "METRIC:PCT%"]),
    (["--fail-if", "speed:10%"], ["--fail-if 'speed:10%'"]),
    (["--fail-if", "query_ms:10%"], ["--fail-if query_ms", "bench runs compare"]),
], ids=["no-share", "unknown-metric", "recording-metric-for-benches"])
def test_a_bad_gate_is_refused_with_one_line(tmp_path, args, words):
    a, b = _bench_run(tmp_path / "a", 2.0, 1), _bench_run(tmp_path / "b", 2.0, 2)
    code, out, err = run_cli("compare", a, b, *args)
    refused(code, err, *words)
    assert out == ""


def test_a_bench_and_a_recording_are_not_compared(tmp_path):
    a = _bench_run(tmp_path / "a", 2.0, 1)
    (tmp_path / "r.csv").write_text("frame\n0\n")
    code, out, err = run_cli("compare", a, tmp_path / "r.csv")
    refused(code, err, "not both", "r.csv")
