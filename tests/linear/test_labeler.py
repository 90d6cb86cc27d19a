"""The second-stage labeler: its order, what it learns that first-order labels cannot, the
weight dev chooses, its place in the model file and in the parse."""

import io
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from treebanks import separable_text

from arborparse.errors import TreebankFormatError
from arborparse.io import read_conllu
from arborparse.io.conllu import MISC, UPOS, Sentence
from arborparse.io.model_files import ModelFileError
from arborparse.linear.labeler import Labeler, labelling_order
from arborparse.linear.online import OnlineTrainer
from arborparse.linear.parser import LinearParser
from arborparse.linear.tokens import encode


def random_heads(rng, n):
    """A random tree of n words (each word's head an earlier word or the root, shuffled)."""
    perm = rng.permutation(n) + 1
    heads = np.full(n + 1, -1)
    heads[perm[0]] = 0
    for i in range(1, n):
        heads[perm[i]] = perm[rng.integers(0, i)]
    return heads


def depth(heads, m):
    d = 0
    while m != 0:
        m, d = heads[m], d + 1
    return d


@settings(deadline=None)  # the first example compiles
@given(st.integers(1, 12), st.integers(0, 10 ** 6))
def test_labelling_order_puts_a_head_and_the_siblings_nearer_it_first(n, seed):
    heads = random_heads(np.random.default_rng(seed), n)
    order = list(labelling_order(heads))
    assert sorted(order) == list(range(1, n + 1))
    place = {m: i for i, m in enumerate(order)}
    for m in range(1, n + 1):
        h = heads[m]
        assert h == 0 or place[h] < place[m]
        for c in range(1, n + 1):
            if c != m and heads[c] == h and (c < h) == (m < h) and abs(c - h) < abs(m - h):
                assert place[c] < place[m]


def sentences(rng, count, label):
    """Sentences of identical words ("w", tag X) on random trees, each word labelled by
    label(heads, m): nothing but the tree tells the labels apart."""
    out = []
    for _ in range(count):
        n = int(rng.integers(2, 9))
        heads = random_heads(rng, n)
        rows = [[str(m), "w", "w", "X", "X", "_", str(heads[m]), label(heads, m), "_", "_"]
                for m in range(1, n + 1)]
        out.append(Sentence([], rows, list(range(n)), heads))
    return out


LEAF = lambda heads, m: "leaf" if m not in heads[1:] else "inner"  # noqa: E731
PARITY = lambda heads, m: "odd" if depth(heads, m) % 2 else "even"  # noqa: E731


@pytest.mark.parametrize("label", [LEAF, PARITY], ids=["children", "head's label"])
def test_the_labeler_learns_labels_that_only_the_tree_tells(label):
    """Whether a word has children, and the label of its head (the parity of its depth),
    are beyond the model's first-order label features; the labeler reads them."""
    rng = np.random.default_rng(0)
    train, test = sentences(rng, 300, label), sentences(rng, 100, label)
    names = sorted({d for s in train for d in s.deprels})
    labeler = Labeler.fit(train, names).with_weight(0.0)
    for s in test:
        found = labeler.labels(encode(s), s.heads, np.zeros((len(s.heads), len(names))))
        assert [names[i] for i in found[1:]] == s.deprels


