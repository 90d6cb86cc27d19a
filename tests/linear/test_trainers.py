import math

import numpy as np
import pytest
from scipy.optimize import minimize
from treebanks import separable

import arborparse.pipeline
from arborparse.errors import ArborparseError
from arborparse.eval import evaluate
from arborparse.linear.hildreth import hildreth
from arborparse.linear.online import TRAINERS, OnlineTrainer
from arborparse.linear.parser import LinearParser


@pytest.mark.parametrize("decoder", ["mst", "eisner"])
@pytest.mark.parametrize("trainer", TRAINERS)
def test_reaches_full_training_accuracy_on_separable_data(trainer, decoder):
    data = separable()
    # 18 bits: at 16, several hundred of the 10,000 features of these sentences' arcs and
    # labels share a weight with another (MIRA's averaged weights, with eisner, labelled
    # one word wrong there once the suffix features came)
    fitted = OnlineTrainer(trainer, epochs=8, decoder=decoder, hash_bits=18,
                           progress=False).fit(data, data)
    scores = evaluate(data, fitted.parser_.parse(data))
    assert scores["UAS"] == 100.0 and scores["LAS"] == 100.0
    assert fitted.history_[-1]["train_errors"] == 0 or fitted.best_epoch_ < 8


def test_exact_feature_dictionary():
    data = separable()
    fitted = OnlineTrainer("perceptron", epochs=5, exact_features=True,
                           progress=False).fit(data, data)
    model = fitted.parser_.model
    assert not model.hashed
    assert len(model.weights) == len(model.keys) + len(model.label_keys) * len(model.labels)
    assert np.all(model.keys[1:] > model.keys[:-1])
    assert evaluate(data, fitted.parser_.parse(data))["LAS"] == 100.0


def test_training_is_reproducible_and_seeded():
    data = separable()
    a = OnlineTrainer("mira", epochs=2, seed=3, hash_bits=14, progress=False).fit(data)
    b = OnlineTrainer("mira", epochs=2, seed=3, hash_bits=14, progress=False).fit(data)
    assert np.array_equal(a.parser_.model.weights, b.parser_.model.weights)


def test_bad_options():
    with pytest.raises(ArborparseError, match="unknown trainer"):
        OnlineTrainer("sgd")
    with pytest.raises(ArborparseError, match="unknown decoder"):
        OnlineTrainer(decoder="cky")
    with pytest.raises(ArborparseError, match="no sentences"):
        OnlineTrainer(progress=False).fit([])


def test_gold_trees_are_checked():
    data = separable(1)
    broken = data[0].with_tree(np.array([-1, 0, 0, 0]))
    with pytest.raises(ArborparseError, match="3 words attach to the root"):
        OnlineTrainer(progress=False).fit([broken])
    OnlineTrainer(progress=False, single_root=False, epochs=1).fit([broken])


def qp(G, b, C):
    """The same dual by a general-purpose optimizer."""
    V = len(b)
    result = minimize(lambda a: 0.5 * a @ G @ a - b @ a, np.zeros(V),
                      jac=lambda a: G @ a - b, bounds=[(0, None if math.isinf(C) else C)] * V,
                      method="L-BFGS-B", options={"ftol": 1e-14, "gtol": 1e-12})
    return result.x


@pytest.mark.parametrize("C", [math.inf, 0.3])
def test_hildreth_solves_the_qp(C):
    rng = np.random.default_rng(0)
    for V in (1, 3, 6):
        A = rng.normal(size=(V, 8))
        G = A @ A.T
        b = rng.normal(size=V) + 0.5
        alpha = hildreth(G, b, C)
        ref = qp(G, b, C)

        def objective(a, G=G, b=b):
            return 0.5 * a @ G @ a - b @ a

        assert objective(alpha) <= objective(ref) + 1e-8
        assert (alpha >= 0).all() and (alpha <= C + 1e-12).all()
    # one constraint: the closed form of single-best MIRA
    assert hildreth(np.array([[4.0]]), np.array([2.0]), math.inf)[0] == pytest.approx(0.5)
    assert hildreth(np.array([[4.0]]), np.array([-2.0]), math.inf)[0] == 0.0


