"""The testbed's conformance kit over this index, one test per property: what a plugin's own suite runs
(``pip install -e examples/my_index && pytest examples/my_index/tests``)."""

import pytest

from viewer.index.conformance import check, properties

from my_index import UniformGrid


@pytest.mark.parametrize("prop", properties())
def test_uniform_grid_holds(prop):
    check(UniformGrid, prop)

