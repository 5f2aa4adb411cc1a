"""``viewer compare`` across schema versions whose columns mean different things: ``update_ms`` held the world's
own step before schema version 7 (now ``motion_ms``), so a moving world's runs of both kinds get a warning."""

from __future__ import annotations

from tests.reports.test_compare_bands import write_run
from viewer.recording.schema import SCHEMA_VERSION
from viewer.reports.compare import MOTION_SINCE

from tests.support.cli import run_cli


def test_update_ms_of_a_moving_world_before_and_after_motion_ms_is_flagged(tmp_path, capsys):
    old = write_run(tmp_path / "old.csv", MOTION_SINCE - 1, "scan", seed=1)  # moved: random counts, > 0
    new = write_run(tmp_path / "new.csv", SCHEMA_VERSION, "octree", seed=2)
    assert run_cli("compare", old, new).returncode == 0
    err = capsys.readouterr().err
    flagged = [ln for ln in err.splitlines() if "update_ms is not like for like" in ln]
    assert len(flagged) == 1, err
    assert f"before schema version {MOTION_SINCE} ({old})" in flagged[0] and f"({new})" in flagged[0], flagged
    assert "update_ms + motion_ms" in flagged[0]
    # runs of one kind only: nothing to say
    other = write_run(tmp_path / "other.csv", SCHEMA_VERSION, "scan", seed=3)
    assert run_cli("compare", new, other).returncode == 0
    assert "update_ms" not in capsys.readouterr().err
