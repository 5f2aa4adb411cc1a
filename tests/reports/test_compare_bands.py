"""``viewer compare`` and ``viewer plot`` with the LOD band columns (schema version 6): CSV rows in,
the printed rows out. The band rows appear for recordings that have them and say something (a scene with LOD
switches or HLOD), never for older recordings or scenes without ranges, whose output is unchanged."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from viewer.recording.schema import SCHEMA_VERSION, columns_for
from viewer.reports.compare import BAND_COUNTS, band_columns, compare_runs
from viewer.recording.reader import read_runs

from tests.support.cli import run_cli

FRAMES = 11


def write_run(path, version, index, bands=None, seed=0):
    """A recording without metadata (its header is exactly schema ``version``'s columns): ``FRAMES`` frames
    with counts from ``seed``; ``bands``: (FRAMES, 6) values of band0..band3, band_changes, proxies (None:
    band0 = drawn, the rest 0, as a scene without ranges records)."""
    rng = np.random.default_rng(seed)
    names = [c.name for c in columns_for(version)]
    drawn = rng.integers(10, 100, FRAMES)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(names)
        for k in range(FRAMES):
            row = {}
            for c in columns_for(version):
                if c.kind == "str":
                    row[c.name] = {"index": index, "culling": "cpu"}.get(c.name, "x")
                elif c.kind == "int":
                    row[c.name] = int(rng.integers(0, 1000))
                else:
                    row[c.name] = f"{rng.uniform(0.01, 2.0):.4f}"
            row.update(frame=k, view=0, objects=5000, drawn=int(drawn[k]), t=f"{k / 60:.4f}", dt="0.0167")
            if "band0" in names:
                vals = [int(drawn[k]), 0, 0, 0, 0, 0] if bands is None else [int(v) for v in bands[k]]
                row.update(zip(BAND_COUNTS, vals))
            w.writerow([row[n] for n in names])
    return path


def band_table(rng):
    b = rng.integers(0, 50, (FRAMES, 6))
    b[:, 4] = rng.integers(0, 9, FRAMES)
    return b


def parse_text(out: str) -> dict[tuple[str, str], list[str]]:
    """The text table's rows by (column, run): the cells after the run's label."""
    rows = {}
    for line in out.splitlines():
        cells = line.split()
        if len(cells) >= 10 and cells[0] not in ("column", "reference:") and not set(line) <= set("- "):
            rows[(cells[0], cells[1])] = cells[2:]
    return rows


def test_band_columns_are_declared_once():
    assert SCHEMA_VERSION >= 6
    assert BAND_COUNTS == ("band0", "band1", "band2", "band3", "band_changes", "proxies")


def test_compare_prints_band_rows(tmp_path, capsys):
    rng = np.random.default_rng(5)
    ba, bb = band_table(rng), band_table(rng)
    a = write_run(tmp_path / "scan.csv", 6, "scan", ba, seed=1)
    b = write_run(tmp_path / "octree.csv", 6, "octree", bb, seed=2)
    assert run_cli("compare", a, b).returncode == 0
    rows = parse_text(capsys.readouterr().out)
    for j, col in enumerate(BAND_COUNTS):
        for label, vals in (("scan", ba[:, j]), ("octree", bb[:, j])):
            cells = rows[(col, label)]
            assert cells[0] == str(FRAMES)
            want = [f"{np.percentile(vals, q):.1f}" for q in (50, 95, 99, 100)]
            assert cells[1:5] == want, (col, label)
        # ratios: the scan's (the reference's) statistic over the run's
        med_a, med_b = np.median(ba[:, j]), np.median(bb[:, j])
        ratio = rows[(col, "octree")][5]
        assert ratio == ("-" if med_b == 0 else f"{med_a / med_b:#.3g}".rstrip(".")) or float(ratio) == pytest.approx(
            med_a / med_b, rel=5e-3)
        assert rows[(col, "scan")][5] in ("1.00", "-")
    # the band rows come after the other counts, in file order
    order = [c for c, _ in rows if c in BAND_COUNTS or c == "drawn"]
    assert order == ["drawn", "drawn", *[c for c in BAND_COUNTS for _ in range(2)]]


def test_compare_csv_format_carries_band_rows(tmp_path, capsys):
    rng = np.random.default_rng(6)
    ba = band_table(rng)
    a = write_run(tmp_path / "a.csv", 6, "octree", ba, seed=3)
    assert run_cli("compare", "--format", "csv", a).returncode == 0
    got = list(csv.DictReader(capsys.readouterr().out.splitlines()))
    by = {r["column"]: r for r in got}
    for j, col in enumerate(BAND_COUNTS):
        assert float(by[col]["median"]) == pytest.approx(np.median(ba[:, j]))
        assert float(by[col]["max"]) == ba[:, j].max()


@pytest.mark.parametrize("older", [5, 4, 1])
def test_older_recordings_compare_unchanged(tmp_path, capsys, older):
    """A schema-5 (or older) recording has no band rows, alone or beside a schema-6 one (a column some run
    lacks is left out); its output is what it was before the band columns existed."""
    a = write_run(tmp_path / "old.csv", older, "scan", seed=4)
    b = write_run(tmp_path / "new.csv", 6, "octree", band_table(np.random.default_rng(1)), seed=5)
    assert run_cli("compare", a).returncode == 0
    alone = parse_text(capsys.readouterr().out)
    assert not any(c in BAND_COUNTS for c, _ in alone)
    runs = read_runs([a])
    from viewer.frame.stages import TIMED_COLUMNS
    from viewer.reports.compare import COUNTS

    # the default columns are the stage times and the counts, as before the band columns
    want = [c for c in (*TIMED_COLUMNS, *COUNTS) if c in runs[0].columns]
    assert list(dict.fromkeys(r.column for r in compare_runs(runs, warn=None))) == want
    assert run_cli("compare", a, b).returncode == 0
    mixed = parse_text(capsys.readouterr().out)
    assert not any(c in BAND_COUNTS for c, _ in mixed)


def test_scene_without_ranges_shows_no_band_rows(tmp_path, capsys):
    """Schema 6, but band0 = drawn and the rest 0 (a scene without LOD or HLOD): the rows would repeat drawn."""
    a = write_run(tmp_path / "a.csv", 6, "scan", None, seed=7)
    b = write_run(tmp_path / "b.csv", 6, "octree", None, seed=8)
    runs = read_runs([a, b])
    assert band_columns(runs) == ()
    assert run_cli("compare", a, b).returncode == 0
    rows = parse_text(capsys.readouterr().out)
    assert ("drawn", "a") in rows and not any(c in BAND_COUNTS for c, _ in rows)
    # one run with bands is enough to show them for both
    c = write_run(tmp_path / "c.csv", 6, "hashgrid", band_table(np.random.default_rng(2)), seed=9)
    assert band_columns(read_runs([a, c])) == BAND_COUNTS


def test_stages_only_leaves_bands_out(tmp_path, capsys):
    a = write_run(tmp_path / "a.csv", 6, "scan", band_table(np.random.default_rng(3)), seed=1)
    assert run_cli("compare", "--stages-only", a).returncode == 0
    rows = parse_text(capsys.readouterr().out)
    assert rows and all(c.endswith("_ms") for c, _ in rows)


def test_plot_draws_band_lines(tmp_path):
    """The counts panel gets a line per band column (not band_changes) and run when the runs have bands; none
    beside a schema-5 run or for a scene without ranges."""
    from PIL import Image

    from viewer.reports.plot import count_series, plot_runs

    a = write_run(tmp_path / "a.csv", 6, "scan", band_table(np.random.default_rng(4)), seed=1)
    b = write_run(tmp_path / "b.csv", 5, "octree", seed=2)
    c = write_run(tmp_path / "c.csv", 6, "octree", None, seed=3)
    plain = ["candidates", "visible", "drawn"]
    assert [col for col, _ in count_series(read_runs([a]))] == [*plain, "band0", "band1", "band2", "band3", "proxies"]
    assert [col for col, _ in count_series(read_runs([a, b]))] == plain
    assert [col for col, _ in count_series(read_runs([c]))] == plain
    styles = [ls for _, ls in count_series(read_runs([a]))]
    assert len(set(map(str, styles))) == len(styles)  # each line its own style
    out = plot_runs(read_runs([a, c]), tmp_path / "f.png", width=800, height=800, warn=None)
    with Image.open(out) as im:
        assert im.size == (800, 800)
