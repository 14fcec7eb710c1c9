"""Fixtures shared by the tests."""

from pathlib import Path

import pytest

from tests.helpers import ASTRA_SIM_INPUTS


@pytest.fixture
def astra_sim_inputs() -> Path:
    """ASTRA-sim's sample input files, shipped with the tests (tests/data/astra-sim-inputs)."""
    return ASTRA_SIM_INPUTS
