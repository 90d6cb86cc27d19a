"""The neural family end to end on tiny data: it memorizes a small treebank (trees, tags and
lemmas), resumes an interrupted training bit for bit, and its model files round-trip and
refuse other versions."""

import re

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from treebanks import separable, separable_text

import arborparse
from arborparse.cli import cli
from arborparse.errors import ArborparseError
from arborparse.eval import evaluate
from arborparse.io import model_files, read_conllu
from arborparse.io.conllu import UPOS
from arborparse.io.model_files import ModelFileError
from arborparse.io.plain import words_sentence
from arborparse.neural.network import Batch
from arborparse.neural import parser as neural_parser
from arborparse.neural.parser import VERSION, NeuralParser
from arborparse.neural.train import NeuralTrainer
from arborparse.neural.vocab import ROOT, UNKNOWN, Vocabulary
from arborparse.options import OptionError
from arborparse.training import Loop, TrainingInterrupted

TINY = dict(hidden=32, layers=1, word_dim=16, batch_size=4, dropout=0.0, learning_rate=1e-2,
            progress=False)


def weights(parser):
    """The network's weights, on the CPU (training runs on a GPU where there is one)."""
    return {k: v.detach().cpu().clone() for k, v in parser.network.state_dict().items()}


def same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def memorized():
    data = separable(2)
    return data, NeuralTrainer(epochs=30, **TINY).fit(data)


def test_a_tiny_treebank_is_memorized(memorized):
    data, fitted = memorized
    losses = [h["loss"] for h in fitted.history_]
    assert min(losses[-5:]) < losses[0] / 10  # Adam at 1e-2 on 2 sentences: spikes
    parsed = fitted.parser_.parse(data, retag=True)
    scores = evaluate(data, parsed)
    assert (scores["LAS"], scores["UPOS"], scores["XPOS"], scores["Lemmas"]) == (100,) * 4


def test_tags_are_written_where_missing_unless_kept(memorized):
    data, fitted = memorized
    blank = [s.with_columns({3: ["_"] * len(s), 2: ["_"] * len(s)}) for s in data]
    parsed = fitted.parser_.parse(blank)
    assert [s.upos for s in parsed] == [s.upos for s in data]
    assert [s.lemmas for s in parsed] == [s.lemmas for s in data]
    kept = fitted.parser_.parse(blank, keep_tags=True)
    assert all(set(s.upos) == {"_"} for s in kept)
    with pytest.raises(ArborparseError, match="cannot go with keep_tags"):
        fitted.parser_.parse(data, retag=True, keep_tags=True)


def test_mbr_eisner_and_marginals(memorized):
    data, fitted = memorized
    for options in ({"decode_as": "mbr"}, {"decoder": "eisner"}):
        assert evaluate(data, fitted.parser_.parse(data, **options))["LAS"] == 100
    parsed = fitted.parser_.parse(data[:2], marginals=True)
    for s in parsed:
        probs = [dict(kv.split("=") for kv in row[9].split("|")) for row in s.rows]
        assert all(0.5 < float(p["HeadProb"]) <= 1 and 0 < float(p["LabelProb"]) <= 1
                   for p in probs)


def test_model_file_round_trip_and_versions(memorized, tmp_path):
    data, fitted = memorized
    path = tmp_path / "neural.npz"
    fitted.parser_.save(path)
    loaded = arborparse.load(path)
    assert type(loaded) is NeuralParser and same(weights(loaded), weights(fitted.parser_))
    text = lambda parser: "".join(s.to_text() for s in parser.parse(data, retag=True))
    assert text(loaded) == text(fitted.parser_)
    header, arrays = fitted.parser_.parts()
    model_files.save(tmp_path / "v2.npz", "neural", VERSION + 1, header, arrays)
    with pytest.raises(ModelFileError, match="version"):
        arborparse.load(tmp_path / "v2.npz")
    del arrays["param.arc_weight"]
    model_files.save(tmp_path / "broken.npz", "neural", VERSION, header, arrays)
    with pytest.raises(ModelFileError, match="the neural model file is invalid"):
        arborparse.load(tmp_path / "broken.npz")