@pytest.fixture(scope="module")
def english(ud):
    """A perceptron parser of 400 English-EWT sentences, the next 200 as dev."""
    sentences = read_conllu(ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu")
    train, dev = sentences[:400], sentences[400:600]
    parser = OnlineTrainer("perceptron", epochs=2, hash_bits=18, progress=False).fit(
        train).parser_
    labeler = Labeler.fit(train, parser.model.labels, bits=14)
    return parser, labeler, dev


def test_dev_chooses_the_weight_or_leaves_the_labeler_out(english):
    from arborparse.eval import evaluate

    parser, labeler, dev = english
    plain = evaluate(dev, parser.parse(dev))
    scores = parser.fit_labeler(labeler, dev)
    assert scores == evaluate(dev, parser.parse(dev))  # the scores of the parser as it is
    assert scores["UAS"] == plain["UAS"]  # the same trees
    assert scores["LAS"] >= plain["LAS"]  # the model's own labels were among the choices
    if scores["LAS"] > plain["LAS"]:
        assert parser.labeler is not None and parser.labeler.joint_weight >= 0
    useless = Labeler(np.zeros_like(labeler.weights))  # every label scored 0: no better
    parser.fit_labeler(useless, dev)
    assert parser.labeler is None
    assert evaluate(dev, parser.parse(dev)) == plain


def test_a_parser_with_its_labeler_saves_loads_and_parses_the_same(english, tmp_path):
    parser, labeler, dev = english
    relabeled = LinearParser(parser.model, labeler=replace(labeler.with_weight(0.5),
                                                           temperature=2.5))
    path = tmp_path / "p.npz"
    relabeled.save(path)
    loaded = LinearParser.load(path)
    assert loaded.labeler.joint_weight == 0.5 and loaded.labeler.temperature == 2.5
    for options in ({}, {"decode_as": "mbr"}, {"marginals": True}):
        assert [s.to_text() for s in loaded.parse(dev[:20], **options)] == \
            [s.to_text() for s in relabeled.parse(dev[:20], **options)]
    assert all((a.heads == b.heads).all()  # the labeler changes labels, never trees
               for a, b in zip(relabeled.parse(dev[:20]), parser.parse(dev[:20])))


def test_without_its_temperature_label_probabilities_are_the_models(english):
    """A labeler without a temperature (files written before it): LabelProb is the
    model's P(label | arc) of the label the labeler gave, over the labels the arc may
    take."""
    parser, labeler, dev = english
    relabeled = LinearParser(parser.model, labeler=labeler.with_weight(0.1))
    index = {d: i for i, d in enumerate(parser.model.labels)}
    for sentence in dev[:10]:
        parsed = relabeled.parse_one(sentence, marginals=True)
        mu = relabeled.marginals(sentence)
        for m, (h, d, misc) in enumerate(zip(parsed.heads[1:], parsed.deprels,
                                             parsed.column(9)), 1):
            # over the labels the arc may take: root under 0, anything else elsewhere
            allowed = mu[h, m] * ((np.arange(len(index)) == index["root"]) == (h == 0))
            expected = allowed[index[d]] / allowed.sum()
            assert float(misc.split("LabelProb=")[1]) == pytest.approx(expected, abs=1e-4)


def labeler_distributions(parser, sentence, temperature):
    """(heads, each word's P(label) (n+1, L) by the labeler's scores plus the weighted
    model's at `temperature`, over the labels its arc may take) of the parser's tree."""
    x = parser.model.encoded(sentence)
    heads = parser.parse_one(sentence).heads
    joint = parser._joint(x, heads)
    own = np.zeros(joint.shape)
    parser.labeler.labels(x.table, heads, joint, own, parser.root_label)
    scores = (own + parser.labeler.joint_weight * joint)[1:] / temperature
    root, words = parser.root_label, heads[1:]
    if root >= 0:  # the root word takes root, every other word anything else
        scores[words == 0] = -np.inf
        scores[words == 0, root] = 0.0
        scores[words != 0, root] = -np.inf
    p = np.exp(scores - scores.max(axis=1, keepdims=True))
    return heads, np.vstack([np.zeros(p.shape[1]), p / p.sum(axis=1, keepdims=True)])


def test_label_probabilities_are_the_labelers_own_at_its_temperature(english):
    """With --marginals, LabelProb is the probability of the labeler's label by the scores
    it chose it by, at its temperature; 1 for the root word's root."""
    parser, labeler, dev = english
    relabeled = LinearParser(parser.model, labeler=replace(labeler.with_weight(0.1),
                                                           temperature=3.0))
    index = {d: i for i, d in enumerate(parser.model.labels)}
    for sentence in dev[:10]:
        parsed = relabeled.parse_one(sentence, marginals=True)
        heads, p = labeler_distributions(relabeled, sentence, 3.0)
        assert (parsed.heads == heads).all()
        for m, (h, d, misc) in enumerate(zip(parsed.heads[1:], parsed.deprels,
                                             parsed.column(9)), 1):
            assert p[m].argmax() == index[d]  # the label given is the most probable
            found = float(misc.split("LabelProb=")[1])
            assert found == pytest.approx(p[m, index[d]], abs=1e-4)
            assert h != 0 or found == 1.0


def test_label_distribution_is_what_each_label_was_chosen_by_on_any_tree(english):
    """label_distribution: every label's probability for each word under a tree (here the
    parser's and a random one), by the labeler's scores at its temperature, the labels
    before it as it chose them: its rows sum to 1, the labels chosen are its argmax and
    their probabilities are LabelProb; without a labeler, the model's P(l | arc) at T_l."""
    parser, labeler, dev = english
    relabeled = LinearParser(parser.model, labeler=replace(labeler.with_weight(0.5),
                                                           temperature=2.0))
    plain = LinearParser(parser.model, label_temperature=1.5)
    rng = np.random.default_rng(0)
    for sentence in dev[:8]:
        heads, p = labeler_distributions(relabeled, sentence, 2.0)
        found = relabeled.label_distribution(sentence, heads)
        assert np.allclose(found, p[1:]) and np.allclose(found.sum(axis=1), 1)
        parsed = relabeled.parse_one(sentence, marginals=True)
        chosen = [parser.model.labels.index(d) for d in parsed.deprels]
        assert found.argmax(axis=1).tolist() == chosen
        label_prob = [float(parsed.rows[r][MISC].split("LabelProb=")[1])
                      for r in parsed.word_rows]
        assert np.allclose(found[np.arange(len(sentence)), chosen], label_prob, atol=1e-4)
        other = random_heads(rng, len(sentence))
        scores = plain._joint(parser.model.encoded(sentence), other)[1:] / 1.5
        root, words = parser.root_label, other[1:]
        scores[words == 0] = -np.inf  # the root word takes root, every other word not
        scores[words == 0, root] = 0.0
        scores[words != 0, root] = -np.inf
        expected = np.exp(scores - scores.max(axis=1, keepdims=True))
        assert np.allclose(plain.label_distribution(sentence, other),
                           expected / expected.sum(axis=1, keepdims=True))


def test_iter_mixture_is_what_parse_gives(english):
    """iter_mixture (what an ensemble mixes): each sentence, the head marginals of
    parse(marginals=True), and its encoding, with which label_distributions gives what it
    gives without; a sentence without tags is refused as parse refuses it."""
    parser, labeler, dev = english
    relabeled = LinearParser(parser.model, labeler=labeler.with_weight(0.5))
    mixed = list(relabeled.iter_mixture(dev[:8]))
    assert [s for s, _, _ in mixed] == dev[:8]
    for (s, mu, _), parsed in zip(mixed, relabeled.parse(dev[:8], marginals=True)):
        assert np.array_equal(mu, parsed.analysis["heads"])
    rng = np.random.default_rng(0)
    trees = [random_heads(rng, len(s)) for s in dev[:8]]
    assert all(np.array_equal(a, b) for a, b in zip(
        relabeled.label_distributions(dev[:8], trees),
        relabeled.label_distributions(dev[:8], trees, [x for _, _, x in mixed])))
    untagged = dev[0].with_columns({UPOS: ["_"] * len(dev[0])})
    with pytest.raises(TreebankFormatError, match="UPOS"):
        list(relabeled.iter_mixture([untagged]))


def test_the_labelers_temperature_is_fitted_on_dev_and_recovers_a_known_one(english):
    """Dev labels drawn from the labeler's own distribution at T = 4 on the trees the
    parser decodes: `fit_temperature` finds T to within 10 %; `fit_labeler` fits one."""
    parser, labeler, dev = english
    fresh = LinearParser(parser.model)
    fresh.fit_labeler(labeler, dev)
    index = {d: i for i, d in enumerate(parser.model.labels)}
    dev_gold = [(s.heads, np.array([-1] + [index.get(d, -1) for d in s.deprels]))
                for s in dev]
    assert fresh.labeler.temperature == fresh.labeler.fit_temperature(
        fresh._decoded(dev), dev_gold, fresh.root_label).temperature  # fitted on dev
    relabeled = LinearParser(parser.model, labeler=labeler.with_weight(0.5))
    rng = np.random.default_rng(0)
    tried, gold = [], []
    for sentence in dev:
        heads, p = labeler_distributions(relabeled, sentence, 4.0)
        x = parser.model.encoded(sentence)
        joint = relabeled._joint(x, heads)
        for _ in range(10):
            drawn = [-1] + [rng.choice(len(row), p=row) for row in p[1:]]
            tried.append((x.table, heads, joint))
            gold.append((heads, np.array(drawn)))
    fitted = relabeled.labeler.fit_temperature(tried, gold, parser.root_label).temperature
    assert fitted == pytest.approx(4.0, rel=0.1)
    found = relabeled.calibrate(dev)  # refits every temperature, the labeler's too
    assert found["labeler_temperature"] == relabeled.labeler.temperature > 0
    relabeled.calibrate([])  # nothing to fit on: the labeler's temperature stays
    assert relabeled.labeler.temperature == found["labeler_temperature"]
    read = []

    def counted():
        for s in dev:
            read.append(s)
            yield s
    relabeled.calibrate(counted(), limit=5)  # the labeler's fit on the limit's sentences
    assert len(read) <= 6 and relabeled.labeler.temperature == \
        relabeled.labeler.fit_temperature(relabeled._decoded(read[:5]), dev_gold[:5],
                                          parser.root_label).temperature


def test_a_damaged_labeler_is_refused_naming_the_file(english, tmp_path):
    from arborparse.io import model_files

    parser, labeler, _ = english
    path = tmp_path / "p.npz"
    header, arrays = LinearParser(parser.model, labeler=labeler).parts()
    arrays["labeler"] = arrays["labeler"][:, :-1]  # a label short
    model_files.save(path, "linear", 2, header, arrays)
    with pytest.raises(ModelFileError, match="p.npz.*labeler"):
        LinearParser.load(path)
    header, arrays = LinearParser(parser.model, labeler=labeler).parts()
    header["labeler"]["temperature"] = -1.0
    model_files.save(path, "linear", 2, header, arrays, force=True)
    with pytest.raises(ModelFileError, match="p.npz.*labeler.*temperature"):
        LinearParser.load(path)


def test_train_adds_the_labeler_with_dev_unless_told_not_to(tmp_path):
    import arborparse
    from treebanks import separable

    options = dict(components="parser", progress=False, trainer="perceptron", epochs=1,
                   hash_bits=12)
    nlp = arborparse.train(separable(3), separable(1), path=tmp_path / "m.npz", **options)
    assert "labeler" in nlp.info["chosen_on_dev"]  # its weight, or None: dev left it out
    assert arborparse.load(tmp_path / "m.npz").info == nlp.info
    off = arborparse.train(separable(3), separable(1), labeler=False, **options)
    assert off.parser.labeler is None and "labeler" not in off.info["chosen_on_dev"]
    assert off.info["options"]["labeler"] is False
    assert arborparse.train(separable(3), **options).parser.labeler is None  # no dev


def test_an_interrupt_while_the_labeler_trains_says_what_the_file_holds(tmp_path,
                                                                         monkeypatch):
    import arborparse
    from arborparse.training import TrainingInterrupted
    from treebanks import separable

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    fit = Labeler.fit
    monkeypatch.setattr(Labeler, "fit", interrupted)
    path = tmp_path / "m.npz"
    options = dict(path=path, components="parser", progress=False, trainer="perceptron",
                   epochs=1, extend=0, hash_bits=12)
    with pytest.raises(TrainingInterrupted, match="while choosing the decoder and training the "
                                                  "second-stage labeler, "
                                                  "after the parser's epochs: .*m.npz holds "
                                                  "epoch 1, the best, as trained; .*m.npz."
                                                  "checkpoint holds the last finished epoch: "
                                                  r"continue with resume \(--resume\)$"):
        arborparse.train(separable(3), separable(1), **options)
    assert arborparse.load(path).parser.labeler is None
    monkeypatch.setattr(Labeler, "fit", fit)  # resumed: the epochs done, the labeler trained
    resumed = arborparse.train(separable(3), separable(1), resume=True, **options)
    straight = arborparse.train(separable(3), separable(1), **{**options, "path": None})
    assert resumed.parser.labeler is not None and not (tmp_path / "m.npz.checkpoint").exists()
    assert resumed.info["scores"] == straight.info["scores"]
    assert (resumed.parser.model.weights == straight.parser.model.weights).all()


def test_after_the_epochs_an_error_leaves_no_checkpoint_and_c_chosen_on_dev_none_at_all(
        tmp_path, monkeypatch):
    """Only an interrupt keeps the checkpoint past the parser's epochs; an error is no
    interrupted training (a plain run afterwards is not refused). A trainer that cannot
    resume (C chosen on dev) writes none, and its interrupt promises no resume."""
    import arborparse
    from arborparse.errors import ArborparseError
    from arborparse.training import TrainingInterrupted
    from treebanks import separable

    def failing(*args, **kwargs):
        raise ArborparseError("the labeler failed")

    monkeypatch.setattr(Labeler, "fit", failing)
    path = tmp_path / "m.npz"
    options = dict(path=path, components="parser", progress=False, epochs=1, hash_bits=12)
    with pytest.raises(ArborparseError, match="the labeler failed"):
        arborparse.train(separable(3), separable(1), trainer="perceptron", extend=0, **options)
    assert path.exists() and not (tmp_path / "m.npz.checkpoint").exists()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Labeler, "fit", interrupted)
    with pytest.raises(TrainingInterrupted) as said:
        arborparse.train(separable(3), separable(1), trainer="loglinear-sgd", force=True,
                         **options)
    assert "resume" not in str(said.value) and not (tmp_path / "m.npz.checkpoint").exists()


