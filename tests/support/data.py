"""Small seeded point sets for the index tests (the scene generators are tested on their own): the conformance
kit's worlds (:mod:`viewer.index.conformance.worlds`), defined there once."""

from __future__ import annotations

from viewer.index.conformance.worlds import DISTRIBUTIONS, clustered, diagonal, heavy_tailed_radii, query_points, uniform

__all__ = ["DISTRIBUTIONS", "clustered", "diagonal", "heavy_tailed_radii", "query_points", "uniform"]
