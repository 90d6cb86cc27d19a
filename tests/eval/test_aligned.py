import io

import numpy as np
import pytest
from conll18 import official_scores

from arborparse.errors import ArborparseError
from arborparse.eval.aligned import MEASURES, evaluate_aligned
from arborparse.io import read_conllu
from arborparse.trees.structure import find_cycle

GOLD = """# text = Don't go.
1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tDo\tdo\tAUX\tVBP\tMood=Imp\t3\taux\t_\t_
2\tn't\tnot\tPART\tRB\tPolarity=Neg\t3\tadvmod\t_\t_
3\tgo\tgo\tVERB\tVB\tVerbForm=Inf\t0\troot\t_\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

# text = New York is big.
1\tNew\tNew\tPROPN\tNNP\t_\t2\tcompound\t_\t_
2\tYork\tYork\tPROPN\tNNP\t_\t4\tnsubj\t_\t_
3\tis\tbe\tAUX\tVBZ\t_\t4\tcop\t_\t_
4\tbig\tbig\tADJ\tJJ\tDegree=Pos\t0\troot\t_\t_
5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_

"""

# the same text: "Don't" as one word, "New York" as one token, one sentence
SYSTEM = """1\tDon't\tdo\tAUX\tVBP\tMood=Imp\t2\taux\t_\t_
2\tgo\tgo\tVERB\tVB\tVerbForm=Inf\t0\troot\t_\t_
3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_
4\tNewYork\tNew York\tPROPN\tNNP\t_\t6\tnsubj\t_\t_
5\tis\tbe\tAUX\tVBZ\t_\t6\tcop\t_\t_
6\tbig\tbig\tADJ\tJJ\tDegree=Pos\t2\tparataxis\t_\t_
7\t.\t.\tPUNCT\t.\t_\t6\tpunct\t_\t_

"""


def sentences(text):
    return read_conllu(io.StringIO(text), "conllu")


def test_a_small_case_by_hand():
    s = evaluate_aligned(sentences(GOLD), sentences(SYSTEM))
    # gold tokens: Don't go . New York is big . (8); system: Don't go . NewYork is big . (7)
    assert s["Tokens"]["recall"] == pytest.approx(100 * 6 / 8)
    assert s["Tokens"]["precision"] == pytest.approx(100 * 6 / 7)
    assert s["Sentences"]["f1"] == 0.0
    # words: Do n't | Don't share a multiword stretch; no form in common
    assert s["Words"]["recall"] == pytest.approx(100 * 5 / 9)  # go . is big .
    # every aligned word has its gold head but "big", the second sentence's root
    assert s["UAS"]["aligned_accuracy"] == s["LAS"]["aligned_accuracy"] == 100 * 4 / 5
    assert s["UAS"]["recall"] == pytest.approx(100 * 4 / 9)


def test_a_different_text_is_refused_with_the_place():
    with pytest.raises(ArborparseError, match=r"from character 11 .*: gold <stream>:10 has "
                                              r"'Yorkisbig.', system <stream>:4 has 'Jork"):
        evaluate_aligned(sentences(GOLD),
                         sentences(SYSTEM.replace("NewYork", "NewJork")))
    # a system file that ends early: where it ends, not an empty string
    with pytest.raises(ArborparseError, match=r"from character 8 .*: gold <stream>:9 has "
                                              r"'NewYorkisbig\.', system ends after "
                                              r"<stream>:3$"):
        evaluate_aligned(sentences(GOLD), sentences(SYSTEM.split("4\tNewYork")[0] + "\n"))


