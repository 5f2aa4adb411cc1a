"""viewer sweep against hostile conditions, each through the real command in a process of its own: a second
sweep into a running sweep's directory, a symbolic link where the sweep's temporary file goes, schedulers that
never answer or answer in HTTP, torn and hand-edited rows on resume. The refusals of a bad sweep file or flag are
one table in tests/cli/test_sweep.py."""

from __future__ import annotations

import csv
import fcntl
import io
import signal
import socket
import textwrap
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from viewer.sweep import columns, load_sweep  # noqa: E402
from viewer.sweep.results import AXIS_COLUMNS, REJECTED_NAME  # noqa: E402

from tests.support.cli import run_cli, run_process, start_process  # noqa: E402
from tests.support.cluster import local_cluster  # noqa: E402


def _sweep_file(tmp_path: Path, sizes=(1500,), scenes=("uniform",), indexes=("octree",), name="h") -> Path:
    p = tmp_path / f"{name}.toml"
    p.write_text(textwrap.dedent(f"""\
        format = "viewer-sweep"
        version = 1
        name = "{name}"
        indexes = {list(indexes)!r}
        [axes]
        scene = {list(scenes)!r}
        n = {list(sizes)!r}
        queries = [20]
        dynamic = ["none"]
        updates = [20]
        """).replace("'", '"'))
    return p


def _sweep(*args, timeout=120, cwd=None):
    """``viewer sweep ARGS`` in a process of its own (a sweep starts a cluster): (exit status, stdout, stderr)."""
    return run_process("sweep", *args, timeout=timeout, cwd=cwd)


def _one_error(r, *parts: str) -> None:
    """Exit 2, one line on stderr holding every one of ``parts``, no traceback."""
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    for part in parts:
        assert part in lines[0], (part, lines[0])


def _row(task, index: str, rows_in_task: int, status: str = "ok", **cells) -> dict:
    """A row as a sweep writes it (the task's key and axes, a machine, a few measurements)."""
    r = {c: "" for c in columns()}
    r.update({"task": task.key, **{AXIS_COLUMNS[k]: str(v) for k, v in task.params().items()},
              "status": status, "host": "elsewhere", "cpu": "cpu", "cores": "2", "threads": "1", "task_s": "0.5",
              "rows_in_task": str(rows_in_task), "index": index, "workload": f"{task.scene}-{task.n}"})
    if status == "ok":
        r.update({"query_median_us": "1.5", "speedup_vs_scan": "2.0", "build_s": "0.01"})
    r.update(cells)
    return r


def _csv_text(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns(), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _done_csv(sweep_path: Path) -> str:
    """A sweep CSV in which every task of the sweep is finished (skipped, so it has no measurements)."""
    rows = []
    for t in load_sweep(str(sweep_path)).tasks():
        rows += [_row(t, ix, len(t.indexes), status="skipped", reason="too large") for ix in t.indexes]
    return _csv_text(rows)


class _Peer:
    """A hostile 'scheduler' on 127.0.0.1: ``silent`` accepts and never answers; ``http`` answers every
    connection with an HTTP 400, as a web server (the Dask dashboard's port) does."""

    def __init__(self, mode: str):
        self.mode = mode
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)
            if self.mode == "http":
                threading.Thread(target=self._http, args=(c,), daemon=True).start()

    @staticmethod
    def _http(c: socket.socket):
        try:
            c.settimeout(10)
            c.recv(65536)
            c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        except OSError:
            pass

    def close(self):
        self.sock.close()
        for c in self.conns:
            c.close()


# ----------------------------------------------------------------------------- 2: one sweep per directory


