"""The linear family at order 2: sibling and grandparent features, their scores and
expectations, the trainers, model files and options."""

import io

import numpy as np
import pytest
from oracles import all_trees, brute_second_order, second_order_parts
from treebanks import separable

from arborparse.errors import ArborparseError
from arborparse.eval import evaluate
from arborparse.io import read_conllu
from arborparse.linear.model import Encoded, LinearModel
from arborparse.linear.options import SECOND_ORDER, LinearOptions
from arborparse.linear.parser import LinearParser
from arborparse.linear.train import trainer
from arborparse.options import OptionError
from arborparse.trees.second_order import tree_score


def siblings_language(copies: int = 4):
    """Sentences "h s m k" (every POS X) where m attaches to h when (s, m) is (s1, m1) or
    (s2, m2), else to k: an XOR of two siblings' words that no arc sees (arc features pair
    only a head's and a child's words, and the context templates read POS alone)."""
    lines = []
    for c in range(copies):
        for s in ("s1", "s2"):
            for m in ("m1", "m2"):
                head_m = 1 if s[1] == m[1] else 4
                lines.append(f"# sent_id = {c}-{s}-{m}")
                for i, (form, head) in enumerate((("h", 0), (s, 1), (m, head_m), ("k", 1)), 1):
                    lines.append(f"{i}\t{form}\t{form}\tX\tX\t_\t{head}\tdep\t_\t_")
                lines.append("")
    return read_conllu(io.StringIO("\n".join(lines) + "\n"))


def fit(data, **options):
    return trainer(LinearOptions.of({"hash_bits": 16, **options}), dev=False,
                   progress=False).fit(data, data)


def random_model(second_order, bits=12, seed=0):
    model = LinearModel.hashing(bits, ["a", "b"], order=2, second_order=second_order)
    model.weights[:] = np.random.default_rng(seed).standard_normal(len(model.weights))
    return model


@pytest.mark.parametrize("second_order", SECOND_ORDER)
def test_tree_scores_are_the_weights_of_the_tree_features(second_order):
    """score(tree) from the score arrays == w · f(tree) from the tree's own features, for
    every tree of a 5-word sentence."""
    model = random_model(second_order)
    sentence = separable(1)[1]
    x = Encoded.of(sentence)
    S = model.labeled_scores(x)[:, :, 0]  # every arc labeled "a"
    s = model.scores(x)
    assert (s.grand is not None) == (second_order != "siblings")
    trees = all_trees(len(sentence), False, False)
    sib, grand = second_order_parts(trees)
    words = np.arange(1, len(sentence) + 1)
    labels = np.zeros(len(sentence), dtype=np.int64)
    for t, tree in enumerate(trees):
        arcs = model.arc_features(x, tree[1:], words, labels)[0]
        features = np.concatenate([arcs, model.tree_part_features(x, tree)])
        from_arrays = S[tree[1:], words].sum() + (s.sib * sib[t]).sum()
        if s.grand is not None:
            from_arrays += (s.grand * grand[t]).sum()
        assert from_arrays == pytest.approx(model.weights[features].sum(), abs=1e-9)
        assert from_arrays == pytest.approx(tree_score(S, s.sib, s.grand, tree))


@pytest.mark.parametrize("second_order", SECOND_ORDER)
def test_part_expectations_are_the_adjoint_of_the_part_scores(second_order):
    """w · Σ D f == Σ D · (w · f) for any D over the parts."""
    model = random_model(second_order)
    x = Encoded.of(separable(1)[2])
    sib, grand = model.part_scores(x)
    rng = np.random.default_rng(1)
    D_sib = rng.standard_normal(sib.shape)
    D_grand = None if grand is None else rng.standard_normal(grand.shape)
    out = np.zeros_like(model.weights)
    model.add_part_expectations(x, D_sib, D_grand, out)
    expected = (D_sib * sib).sum() + (0.0 if grand is None else (D_grand * grand).sum())
    assert out @ model.weights == pytest.approx(expected)
    # entries that are no part of any tree carry no score
    assert sib[1, 3, 4] == 0.0 and sib[2, 2, 1] == 0.0