def test_choose_C_keeps_the_best_on_dev(tmp_path):
    from arborparse.linear.common import ChooseC
    from arborparse.linear.loglinear import LogLinearTrainer

    data = separable()

    def make(C):
        return LogLinearTrainer("sgd", C=C, epochs=3, learning_rate=0.5, hash_bits=12,
                                progress=False)

    path = tmp_path / "m.npz"
    chosen = ChooseC(make, (1e-9, 10.0), progress=False).fit(data, data, save_best=path)
    assert chosen.C_ == 10.0 and [r["C"] for r in chosen.history_] == [1e-9, 10.0]
    assert chosen.history_[1]["LAS"] == 100.0 > chosen.history_[0]["LAS"]
    assert evaluate(data, LinearParser.load(path).parse(data))["LAS"] == 100.0
    with pytest.raises(ArborparseError, match="choosing C needs development data"):
        ChooseC(make, (1.0,), progress=False).fit(data)


def test_C_auto_is_the_default_with_dev(tmp_path):
    from click.testing import CliRunner
    from treebanks import separable_text

    from arborparse.cli import cli

    train = tmp_path / "t.conllu"
    train.write_text(separable_text())
    model = tmp_path / "m.npz"
    base = ["train", "--train", str(train), "--model", str(model), "--epochs", "2",
            "--hash-bits", "12", "--trainer", "loglinear-sgd"]
    r = CliRunner().invoke(cli, base + ["--dev", str(train)])
    assert r.exit_code == 0 and "chose C = " in r.output, r.output
    chosen = arborparse.pipeline.info(model)["chosen_on_dev"]  # the C that was chosen
    assert f"chose C = {chosen['C']:g} " in r.output and chosen["epoch"] in (1, 2)
    r = CliRunner().invoke(cli, ["info", str(model)])
    assert f"chosen_on_dev       epoch {chosen['epoch']}  C {chosen['C']:g}  labeler " in r.output
    r = CliRunner().invoke(cli, base)
    assert r.exit_code == 0 and "no dev data: C = 0.3, the default" in r.output
    r = CliRunner().invoke(cli, base + ["-C", "auto"])
    assert r.exit_code == 1 and "choosing C needs development data" in r.output
    r = CliRunner().invoke(cli, base + ["--trainer", "mira", "-C", "auto"])  # a usage error
    assert r.exit_code == 2 and "C 'auto' does not apply to the trainer mira" in r.output


def test_calibration_recovers_known_temperatures():
    """Labeled trees drawn from P(heads) Π P(l | h, m) for a known T and T_l (heads
    ∝ exp(Σ a(h, m) / T), a = T_l log Σ_l exp(s / T_l); labels ∝ exp(s / T_l)): the fit
    finds both."""
    from arborparse import trees
    from arborparse.linear.model import Encoded

    data = separable(2)
    parser = LinearParser(OnlineTrainer("perceptron", epochs=2, hash_bits=12,
                                        progress=False).fit(data).parser_.model)  # no reach
    from oracles import recovered_temperatures

    true_t, true_label_t = 7.0, 2.0

    def draw(sentence, rng):
        S = parser.model.labeled_scores(Encoded.of(sentence)) / true_label_t
        folded = np.logaddexp.reduce(S, axis=2)
        heads = trees.sample(folded * true_label_t / true_t, 1, rng=rng)[0]
        m = np.arange(1, len(heads))
        return heads, np.exp(S[heads[1:], m] - folded[heads[1:], m][:, None])

    fitted = recovered_temperatures(parser, data * 40, draw, parser.model.labels)
    assert fitted["temperature"] == pytest.approx(true_t, rel=0.1)
    assert fitted["label_temperature"] == pytest.approx(true_label_t, rel=0.1)


def test_calibration_fits_a_projective_distribution_to_the_projectivized_trees():
    """A non-projective dev tree counts, made projective as training makes it, where the
    distribution is over projective trees; over every tree it counts as it is."""
    from arborparse.transforms import projectivize
    from arborparse.trees.structure import find_cycle, is_projective

    data = separable(1)
    model = OnlineTrainer("perceptron", epochs=1, hash_bits=12, progress=False).fit(
        data).parser_.model
    sentence = max(data, key=len)
    n = len(sentence)
    crossing = next(heads for m in range(1, n + 1) for h in range(1, n + 1)
                    if (heads := np.where(np.arange(n + 1) == m, h, sentence.heads))[m] != m
                    and find_cycle(heads) is None and not is_projective(heads))
    # one arc moved from the gold tree; labels unknown to the model, so that the heads'
    # fit alone tells the trees apart
    crossing = sentence.with_tree(crossing, ["unseen"] * n)

    def fitted(decoder, tree):
        return LinearParser(model, decoder).calibrate([tree])["temperature"]

    assert fitted("eisner", crossing) == fitted("eisner", projectivize(crossing)) != 1.0
    assert fitted("mst", crossing) != fitted("mst", projectivize(crossing))