def test_a_second_sweep_into_a_running_sweeps_directory_is_refused_naming_it_and_its_pid(tmp_path):
    p = _sweep_file(tmp_path, sizes=(1500, 3000, 6000, 12000), scenes=("uniform", "clustered"))
    out = tmp_path / "out"
    first = start_process("sweep", p, "-o", out, "--no-plots", "-q")
    try:
        lock = out / "sweep.lock"
        end = time.monotonic() + 120
        while time.monotonic() < end and first.poll() is None:
            if lock.exists() and lock.read_text().strip() == str(first.pid):
                break
            time.sleep(0.1)
        assert first.poll() is None, first.stderr.read()[-2000:]
        second = _sweep(p, "-o", out, "--no-plots", "-q", timeout=120)
        _one_error(second, str(out), f"pid {first.pid}", "another sweep is running")
        # let the first one record a task, then interrupt it: nothing it wrote was lost to the second
        csv_path = out / "sweep.csv"
        while time.monotonic() < end + 120 and first.poll() is None:
            if csv_path.exists() and len(_rows(csv_path)) >= 1:
                break
            time.sleep(0.2)
    finally:
        if first.poll() is None:
            first.send_signal(signal.SIGINT)
        first.wait(timeout=60)
    assert first.returncode in (0, 130), first.stderr.read()[-2000:]
    rows = _rows(out / "sweep.csv")
    assert rows and all(r["status"] == "ok" for r in rows)
    for key in {r["task"] for r in rows}:
        task = [r for r in rows if r["task"] == key]
        assert len(task) == int(task[0]["rows_in_task"])
    # the lock went with the first sweep
    with open(out / "sweep.lock") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)


# ----------------------------------------------------------------------------- 3: symbolic links


