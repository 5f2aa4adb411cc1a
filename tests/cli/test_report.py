"""``viewer report``: a page from recordings, bench runs and sweeps in any mix, written whole; ``--markdown`` a bench
run's headline table; every hostile input refused with one line naming it, nothing written."""

from __future__ import annotations

import csv
import json
import shutil

import pytest

from tests.support.cli import ROOT, files_under, refused, run_cli
from tests.support.recordings import edit, record, record_measured

#: a committed bench run (format version 1: no raw samples), small enough to copy
COMMITTED = ROOT / "viewer" / "bench" / "results" / "baseline-1e5-1e6.json"


def _bench(t):
    shutil.copy(COMMITTED, t / "bench.json")
    return t / "bench.json"


def _sweep(t):
    """A sweep's CSV made up from the committed bench's rows: the task's columns, then the bench's."""
    rows = json.loads(COMMITTED.read_text())["rows"][:6]
    (t / "s").mkdir()
    with open(t / "s" / "sweep.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, ["task", "status", "reason", "host", "cpu", "cores", *rows[0]])
        w.writeheader()
        for k, r in enumerate(rows):
            w.writerow({"task": f"t{k // 3}", "status": "ok", "reason": "", "host": "vm", "cpu": "Test CPU",
                        "cores": 2, **{c: ("" if v is None else v) for c, v in r.items()}})
    return t / "s"


def _no_scan(t):
    meta = json.loads(COMMITTED.read_text())
    meta["rows"] = [r for r in meta["rows"] if r["index"] != "scan"]
    (t / "noscan.json").write_text(json.dumps(meta))
    return t / "noscan.json"


def test_a_page_from_a_bench_run_a_sweep_and_recordings_at_once(tmp_path):
    runs = [record_measured(tmp_path / "runs" / f"{ix}.csv", index=ix) for ix in ("scan", "octree")]
    done = run_cli("report", _bench(tmp_path), _sweep(tmp_path), *runs, "-o", tmp_path / "r.html")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "r.html").read_text()
    assert "octree answers queries" in text  # the sentence viewer compare prints
    assert 'id="bench-table-0"' in text and 'id="sweep-table-0"' in text and 'id="recordings-table"' in text
    assert text.count("Pareto front") >= 2 and "no raw samples" in text.lower()
    assert "opens offline" in done.stderr


def test_a_report_is_replaced_only_with_force(tmp_path):
    out = tmp_path / "r.html"
    assert run_cli("report", _bench(tmp_path), "-o", out).returncode == 0
    first = out.read_text()
    assert run_cli("report", tmp_path / "bench.json", "-o", out, "--title", "again", "--force").returncode == 0
    assert out.read_text() != first and "<title>again</title>" in out.read_text()


def test_markdown_prints_the_headline_table_alone_on_stdout(tmp_path):
    done = run_cli("report", "--markdown", COMMITTED)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("| index | uniform |") and done.stdout.count("\n") == 7
    assert list(tmp_path.iterdir()) == []


#: every hostile input of ``viewer report``: (id, arguments with {t} the test's folder, made by setup(t) first,
#: words its one error line holds)
REFUSED = [
    pytest.param(["report", "{t}/nowhere.csv", "-o", "{t}/r.html"], None, ["nowhere.csv", "no such file"],
                 id="input-missing"),
    pytest.param(["report", "{t}/notes.txt", "-o", "{t}/r.html"], lambda t: (t / "notes.txt").write_text("hi"),
                 ["notes.txt", "not a recording", "bench run", "sweep"], id="input-of-no-kind"),
    pytest.param(["report", "{t}/empty", "-o", "{t}/r.html"], lambda t: (t / "empty").mkdir(),
                 ["empty", "not a recording"], id="folder-of-no-result"),
    pytest.param(["report", "{t}/bench.json", "-o", "{t}/r.html"], lambda t: (t / "bench.json").write_text("{oops"),
                 ["bench.json", "not a readable bench.json"], id="bench-json-broken"),
    pytest.param(["report", "{t}/bench.json", "-o", "{t}/r.html"],
                 lambda t: (t / "bench.json").write_text('{"format": "something-else", "rows": []}'),
                 ["bench.json", "field 'format'"], id="bench-json-of-another-format"),
    pytest.param(["report", "{t}/run.csv", "-o", "{t}/r.html"],
                 lambda t: edit(record(t / "run.csv"), "query_ms", 4, "-5"), ["run.csv:6", "'query_ms'", "below zero"],
                 id="recording-bad-cell"),
    pytest.param(["report", "{t}/bench.json"], _bench, ["-o/--out", "--markdown"], id="no-output"),
    pytest.param(["report", "{t}/bench.json", "-o", "{t}/r.txt"], _bench, ["-o", "r.txt", ".html"],
                 id="output-not-html"),
    pytest.param(["report", "{t}/bench.json", "-o", "{t}"], _bench, ["-o", "is a directory"], id="output-a-folder"),
    pytest.param(["report", "{t}/bench.json", "-o", "{t}/r.html"],
                 lambda t: (_bench(t), (t / "r.html").write_text("earlier")), ["r.html", "exists already", "--force"],
                 id="output-exists"),
    pytest.param(["report", "--markdown", "{t}/bench.json", "-o", "{t}/r.html"], _bench, ["--markdown", "-o/--out"],
                 id="markdown-with-output"),
    pytest.param(["report", "--markdown", "{t}/run.csv"], lambda t: record(t / "run.csv"),
                 ["--markdown", "one bench run"], id="markdown-of-a-recording"),
    pytest.param(["report", "--markdown", "{t}/noscan.json"], _no_scan, ["noscan.json", "'scan'"],
                 id="markdown-without-the-scan"),
]


@pytest.mark.parametrize("args, setup, words", REFUSED)
def test_a_hostile_input_is_refused_with_one_line_and_nothing_written(tmp_path, args, setup, words):
    """Exit status 2, one error line naming the file or the flag, no traceback, nothing on stdout, no file
    written or changed."""
    if setup:
        setup(tmp_path)
    before = files_under(tmp_path)
    code, out, err = run_cli(*(a.format(t=tmp_path) for a in args), cwd=tmp_path)
    refused(code, err, *(w.format(t=tmp_path) for w in words))
    assert out == ""
    assert files_under(tmp_path) == before


def test_two_bench_runs_on_one_page_are_compared_as_compare_does(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    shutil.copy(COMMITTED, tmp_path / "a" / "bench.json")
    shutil.copy(COMMITTED, tmp_path / "b" / "bench.json")
    done = run_cli("report", tmp_path / "a", tmp_path / "b", "-o", tmp_path / "r.html")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "r.html").read_text()
    assert "Two bench runs compared" in text
    assert "medians only: untested" in text  # compare's words for runs without raw samples
    assert 'id="bench-table-0"' in text and 'id="bench-table-1"' in text
