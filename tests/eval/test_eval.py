import io

import numpy as np
import pytest
from conll18 import official_scores

from arborparse.errors import ArborparseError
from arborparse.eval import TAG_MEASURES, compare, evaluate
from arborparse.io import read_conllu, write_conllu
from arborparse.trees.structure import find_cycle


GOLD = """1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_
2\tdog\tdog\tNOUN\tNN\t_\t3\tnsubj\t_\t_
3\tbarks\tbark\tVERB\tVBZ\t_\t0\troot\t_\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_
2\tthere\tthere\tADV\tRB\t_\t1\tadvmod:x\t_\t_

"""


def sentences(text):
    return read_conllu(io.StringIO(text))


def perturb(gold, rng, rate=0.3):
    """Trees with random heads and labels changed: still single-rooted trees (as the CoNLL
    2018 script demands of a system file)."""
    labels = sorted({d for s in gold for d in s.deprels})
    out = []
    for s in gold:
        heads = s.heads.copy()
        deprels = list(s.deprels)
        for m in range(1, len(s) + 1):
            if rng.random() < rate:
                old, heads[m] = heads[m], rng.integers(1, len(s) + 1)
                if heads[m] == m or old == 0 or find_cycle(heads) is not None:
                    heads[m] = old
            if rng.random() < rate:
                deprels[m - 1] = labels[rng.integers(len(labels))]
        out.append(s.with_tree(heads, deprels))
    return out


def reference_scores(gold, pred):
    """The CoNLL 2018 definitions, written out word by word."""
    words = uas = las = las_full = ucm = 0
    np_words = uas_np = las_np = 0
    for g, p in zip(gold, pred):
        ucm += all(g.heads[m] == p.heads[m] for m in range(1, len(g) + 1))
        for m in range(1, len(g) + 1):
            head = g.heads[m] == p.heads[m]
            label = g.deprels[m - 1].split(":")[0] == p.deprels[m - 1].split(":")[0]
            words += 1
            uas += head
            las += head and label
            las_full += head and g.deprels[m - 1] == p.deprels[m - 1]
            if g.upos[m - 1] != "PUNCT":
                np_words += 1
                uas_np += head
                las_np += head and label
    return {"UCM": 100 * ucm / len(gold), "UAS": 100 * uas / words, "LAS": 100 * las / words,
            "LAS_full": 100 * las_full / words, "UAS_nopunct": 100 * uas_np / np_words,
            "LAS_nopunct": 100 * las_np / np_words}


def test_hand_checked_scores():
    gold = sentences(GOLD)
    pred = [gold[0].with_tree(np.array([-1, 2, 3, 0, 2]), ["det", "obj", "root", "punct"]),
            gold[1].with_tree(np.array([-1, 0, 1]), ["root", "advmod"])]
    s = evaluate(gold, pred)
    assert s["words"] == 6 and s["sentences"] == 2
    assert s["UAS"] == pytest.approx(100 * 5 / 6)
    assert s["LAS"] == pytest.approx(100 * 4 / 6)  # advmod matches advmod:x
    assert s["LAS_full"] == pytest.approx(100 * 3 / 6)
    assert s["UAS_nopunct"] == pytest.approx(100.0)
    assert s["LAS_nopunct"] == pytest.approx(80.0)
    assert s["LA"] == pytest.approx(100 * 5 / 6)
    assert s["UCM"] == pytest.approx(50.0) and s["LCM"] == pytest.approx(50.0)
    assert s["root_accuracy"] == pytest.approx(100.0)
    assert s["by_length"]["root"]["f1"] == pytest.approx(100.0)
    assert s["by_length"]["2"]["precision"] == pytest.approx(0.0)
    assert s["by_length"]["1"]["recall"] == pytest.approx(75.0)
    assert s["by_deprel"]["nsubj"]["recall"] == pytest.approx(0.0)
    assert s["by_deprel"]["advmod"]["f1"] == pytest.approx(100.0)


def test_complete_match_counts_every_sentence():
    gold = sentences(GOLD + GOLD.replace("dog", "cat"))
    s = evaluate(gold, gold)
    assert s["UCM"] == 100.0 and s["LCM"] == 100.0 and s["root_accuracy"] == 100.0