def retokenized(gold_text: str, rng, rate: float) -> str:
    """The gold file's text tokenized, split into sentences, tagged and parsed differently:
    tokens split, merged, made multiword tokens and back, multiword tokens' words changed,
    sentences merged and split, tags, labels and heads changed; every sentence still a
    single-rooted tree. Words keep their gold identity where their token is untouched."""
    gold = read_conllu(io.StringIO(gold_text), "conllu")
    pools = {c: sorted({v for s in gold for v in getattr(s, c)})
             for c in ("lemmas", "upos", "xpos", "feats", "deprels")}
    sentences, n = [], 0
    for s in gold:  # tokens: (form, [word, ...], multiword); word = [columns..., id, head]
        tokens, covered = [], {}
        for row in s.rows:
            if "." in row[0]:
                continue
            if "-" in row[0]:
                a, b = map(int, row[0].split("-"))
                tokens.append((row[1], [], True))
                covered.update((i, tokens[-1]) for i in range(a, b + 1))
                continue
            m = int(row[0])
            word = [row[1], row[2], row[3], row[4], row[5], row[7], n + m,
                    n + int(s.heads[m]) if s.heads[m] > 0 else None]
            if m in covered:
                covered[m][1].append(word)
            else:
                tokens.append((row[1], [word], False))
        n += len(s)
        sentences.append(tokens)

    def fresh(form, like):
        return [form, *like[1:6], None, None]

    out_sentences = []
    for tokens in sentences:
        new = []
        for form, words, multiword in tokens:
            r = rng.random()
            if r < rate / 4 and not multiword and len(form) > 1:  # split
                cut = int(rng.integers(1, len(form)))
                new += [(form[:cut], [fresh(form[:cut], words[0])], False),
                        (form[cut:], [fresh(form[cut:], words[0])], False)]
            elif r < rate / 2 and new and not multiword and not new[-1][2]:  # merge
                last = new.pop()
                new.append((last[0] + form, [fresh(last[0] + form, last[1][0])], False))
            elif r < 3 * rate / 4 and multiword:  # one word
                new.append((form, [fresh(form, words[0])], False))
            elif r < rate and len(form) > 1:  # a multiword token of two words
                cut = int(rng.integers(1, len(form)))
                pieces = [fresh(form[:cut], words[0]), fresh(form.lower(), words[0])]
                if multiword:  # its own words, one of them respelled
                    pieces = [list(w) for w in words]
                    pieces[int(rng.integers(len(pieces)))][0] += "x"
                new.append((form, pieces, True))
            else:
                new.append((form, [list(w) for w in words], multiword))
        out_sentences.append(new)
    regrouped = []
    for tokens in out_sentences:  # sentences merged and split
        if regrouped and rng.random() < rate / 2:
            regrouped[-1] += tokens
        elif len(tokens) > 2 and rng.random() < rate / 2:
            cut = int(rng.integers(1, len(tokens)))
            regrouped += [tokens[:cut], tokens[cut:]]
        else:
            regrouped.append(tokens)
    lines = []
    for tokens in regrouped:
        words = [w for _, ws, _ in tokens for w in ws]
        position = {w[6]: i + 1 for i, w in enumerate(words) if w[6] is not None}
        root = next((i + 1 for i, w in enumerate(words) if w[7] is None), 1)
        heads = np.zeros(len(words) + 1, dtype=np.int64)
        heads[0] = -1
        for i, w in enumerate(words, 1):
            heads[i] = 0 if i == root else position.get(w[7], root)
            if heads[i] == i:
                heads[i] = root
        for i in range(1, len(words) + 1):
            if i != root and rng.random() < rate:
                old, heads[i] = heads[i], int(rng.integers(1, len(words) + 1))
                if heads[i] in (i, 0) or find_cycle(heads) is not None:
                    heads[i] = old
        k = 1
        for form, ws, multiword in tokens:
            if multiword:
                lines.append(f"{k}-{k + len(ws) - 1}\t{form}" + "\t_" * 8)
            for w in ws:
                columns = w[1:6]
                for c, pool in enumerate(pools.values()):
                    if rng.random() < rate / 2:
                        columns[c] = pool[int(rng.integers(len(pool)))]
                deprel = "root" if k == root else columns[4]
                lines.append("\t".join([str(k), w[0], *columns[:4], str(heads[k]), deprel,
                                        "_", "_"]))
                k += 1
        lines.append("")
    return "\n".join(lines) + "\n"


def agree(gold_path, system_path):
    ours = evaluate_aligned(read_conllu(gold_path), read_conllu(system_path))
    theirs = official_scores(gold_path, system_path)
    for measure in MEASURES:
        for key in ("precision", "recall", "f1", "aligned_accuracy"):
            theirs_value = getattr(theirs[measure], key)
            if key not in ours[measure]:
                assert key == "aligned_accuracy" and theirs_value is None
                continue
            expected = None if theirs_value is None else 100 * theirs_value
            assert ours[measure][key] == pytest.approx(expected, abs=1e-9), (measure, key)


def test_small_retokenizations_agree_with_the_official_script(tmp_path):
    gold = tmp_path / "gold.conllu"
    gold.write_text(GOLD * 3)
    rng = np.random.default_rng(0)
    for trial in range(40):
        system = tmp_path / f"system-{trial}.conllu"
        system.write_text(retokenized(GOLD * 3, rng, 0.6))
        agree(gold, system)


@pytest.mark.parametrize("treebank", ["UD_English-EWT", "UD_Turkish-IMST"])
def test_real_retokenizations_agree_with_the_official_script(ud, tmp_path, treebank):
    gold = next((ud / treebank).glob("*-ud-dev.conllu"))
    rng = np.random.default_rng(1)
    for rate in (0.0, 0.05, 0.3):
        system = tmp_path / f"system-{rate}.conllu"
        system.write_text(retokenized(gold.read_text(encoding="utf-8"), rng, rate))
        agree(gold, system)


def test_evaluate_command_aligns_a_differently_tokenized_file(tmp_path):
    import json

    from click.testing import CliRunner

    from arborparse.cli import cli

    gold, system = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    gold.write_text(GOLD)
    system.write_text(SYSTEM)
    r = CliRunner().invoke(cli, ["evaluate", str(gold), str(system), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output) == evaluate_aligned(read_conllu(gold), read_conllu(system))
    r = CliRunner().invoke(cli, ["evaluate", str(gold), str(system)])
    assert r.exit_code == 0 and r.output.splitlines()[0].split() == [
        "metric", "precision", "recall", "F1", "aligned", "acc"]
    assert [line.split()[0] for line in r.output.splitlines()[1:]] == list(MEASURES)