def test_a_symlinked_temporary_file_is_never_written_through(tmp_path):
    p = _sweep_file(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (out / "sweep.csv.tmp").symlink_to(victim)
    # every task done, then a torn row: the resume rewrites sweep.csv
    (out / "sweep.csv").write_text(_done_csv(p) + "0123456789ab,uniform,15")
    r = _sweep(p, "-o", out, "--no-plots", "-q")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "1 already done" in r.stdout and "line 3" in r.stderr
    assert victim.read_text() == "precious\n"
    assert not (out / "sweep.csv").is_symlink() and len(_rows(out / "sweep.csv")) == 1
    assert not list(out.glob(".sweep.csv.*"))  # no temporary file left behind
    assert (out / REJECTED_NAME).read_text().endswith("0123456789ab,uniform,15\n")


# ----------------------------------------------------------------------------- 5, 6: schedulers


def test_a_scheduler_that_accepts_and_never_answers_gives_up_within_the_connect_timeout(tmp_path):
    peer = _Peer("silent")
    try:
        out = tmp_path / "out"
        r = _sweep(_sweep_file(tmp_path), "-o", out, "--scheduler", f"tcp://127.0.0.1:{peer.port}",
                   "--connect-timeout", "1", timeout=90)
    finally:
        peer.close()
    _one_error(r, f"--scheduler tcp://127.0.0.1:{peer.port}", "no Dask scheduler answered within 1 s")
    assert not out.exists()


def test_a_scheduler_address_that_is_an_http_server_is_refused(tmp_path):
    peer = _Peer("http")
    try:
        out = tmp_path / "out"
        r = _sweep(_sweep_file(tmp_path), "-o", out, "--scheduler", f"127.0.0.1:{peer.port}",
                   "--connect-timeout", "5", timeout=90)
    finally:
        peer.close()
    _one_error(r, f"--scheduler tcp://127.0.0.1:{peer.port}", "an HTTP server answered")
    assert not out.exists()


def test_a_real_scheduler_passes_the_check(tmp_path):
    """The handshake check speaks Dask's own protocol: a real scheduler (no workers needed, since every task is
    already done) passes it."""
    from dask.distributed import LocalCluster

    p = _sweep_file(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "sweep.csv").write_text(_done_csv(p))
    # the scheduler's HTTP server on any free port (by default 8787, which warns when another test's cluster
    # holds it)
    with LocalCluster(n_workers=0, processes=False, protocol="tcp://", host="127.0.0.1", dashboard_address=None,
                      scheduler_kwargs={"dashboard_address": ":0"}) as cluster:
        r = _sweep(p, "-o", out, "--scheduler", cluster.scheduler_address, "--connect-timeout", "20", "--no-plots",
                   timeout=90)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "1 already done" in r.stdout


# ----------------------------------------------------------------------------- 6, 7: resuming


def test_resume_keeps_good_rows_and_measures_again_torn_and_hand_edited_tasks(tmp_path, monkeypatch):
    local_cluster(monkeypatch, processes=False)  # what a resume keeps is the point, not the cluster's processes
    p = _sweep_file(tmp_path, sizes=(1500, 1600, 1700))
    good, torn, edited = load_sweep(str(p)).tasks()
    labels = ("scan", "brute", "octree")  # the bench adds its baseline and brute force
    rows = [_row(good, ix, 3) for ix in labels]
    text = _csv_text(rows + [_row(torn, ix, 3) for ix in labels] + [_row(edited, ix, 3) for ix in labels])
    lines = text.splitlines(keepends=True)
    # line 6 (torn's second row) cut short by a crash; line 9 (edited's last row) hand-edited
    lines[5] = ",".join(lines[5].split(",")[:9]) + "\n"
    lines[8] = lines[8].replace(",3,", ",three,", 1)
    assert ",three," in lines[8]
    out = tmp_path / "out"
    out.mkdir()
    csv_path = out / "sweep.csv"
    csv_path.write_text("".join(lines))
    before = csv_path.read_bytes()

    # --dry-run reads, names the rows, and changes nothing
    dry = run_cli("sweep", p, "-o", out, "--dry-run")
    assert dry.returncode == 0, dry.stderr[-2000:]
    assert "line 6 does not parse" in dry.stderr and "line 9 does not parse" in dry.stderr
    status = {ln.split()[0]: ln.split()[-1] for ln in dry.stdout.splitlines() if "GiB" in ln}
    assert (status[good.key], status[torn.key], status[edited.key]) == ("CSV)", "run", "run")
    assert csv_path.read_bytes() == before

    r = run_cli("sweep", p, "-o", out, "--no-plots", "-q")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and "TypeError" not in r.stderr
    assert "2 measured now, 1 already done" in r.stdout
    assert "line 6 does not parse" in r.stderr and f"task {torn.key} will be measured again" in r.stderr
    assert "rows_in_task 'three'" in r.stderr and f"task {edited.key} will be measured again" in r.stderr
    after = _rows(csv_path)
    assert after[:3] == [dict(r) for r in rows]  # the good task untouched, not measured again
    for t in (torn, edited):
        again = [r for r in after if r["task"] == t.key]
        assert {r["index"] for r in again} == set(labels) and all(r["host"] != "elsewhere" for r in again)
    # the rows set aside are kept, as they were
    kept = (out / REJECTED_NAME).read_text()
    assert lines[5] in kept and lines[8] in kept


def test_every_share_a_sweep_measures_has_its_columns(tmp_path, monkeypatch):
    """A sweep's dynamic axis asks for shares the bench's defaults do not have (5%): the sweep CSV carries
    their columns, filled ("0" is refused as the bench refuses it: tests/cli/test_sweep.py)."""
    import csv as _csv

    local_cluster(monkeypatch, processes=False)
    f = _sweep_file(tmp_path)
    f.write_text(f.read_text().replace('dynamic = ["none"]', 'dynamic = ["0.05"]\nframes = [2]'))
    out = tmp_path / "out"
    r = run_cli("sweep", f, "-o", out, "--workers", 1, "--no-plots")
    assert r.returncode == 0, r.stderr[-2000:]
    rows = list(_csv.DictReader((out / "sweep.csv").open()))
    assert rows and all(float(row["dynamic_5pct_ms"]) > 0 for row in rows if row["status"] == "ok")
