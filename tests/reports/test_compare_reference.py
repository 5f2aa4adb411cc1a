"""``viewer compare`` says what it found. It names the reference,
prints every ratio as a speed-up over it (its time over the run's, as ``bench``'s ``x scan``: above 1 =
faster) with significant digits (29 candidates against 100,000 is not ``0.00``), under headers that say so in
every format, and ends with a sentence per run naming the renderer; the old warnings stay. Every case runs
the real command (in this process)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from tests.support.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]


def run_file(path: Path, index: str, query_ms: float, frame_ms: float, draw_ms: float, candidates: int,
             scene: str = "clustered-100k", frames: int = 12) -> Path:
    """A recording of ``frames`` equal frames with metadata naming the index, the scene and llvmpipe."""
    from viewer.recording import COLUMNS, SCHEMA_VERSION, meta_path_for

    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for k in range(frames):
            row = {c: 0 for c in COLUMNS}
            row.update(frame=k, index=index, culling="cpu", query_ms=query_ms, draw_ms=draw_ms, frame_ms=frame_ms,
                       candidates=candidates, visible=29, drawn=12)
            w.writerow([row[c] for c in COLUMNS])
    meta_path_for(path).write_text(json.dumps({
        "schema": {"name": "viewer-frames", "version": SCHEMA_VERSION}, "index": {"name": index},
        "scene": {"name": scene, "n": 100000, "seed": 1},
        "gl": {"renderer": "llvmpipe (LLVM 15.0.7, 256 bits)"}}))
    return path


def three_runs(tmp_path: Path) -> list[Path]:
    """octree (4x faster queries, 29 candidates), the scan (100,000) and an rtree twice as slow; the draw
    takes 24 of every run's ~26-27 ms."""
    return [run_file(tmp_path / "octree.csv", "octree", 0.043, 26.1, 24.0, 29),
            run_file(tmp_path / "scan.csv", "scan", 0.172, 27.2, 24.1, 100000),
            run_file(tmp_path / "rtree.csv", "rtree", 0.344, 27.5, 24.0, 300)]


def test_compare_names_the_reference_speeds_up_and_says_what_it_found(tmp_path):
    done = run_cli("compare", *three_runs(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    print(lines[0])
    assert lines[0].startswith("reference: scan · clustered-100k (100k) (the scan run)"), lines[0]
    assert "above 1 = faster" in lines[0]
    assert any("x faster: reference / run" in ln for ln in lines[:4]), lines[:4]
    cells = {(ln.split()[0], ln.split()[1]): ln.split()[-3:] for ln in lines if " · " in ln and ln[:1].islower()
             and not ln.startswith("reference")}
    assert cells[("query_ms", "octree")] == ["4.00", "4.00", "4.00"]  # the scan's 0.172 ms over 0.043
    assert cells[("query_ms", "rtree")] == ["0.500", "0.500", "0.500"]
    assert cells[("candidates", "octree")] == ["3448", "3448", "3448"]  # 100,000 / 29: not 0.00
    assert cells[("query_ms", "scan")] == ["1.00", "1.00", "1.00"]
    verdict = next(ln for ln in lines if ln.startswith("octree answers"))
    print(verdict)
    for words in ("4.00x faster than the scan", "29 candidates a frame against 100,000", "the frame is 4% faster",
                  "drawing is 92% of it on this renderer (llvmpipe)"):
        assert words in verdict, verdict
    assert "rtree answers queries 2.00x slower than the scan" in done.stdout
    assert done.stderr == ""


def test_csv_and_markdown_say_the_direction_and_keep_stdout_a_table(tmp_path):
    runs = three_runs(tmp_path)
    done = run_cli("compare", *runs, "--format", "csv")
    assert done.returncode == 0, done.stderr
    table = list(csv.DictReader(done.stdout.splitlines()))
    assert list(table[0])[-4:] == ["x_faster_median", "x_faster_p95", "x_faster_p99", "x_faster_max"]
    octree = next(r for r in table if r["column"] == "candidates" and r["run"].startswith("octree"))
    assert octree["x_faster_median"] == "3448"
    assert done.stderr.startswith("reference: scan · clustered-100k (100k)") and "octree answers" in done.stderr
    done = run_cli("compare", *runs, "--format", "markdown", "--stages-only")
    assert done.returncode == 0, done.stderr
    head = done.stdout.splitlines()[0]
    print(head)
    assert head.endswith("| x faster (median) | x faster (p95) | x faster (p99) | x faster (max) |")
    assert "reference: scan" in done.stderr


def test_without_a_scan_run_the_first_is_the_reference_and_the_warnings_stay(tmp_path):
    a = run_file(tmp_path / "octree.csv", "octree", 0.05, 20.0, 18.0, 40)
    b = run_file(tmp_path / "hashgrid.csv", "hashgrid", 0.025, 20.0, 18.0, 50, scene="uniform-100k")
    from viewer.recording import Recorder, build_meta

    empty = tmp_path / "empty.csv"
    Recorder(empty, build_meta(index="brute", headless=True)).close()
    done = run_cli("compare", a, b, empty)
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    print(first)
    assert first.startswith("reference: octree · clustered-100k (100k) (no scan run: the first)")
    assert "hashgrid answers queries 2.00x faster than the reference" in done.stdout
    assert "the frame is as fast" in done.stdout
    warnings = [ln for ln in done.stderr.splitlines() if "warning" in ln]
    assert len(warnings) == 2, done.stderr
    assert any("different scenes" in w for w in warnings) and any("no rows" in w for w in warnings)


def test_ratios_keep_three_significant_digits():
    from viewer.reports.compare import format_ratio

    assert [format_ratio(v) for v in (4.0, 0.25, 12.0, 100000 / 29, 29 / 100000, 1.0, 0.0, None)] == [
        "4.00", "0.250", "12.0", "3448", "2.90e-04", "1.00", "0", "-"]
