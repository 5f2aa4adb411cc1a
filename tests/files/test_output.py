"""Output files (:mod:`viewer.files.output`) written whole or refused up front: an atomic replace that shows the
old file whole until the new one is and leaves nothing beside it; an output place checked before any work (a flag
and a path named, no probe left behind), out directories made only when asked."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from viewer.errors import UserError
from viewer.files import output


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
