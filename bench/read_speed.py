"""Reading speed of arborparse.io against the `conllu` package (if installed), on EWT-train.

    python bench/read_speed.py
"""

import datetime
import sys

from common import UD, best_time, machine

from arborparse.io import read_conllu

path = UD / "UD_English-EWT" / "en_ewt-ud-train.conllu"
print(f"# {' '.join(sys.argv)} | {datetime.date.today()} | {machine()}")
ours = best_time(lambda: read_conllu(path), repeat=3)
n = len(read_conllu(path))
print(f"arborparse.io.read_conllu  {path.name}: {n} sentences in {ours:.2f} s")
try:
    import conllu
except ImportError:
    print("conllu package not installed: no reference")
else:
    text = path.read_text(encoding="utf-8")
    ref = best_time(lambda: conllu.parse(text), repeat=1)
    print(f"conllu.parse (string already in memory): {ref:.2f} s; ratio {ref / ours:.1f}x")