@pytest.mark.parametrize("second_order", SECOND_ORDER)
def test_the_parts_of_arcs_left_out_are_not_scored(second_order):
    """With arcs left out (the parser's reach), a part through one of them scores 0, every
    other part as before."""
    model = random_model(second_order)
    x = Encoded.of(max(separable(1), key=len))
    N = len(x.table) + 1
    known = np.random.default_rng(3).random((N, N)) < 0.3
    sib, grand = model.part_scores(x)
    cut_sib, cut_grand = model.part_scores(x, known=known)
    h, m, s = np.indices((N, N, N))
    through = known[h, m] | (known[h, s] & (s != h))
    assert through.any() and np.count_nonzero(sib[~through]) > 0
    assert (cut_sib[through] == 0).all() and (cut_sib[~through] == sib[~through]).all()
    if grand is not None:
        through = known[h, m] | known[m, s]  # (g, h, m) as (h, m, s): g -> h, h -> m
        assert (cut_grand[through] == 0).all()
        assert (cut_grand[~through] == grand[~through]).all()


@pytest.mark.parametrize("second_order", SECOND_ORDER)
def test_log_linear_gradient_by_finite_differences(second_order):
    """The gradient of -log P(tree) at order 2 (expected minus gold feature counts, parts
    included), checked coordinate by coordinate."""
    from arborparse.linear.common import gold_data
    from arborparse.linear.loglinear import negative_log_likelihood

    labels, encoded, heads, ids = gold_data(separable(1)[1:3], True)
    model = LinearModel.hashing(10, labels, order=2, second_order=second_order)
    w = 0.3 * np.random.default_rng(2).standard_normal(len(model.weights))

    def nll(weights, grad):
        return sum(negative_log_likelihood(model, x, h, lab, weights, True, True, grad)
                   for x, h, lab in zip(encoded, heads, ids))

    grad = np.zeros_like(w)
    nll(w, grad)
    eps = 1e-6
    for i in np.argsort(-np.abs(grad))[:15]:
        step = np.zeros_like(w)
        step[i] = eps
        scratch = np.zeros_like(w)
        numeric = (nll(w + step, scratch) - nll(w - step, scratch)) / (2 * eps)
        assert numeric == pytest.approx(grad[i], rel=1e-5, abs=1e-7)


def test_first_child_and_the_sibling_words_make_features():
    model = random_model("siblings")
    x = Encoded.of(siblings_language(1)[0])
    sib, _ = model.part_scores(x)
    # the same modifier with another sibling, or as the first child, scores differently
    assert len({sib[1, 3, 2], sib[1, 3, 1], sib[4, 3, 4]}) == 3


def test_order_2_learns_what_siblings_tell_and_order_1_cannot():
    data = siblings_language()
    first = fit(data, trainer="perceptron", epochs=8, decoder="eisner")
    second = fit(data, trainer="perceptron", epochs=8, decoder="eisner", order=2)
    assert evaluate(data, first.parser_.parse(data))["UAS"] <= 90.0
    assert evaluate(data, second.parser_.parse(data))["UAS"] == 100.0


@pytest.mark.parametrize("second_order", SECOND_ORDER)
@pytest.mark.parametrize("name", ["perceptron", "mira", "loglinear", "loglinear-sgd", "eg"])
def test_each_trainer_runs_an_epoch_and_parses(name, second_order):
    data = separable(1)
    options = dict(trainer=name, epochs=1, order=2, second_order=second_order)
    if name not in ("perceptron", "mira"):
        options["C"] = 1.0
    parser = fit(data, **options).parser_
    assert parser.model.order == 2 and parser.model.second_order == second_order
    for decoder in ("mst", "eisner"):
        parsed = parser.parse(data, decoder=decoder)
        assert all(len(p.heads) == len(s.heads) for p, s in zip(parsed, data))


