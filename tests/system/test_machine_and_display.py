"""What the machine tells: the machine line printed beside every figure (:mod:`~viewer.system.machine`) and
whether a window can open (:mod:`~viewer.system.display`)."""

from __future__ import annotations

import os
import platform
import socket
import sys
from pathlib import Path

import pytest

from viewer.system import display, machine

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