def test_each_thread_keeps_its_own_checkpoints(tmp_path):
    import threading

    from arborparse.training import checkpoints_kept, kept_checkpoint

    entered, first_done = threading.Event(), threading.Event()
    files = {name: tmp_path / name for name in ("a", "b")}
    seen = {}

    def second():
        with checkpoints_kept() as kept:
            files["b"].write_text("b")
            kept.append(str(files["b"]))
            entered.set()
            first_done.wait()
            seen["b"] = (kept_checkpoint(), files["b"].exists())

    with checkpoints_kept() as kept:
        files["a"].write_text("a")
        kept.append(str(files["a"]))
        thread = threading.Thread(target=second)
        thread.start()
        entered.wait()
        assert kept_checkpoint() == str(files["a"])
    first_done.set()
    thread.join()
    assert seen["b"] == (str(files["b"]), True)  # the first block's end left it alone
    assert not files["a"].exists() and not files["b"].exists()
    assert kept_checkpoint() is None


def test_the_trainer_with_the_labeler_is_the_trainers_own_else():
    import copy

    from arborparse.linear.online import OnlineTrainer
    from arborparse.linear.train import OnDev

    inner = OnlineTrainer("perceptron", epochs=3)
    relabeling = OnDev(inner)
    assert relabeling.epochs == 3 and copy.copy(relabeling).trainer is inner