def test_label_scores_and_their_gradients_are_the_biaffine_form():
    """label_scores[w, l] = [dep_w; 1] W_l [head_w; 1] in training and in parsing, and its
    gradients are that form's."""
    from arborparse.neural.network import Network

    torch.manual_seed(0)
    net = Network({"words": 5, "chars": 5, "labels": 4, "upos": 3, "xpos": 3, "feats": 3,
                   "lemma": 3}, hidden=4, layers=1, label_dim=3, dropout=0.0).double()
    torch.nn.init.normal_(net.label_weight)
    states = torch.randn(2, 4, 8, dtype=torch.float64)
    heads = torch.tensor([[-1, 0, 1, 1], [-1, 2, 0, -1]])
    words = torch.tensor([[False, True, True, True], [False, True, True, False]])
    got = net.label_scores(states, heads, words)
    head, dep = net.label_head(states), net.label_dep(states)
    with_one = lambda x: torch.cat([x, x.new_ones(x.shape[:-1] + (1,))], -1)  # noqa: E731
    h = with_one(torch.stack([head[b, heads[b, m]] for b, m in words.nonzero().tolist()]))
    d = with_one(dep[words])
    want = torch.einsum("wi,lij,wj->wl", d, net.label_weight, h)
    assert torch.allclose(got, want, atol=1e-12)
    with torch.inference_mode():  # parsing takes another route to the same scores
        assert torch.allclose(net.label_scores(states, heads, words), want, atol=1e-12)
    grad = torch.randn_like(want)
    ours = torch.autograd.grad(got, net.label_weight, grad, retain_graph=True)[0]
    theirs = torch.autograd.grad(want, net.label_weight, grad)[0]
    assert torch.allclose(ours, theirs, atol=1e-12)


@pytest.mark.parametrize("objective", ["crf-projective", "max-margin", "local"])
def test_every_objective_trains(objective):
    data = separable(2)
    fitted = NeuralTrainer(objective, epochs=30, **TINY).fit(data)
    assert evaluate(data, fitted.parser_.parse(data))["UAS"] == 100
    assert fitted.parser_.decoder == ("eisner" if objective == "crf-projective" else "mst")


def test_resume_continues_bit_for_bit(tmp_path, monkeypatch):
    data, dev = separable(2), separable(1)
    straight = NeuralTrainer(epochs=3, **TINY).fit(data, dev)
    checkpoint = tmp_path / "m.npz.checkpoint"
    save = Loop._save_checkpoint
    calls = []

    def interrupted(self, *args):
        save(self, *args)
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(Loop, "_save_checkpoint", interrupted)
    with pytest.raises(TrainingInterrupted, match=r"continue with resume \(--resume\)"):
        NeuralTrainer(epochs=3, checkpoint=checkpoint, **TINY).fit(data, dev, tmp_path / "m.npz")
    monkeypatch.setattr(Loop, "_save_checkpoint", save)
    with pytest.raises(ArborparseError, match="other options: hidden 32 \\(now 8\\)"):
        NeuralTrainer(epochs=3, checkpoint=checkpoint, resume=True,
                      **{**TINY, "hidden": 8}).fit(data, dev)
    # a setting left out at its default: another value is another option, not another version
    with pytest.raises(ArborparseError, match="other options: word_dropout None \\(now 0.2\\); "
                                              "resume with the same ones"):
        NeuralTrainer(epochs=3, checkpoint=checkpoint, resume=True, word_dropout=0.2,
                      **TINY).fit(data, dev)
    header, arrays = model_files.load(checkpoint, "checkpoint", 1)
    damaged = tmp_path / "damaged.checkpoint"
    model_files.save(damaged, "checkpoint", 1, header,
                     {k: v for k, v in arrays.items() if k != "param.arc_weight"})
    with pytest.raises(ArborparseError, match="a damaged checkpoint"):
        NeuralTrainer(epochs=3, checkpoint=damaged, resume=True, **TINY).fit(data, dev)
    resumed = NeuralTrainer(epochs=3, checkpoint=checkpoint, resume=True, **TINY).fit(data, dev)
    assert same(weights(resumed.parser_), weights(straight.parser_))
    assert [h["loss"] for h in resumed.history_] == [h["loss"] for h in straight.history_]
    assert resumed.best_epoch_ == straight.best_epoch_
    assert not checkpoint.exists()  # training ended: nothing to resume


