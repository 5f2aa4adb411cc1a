"""What a bench writes says what it is and keeps its raw samples: bench.json validates against the JSON Schema the
package ships (format, version, provenance with the checkout's commit), and bench_samples.parquet holds every timed
query and moving frame, from which the table's medians are recomputed exactly."""

from __future__ import annotations

import csv
import json
import re
from importlib import resources

import numpy as np
import pytest

from tests.support.cli import run_cli


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "b"
    done = run_cli("bench", "--n", "1e3", "--scene", "uniform", "--index", "octree", "--queries", "6", "--rounds", "2",
                   "--updates", "0", "--frames", "3", "--dynamic", "0.1,0.5", "--no-plots", "--no-first-build",
                   "--out", out)
    assert done.returncode == 0, done.stderr
    return out


def test_bench_json_validates_against_the_shipped_schema_and_names_its_commit(bench_dir):
    import jsonschema

    schema = json.loads(resources.files("viewer.bench").joinpath("bench.schema.json").read_text())
    meta = json.loads((bench_dir / "bench.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(meta, schema)
    assert (meta["format"], meta["format_version"]) == ("viewdist-bench", 2)
    origin = meta["provenance"]
    assert re.fullmatch(r"[0-9a-f]{40}", origin["commit"]) and isinstance(origin["dirty"], bool)  # a checkout
    assert origin["machine"].startswith("machine: ") and origin["packages"]["numba"]
    broken = dict(meta, format_version="2")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_raw_samples_read_back_give_the_tables_medians(bench_dir):
    from viewer.bench.samples import SAMPLE_COLUMNS, read_samples

    t = read_samples(bench_dir)
    assert [f.name for f in t.schema] == [name for name, _ in SAMPLE_COLUMNS]
    s = t.to_pydict()
    rows = list(csv.DictReader(open(bench_dir / "bench.csv")))
    for row in rows:
        mine = [i for i in range(t.num_rows) if s["index"][i] == row["index"] and s["kind"][i] == "query"]
        assert len(mine) == 2 * 6  # rounds x queries
        assert {s["point_kind"][i] for i in mine} == {"at objects", "along the path"}
        us = np.array([s["us"][i] for i in mine])
        assert float(np.median(us)) == pytest.approx(float(row["query_median_us"]), rel=1e-9)
        for share, p in ((0.1, "10"), (0.5, "50")):
            frames = [s["us"][i] for i in range(t.num_rows)
                      if s["index"][i] == row["index"] and s["kind"][i] == "frame" and s["share"][i] == share]
            assert len(frames) == 3
            assert np.median(frames) / 1e3 == pytest.approx(float(row[f"dynamic_{p}pct_ms"]), rel=1e-9)
    floors = [i for i in range(t.num_rows) if s["kind"][i] == "scatter_floor"]
    assert len(floors) == 2 * 3 and {s["index"][i] for i in floors} == {""}  # the workload's, once


def test_the_update_phases_keep_their_samples_a_group_of_calls_each(tmp_path):
    """Removes, inserts and single moves in groups of 64 calls, each move_many call alone: the samples' calls
    weighted by their group sizes give back each phase's seconds in bench.csv."""
    from viewer.bench.samples import read_samples

    out = tmp_path / "b"
    assert run_cli("bench", "--n", "1e3", "--scene", "uniform", "--index", "octree", "--queries", "4", "--rounds", "1",
                   "--updates", "200", "--dynamic", "none", "--no-plots", "--no-first-build",
                   "--out", out).returncode == 0
    t = read_samples(out).to_pydict()
    row = next(r for r in csv.DictReader(open(out / "bench.csv")) if r["index"] == "octree")
    for phase, calls, seconds in (("remove", "removes", "remove_s"), ("insert", "inserts", "insert_s"),
                                  ("move", "moves", "move_s")):
        us = [u for u, k, ix in zip(t["us"], t["kind"], t["index"]) if k == phase and ix == "octree"]
        n = int(row[calls])
        sizes = [64] * (n // 64) + ([n % 64] if n % 64 else [])
        assert len(us) == len(sizes)
        assert sum(u * s for u, s in zip(us, sizes)) * 1e-6 == pytest.approx(float(row[seconds]), rel=0.05)
    assert [k for k, ix in zip(t["kind"], t["index"]) if ix == "octree"].count("move_many") >= 1
