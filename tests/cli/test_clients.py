"""``viewer clients``: steps outside the numeric domain and empty budgets refused naming the flag; the
verdict when a batch is slower than single queries."""

from __future__ import annotations

import pytest

from tests.support.cli import refused, run_cli, small, with_flags  # noqa: F401 (small: a fixture)


@pytest.mark.parametrize("flags, words", [
    (["--step", "1e300"], ["--step 1e+300", "numeric domain", "at most"]),
    (["--layout", "hotspots", "--ticks", "100000", "--step", "1e26"], ["--step 1e+26", "numeric domain"]),
    (["--budget", "0"], ["--budget", "positive"]),
    (["--budget", "nan"], ["--budget", "positive"]),
], ids=["step-1e300", "step-walks-out", "budget-0", "budget-nan"])
def test_clients_steps_out_of_the_domain_and_empty_budgets_are_refused(tmp_path, small, flags, words):
    """Before: --step 1e300 died with a ValueError traceback from the index contract (points outside the
    domain); --budget 0 and --budget nan were taken (every tick skipped, or none)."""
    out = tmp_path / "out"
    status, _, err = run_cli(*with_flags(["clients", "--scene", small, "--index", "scan", "--k", "1", "--ticks", "3",
                                         "--out", out], flags))
    refused(status, err, *words)
    assert not out.exists()


def test_the_clients_verdict_says_a_slower_batch_saves_nothing():
    """Before: 'viewer clients' ended each K with 'sharing saves most on octree: 0.40x its singles' where
    0.40 was its batch gain (singles / batch: the batch 2.5x slower): read as the batch taking 0.40 of the
    singles' time, the opposite of what was measured (frame/README.md's table gives batch / singles). The
    sentence now gives batch / singles, and says when no shared batch saves anything."""
    from viewer.bench.clients import verdict

    def row(index, single, batch, shared=1):
        return {"workload": "small-2k", "layout": "spread", "k": 8, "index": index, "shared_walk": shared,
                "single_tick_us": single, "batch_tick_us": batch, "batch_x_single": round(single / batch, 3)}

    slower = verdict([row("octree", 6.0, 15.0), row("scan", 30.0, 29.0, shared=0)])[0]
    assert "sharing saves nothing here" in slower and "octree's, takes 2.50x its singles' time" in slower, slower
    assert "saves most" not in slower and "0.40x" not in slower
    faster = verdict([row("octree", 60.0, 15.0), row("hashgrid", 60.0, 30.0)])[0]
    assert "sharing saves most on octree: its batch takes 0.25x its singles' time" in faster, faster