def test_word_dropout_reads_words_as_unknown_in_training_only(monkeypatch):
    data = separable(8)
    trainer = NeuralTrainer(word_dropout=0.5, seed=3, **TINY)
    vocab = Vocabulary.build(data)
    net = trainer._network(vocab)
    batch = Batch.of(vocab, data, [vocab.targets(s) for s in data])
    read, encode = [], net.encode
    monkeypatch.setattr(net, "encode", lambda b: (read.append(b.words), encode(b))[1])
    net.train()
    trainer.loss(net, batch)
    net.eval()
    trainer.loss(net, batch)
    in_training, parsing = read
    assert torch.equal(parsing, batch.words)
    changed = in_training != batch.words
    assert (in_training[changed] == UNKNOWN).all()
    words = batch.words > ROOT  # not the root, not padding
    assert not changed[~words].any()
    assert 0.3 < changed.sum() / (words & (batch.words != UNKNOWN)).sum() < 0.7
    with pytest.raises(ArborparseError, match="word dropout"):
        NeuralTrainer(word_dropout=1.0, **TINY)


def test_the_rate_falls_by_a_quarter_every_decay_steps(monkeypatch):
    rates, step = [], torch.optim.Adam.step
    monkeypatch.setattr(torch.optim.Adam, "step", lambda self, *a, **k: (
        rates.append(self.param_groups[0]["lr"]), step(self, *a, **k))[1])
    NeuralTrainer(epochs=3, decay_steps=2, **TINY).fit(separable(2))
    assert len(rates) > 3
    assert rates == pytest.approx([1e-2 * 0.75 ** (k / 2) for k in range(len(rates))])


def test_word_vectors_start_the_embeddings(tmp_path):
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("2 3\nthe 1 2 3\nDog 4 5 6\n")
    trainer = NeuralTrainer(epochs=1, embeddings=vectors, **{**TINY, "learning_rate": 1e-12})
    fitted = trainer.fit(separable(2))
    vocab, table = fitted.parser_.vocab, fitted.parser_.network.words.weight.detach().cpu()
    assert table.shape[1] == 3
    assert np.allclose(table[vocab.words.index("the")], [1, 2, 3], atol=1e-6)
    assert np.allclose(table[vocab.words.index("dog")], [4, 5, 6], atol=1e-6)
    vectors.write_text("the 1 2 3\ndog 4 5\n")
    with pytest.raises(ArborparseError, match="vectors.txt:2: 2 numbers"):
        trainer.fit(separable(2))


def test_a_long_sentence_parses():
    data = separable(1)
    long = read_conllu(__import__("io").StringIO("".join(
        f"{i}\tw{i % 7}\t_\t_\t_\t_\t{0 if i == 1 else 1}\tdep\t_\t_\n"
        for i in range(1, 251)) + "\n"))
    fitted = NeuralTrainer(epochs=1, **TINY).fit(data)
    parsed = fitted.parser_.parse(long)[0]
    assert parsed.has_tree and list(parsed.heads[1:]).count(0) == 1


def test_command_line_trains_parses_and_resumes(tmp_path):
    train = tmp_path / "train.conllu"
    train.write_text(separable_text(2))
    model = tmp_path / "m.npz"
    run = lambda *args: CliRunner().invoke(cli, list(map(str, args)))
    args = ("train", "--model-type", "neural", "--train", train, "--dev", train, "--model",
            model, "--epochs", 2, "--hidden", 16, "--layers", 1, "--batch-size", 4, "--quiet")
    r = run(*args)
    assert r.exit_code == 0, r.output
    parser = arborparse.load(model)
    assert parser.kind == "pipeline" and parser.tagger is None
    assert parser.tokenizer is not None and parser.parser.kind == "neural"
    text = tmp_path / "train.txt"
    text.write_text("\n\n".join(" ".join(s.forms) for s in read_conllu(train)) + "\n")
    r = run("parse", "--model", model, "--input-format", "text", "-o", tmp_path / "out.conllu",
            text)
    assert r.exit_code == 0, r.output
    r = run(*args, "--resume")
    assert r.exit_code == 1 and "there is no" in r.output
    (tmp_path / "m.npz.checkpoint").write_bytes(b"")
    r = run(*args)
    assert r.exit_code == 1 and "continue it with resume (--resume)" in r.output
    r = run(*args, "--trainer", "mira")
    assert r.exit_code == 2 and "--trainer does not apply to --model-type neural" in r.output


