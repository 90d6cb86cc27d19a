"""The repository holds source, tests, docs and small data only."""

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_no_large_files():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    large = [name for name in tracked if (ROOT / name).is_file()
             and (ROOT / name).stat().st_size > 1_000_000]
    assert not large, f"files over 1 MB in the repository: {large}"
