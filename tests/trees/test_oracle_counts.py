"""The enumerators themselves, against the known numbers of trees."""

from oracles import all_trees


def test_tree_counts():
    # multi-root non-projective: (n+1)^(n-1) (Cayley); single-root: n^(n-1)
    for n in range(1, 6):
        assert len(all_trees(n, False, False)) == (n + 1) ** (n - 1)
        assert len(all_trees(n, False, True)) == n ** (n - 1)
    # projective single-root trees: Catalan-like counts 1, 2, 7, 30, 143
    assert [len(all_trees(n, True, True)) for n in range(1, 6)] == [1, 2, 7, 30, 143]
    # projective multi-root equals single-root with one more word: 1, 3, 12, 55, 273
    assert [len(all_trees(n, True, False)) for n in range(1, 6)] == [1, 3, 12, 55, 273]