def test_the_lemma_dictionary_comes_before_the_scripts(memorized):
    _, fitted = memorized
    parser = fitted.parser_
    text = "".join(f"1\twent\t{lemma}\tVERB\t_\t_\t0\troot\t_\t_\n\n"
                   for lemma in ("go", "go", "went"))
    vocab = type(parser.vocab).build(read_conllu(__import__("io").StringIO(text)))
    assert vocab.lemmas == {"went\tVERB": "go"}
    assert parser._scripted("sees", [0]) == "sees"  # the identity script
    parser.vocab.lemmas["sees\tVERB"] = "see"
    text = "1\tsees\t_\tVERB\t_\t_\t0\troot\t_\t_\n2\tsees\t_\tNOUN\t_\t_\t1\tdep\t_\t_\n\n"
    sentence = read_conllu(__import__("io").StringIO(text))
    try:  # the input's UPOS: VERB finds the dictionary's lemma, NOUN goes to the scripts
        parser._scripted = lambda form, best: "SCRIPTED"
        assert parser.parse(sentence)[0].lemmas == ["see", "SCRIPTED"]
    finally:
        del parser._scripted
        del parser.vocab.lemmas["sees\tVERB"]


def test_more_processes_than_gpus_train_on_the_cpu_and_say_so(monkeypatch):
    from arborparse.neural import train as neural_train

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    monkeypatch.setenv("LOCAL_RANK", "1")
    with pytest.warns(UserWarning, match="2 processes on this machine and 1 GPU"):
        assert neural_train._device() == torch.device("cpu")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "1")
    monkeypatch.setenv("LOCAL_RANK", "0")
    assert neural_train._device() == torch.device("cuda", 0)


def test_two_processes_train_data_parallel(tmp_path):
    """torchrun with two processes (gloo on the CPU, also on a machine with a single GPU;
    DistributedDataParallel): process 0 saves a model that has learned the tiny treebank."""
    import os
    import subprocess
    import sys

    train = tmp_path / "train.conllu"
    train.write_text(separable_text(2))
    model = tmp_path / "m.npz"
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node",
         "2", "-m", "arborparse", "train", "--model-type", "neural", "--components", "parser",
         "--train", str(train), "--dev", str(train), "--model", str(model), "--epochs", "20",
         "--hidden", "32", "--layers", "1", "--batch-size", "2"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stderr.count("saved ") == 1  # process 0 alone
    assert result.stderr.count("epoch 1/20") == 1
    parser = arborparse.load(model)
    data = read_conllu(train)
    assert evaluate(data, parser.parse(data))["LAS"] == 100


def test_kbest_covers_every_tree_and_the_head_marginals(memorized):
    """NeuralParser.kbest over all trees of a short sentence: probabilities sum to 1, best
    first, the first is the parse; head_marginals sum to 1 per word."""
    data, fitted = memorized
    parser = fitted.parser_
    sentence = min(data, key=len)
    found = parser.kbest(sentence, 500)
    assert np.isclose(sum(p for p, _, _ in found), 1.0, atol=1e-6)
    assert [p for p, _, _ in found] == sorted((p for p, _, _ in found), reverse=True)
    parsed = parser.parse([sentence])[0]
    assert list(found[0][1]) == list(parsed.heads) and found[0][2] == parsed.deprels
    mu = parser.head_marginals(sentence)
    assert np.allclose(mu[:, 1:].sum(axis=0), 1, atol=1e-6)


