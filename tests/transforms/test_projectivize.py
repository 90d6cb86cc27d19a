import io

import numpy as np
from oracles import all_trees

from arborparse.io import read_conllu
from arborparse.transforms import projectivize
from arborparse.trees.structure import is_projective


def sentence_with(heads):
    lines = [f"{m}\tw{m}\t_\tX\t_\t_\t{h}\tr{m}\t_\t_" for m, h in enumerate(heads[1:], 1)]
    return read_conllu(io.StringIO("\n".join(lines) + "\n\n"))[0]


def test_keeps_the_most_gold_arcs_by_brute_force():
    rng = np.random.default_rng(0)
    for n in (3, 4, 5, 6):
        projective = all_trees(n, True, True)
        candidates = all_trees(n, False, True)
        for gold in candidates[rng.choice(len(candidates), size=15)]:
            out = projectivize(sentence_with(gold))
            assert is_projective(out.heads)
            kept = (out.heads[1:] == gold[1:]).sum()
            assert kept == (projective[:, 1:] == gold[1:]).sum(axis=1).max()
            assert out.deprels == [f"r{m}" for m in range(1, n + 1)]
            assert (out.heads == 0).sum() == 1


def test_projective_trees_are_unchanged():
    s = sentence_with(np.array([-1, 2, 0, 2]))
    assert projectivize(s) is s
    assert not is_projective(np.array([-1, 3, 0, 2]))
