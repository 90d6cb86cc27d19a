"""Hidden arc clusters (Smith & Smith 2007, §5): scores, likelihood, gradient, decoders."""

import itertools

import numpy as np
import pytest
from click.testing import CliRunner
from oracles import all_trees
from scipy.special import logsumexp
from treebanks import separable, separable_text

import arborparse
from arborparse.cli import cli
from arborparse.eval import evaluate
from arborparse.linear.templates import arc_features, cluster_index
from arborparse.linear.loglinear import LogLinearTrainer, negative_log_likelihood
from arborparse.linear.model import Encoded, LinearModel, gold_feature_keys
from arborparse.linear.parser import LinearParser

BITS = 10


def _model(clusters, seed=0, scale=0.3):
    data = separable(1)
    labels = sorted({d for s in data for d in s.deprels})
    model = LinearModel.hashing(BITS, labels, clusters)
    model.weights = np.random.default_rng(seed).normal(scale=scale, size=1 << BITS)
    return data, model


def _cluster_arc_scores(model, x):
    """w · f(x, h, m, z) summed feature by feature, outside the compiled scorer."""
    t = x.table
    N = len(t.attrs)
    A = np.full((model.clusters, N, N), -np.inf)
    for h, m in itertools.product(range(N), range(1, N)):
        if h != m:
            count = arc_features(t.attrs, t.feats_ptr, t.feats, h, m, x.buf)
            for z in range(model.clusters):
                A[z, h, m] = sum(
                    model.weights[cluster_index(f, z, model.clusters, model.keys, 1 << BITS)]
                    for f in x.buf[:count])
    return A


def _label_scores(model, x):
    """The label part of s(h, m, l): the plain model's scores less its arc scores."""
    plain = LinearModel(model.weights, model.labels)
    with np.errstate(invalid="ignore"):
        return plain.labeled_scores(x) - plain.scores(x).arc[:, :, None]


def test_scores_sum_the_clusters_out():
    data, model = _model(3)
    x = Encoded.of(data[4])
    A = _cluster_arc_scores(model, x)
    labels_only = _label_scores(model, x)
    S, P = model.labeled_scores(x, posteriors=True)
    off = np.isfinite(A[0])
    expected = logsumexp(np.where(off, A, 0), axis=0)[:, :, None] + labels_only
    assert np.allclose(S[off], expected[off])
    assert np.isneginf(S[~off]).all()
    # cluster posteriors sum to 1 on every arc
    assert np.allclose(P[:, off].sum(axis=0), 1.0)
    assert np.allclose(P[:, off], np.exp(A[:, off] - logsumexp(A[:, off], axis=0)))
    # max-z keeps each arc's best cluster
    assert np.allclose(model.scores(x, combine="max").arc[off], A.max(axis=0)[off])


def test_one_cluster_is_the_plain_model():
    data, model = _model(1)
    plain = LinearModel(model.weights, model.labels)
    x = Encoded.of(data[2])
    assert np.array_equal(model.labeled_scores(x), plain.labeled_scores(x))
    fits = [LogLinearTrainer("sgd", C=10.0, epochs=3, learning_rate=0.5, hash_bits=12,
                             progress=False, **extra).fit(data)
            for extra in ({}, {"clusters": 1})]
    assert np.array_equal(fits[0].parser_.model.weights, fits[1].parser_.model.weights)


@pytest.mark.parametrize("projective", [False, True])
def test_marginal_likelihood_by_enumerating_trees_and_clusters(projective):
    """-log Σ_z P(y, z | x) against a sum over every tree and every cluster of each arc."""
    data, model = _model(2, scale=0.2)
    sentence = data[0]  # three words
    trainer = LogLinearTrainer(C=1.0, train_decoder="eisner" if projective else "mst",
                               hash_bits=BITS, progress=False, clusters=2)
    labels, prepared = trainer._data(data)
    assert labels == model.labels
    x, heads, gold_labels = prepared[0]
    A = _cluster_arc_scores(model, x)
    B = _label_scores(model, x)
    n, L = len(sentence), len(labels)
    m = np.arange(1, n + 1)
    joint = []  # log-score of every (tree, labels, clusters)
    gold = []
    for tree in all_trees(n, projective, True):
        for labeling in itertools.product(range(L), repeat=n):
            for zs in itertools.product(range(2), repeat=n):
                s = A[list(zs), tree[1:], m].sum() + B[tree[1:], m, list(labeling)].sum()
                joint.append(s)
                if (tree == heads).all() and list(labeling) == list(gold_labels[1:]):
                    gold.append(s)
    expected = logsumexp(joint) - logsumexp(gold)
    grad = np.zeros_like(model.weights)
    value = negative_log_likelihood(model, x, heads, gold_labels, model.weights, projective,
                                    True, grad)
    assert value == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("optimizer", ["sgd", "lbfgs"])
