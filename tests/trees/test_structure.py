import numpy as np

from arborparse.trees.structure import find_cycle, is_projective, nonprojective_arcs


def test_find_cycle():
    assert find_cycle(np.array([-1, 0, 1, 2])) is None
    assert sorted(find_cycle(np.array([-1, 0, 3, 2]))) == [2, 3]


def test_nonprojective_arcs():
    # 1 <- 3, 2 <- 0 ... arc 3 -> 1 crosses the root arc into 2
    assert nonprojective_arcs(np.array([-1, 3, 0, 2])).tolist() == [True, False, False]
    assert not nonprojective_arcs(np.array([-1, 2, 0, 2])).any()
    assert is_projective(np.array([-1, 2, 0, 2])) and not is_projective(np.array([-1, 3, 0, 2]))


def test_light_modules_do_not_load_numba():
    """Reading, checking and scoring trees does not pay for the compiled decoders."""
    import subprocess
    import sys

    code = ("import sys, arborparse.io, arborparse.eval, arborparse.trees.structure; "
            "print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