def test_calibrated_temperature_is_saved(tmp_path):
    data = separable()
    fitted = OnlineTrainer("perceptron", epochs=2, hash_bits=12, progress=False).fit(
        data, data, save_best=tmp_path / "m.npz")
    saved = LinearParser.load(tmp_path / "m.npz")
    assert "temperature" in fitted.history_[0]
    assert saved.temperature == fitted.parser_.temperature == fitted.history_[0]["temperature"]
    assert saved.label_temperature == fitted.parser_.label_temperature == \
        fitted.history_[0]["label_temperature"] != saved.temperature


@pytest.mark.parametrize("label_temperature", [None, 0.7])
@pytest.mark.parametrize("decoder", ["mst", "eisner"])
def test_kbest_trees_and_marginals_match_enumeration(decoder, label_temperature):
    """LinearParser.kbest: every tree, best first by Σ max_l s(h, m, l), each with its best
    labels (root where and only where the head is 0) and P(tree with those labels) =
    P(heads) Π P(l | h, m), where
    P(heads) ∝ exp(Σ a(h, m) / T), a = T_l log Σ_l exp(s / T_l), and P(l | h, m) ∝
    exp(s(h, m, l) / T_l) (T_l = T: exp(Σ max_l s(h, m, l) / T - log Z)); head_marginals,
    marginals and LabelProb: the enumerated ones."""
    from oracles import brute
    from scipy.special import logsumexp, softmax

    from arborparse.linear.model import Encoded

    data = separable(1)
    parser = OnlineTrainer("perceptron", epochs=1, decoder=decoder, hash_bits=14,
                           progress=False).fit(data).parser_
    parser.temperature = 3.0  # a flatter distribution: every tree has weight
    parser.label_temperature = label_temperature or parser.temperature
    sentence = min(data, key=len)
    x = Encoded.of(sentence)
    S = parser._within_reach(parser.model.labeled_scores(x), parser._out_of_reach(x))
    T, T_l = parser.temperature, parser.label_temperature
    arcs, best = T_l * logsumexp(S / T_l, axis=2) / T, S.max(axis=2)
    with np.errstate(invalid="ignore"):  # no labels on the arcs out of reach
        label_p = np.nan_to_num(softmax(S / T_l, axis=2))
    projective = decoder == "eisner"
    trees, _, log_z, mu = brute(arcs, projective, True)
    found = parser.kbest(sentence, len(trees) + 5)
    assert len(found) == len(trees)
    m = np.arange(1, len(sentence) + 1)
    for p, heads, labels in found:
        # each arc's best label, root where and only where the head is 0; the probability
        # of the tree with those labels
        allowed = np.where((heads[1:, None] == 0) == (np.array(parser.model.labels) == "root"),
                           S[heads[1:], m], -np.inf)
        chosen = allowed.argmax(axis=1)
        assert labels == [parser.model.labels[i] for i in chosen]
        assert np.isclose(p, np.exp(arcs[heads[1:], m].sum() - log_z) *
                          label_p[heads[1:], m, chosen].prod())
    # ranked as the best tree is chosen: the first is the parse's
    scores = [best[heads[1:], m].sum() for _, heads, _ in found]
    assert scores == sorted(scores, reverse=True)
    assert list(found[0][1]) == list(parser.parse([sentence])[0].heads)
    assert np.allclose(parser.head_marginals(sentence)[:, 1:], mu[:, 1:], atol=1e-9)
    assert np.allclose(parser.marginals(sentence)[:, 1:], (mu[..., None] * label_p)[:, 1:],
                       atol=1e-9)
    parsed = parser.parse([sentence], marginals=True)[0]
    heads = parsed.heads
    index = [parser.model.labels.index(label) for label in parsed.deprels]
    rooted = np.array(parser.model.labels) == "root"  # LabelProb: over the labels allowed
    given = softmax(np.where((heads[1:, None] == 0) == rooted, S[heads[1:], m] / T_l,
                             -np.inf), axis=1)[m - 1, index]
    assert [f"HeadProb={h:.4f}|LabelProb={lp:.4f}" for h, lp in
            zip(mu[heads[1:], m], given)] == [parsed.rows[r][9] for r in parsed.word_rows]