def test_agrees_with_conll2018_definitions_on_perturbed_files(ud):
    gold = read_conllu(ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu")
    rng = np.random.default_rng(0)
    for rate in (0.05, 0.3):
        pred = perturb(gold, rng, rate)
        scores = evaluate(gold, pred)
        for key, value in reference_scores(gold, pred).items():
            assert scores[key] == pytest.approx(value, abs=1e-9), key
    assert evaluate(gold, gold)["LAS"] == 100.0


def test_conllx_punctuation_goes_by_form():
    text = ("1\tHi\thi\tI\tUH\t_\t0\tROOT\t_\t_\n2\t!?\t!\tP\t.\t_\t1\tP\t_\t_\n"
            "3\tyo\tyo\tI\tUH\t_\t1\tX\t_\t_\n\n")
    gold = read_conllu(io.StringIO(text), format="conllx")
    pred = [gold[0].with_tree(np.array([-1, 0, 3, 1]))]
    s = evaluate(gold, pred)
    assert s["UAS"] == pytest.approx(200 / 3) and s["UAS_nopunct"] == pytest.approx(100.0)


def test_mismatched_files_name_the_first_difference():
    gold = sentences(GOLD)
    other = sentences(GOLD.replace("dog", "cat"))
    with pytest.raises(ArborparseError, match="the words differ: gold <stream>:2 has 'dog', system <stream>:2 has 'cat'"):
        evaluate(gold, other)
    with pytest.raises(ArborparseError, match=r"the gold file \(<stream>\) has 2 sentences, "
                                              r"the system file \(<stream>\) has 1"):
        evaluate(gold, gold[:1])
    with pytest.raises(ArborparseError, match=r"the gold file \(<stream>\) has 1 sentence, "
                                              r"the system file \(<stream>\) has 2"):
        evaluate(gold[:1], gold)


def test_files_without_heads_are_refused():
    gold = sentences(GOLD)
    raw = sentences(GOLD.replace("\t2\tdet\t", "\t_\t_\t"))
    with pytest.raises(ArborparseError, match=r"<stream>:1: word 1 has no HEAD"):
        evaluate(gold, raw)
    with pytest.raises(ArborparseError, match="word 1 has no HEAD"):
        evaluate(raw, gold)


def test_compare_prefers_the_better_system(ud):
    gold = read_conllu(ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu")[:300]
    rng = np.random.default_rng(1)
    good, bad = perturb(gold, rng, 0.05), perturb(gold, rng, 0.3)
    r = compare(gold, good, bad, samples=2000)
    assert r["difference"] > 0 and r["A_better_sentences"] > r["B_better_sentences"]
    assert r["sign_test_p"] < 1e-6 and r["permutation_p"] < 0.01
    same = compare(gold, good, good, samples=500)
    assert same["sign_test_p"] == 1.0 and same["permutation_p"] == 1.0


def official(gold_path, system_path):
    """The CoNLL 2018 evaluation script's scores (F1 in percent) for two files."""
    return {name: 100 * score.f1 for name, score in official_scores(gold_path, system_path).items()}


def retag(gold, rng, rate):
    """Trees, tags, features and lemmas changed at random (still single-rooted trees)."""
    values = {column: sorted({v for s in gold for v in getattr(s, column)})
              for column in ("upos", "xpos", "feats", "lemmas")}
    index = {"lemmas": 2, "upos": 3, "xpos": 4, "feats": 5}
    out = []
    for s in perturb(gold, rng, rate):
        rows = [list(r) for r in s.rows]
        for r in s.word_rows:
            for column, pool in values.items():
                if rng.random() < rate:
                    rows[r][index[column]] = pool[rng.integers(len(pool))]
        out.append(type(s)(list(s.comments), rows, list(s.word_rows), s.heads.copy(), s.path,
                           s.line, s.format))
    return out


@pytest.mark.parametrize("treebank", ["UD_English-EWT", "UD_Turkish-IMST"])
def test_tag_measures_agree_with_the_official_script(ud, tmp_path, treebank):
    gold_path = next((ud / treebank).glob("*-ud-dev.conllu"))
    gold = read_conllu(gold_path)
    rng = np.random.default_rng(1)
    for rate in (0.0, 0.1, 0.4):
        system = tmp_path / f"system-{rate}.conllu"
        write_conllu(retag(gold, rng, rate), system)
        ours, theirs = evaluate(gold, read_conllu(system)), official(gold_path, system)
        for name in ("UAS", "LAS", *TAG_MEASURES):
            assert ours[name] == pytest.approx(theirs[name], abs=1e-9), (rate, name)


def test_tag_measures_by_hand():
    gold = sentences(GOLD)
    # "The" loses its det (a functional child of "dog") and "barks" its lemma
    system = sentences(GOLD.replace("1\tThe\tthe\tDET\tDT\t_\t2\tdet", "1\tThe\tthe\tPRON\tDT\t_\t2\tdet")
                       .replace("\tbark\tVERB", "\tbarks\tVERB"))
    s = evaluate(gold, system)
    assert s["UPOS"] == pytest.approx(100 * 5 / 6) and s["Lemmas"] == pytest.approx(100 * 5 / 6)
    # content words: dog (nsubj), barks (root), Hi (root), there (advmod): 4 on each side
    assert s["CLAS"] == 100.0
    assert s["MLAS"] == pytest.approx(100 * 3 / 4)  # dog's functional child changed UPOS
    assert s["BLEX"] == pytest.approx(100 * 3 / 4)  # barks' lemma


def test_a_multi_root_parser_is_scored_as_it_parses_where_asked():
    """CoNLL-U system trees of several roots are refused, as the official script refuses
    them, unless `multi_root` (a multi-root parser's dev scores in training)."""
    text = "1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n2\tb\tb\tX\tX\t_\t1\tdep\t_\t_\n" \
           "3\tc\tc\tX\tX\t_\t2\tdep\t_\t_\n\n"
    gold = read_conllu(io.StringIO(text))
    pred = [gold[0].with_tree(np.array([-1, 0, 1, 0]), ["root", "dep", "root"])]
    with pytest.raises(ArborparseError, match="2 words attach to the root"):
        evaluate(gold, pred)
    scores = evaluate(gold, pred, multi_root=True)
    assert scores["UAS"] == pytest.approx(200 / 3) and scores["LAS"] == pytest.approx(200 / 3)
    with pytest.raises(ArborparseError, match="2 words attach to the root"):  # gold: never
        evaluate(pred, gold, multi_root=True)
