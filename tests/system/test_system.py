"""The promises of the GL-free modules about the machine, files and timings: the machine line printed beside
every figure (:mod:`~viewer.system.machine`), whether a window can open (:mod:`~viewer.system.display`), output files
written whole or refused up front (:mod:`~viewer.files.output`), and the balanced turn orders
(:mod:`~viewer.timing.interleave`)."""

from __future__ import annotations

import os
import platform
import socket
import sys
from collections import Counter
from pathlib import Path

import pytest

from viewer.errors import UserError
from viewer.files import output
from viewer.system import display, machine
from viewer.timing import interleave

# --------------------------------------------------------------------------- machine


def _fake_cache(root: Path, index: int, level: int, kind: str, size: str) -> None:
    d = root / f"index{index}"
    d.mkdir(parents=True)
    (d / "level").write_text(f"{level}\n")
    (d / "type").write_text(f"{kind}\n")
    (d / "size").write_text(f"{size}\n")


def test_caches_read_data_and_unified_levels_in_bytes(tmp_path, monkeypatch):
    _fake_cache(tmp_path, 0, 1, "Data", "48K")
    _fake_cache(tmp_path, 1, 1, "Instruction", "32K")
    _fake_cache(tmp_path, 2, 2, "Unified", "1024K")
    _fake_cache(tmp_path, 3, 3, "Unified", "32M")
    (tmp_path / "index4").mkdir()  # a level sysfs does not describe is passed over
    monkeypatch.setattr(machine, "_CACHE_DIR", tmp_path)
    assert machine.caches() == {"L1d": 48 << 10, "L2": 1024 << 10, "L3": 32 << 20}


def test_caches_are_empty_where_sysfs_says_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(machine, "_CACHE_DIR", tmp_path / "missing")
    assert machine.caches() == {}


def test_cpu_line_names_model_target_and_outer_caches(monkeypatch):
    monkeypatch.setattr(machine, "cpu_model", lambda: "Some CPU 9000")
    monkeypatch.setattr(machine, "cpu_target", lambda: "znver9")
    monkeypatch.setattr(machine, "caches", lambda: {"L1d": 48 << 10, "L2": 1 << 20, "L3": 96 << 20})
    line = machine.cpu()
    assert line.startswith("Some CPU 9000")
    assert "znver9" in line and "L2 1 MiB" in line and "L3 96 MiB" in line
    assert "L1d" not in line  # only the caches a hot loop over flat arrays feels
    monkeypatch.setattr(machine, "cpu_target", lambda: "")
    monkeypatch.setattr(machine, "caches", lambda: {})
    assert machine.cpu() == "Some CPU 9000"  # nothing known: the model alone, no empty brackets


def test_cpu_model_falls_back_to_platform_without_cpuinfo(monkeypatch):
    def no_file(*args, **kwargs):
        raise OSError("no /proc here")

    monkeypatch.setattr(machine, "open", no_file, raising=False)
    assert machine.cpu_model() == (platform.processor() or platform.machine())