def test_marginals_and_mbr_come_from_the_second_order_distribution():
    """P(heads) ∝ exp((Σ a(h, m) + the parts' scores) / T), a = T_l log Σ_l exp(s / T_l),
    and P(l | h, m) ∝ exp(s(h, m, l) / T_l): enumeration's head and labeled marginals."""
    data = separable(1)
    parser = fit(data, trainer="perceptron", epochs=2, order=2,
                 second_order="siblings+grandparents").parser_
    parser.temperature, parser.label_temperature = 5.0, 2.0
    sentence = data[1]
    from scipy.special import logsumexp, softmax

    x = Encoded.of(sentence)
    S = parser._within_reach(parser.model.labeled_scores(x), parser._out_of_reach(x))
    sib, grand = parser.model.part_scores(x, scale=0.2)
    with np.errstate(invalid="ignore"):  # the arcs out of reach: -inf, no labels
        _, _, _, mu, _, _ = brute_second_order(2.0 * logsumexp(S / 2.0, axis=2) / 5.0, sib,
                                               grand, True, True)
        labels = np.nan_to_num(softmax(S / 2.0, axis=2))
    assert np.allclose(parser.head_marginals(sentence)[:, 1:], mu[:, 1:], atol=1e-9)
    assert np.allclose(parser.marginals(sentence)[:, 1:],
                       (mu[..., None] * labels)[:, 1:], atol=1e-9)
    parsed = parser.parse([sentence], decode_as="mbr", marginals=True)[0]
    assert np.allclose(parsed.analysis["heads"], mu, atol=1e-9)
    assert parser.capabilities.names() == ["marginals", "mbr", "threads"]
    with pytest.raises(OptionError, match="kbest=2 does not apply to this linear model: "
                                          "k-best trees come from order-1 models, and this "
                                          "one is order 2"):
        parser.parse([sentence], kbest=2)


def test_arcs_left_out_leave_the_marginals_of_the_trees_without_them():
    """`iter_mixture(..., left_out=...)` (an ensemble's pruning): the head marginals of the
    second-order distribution over the projective trees that have none of those arcs, by
    enumeration."""
    _, parser, sentence, x, n, _ = _with_grandparents()
    parser.temperature, parser.label_temperature = 5.0, 2.0
    s = parser._distribution(x)  # every arc and part: the distribution's scores
    trees = all_trees(n, True, True)
    words = np.arange(1, n + 1)
    scores = np.array([tree_score(s.folded, s.sib, s.grand, t) for t in trees])
    cut = np.random.default_rng(0).random((n + 1, n + 1)) < 0.5
    cut[trees[np.argmax(scores)][1:], words] = False  # a tree is left
    kept = ~cut[trees[:, 1:], words].any(axis=1)
    assert 1 < kept.sum() < len(trees)
    p = np.exp(scores[kept] - scores[kept].max())
    mu = np.zeros((n + 1, n + 1))
    for tree, q in zip(trees[kept], p / p.sum()):
        mu[tree[1:], words] += q
    ((_, found, _),) = parser.iter_mixture([sentence], left_out=[cut])
    assert np.allclose(found[:, 1:], mu[:, 1:], atol=1e-9)


def _with_grandparents():
    """(data, a parser with siblings and grandparents trained on it, a sentence of it, the
    sentence encoded, its length, its scores with every part)."""
    data = separable(1)
    parser = fit(data, trainer="perceptron", epochs=2, order=2,
                 second_order="siblings+grandparents").parser_
    sentence = data[1]
    x = Encoded.of(sentence)
    return data, parser, sentence, x, len(sentence), parser.model.scores(x)