def test_calibration_recovers_known_temperatures(memorized):
    """Trees drawn from the network's tree CRF at a known T, their labels from its label
    scores at a known T_l: `calibrate` finds both; HeadProb and LabelProb are then those
    of the tempered distribution."""
    from arborparse import trees
    from arborparse.neural.parser import NeuralParser

    data, fitted = memorized
    parser = NeuralParser(fitted.parser_.vocab, fitted.parser_.network)
    from oracles import recovered_temperatures

    true_t, true_label_t = 5.0, 10.0

    def draw(sentence, rng):
        with torch.no_grad():
            states = parser.network.encode(Batch.of(parser.vocab, [sentence]))
            S = parser.network.arc_scores(states)[0].double().numpy()
            heads = trees.sample(S / true_t, 1, rng=rng)[0]
            scores = parser.network.label_scores(
                states, torch.from_numpy(heads)[None], torch.arange(len(heads))[None] > 0)
        return heads, (scores.double() / true_label_t).softmax(-1).numpy()

    # 400 sentences drawn: from 80, a network trained on a machine whose arithmetic rounds
    # otherwise gave a label temperature of 8.33 for 10 (seeds 1, 2: 9.38, 11.28; from 400:
    # 9.39, 9.72, 10.69)
    fitted_t = recovered_temperatures(parser, data * 200, draw, parser.vocab.labels)
    assert fitted_t["temperature"] == pytest.approx(true_t, rel=0.15)
    assert fitted_t["label_temperature"] == pytest.approx(true_label_t, rel=0.15)
    sentence = min(data, key=len)
    parsed = parser.parse([sentence], marginals=True)[0]
    mu = parser.head_marginals(sentence)
    with torch.no_grad():
        states = parser.network.encode(Batch.of(parser.vocab, [sentence]))
        S = parser.network.arc_scores(states)[0].double().numpy()
    assert np.allclose(mu, trees.marginals(S / parser.temperature), atol=1e-6)
    head_prob = [float(row[9].split("|")[0].split("=")[1]) for row in parsed.rows]
    assert np.allclose(head_prob, mu[parsed.heads[1:], np.arange(1, len(sentence) + 1)],
                       atol=1e-4)


def test_training_with_dev_fits_the_temperatures_and_files_keep_them(tmp_path):
    data = separable(2)
    path = tmp_path / "m.npz"
    fitted = NeuralTrainer(epochs=2, **TINY).fit(data, data, save_best=path)
    parser = fitted.parser_
    assert parser.temperature != 1.0 and parser.label_temperature != 1.0
    saved = arborparse.load(path)
    assert (saved.temperature, saved.label_temperature) == \
        (parser.temperature, parser.label_temperature)
    header, arrays = parser.parts()  # a file written before them: the network's own
    for key in ("temperature", "label_temperature"):
        del header[key]
    model_files.save(tmp_path / "old.npz", "neural", VERSION, header, arrays)
    old = arborparse.load(tmp_path / "old.npz")
    assert (old.temperature, old.label_temperature) == (1.0, 1.0)
    assert NeuralTrainer(epochs=1, **TINY).fit(data).parser_.temperature == 1.0  # no dev


def test_label_distributions_are_labelprob_of_every_label_on_any_tree(memorized):
    """label_distributions under the parser's tree: rows summing to 1, the labels chosen
    their argmax with LabelProb their probabilities; under any other tree, root where and
    only where the head is 0."""
    data, fitted = memorized
    parser = fitted.parser_
    for sentence in data:
        parsed = parser.parse([sentence], marginals=True)[0]
        found = parser.label_distributions([sentence], [parsed.heads])[0]
        assert np.allclose(found.sum(axis=1), 1)
        chosen = [parser.labels.index(d) for d in parsed.deprels]
        assert found.argmax(axis=1).tolist() == chosen
        label_prob = [float(parsed.rows[r][9].split("LabelProb=")[1])
                      for r in parsed.word_rows]
        assert np.allclose(found[np.arange(len(sentence)), chosen], label_prob, atol=1e-4)
        chain = np.arange(-1, len(sentence))  # each word under the one before it
        root = parser.labels.index("root")
        other = parser.label_distributions([sentence], [chain])[0]
        assert other[0, root] == pytest.approx(1) and not other[1:, root].any()


