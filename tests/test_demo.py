"""`make demo` on a machine without a browser, each step timed: the demo script run end to
end on a small slice of English-EWT, with a PATH that holds no Chromium."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def prerequisites(makefile: str, target: str) -> set[str]:
    """Every target `target` depends on, directly or not (order-only ones included)."""
    rules = {}
    for line in makefile.splitlines():
        found = re.match(r"^([^\s:=#][^:=]*):(?!=)(.*)$", line)
        if found:
            for name in found.group(1).split():
                rules.setdefault(name, []).extend(found.group(2).replace("|", " ").split())
    seen, todo = set(), [target]
    while todo:
        for name in rules.get(todo.pop(), []):
            name = name.replace("$(VENV)", ".venv").replace("$(BIN)", ".venv/bin")
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


def test_make_demo_depends_on_no_browser():
    needed = prerequisites((ROOT / "Makefile").read_text(), "demo")
    assert ".venv/.installed-dev" in needed
    assert not any("chromium" in name or "playwright" in name for name in needed), needed
    assert "chromium" not in (ROOT / "scripts" / "demo.sh").read_text().lower()


def test_the_demo_runs_without_chromium_and_says_how_long_each_step_took(ud, tmp_path):
    small = tmp_path / "ud" / "UD_English-EWT"
    small.mkdir(parents=True)
    for split, count in (("train", 300), ("dev", 60), ("test", 60)):
        blocks = (ud / "UD_English-EWT" / f"en_ewt-ud-{split}.conllu").read_text().split("\n\n")
        (small / f"en_ewt-ud-{split}.conllu").write_text("\n\n".join(blocks[:count]) + "\n\n")
    tools = tmp_path / "bin"  # the only commands on PATH: no browser among them
    tools.mkdir()
    for name in ("awk", "date", "mkdir"):
        (tools / name).symlink_to(shutil.which(name))
    out = tmp_path / "out"
    env = {**os.environ, "PATH": str(tools), "OUT": str(out),
           "BIN": str(Path(sys.executable).parent)}
    proc = subprocess.run(["/bin/bash", ROOT / "scripts" / "demo.sh", tmp_path / "ud", "1", "2"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    steps = re.findall(r"^== (.*)$", proc.stdout, re.M)
    assert steps[-1] == "Time per step" and len(steps) == 8
    took = re.findall(r"^   \(took (\d+\.\d) s\)$", proc.stdout, re.M)
    assert len(took) == len(steps) - 1
    table = proc.stdout.split("== Time per step\n")[1].splitlines()
    assert [line.split(" s  ", 1)[1] for line in table] == steps[:-1]
    assert (out / "ewt.model.npz").is_file() and (out / "ewt-test.parsed.json").is_file()