def test_a_long_sentence_is_parsed_without_the_grandparents(monkeypatch):
    """Past GRAND_WORDS words (O(n⁴) with grandparents) a sentence's best tree, marginals
    and MBR tree come from its arcs and siblings alone, with their memory; shorter sentences,
    and the trainers of marginals (every_part), keep every part; a gold tree's features (the
    online trainers' updates, the temperature's fit) are those of the parts scored."""
    import arborparse.linear.model as model_module
    from arborparse.linear.model import PART_BYTES, decode
    from arborparse.trees import second_order

    data, parser, sentence, x, n, full = _with_grandparents()
    assert full.grand is not None
    monkeypatch.setattr(model_module, "GRAND_WORDS", n - 1)
    cut = parser.model.scores(x)
    assert cut.grand is None and np.array_equal(cut.sib, full.sib)
    assert parser.model.part_scores(x, marginals=True)[1] is None
    assert np.array_equal(parser.model.part_scores(x, marginals=True, every_part=True)[1],
                          full.grand)
    for decoder, best in (("mst", second_order.approximate), ("eisner", second_order.eisner)):
        heads, _ = decode(cut, decoder, True)
        assert np.array_equal(heads, best(full.total, full.sib, None, True))
        for marginals in (False, True):
            parsed = parser.parse([sentence], decoder=decoder, marginals=marginals)[0]
            assert np.array_equal(parsed.heads, heads)
    seen, inside_outside = [], second_order.log_partition_and_marginals
    monkeypatch.setattr(second_order, "log_partition_and_marginals", lambda S, sib, grand,
                        root: seen.append(grand) or inside_outside(S, sib, grand, root))
    parser.head_marginals(sentence)
    parser.parse([sentence], decode_as="mbr")
    assert seen == [None, None]
    heads = np.asarray(sentence.heads)  # its gold tree's features: those it is scored with
    assert len(parser.model.tree_part_features(x, heads)) < \
        len(parser.model.tree_part_features(x, heads, every_part=True))
    assert len(parser.model.tree_part_features(x, heads)) == len(
        fit(data, trainer="perceptron", epochs=1, order=2).parser_.model.tree_part_features(
            x, heads))  # siblings alone
    assert 0 < parser.calibrate([sentence])["temperature"] < np.inf
    with pytest.raises(ValueError, match="needs their marginals too"):
        parser.model.add_part_expectations(x, np.zeros_like(cut.sib), None,
                                           np.zeros_like(parser.model.weights))
    sizes = []
    monkeypatch.setattr(model_module.memory, "check_fits",
                        lambda words, arcs, parts, *rest: sizes.append(parts))
    parser.model.check_fits(n)
    parser.model.check_fits(n, marginals=True)
    parser.model.check_fits(n, marginals=True, every_part=True)
    monkeypatch.setattr(model_module, "GRAND_WORDS", n)
    parser.model.check_fits(n)
    assert sizes == [PART_BYTES["siblings"][0], PART_BYTES["siblings"][1],
                     PART_BYTES["siblings+grandparents"][1],
                     PART_BYTES["siblings+grandparents"][0]]


def test_a_very_long_sentence_is_parsed_from_its_arcs_alone(monkeypatch):
    """Past SIBLING_WORDS words (the siblings' O(n³) memory) an order-2 model parses a
    sentence as an order-1 model would, from its arc scores: its best tree by either
    decoder, its marginals and MBR tree, with no part in its memory; the gold tree's
    features are its arcs' alone; the trainers of marginals (every_part) keep every part."""
    import arborparse.linear.model as model_module
    from arborparse.linear.model import decode
    from arborparse.trees.decode import best_tree

    _, parser, sentence, x, n, full = _with_grandparents()
    monkeypatch.setattr(model_module, "GRAND_WORDS", n - 2)
    monkeypatch.setattr(model_module, "SIBLING_WORDS", n - 1)
    arcs = parser.model.scores(x)
    assert arcs.sib is None and arcs.grand is None and np.array_equal(arcs.total, full.total)
    assert parser.model.part_scores(x, marginals=True) == (None, None)
    assert parser.model.part_scores(x, marginals=True, every_part=True)[1] is not None
    for decoder in ("mst", "eisner"):
        heads, _ = decode(arcs, decoder, True)
        assert np.array_equal(heads, best_tree(full.total, decoder == "eisner", True))
        for marginals in (False, True):
            parsed = parser.parse([sentence], decoder=decoder, marginals=marginals)[0]
            assert np.array_equal(parsed.heads, heads)
    assert np.allclose(parser.head_marginals(sentence)[:, 1:].sum(axis=0), 1.0)
    parser.parse([sentence], decode_as="mbr")
    heads = np.asarray(sentence.heads)
    assert len(parser.model.tree_part_features(x, heads)) == 0
    assert len(parser.model.tree_part_features(x, heads, every_part=True)) > 0
    sizes = []
    monkeypatch.setattr(model_module.memory, "check_fits",
                        lambda words, arcs, parts, *rest: sizes.append(parts))
    parser.model.check_fits(n, marginals=True)
    assert sizes == [0]


