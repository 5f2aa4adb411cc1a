"""Shared fixtures: seeded data, strict numerics, and a report header naming the library versions."""

from __future__ import annotations

import numpy as np
import pytest


def pytest_report_header(config):
    import numba

    lines = [f"numpy {np.__version__}, numba {numba.__version__}"]
    try:
        import moderngl

        lines.append(f"moderngl {moderngl.__version__}")
    except Exception as exc:  # pragma: no cover - reported, not fatal
        lines.append(f"moderngl unavailable: {exc}")
    return lines


@pytest.fixture(autouse=True)
def _strict_numerics():
    old = np.seterr(divide="raise", over="raise", invalid="raise", under="ignore")
    yield
    np.seterr(**old)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
