"""The neural family with a pretrained transformer, on a tiny randomly initialized BERT that
the test writes itself (nothing can be downloaded): subword vectors pooled to words, long
sentences in windows, training, model files that name the directory, and their refusals."""

import io

import pytest
import tokenizers
import torch
import transformers
from click.testing import CliRunner
from treebanks import separable, separable_text

import arborparse
from arborparse.cli import cli
from arborparse.errors import ArborparseError
from arborparse.eval import evaluate
from arborparse.io import read_conllu
from arborparse.neural.train import NeuralTrainer
from arborparse.neural.transformer import Transformer, record

TINY = dict(hidden=32, layers=1, word_dim=16, batch_size=4, dropout=0.0, learning_rate=1e-2,
            progress=False)
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789.,"


def tiny_bert(path, positions=64):
    """A 2-layer BERT with 16 units and a WordPiece vocabulary of letters (each word is
    several subwords), saved as save_pretrained does."""
    vocab = SPECIAL + list(LETTERS) + [f"##{c}" for c in LETTERS]
    ids = {w: i for i, w in enumerate(vocab)}
    tk = tokenizers.Tokenizer(tokenizers.models.WordPiece(ids, unk_token="[UNK]"))
    tk.normalizer = tokenizers.normalizers.BertNormalizer(lowercase=True)
    tk.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    tk.post_processor = tokenizers.processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", ids["[CLS]"]),
                                                 ("[SEP]", ids["[SEP]"])])
    transformers.PreTrainedTokenizerFast(
        tokenizer_object=tk, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]").save_pretrained(path)
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=32,
                                     max_position_embeddings=positions)
    torch.manual_seed(0)
    transformers.BertModel(config).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return tiny_bert(tmp_path_factory.mktemp("bert"))


def test_word_vectors_are_the_mean_of_their_subwords(bert):
    t = Transformer(record(bert))
    words = ["Dogs", "bark", "."]
    out = t([words], 5, torch.device("cpu"))
    enc = t.tokenizer([words], is_split_into_words=True, return_tensors="pt")
    with torch.no_grad():
        states = torch.stack(t.model(**enc, output_hidden_states=True).hidden_states[-4:]).mean(0)
    ids = enc.word_ids(0)
    for w in range(3):
        rows = [k for k, i in enumerate(ids) if i == w]
        assert len(rows) == len(words[w])  # one subword a letter
        assert torch.allclose(out[0, 1 + w], states[0, rows].mean(0), atol=1e-6)
    assert torch.allclose(out[0, 0], states[0, 0])  # the root: [CLS]
    assert torch.count_nonzero(out[0, 4]) == 0  # past the words


def test_a_sentence_longer_than_the_positions_is_read_in_windows(tmp_path):
    t = Transformer(record(tiny_bert(tmp_path, positions=12)))
    assert t.window == 10
    words = [f"w{i % 10}" for i in range(40)]  # 80 subwords
    out = t([words, ["short"]], 41, torch.device("cpu"))
    assert out.shape == (2, 41, 16)
    assert bool((out[0].abs().sum(-1) > 0).all())
    first = t([words[:5]], 6, torch.device("cpu"))  # the first window alone
    assert torch.allclose(out[0, :6], first[0], atol=1e-6)


def test_training_with_a_transformer_memorizes_and_round_trips(bert, tmp_path):
    data = separable(2)
    fitted = NeuralTrainer(epochs=30, transformer=bert, **TINY).fit(data)
    parser = fitted.parser_
    assert evaluate(data, parser.parse(data))["LAS"] == 100
    assert not any(n.startswith("transformer") for n, _ in parser.network.named_parameters())
    path = tmp_path / "m.npz"
    parser.save(path)
    loaded = arborparse.load(path)
    text = lambda p: "".join(s.to_text() for s in p.parse(data, retag=True))  # noqa: E731
    assert text(loaded) == text(parser)
    (bert / "config.json").write_text((bert / "config.json").read_text() + "\n")
    with pytest.raises(ArborparseError, match="config.json differs"):
        arborparse.load(path)


def test_the_command_line_names_the_directory(bert, tmp_path):
    train = tmp_path / "train.conllu"
    train.write_text(separable_text(1))
    run = lambda *args: CliRunner().invoke(cli, list(map(str, args)))  # noqa: E731
    args = ["train", "--model-type", "neural", "--train", train, "--model", tmp_path / "m.npz",
            "--epochs", 1, "--hidden", 8, "--layers", 1, "--components", "parser", "--quiet"]
    r = run(*args, "--transformer", tmp_path)
    assert r.exit_code == 1 and "not a transformer directory (no config.json" in r.output
    fresh = tiny_bert(tmp_path / "bert")
    r = run(*args, "--transformer", fresh)
    assert r.exit_code == 0, r.output
    parsed = arborparse.load(tmp_path / "m.npz").parse(
        read_conllu(io.StringIO(separable_text(1))))
    assert all(s.has_tree for s in parsed)
    (fresh / "config.json").unlink()
    r = run("parse", "--model", tmp_path / "m.npz", "-o", tmp_path / "out.conllu", train)
    assert r.exit_code == 1 and "not a transformer directory" in r.output