def test_model_file_keeps_the_order(tmp_path):
    data = separable(1)
    parser = fit(data, trainer="mira", epochs=2, order=2, second_order="siblings+grandparents",
                 multi_root=True).parser_
    parser.save(tmp_path / "m.npz")
    loaded = LinearParser.load(tmp_path / "m.npz")
    assert (loaded.model.order, loaded.model.second_order) == (2, "siblings+grandparents")
    assert not loaded.single_root
    assert [p.heads.tolist() for p in loaded.parse(data)] == \
        [p.heads.tolist() for p in parser.parse(data)]
    header, arrays = parser.parts()
    assert header["order"] == 2 and header["second_order"] == "siblings+grandparents"
    for key in ("order", "second_order"):  # files from before order 2: first order
        del header[key]
    assert LinearParser.from_parts(header, arrays, "old.npz").model.order == 1


@pytest.mark.parametrize("parts, per_cube", [("siblings", (18, 18)),
                                             ("siblings+grandparents", (64, 136))])
def test_a_sentence_whose_parts_would_not_fit_in_memory_is_refused(monkeypatch, tmp_path,
                                                                   parts, per_cube):
    """An order-2 model's parts take O(n³) memory (more with their marginals): a sentence
    whose parts would take more than the memory free is refused in one line naming it
    (file, line, words), before any is made; the command line exits with 1 and writes
    nothing."""
    from click.testing import CliRunner

    import arborparse.linear.model
    import arborparse.memory
    from arborparse.cli import cli

    data = separable(1)
    parser = fit(data, epochs=1, order=2, second_order=parts).parser_
    words = 300
    monkeypatch.setattr(arborparse.linear.model, "GRAND_WORDS", words)  # all its parts
    text = "".join(f"{i}\tw\tw\tX\tX\t_\t{i - 1}\tdep\t_\t_\n" for i in range(1, words + 1))
    (tmp_path / "long.conllu").write_text("# text = long\n" + text + "\n")
    long = read_conllu(tmp_path / "long.conllu")[0]
    need, with_marginals = (c * (words + 1) ** 3 + a * (words + 1) ** 2
                            for c, a in zip(per_cube, arborparse.linear.model.ARC_BYTES))
    monkeypatch.setattr(arborparse.memory, "available_memory", lambda: need - 1)
    message = (f"{tmp_path / 'long.conllu'}:1: a sentence of {words} words is too long for "
               f"this order-2 model: its parts would take about {need / 2 ** 30:.1f} GiB")
    with pytest.raises(ArborparseError, match=message):
        parser.parse([long])
    with pytest.raises(ArborparseError, match=f"^a sentence of {words} words"):
        parser.head_marginals(long)
    parser.save(tmp_path / "m.npz")
    out = tmp_path / "out.conllu"
    r = CliRunner().invoke(cli, ["parse", "--model", str(tmp_path / "m.npz"),
                                 str(tmp_path / "long.conllu"), "-o", str(out)])
    assert r.exit_code == 1 and message in r.output and len(r.output.splitlines()) == 1
    assert not out.exists()
    monkeypatch.setattr(arborparse.memory, "available_memory", lambda: need)
    assert parser.model.check_fits(words) is None  # the best tree fits: parsed as ever
    if with_marginals > need:  # its marginals do not
        with pytest.raises(ArborparseError, match=f"about {with_marginals / 2 ** 30:.1f} GiB"):
            parser.parse([long], decode_as="mbr")