def test_cpu_model_is_the_model_name_in_cpuinfo():
    try:
        with open("/proc/cpuinfo") as fh:
            names = [ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")]
    except OSError:
        names = []
    if not names:
        pytest.skip("no model name in /proc/cpuinfo on this machine")
    assert machine.cpu_model() == names[0]


def test_machine_line_has_the_cpu_model_and_the_fields_bench_prints():
    import numba

    from viewer.bench.report import machine_line

    where = machine.machine()
    assert set(where) == {"host", "cpu", "cores", "threads"}
    assert where["host"] == socket.gethostname()
    assert where["cpu"].startswith(machine.cpu_model())
    assert where["cores"] == (os.cpu_count() or 0)
    assert where["threads"] == numba.get_num_threads() >= 1
    line = machine_line(where)
    assert machine.cpu_model() in line and where["host"] in line and f"{where['cores']} logical CPUs" in line


def test_system_names_the_operating_system():
    assert platform.system() in machine.system()


# --------------------------------------------------------------------------- display


@pytest.mark.parametrize("value, want", [
    (":0", ("", 0)),
    (":1.2", ("", 1)),
    ("unix:3", ("", 3)),
    ("unix/:4", ("", 4)),
    ("localhost:10.0", ("localhost", 10)),
    ("tcp/example.org:7", ("example.org", 7)),
    (" :5 ", ("", 5)),
])
def test_parse_display_splits_host_and_number(value, want):
    assert display.parse_display(value) == want


@pytest.mark.parametrize("value", ["", "0", "host", ":x", "host:1.y", "a:b:c"])
def test_parse_display_refuses_what_is_no_display_name(value):
    assert display.parse_display(value) is None


def test_display_unset_is_a_problem(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    why = display.display_problem()
    assert why is not None and "$DISPLAY is not set" in why
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    why = display.display_problem()
    assert why is not None and "Wayland" in why and "X" in why


def test_display_that_is_no_display_name_is_named(monkeypatch):
    monkeypatch.setenv("DISPLAY", "not-a-display")
    why = display.display_problem()
    assert why is not None and "'not-a-display'" in why and "[host]:N" in why


def _abstract_x_socket(listen: bool) -> tuple[socket.socket, int]:
    """A Unix socket bound at the abstract address of a free local display number (listening or not)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("abstract Unix sockets are Linux's")
    for num in range(4242, 4342):
        if os.path.exists(f"/tmp/.X11-unix/X{num}"):
            continue
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.bind(f"\0/tmp/.X11-unix/X{num}")
        except OSError:
            s.close()
            continue
        if listen:
            s.listen(1)
        return s, num
    pytest.skip("no free display number")


def test_local_display_that_answers_is_no_problem():
    s, num = _abstract_x_socket(listen=True)
    with s:
        assert display.display_problem(display=f":{num}", timeout=1.0) is None
        assert display.display_problem(display=f"unix:{num}.0", timeout=1.0) is None


def test_dead_local_display_names_the_value_and_the_socket(monkeypatch):
    s, num = _abstract_x_socket(listen=False)  # bound, not listening: connecting is refused
    with s:
        monkeypatch.setenv("DISPLAY", f":{num}")
        why = display.display_problem(timeout=1.0)
    assert why is not None and f"DISPLAY=':{num}'" in why and f"/tmp/.X11-unix/X{num}" in why


def _tcp_port(listen: bool) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    if listen:
        s.listen(1)
    if s.getsockname()[1] < 6000:
        s.close()
        pytest.skip("the system gave a port below X's 6000")
    return s


def test_remote_display_that_answers_is_no_problem():
    with _tcp_port(listen=True) as s:
        num = s.getsockname()[1] - 6000
        assert display.display_problem(display=f"127.0.0.1:{num}", timeout=1.0) is None


def test_dead_remote_display_names_host_and_port():
    with _tcp_port(listen=False) as s:
        port = s.getsockname()[1]
        value = f"127.0.0.1:{port - 6000}"
        why = display.display_problem(display=value, timeout=1.0)
    assert why is not None and repr(value) in why and "127.0.0.1" in why and f"port {port}" in why


def test_toolkit_errors_about_the_display_are_explained_and_others_are_not():
    why = display.display_problem(RuntimeError("Cannot connect to \":7\""), display=":7")
    assert why is not None and "':7'" in why and "Cannot connect" in why
    assert display.display_problem(ValueError("shader failed to compile"), display=":7") is None


# --------------------------------------------------------------------------- output


def test_replace_atomically_writes_and_overwrites_leaving_nothing_beside(tmp_path):
    target = tmp_path / "out.bin"
    output.replace_atomically(target, b"first")
    output.replace_atomically(str(target), b"second, longer")
    assert target.read_bytes() == b"second, longer"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_replace_atomically_shows_the_old_file_whole_until_the_new_one_is(tmp_path, monkeypatch):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old contents")
    new = b"x" * 100_000
    real_replace = os.replace
    seen = {}

    def spy(src, dst):
        seen["target"] = Path(dst).read_bytes()
        seen["staged"] = Path(src).read_bytes()
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    output.replace_atomically(target, new)
    assert seen == {"target": b"old contents", "staged": new}
    assert target.read_bytes() == new


def test_replace_atomically_failure_keeps_the_old_file_and_removes_the_temporary(tmp_path, monkeypatch):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old contents")

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="No space"):
        output.replace_atomically(target, b"new contents")
    assert target.read_bytes() == b"old contents"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_replace_atomically_onto_a_directory_raises_and_leaves_it(tmp_path):
    d = tmp_path / "adir"
    (d / "inner").mkdir(parents=True)
    with pytest.raises(OSError):
        output.replace_atomically(d, b"data")
    assert d.is_dir() and (d / "inner").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir"]


@pytest.fixture
def unwritable_dir(tmp_path):
    """A directory no file can be created in: read-only by its mode, or (for root, whom modes do not stop)
    /proc."""
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o555)
    try:
        probe = d / "probe"
        probe.touch()
    except OSError:
        yield d
    else:
        probe.unlink()
        if not (sys.platform.startswith("linux") and Path("/proc").is_dir()):
            pytest.skip("running as root with no directory root cannot write in")
        yield Path("/proc")
    finally:
        d.chmod(0o755)


def _refused(path, what=None, **kwargs) -> str:
    with pytest.raises(UserError) as info:
        output.check_output_file(path, what, **kwargs)
    return str(info.value)


def test_check_output_file_accepts_a_writable_place_and_leaves_no_probe(tmp_path):
    got = output.check_output_file(str(tmp_path / "shot.png"), "--screenshot", suffixes=(".png",))
    assert got == tmp_path / "shot.png" and isinstance(got, Path)
    assert list(tmp_path.iterdir()) == []


def test_check_output_file_refuses_with_the_flag_and_the_path(tmp_path, unwritable_dir):
    cases = {
        "a directory": tmp_path,
        "a name ending in a separator": f"{tmp_path / 'new'}/",
        "a missing folder": tmp_path / "missing" / "x.png",
        "an unwritable directory": unwritable_dir / "x.png",
    }
    for why, path in cases.items():
        msg = _refused(path, "--screenshot")
        assert msg.startswith("--screenshot ") and str(path).rstrip("/") in msg, (why, msg)
    assert "empty" in _refused("  ", "--figure")
    assert "must end in .npz" in _refused(tmp_path / "x.csv", "-o", suffixes=(".npz",))


def test_check_output_file_refuses_a_device(tmp_path):
    if not Path("/dev/null").exists():
        pytest.skip("no /dev/null")
    assert "not a regular file" in _refused("/dev/null", "-o")
    assert Path("/dev/null").exists()


def test_prepare_out_dir_creates_nested_folders_only_when_asked(tmp_path):
    d = tmp_path / "a" / "b" / "c"
    assert output.prepare_out_dir(d, create=False) == d and not (tmp_path / "a").exists()
    assert output.prepare_out_dir(str(d)) == d and d.is_dir()
    assert output.prepare_out_dir(d) == d  # an existing directory is fine


def test_prepare_out_dir_refuses_files_in_the_way_and_unwritable_ancestors(tmp_path, unwritable_dir):
    f = tmp_path / "file"
    f.write_text("x")
    for d in (f, f / "below", unwritable_dir / "out" / "run"):
        with pytest.raises(UserError) as info:
            output.prepare_out_dir(d)
        assert str(d) in str(info.value)
        assert not d.exists() or d == f


# --------------------------------------------------------------------------- interleave


@pytest.mark.parametrize("k", range(0, 10))
def test_balanced_orders_make_each_item_follow_every_other_equally_often(k):
    rows = interleave.balanced_orders(k)
    assert all(sorted(r) == list(range(k)) for r in rows)
    assert len(rows) == (1 if k <= 1 else k if k % 2 == 0 else 2 * k)  # Williams: k rows, 2k for odd k
    follows = Counter((a, b) for r in rows for a, b in zip(r, r[1:]))
    assert set(follows) == {(a, b) for a in range(k) for b in range(k) if a != b}
    assert len(set(follows.values())) <= 1
    places = Counter((item, place) for r in rows for place, item in enumerate(r))
    assert set(places) == {(i, p) for i in range(k) for p in range(k)}
    assert len(set(places.values())) <= 1