@pytest.mark.parametrize("favoured", ["root", "det"])
def test_the_root_label_goes_with_head_0_and_only_with_it(favoured):
    """Weights that make one label every arc's best: `root` (then words under another head
    must get another label) or `det` (then the word under the root must get `root`). Every
    path that labels a tree keeps HEAD 0 and ``root`` together: the compiled chunk, one
    sentence with marginals, MBR, the k best, and the second-stage labeler. A multi-root
    model's arcs keep their best labels."""
    from arborparse.linear.templates import ARC_TEMPLATES, _final, _mix, _start

    data = read_conllu(io.StringIO(separable_text(1)))
    parser = OnlineTrainer("perceptron", epochs=1, hash_bits=14, progress=False).fit(
        data).parser_
    w, labels = parser.model.weights, parser.model.labels
    for role in (0, 1):
        for direction in (0, 1):  # the bias of each role and direction, with the label
            h = _final(_mix(_mix(_start(ARC_TEMPLATES), np.uint64(role)), np.uint64(direction)))
            w[int((h + np.uint64(labels.index(favoured))) & np.uint64(w.shape[0] - 1))] += 1e4

    def rooted(sentences):
        for s in sentences:
            heads = np.asarray(s.heads[1:])
            assert ((heads == 0) == (np.array(s.deprels) == "root")).all(), s.deprels
    rooted(parser.parse(data))
    rooted(parser.parse(data, marginals=True))
    rooted(parser.parse(data, decode_as="mbr"))
    for _, heads, found in parser.kbest(data[0], 3):
        assert ((np.asarray(heads[1:]) == 0) == (np.array(found) == "root")).all()
    parser.labeler = Labeler(np.zeros((2, len(labels)), dtype=np.float32), 1.0, 1.0)
    rooted(parser.parse(data))
    with_marginals = parser.parse(data, marginals=True)
    rooted(with_marginals)

    def label_probs(sentence):
        return np.array([float(row[9].split("LabelProb=")[1]) for row in sentence.rows])
    for s in with_marginals:  # the labeler's LabelProb: root is the root word's only label
        assert (label_probs(s)[np.asarray(s.heads[1:]) == 0] == 1.0).all()
    parser.single_root = False  # a multi-root model: each arc keeps its best label
    for options in ({}, {"marginals": True}):
        assert all(set(s.deprels) == {favoured} for s in parser.parse(data, **options))
    assert all((label_probs(s) > 0.99).all() for s in parser.parse(data, marginals=True))
