import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UD = Path(os.environ.get("ARBORPARSE_UD", ROOT.parent / "shared" / "data" / "ud"))


@pytest.fixture(scope="session")
def ud():
    """The Universal Dependencies folder (ARBORPARSE_UD, default ../shared/data/ud)."""
    if not UD.is_dir():
        pytest.fail(f"UD data not found at {UD}; set ARBORPARSE_UD to your UD folder")
    return UD


@pytest.fixture(scope="session")
def ud_files(ud):
    files = sorted(ud.glob("*/*.conllu"))
    assert files, f"no .conllu files under {ud}"
    return files


from hypothesis import settings  # noqa: E402

# CI runs the same examples every time; locally hypothesis explores new ones.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