def test_iter_mixture_is_what_parse_gives_and_its_features_label_any_tree(memorized,
                                                                          monkeypatch):
    """iter_mixture (what an ensemble mixes): each sentence tagged as parse tags it, the
    head marginals of parse(marginals=True), and label features from which
    label_distributions gives, on any tree, what it gives by encoding the sentence."""
    data, fitted = memorized
    parser = fitted.parser_
    untagged = [s.with_columns({UPOS: ["_"] * len(s)}) for s in data]
    mixed = list(parser.iter_mixture(untagged))
    parsed = parser.parse(untagged, marginals=True)
    assert [s.upos for s, _, _ in mixed] == [p.upos for p in parsed]
    assert [s.lemmas for s, _, _ in mixed] == [p.lemmas for p in parsed]
    for (_, mu, _), p in zip(mixed, parsed):
        assert np.allclose(mu, p.analysis["heads"], atol=1e-6)
    kept = list(parser.iter_mixture(data, keep_tags=True))
    assert [s.upos for s, _, _ in kept] == [s.upos for s in data]
    rng = np.random.default_rng(0)
    trees = [np.array([-1, 0] + [int(rng.integers(1, m)) for m in range(2, len(s) + 1)])
             for s in data]  # word 1 the root word, each other under a word before it
    encoded = parser.label_distributions(data, trees)
    features = [f for _, _, f in kept]
    prepared = parser.label_distributions(data, trees, features)
    assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(encoded, prepared))
    monkeypatch.setattr(neural_parser, "BATCH_WORDS", 1)  # a call per sentence, by length
    assert all(np.allclose(a, b) for a, b in zip(
        prepared, parser.label_distributions(data, trees, features)))


@pytest.fixture(scope="module")
def second_order():
    data = separable(2)
    return data, NeuralTrainer("crf2o", epochs=30, **TINY).fit(data)


def test_crf2o_learns_and_decodes_by_mbr_or_map(second_order):
    data, fitted = second_order
    parser = fitted.parser_
    assert parser.decoder == "eisner" and parser.network.config["sib_dim"] > 0
    for options in ({}, {"decode_as": "mbr"}, {"decode_as": "map"}):
        assert evaluate(data, parser.parse(data, retag=True, **options))["LAS"] == 100
    sentence = min(data, key=len)
    mu = parser.head_marginals(sentence)
    assert np.allclose(mu[:, 1:].sum(axis=0), 1, atol=1e-6)
    parsed = parser.parse([sentence], marginals=True)[0]
    assert np.allclose(parsed.analysis["heads"], mu, atol=1e-6)


def test_crf2o_model_file_round_trip(second_order, tmp_path):
    data, fitted = second_order
    path = tmp_path / "crf2o.npz"
    fitted.parser_.save(path)
    loaded = arborparse.load(path)
    assert loaded.objective == "crf2o" and same(weights(loaded), weights(fitted.parser_))
    assert loaded.capabilities == fitted.parser_.capabilities
    assert not loaded.capabilities.kbest and loaded.capabilities.decoders == ("eisner",)
    text = lambda parser: "".join(s.to_text() for s in parser.parse(data, retag=True))
    assert text(loaded) == text(fitted.parser_)


def test_crf2o_refuses_what_it_cannot_do(second_order):
    data, fitted = second_order
    with pytest.raises(ArborparseError, match="objective crf2o decodes projective trees.*"
                                              "decoder eisner"):
        NeuralTrainer("crf2o", decoder="mst")
    for options, why in (({"decoder": "mst"}, "decodes projectively"),
                         ({"kbest": 2}, "keeps no k-best lists")):
        with pytest.raises(OptionError, match=f"does not apply to this neural model: a crf2o "
                                              f"model {why}"):
            fitted.parser_.parse(data, **options)
    with pytest.raises(OptionError, match="kbest"):
        fitted.parser_.kbest(data[0], 2)
    r = CliRunner().invoke(cli, ["train", "--model-type", "neural", "--help"])
    assert "crf2o" in r.output