def test_fits_separable_data(optimizer):
    data = separable()
    fitted = LogLinearTrainer(optimizer, C=10.0, epochs=8 if optimizer == "sgd" else 60,
                              learning_rate=0.5, hash_bits=14, progress=False, clusters=4,
                              init_noise=0.01).fit(data, data)
    for decode_as in ("map", "mbr", "max-z"):
        scores = evaluate(data, fitted.parser_.parse(data, decode_as=decode_as))
        assert scores["UAS"] == 100.0 and scores["LAS"] == 100.0


def test_initial_noise_is_seeded():
    data = separable(1)
    fits = [LogLinearTrainer(epochs=1, hash_bits=12, progress=False, clusters=2,
                             init_noise=0.1, seed=seed).fit(data) for seed in (3, 3, 4)]
    weights = [f.parser_.model.weights for f in fits]
    assert np.array_equal(weights[0], weights[1])
    assert not np.array_equal(weights[0], weights[2])


def test_max_z_decodes_the_best_tree_of_best_clusters():
    data, model = _model(3)
    parser = LinearParser(model, "mst")
    sentence = data[5]
    x = Encoded.of(sentence)
    best = model.scores(x, combine="max")
    total = best.total
    trees = all_trees(len(sentence), False, True)
    m = np.arange(1, len(sentence) + 1)
    expected = trees[np.argmax(total[trees[:, 1:], m].sum(axis=1))]
    assert (parser.parse_one(sentence, decode_as="max-z").heads == expected).all()


def test_model_file_and_command_line(tmp_path):
    train = tmp_path / "train.conllu"
    train.write_text(separable_text())
    model = tmp_path / "latent.npz"
    r = CliRunner().invoke(cli, ["train", "--train", str(train), "--model", str(model),
                                 "--trainer", "latent", "--clusters", "3", "--epochs", "6",
                                 "-C", "10", "--learning-rate", "0.5", "--hash-bits", "14",
                                 "--quiet", "--components", "parser"])
    assert r.exit_code == 0, r.output
    assert arborparse.load(model).parser.model.clusters == 3
    for decode_as in ("map", "mbr", "max-z"):
        r = CliRunner().invoke(cli, ["parse", "--model", str(model), str(train), "--decode",
                                     decode_as])
        assert r.exit_code == 0 and r.output == train.read_text()
    r = CliRunner().invoke(cli, ["train", "--train", str(train), "--model", str(model),
                                 "--trainer", "perceptron", "--clusters", "2"])
    assert r.exit_code == 2 and "--clusters does not apply to --trainer perceptron" in r.output


def test_clusters_need_hashing():
    with pytest.raises(ValueError, match="hashed"):
        LinearModel(np.zeros(4), ["a"], np.arange(2, dtype=np.uint64),
                        np.arange(1, dtype=np.uint64), clusters=2)


def test_squeeze_drops_the_word_pairs_and_four_grams():
    data = separable(2)
    x = Encoded.of(data[5])
    t = x.table
    full = arc_features(t.attrs, t.feats_ptr, t.feats, 4, 3, x.buf.copy())
    buf = x.buf.copy()
    count = arc_features(t.attrs, t.feats_ptr, t.feats, 4, 3, buf, True)
    # 2 views x (4 word pairs + 4 four-grams), and the pair of both suffixes, x (plain,
    # with direction-distance) fewer
    assert count == full - (2 * 8 + 1) * 2
    plain = np.empty_like(buf)
    arc_features(t.attrs, t.feats_ptr, t.feats, 4, 3, plain)
    assert set(buf[:count]) < set(plain[:full])
    encoded = [Encoded.of(s) for s in data]
    heads = [s.heads for s in data]
    assert len(gold_feature_keys(encoded, heads, squeeze=True)[0]) < \
        len(gold_feature_keys(encoded, heads)[0])


def test_squeezed_latent_model_trains_and_saves(tmp_path):
    data = separable()
    fitted = LogLinearTrainer("sgd", C=10.0, epochs=4, learning_rate=0.5, hash_bits=12,
                              progress=False, clusters=2, init_noise=0.01,
                              squeeze=True).fit(data, data)
    path = tmp_path / "squeezed.npz"
    fitted.parser_.save(path)
    loaded = LinearParser.load(path)
    assert loaded.model.squeeze and loaded.model.clusters == 2
    assert [s.to_text() for s in loaded.parse(data)] == \
        [s.to_text() for s in fitted.parser_.parse(data)]
