"""The examples of docs/python.md and the README's Python section run as written."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


def test_the_python_guide_runs(ud, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ARBORPARSE_UD", str(ud))
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for code in blocks(ROOT / "docs" / "python.md"):
        exec(compile(code, "docs/python.md", "exec"), namespace)  # noqa: S102
    out = capsys.readouterr().out
    assert "linear ['tokenizer', 'tagger', 'parser'] en_ewt" in out
    assert "beam=8 does not apply to this linear model" in out