def test_a_sentence_too_long_for_the_memory_free_is_refused(memorized, second_order,
                                                            tmp_path, monkeypatch):
    """A sentence whose arcs (a crf2o model's siblings) would not fit in the memory free is
    refused in one line naming it and saying what to do, before any array is made; the
    command line exits with 1 and writes nothing."""
    import arborparse.neural.parser as neural
    import arborparse.memory

    parser, words = memorized[1].parser_, 3000
    long = words_sentence(["w"] * words, 7)
    best, with_marginals = (c * (words + 1) ** 2 for c in neural.ARC_BYTES)
    monkeypatch.setattr(arborparse.memory, "available_memory", lambda: best - 1)
    message = (f"sentence 7 (w w w w w ...): a sentence of {words} words is too long to "
               f"parse here: its arcs would take about {best / 2 ** 30:.1f} GiB")
    with pytest.raises(ArborparseError, match="^" + re.escape(message)):
        parser.parse([long])
    monkeypatch.setattr(arborparse.memory, "available_memory", lambda: best)
    assert parser.check_fits(long) is None  # the best tree fits
    for refused in (lambda: parser.parse([long], marginals=True),
                    lambda: parser.parse([long], kbest=2),
                    lambda: parser.head_marginals(long), lambda: parser.kbest(long, 2)):
        with pytest.raises(ArborparseError, match=f"about {with_marginals / 2 ** 30:.1f} GiB"):
            refused()  # its marginals do not
    (tmp_path / "long.txt").write_text(" ".join(["w"] * words) + "\n")
    parser.save(tmp_path / "m.npz")
    out = tmp_path / "out.conllu"
    monkeypatch.setattr(arborparse.memory, "available_memory", lambda: best - 1)
    r = CliRunner().invoke(cli, ["parse", "--model", str(tmp_path / "m.npz"),
                                 "--input-format", "tokenized", str(tmp_path / "long.txt"),
                                 "-o", str(out)])
    assert r.exit_code == 1 and "too long to parse here" in r.output
    assert len(r.output.splitlines()) == 1 and not out.exists()

    crf2o, words = second_order[1].parser_, 250
    need = neural.SIBLING_BYTES * (words + 1) ** 3 + neural.ARC_BYTES[1] * (words + 1) ** 2
    monkeypatch.setattr(arborparse.memory, "available_memory", lambda: need - 1)
    with pytest.raises(ArborparseError, match=f"of {words} words is too long for this crf2o "
                       f"model: its parts would take about {need / 2 ** 30:.1f} GiB.*"
                       "--objective crf"):
        crf2o.parse([words_sentence(["w"] * words, 1)])


@pytest.mark.parametrize("favoured", ["root", "det"])
def test_the_root_label_goes_with_head_0_and_only_with_it(memorized, favoured):
    """A label's bias raised until it is every arc's best: the parse, its marginals and the
    k best trees keep HEAD 0 and ``root`` together (Universal Dependencies), and
    LabelProb is the probability of the label given over the labels the arc may take. A
    multi-root model's arcs keep their best labels."""
    import copy

    data, fitted = memorized
    parser = copy.deepcopy(fitted.parser_)
    with torch.no_grad():  # the bias: the weight of the two appended ones
        parser.network.label_weight[parser.vocab.labels.index(favoured), -1, -1] += 1e4
    for s in parser.parse(data, marginals=True):
        assert ((np.asarray(s.heads[1:]) == 0) == (np.array(s.deprels) == "root")).all()
        probs = [float(row[9].split("LabelProb=")[1]) for row in s.rows]
        for p, d in zip(probs, s.deprels):  # over the labels the arc may take: root is
            assert p == 1.0 if d == "root" else d != favoured or p > 0.5  # the root's only
    for _, heads, labels in parser.kbest(min(data, key=len), 5):
        assert ((np.asarray(heads[1:]) == 0) == (np.array(labels) == "root")).all()
    parser.single_root = False  # a multi-root model: each arc keeps its best label
    assert all(set(s.deprels) == {favoured} for s in parser.parse(data))
