"""A kernel cache whose files were cut in half, emptied, overwritten with garbage or changed in the middle: the command
still runs and answers right (exit 0, no traceback), says so in one line naming a damaged file, compiles those kernels
again and rewrites their files sealed, so the next run loads them and says nothing. A file is read only through its
seal, so a damaged one is never unpickled (viewer.kernels.damaged_cache)."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import pytest

from tests.support.cli import process_env, run_process
from viewer.kernels.compile import HEADER
from viewer.kernels.damaged_cache import DamagedCacheFile, seal, unseal

#: a tiny moving world: soak compiles only the movers', the events' and brute force's kernels
RECIPE = 'generator = "uniform"\nn = 2000\nworld = 1000.0\n[motion]\nshare = 0.1\n'


def _soak(folder: Path, cache: Path):
    """``viewer soak`` of :data:`RECIPE` (``folder/mv.toml``) in a fresh process whose kernel cache is ``cache``."""
    (folder / "mv.toml").write_text(RECIPE)
    return run_process("soak", folder / "mv.toml", "--frames", "20", "--index", "brute", cwd=folder,
                       env=process_env(NUMBA_CACHE_DIR=cache), timeout=900)


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> Path:
    """A kernel cache filled by one soak (from empty: it compiles), once for the module."""
    folder = tmp_path_factory.mktemp("filled")
    ran = _soak(folder, folder / "numba")
    assert ran.returncode == 0, ran.stderr
    return folder / "numba"


def _garbage(b: bytes) -> bytes:
    return (b"not a cache file " * (len(b) // 17 + 1))[:len(b)]


def _changed_in_the_middle(b: bytes) -> bytes:
    mid = len(b) // 2
    return b[:mid] + bytes(x ^ 0xFF for x in b[mid:mid + 16]) + b[mid + 16:]


#: how a file is damaged: cut in half, emptied, garbage, 16 bytes changed in the middle (a pickle that still loads,
#: whose machine code made LLVM abort the process)
DAMAGE = {"cut-in-half": lambda b: b[:len(b) // 2], "emptied": lambda b: b"", "garbage": _garbage,
          "changed-in-the-middle": _changed_in_the_middle}


#: the damages a whole command meets in a process: a file cut short, and one that still unpickles (whose machine code
#: made LLVM abort); an emptied and a garbage file are refused by the same seal, before anything is unpickled
#: (test_a_cache_file_is_read_only_through_its_seal), so each would only compile the same kernels again here
IN_A_PROCESS = ("cut-in-half", "changed-in-the-middle")


@pytest.mark.slow
@pytest.mark.parametrize("damage", IN_A_PROCESS)
def test_a_damaged_kernel_cache_is_compiled_again_rewritten_and_said_once(filled, tmp_path, damage):
    cache = tmp_path / "numba"
    shutil.copytree(filled, cache)
    # the movers' step's indexes (the frame package) and the contract's kernel files (brute force's checks, in the
    # index package): both kinds of file, few enough kernels that compiling them again is quick
    damaged = sorted([*cache.glob("frame_*/_motion_kernels*.nbi"), *cache.glob("index_*/_contract_kernels*.nbc")])
    assert {p.suffix for p in damaged} == {".nbi", ".nbc"}, damaged
    for p in damaged:
        p.write_bytes(DAMAGE[damage](p.read_bytes()))
    before = {p: p.read_bytes() for p in damaged}

    code, out, err = _soak(tmp_path, cache)
    print(err)
    assert code == 0, err
    assert "Traceback" not in err and "Error" not in err, err
    assert "0 mismatches" in out, out
    notes = [ln for ln in err.splitlines() if ln.startswith("kernel cache: ")]
    assert len(notes) == 1, err
    assert str(cache) in notes[0] and "cannot be read" in notes[0] and "compiled again" in notes[0], notes[0]
    assert HEADER in err and "  frame ... " in err and "  brute ... " in err, err
    rewritten = [p for p in damaged if p.read_bytes() != before[p]]
    assert {p.suffix for p in rewritten} == {".nbi", ".nbc"}, rewritten
    for p in rewritten:
        assert unseal(p.read_bytes(), str(p)) is not None, p

    code, out, err = _soak(tmp_path, cache)  # loaded from the rewritten files: nothing compiles, nothing to say
    assert code == 0, err
    assert "kernel cache" not in err and HEADER not in err, err


def test_a_cache_file_is_read_only_through_its_seal():
    """Sealed bytes come back whole; a plain pickle (written before files were sealed) is stale, not damaged; an
    empty file, a cut one, one with a byte changed or garbage is refused before anything is unpickled."""
    body = pickle.dumps(("stamp", {"key": "file.1.nbc"}))
    sealed = seal(body)
    assert unseal(sealed, "f.nbi") == body
    assert unseal(body, "f.nbi") is None
    changed = sealed[:-1] + bytes([sealed[-1] ^ 1])
    for raw, why in ((b"", "empty"), (sealed[:len(sealed) // 2], "cut short"), (sealed[:5], "cut short"),
                     (changed, "cut short or damaged"), (_garbage(sealed), "not a kernel cache file")):
        with pytest.raises(DamagedCacheFile) as caught:
            unseal(raw, "f.nbi")
        assert caught.value.path == "f.nbi" and why in caught.value.why, (raw[:40], caught.value.why)


def test_the_note_of_a_damaged_file_takes_a_line_of_its_own_inside_the_compile_report():
    """Said while a group's line is being written (a callee's damaged file is met while its caller compiles), the
    note gets a line of its own and the group's line is taken up again below it, whole."""
    import io

    import numba

    from viewer.kernels.compile import compile_group, reporting, say

    @numba.njit(cache=False)
    def twice(x):
        return 2 * x

    out = io.StringIO()
    with reporting(out):
        with compile_group("demo"):
            assert twice(2) == 4
            say("kernel cache: f.nbi cannot be read (empty)")
    lines = out.getvalue().splitlines()
    assert lines[:3] == [HEADER, "  demo ...", "kernel cache: f.nbi cannot be read (empty)"], lines
    assert lines[3].startswith("  demo ... 1 kernel, ") and lines[4].startswith("compiled 1 kernel in "), lines