def test_info_shows_the_order(tmp_path):
    import arborparse
    from arborparse.pipeline import info

    data = separable(1)
    nlp = arborparse.train(data, family="linear", components=["parser"], trainer="perceptron",
                           epochs=1, hash_bits=12, order=2, progress=False)
    nlp.save(tmp_path / "m.npz")
    options = info(tmp_path / "m.npz")["options"]
    assert options["order"] == 2 and options["second_order"] == "siblings"
    first = arborparse.train(data, family="linear", components=["parser"], epochs=1,
                             hash_bits=12, progress=False, trainer="mira-kbest")
    assert first.info["options"]["order"] == 1  # defaults recorded too


@pytest.mark.parametrize("given, message", [
    ({"order": 2, "trainer": "mira-kbest"}, "order 2 trains with perceptron, mira"),
    ({"order": 2, "trainer": "latent"}, "order 2 trains with .*, not latent"),
    ({"order": 1, "second_order": "siblings+grandparents"}, "applies to order 2 only"),
    ({"order": 2, "exact_features": True}, "exact_features is first-order only"),
    ({"order": 2, "trainer": "eg", "train_decoder": "mst"}, "trains on projective trees"),
    ({"order": 3}, "must be 1..2"),
    ({"order": 2, "second_order": "grandparents"}, "choose one of siblings"),
])
def test_option_errors(given, message):
    with pytest.raises(ArborparseError, match=message):
        LinearOptions.of(given)


def test_the_command_line_says_a_conflict_as_a_usage_error(tmp_path):
    from click.testing import CliRunner
    from treebanks import separable_text

    from arborparse.cli import cli

    train = tmp_path / "t.conllu"
    train.write_text(separable_text(1))
    r = CliRunner().invoke(cli, ["train", "--train", str(train), "--model",
                                 str(tmp_path / "m.npz"), "--order", "2", "--trainer",
                                 "mira-kbest"])
    assert r.exit_code == 2 and "order 2 trains with perceptron, mira" in r.output
    assert not (tmp_path / "m.npz").exists()
    r = CliRunner().invoke(cli, ["train", "--train", str(train), "--model",
                                 str(tmp_path / "m.npz"), "--order", "1", "--second-order",
                                 "siblings+grandparents"])
    assert r.exit_code == 2 and "--second-order applies to order 2 only" in r.output


def test_order_1_is_every_trainers():
    for trainer in ("mira-kbest", "mira-factored", "latent", "latent-lbfgs"):
        assert LinearOptions.of({"order": 1, "trainer": trainer}).order == 1


def test_help_lists_the_order_options():
    from click.testing import CliRunner

    from arborparse.cli import cli

    r = CliRunner().invoke(cli, ["train", "--help"])
    assert "--order" in r.output and "--second-order" in r.output


def test_every_trainer_refuses_what_order_2_cannot_honour():
    from arborparse.linear.eg import EGTrainer
    from arborparse.linear.loglinear import LogLinearTrainer

    with pytest.raises(ArborparseError, match="applies to order 2 only"):
        EGTrainer(order=1, second_order="siblings+grandparents")
    with pytest.raises(ArborparseError, match="not latent"):
        LogLinearTrainer("sgd", order=2, clusters=3)
    with pytest.raises(ArborparseError, match="must be 1..2"):
        LogLinearTrainer("lbfgs", order=3)
    with pytest.raises(ArborparseError, match="trains on projective trees"):
        EGTrainer(order=2, train_decoder="mst")
