import pytest

import sluice


@pytest.fixture
def spark(tmp_path):
    return sluice.Session(warehouse=str(tmp_path / "warehouse"), storage=str(tmp_path / "storage"))
