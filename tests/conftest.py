"""Fixtures shared by the tests."""

from pathlib import Path

import pytest

from tests.helpers import SHARED


@pytest.fixture
def shared_inputs() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared/astra-sim-inputs is not beside the checkout")
    return SHARED
