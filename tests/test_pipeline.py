"""`arborparse.load` serves every model kind; files saved before the families layout load
and parse as they did; every parser refuses the options it does not take."""

import io
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from treebanks import separable, separable_text

import arborparse
from arborparse import registry
from arborparse.cli import cli
from arborparse.errors import TreebankFormatError
from arborparse.eval import evaluate
from arborparse.io import iter_conllu, model_files, read_conllu
from arborparse.io.model_files import ModelFileError
from arborparse.io.plain import words_sentence
from arborparse.isbn.parser import ISBNParser
from arborparse.linear.parser import LinearParser
from arborparse.options import OptionError

MODELS = Path(__file__).parent / "data" / "models"
# (file, class, parse options) of the model files saved by arborparse before the layout
# of families (commit 6044a03): a perceptron, a latent-cluster log-linear and an ISBN model
SAVED = [("perceptron-v2", LinearParser, {}), ("latent-v2", LinearParser, {"decode_as": "max-z"}),
         ("isbn-v2", ISBNParser, {})]


@pytest.mark.parametrize("name, cls, options", SAVED)
def test_files_saved_before_load_and_parse_the_same(name, cls, options, tmp_path):
    parser = arborparse.load(MODELS / f"{name}.npz")
    assert type(parser) is cls
    parsed = "".join(s.to_text() for s in parser.parse(separable(1), **options))
    assert parsed == (MODELS / f"{name}.parsed.conllu").read_text()
    parser.save(tmp_path / "again.npz")  # and they save and load again
    again = arborparse.load(tmp_path / "again.npz")
    assert "".join(s.to_text() for s in again.iter_parse(separable(1), **options)) == parsed


def test_every_parser_has_the_same_face():
    for name, _, _ in SAVED:
        parser = arborparse.load(MODELS / f"{name}.npz")
        for attribute in ("load", "save", "parse", "iter_parse", "capabilities", "kind"):
            assert hasattr(parser, attribute), (name, attribute)
        assert parser.kind == registry.canonical(model_files.kind_of(MODELS / f"{name}.npz"))


def test_options_a_model_does_not_take_are_refused():
    linear = arborparse.load(MODELS / "perceptron-v2.npz")
    latent = arborparse.load(MODELS / "latent-v2.npz")
    isbn = arborparse.load(MODELS / "isbn-v2.npz")
    data = separable(1)
    assert latent.capabilities.max_z and not linear.capabilities.max_z
    assert "max-z" in latent.capabilities.parse_options()["decode_as"]
    with pytest.raises(OptionError, match=r"decode_as='max-z' does not apply to this "
                                          r"linear model: max-z decoding needs hidden arc "
                                          r"clusters .* \(choose one of map, mbr\)"):
        linear.parse(data, decode_as="max-z")
    with pytest.raises(OptionError, match=r"decode='mbr' does not apply to this linear "
                                          r"model: did you mean decode_as\?"):
        linear.parse(data, decode="mbr")  # the name of another call's option
    with pytest.raises(OptionError, match=r"beam=5 does not apply.*its options: decoder"):
        linear.parse(data, beam=5)
    with pytest.raises(OptionError, match=r"decoder='mst' does not apply to this isbn model"):
        isbn.iter_parse(data, decoder="mst")
    with pytest.raises(OptionError, match="beam=0 must be an integer >= 1"):
        isbn.parse(data, beam=0)
    with pytest.raises(OptionError, match=r"threads=2 does not apply to this isbn model"):
        isbn.parse(data, threads=2)
    with pytest.raises(OptionError, match="threads=0 must be an integer >= 1"):
        linear.parse(data, threads=0)
    assert [s.rows for s in linear.parse(data, threads=2)] == [s.rows for s in linear.parse(data)]


def test_unknown_kind_is_refused(tmp_path):
    path = tmp_path / "m.npz"
    model_files.save(path, "tagger-of-the-future", 1, {}, {"w": np.zeros(2)})
    with pytest.raises(ModelFileError, match="kind 'tagger-of-the-future', which this "
                                             "arborparse does not read"):
        arborparse.load(path)


def test_cli_refuses_options_by_the_model(tmp_path):
    text = tmp_path / "in.conllu"
    text.write_text(separable_text(1))
    run = CliRunner().invoke
    r = run(cli, ["parse", "--model", str(MODELS / "perceptron-v2.npz"), str(text),
                  "--decode", "max-z"])
    assert r.exit_code == 2 and "--decode max-z does not apply to this linear model: " \
                                "max-z decoding needs hidden arc clusters" in r.output
    assert "(choose one of map, mbr)" in r.output
    r = run(cli, ["parse", "--model", str(MODELS / "perceptron-v2.npz"), str(text),
                  "--beam", "3"])
    assert r.exit_code == 2 and "--beam 3 does not apply to this linear model " \
                                "(it takes --decoder, --decode, --marginals, --threads)" in r.output
    r = run(cli, ["parse", "--model", str(MODELS / "perceptron-v2.npz"), str(text), "-o",
                  str(tmp_path / "out"), "--scheduler", "local", "--threads", "2"])
    assert r.exit_code == 2 and "--threads does not apply to --scheduler local" in r.output
    for threads in ([], ["--threads", "2"]):
        r = run(cli, ["parse", "--model", str(MODELS / "latent-v2.npz"), str(text),
                      "--decode", "max-z", *threads])
        assert r.exit_code == 0 and r.output == (MODELS / "latent-v2.parsed.conllu").read_text()


def test_pipeline_trains_tags_and_parses_untagged_input(tmp_path):
    from arborparse.io.conllu import FEATS, LEMMA, UPOS, XPOS

    train = tmp_path / "train.conllu"
    train.write_text(separable_text(4))
    model = tmp_path / "pipeline.npz"
    run = CliRunner().invoke
    r = run(cli, ["train", "--train", str(train), "--dev", str(train), "--model", str(model),
                  "--epochs", "4", "--hash-bits", "14", "--folds", "3", "--quiet"])
    assert r.exit_code == 0, r.output
    pipeline = arborparse.load(model)
    assert pipeline.kind == "pipeline" and pipeline.tagger and pipeline.lemmatizer
    gold = read_conllu(train)
    bare = tmp_path / "bare.conllu"
    bare.write_text("".join(
        s.with_columns({c: ["_"] * len(s) for c in (LEMMA, UPOS, XPOS, FEATS)})
        .to_text() for s in gold[:6]))
    r = run(cli, ["parse", "--model", str(model), str(bare)])
    assert r.exit_code == 0, r.output
    parsed = read_conllu(io.StringIO(r.output))
    for column in ("upos", "xpos", "feats", "lemmas", "forms"):
        assert [getattr(s, column) for s in parsed] == [getattr(s, column) for s in gold[:6]]
    # the parser trained on the tags of tiny folds, each tagger trained for the one epoch
    # the whole-data tagger kept (it was perfect on dev from the first)
    assert evaluate(gold[:6], parsed)["UAS"] >= 60
    # tiny folds' taggers gave the parser pairs of tags unlike those it meets: its tag
    # reach cost dev accuracy, so training dropped it, and says so
    assert pipeline.info["chosen_on_dev"]["tag_reach"] is False
    assert pipeline.parser.tag_reach is None
    r = run(cli, ["info", str(model)])
    assert "tag_reach           none (dropped in training" in r.output
    # the same model file round-trips
    pipeline.save(tmp_path / "again.npz")
    again = arborparse.load(tmp_path / "again.npz")
    assert [s.to_text() for s in again.parse(read_conllu(bare))] == \
        [s.to_text() for s in parsed]
    r = run(cli, ["parse", "--model", str(model), str(bare), "--keep-tags"])
    assert r.exit_code == 1 and "have no tags (UPOS empty), and keep_tags (parse " \
        "--keep-tags) keeps the input's: leave it out" in r.output
    r = run(cli, ["parse", "--model", str(model), str(bare), "--keep-tags", "--retag"])
    assert r.exit_code == 2 and "--retag cannot go with --keep-tags" in r.output


def test_raw_and_tokenized_text_in_conllu_out(tmp_path):
    train = tmp_path / "train.conllu"
    train.write_text(separable_text(4))
    model, parser_only = tmp_path / "pipeline.npz", tmp_path / "parser.npz"
    run = CliRunner().invoke
    for path, components in ((model, "tokenizer,tagger,lemmatizer,parser"),
                             (parser_only, "tagger,lemmatizer,parser")):
        r = run(cli, ["train", "--train", str(train), "--dev", str(train), "--model",
                      str(path), "--epochs", "3", "--hash-bits", "14", "--folds", "2",
                      "--quiet", "--components", components])
        assert r.exit_code == 0, r.output
    gold = read_conllu(train)[:4]
    raw = tmp_path / "raw.txt"
    raw.write_text(" ".join(" ".join(s.forms) for s in gold[:2]) + "\n\n"
                   + "  ".join(" ".join(s.forms) for s in gold[2:]) + "\n")
    r = run(cli, ["parse", "--model", str(model), "--input-format", "text", str(raw)])
    assert r.exit_code == 0, r.output
    parsed = read_conllu(io.StringIO(r.output))
    assert [s.forms for s in parsed] == [s.forms for s in gold]  # sentences found
    assert [s.upos for s in parsed] == [s.upos for s in gold]
    assert parsed[0].comments[:3] == ["# newdoc", "# newpar", "# sent_id = 1"]
    assert "# newpar" in parsed[2].comments and all(s.has_tree for s in parsed)
    pipeline = arborparse.load(model)
    assert pipeline.parse_text(raw.read_text())[3].forms == gold[3].forms
    # a stream is read a batch of paragraphs and a chunk of sentences at a time, not whole
    read = []

    def lines():
        for k in range(3000):
            read.append(k)
            yield " ".join(gold[k % 4].forms) + "\n"
            yield "\n"
    first = next(pipeline.iter_parse_text(lines()))
    assert first.forms == gold[0].forms and len(read) < 3000
    # one sentence per line, tokens given
    tokenized = tmp_path / "tokenized.txt"
    tokenized.write_text("".join(" ".join(s.forms) + "\n" for s in gold))
    for path in (model, parser_only):
        r = run(cli, ["parse", "--model", str(path), "--input-format", "tokenized",
                      str(tokenized)])
        assert r.exit_code == 0, r.output
        assert [s.forms for s in read_conllu(io.StringIO(r.output))] == [s.forms for s in gold]
        assert r.output.startswith("# newdoc\n# newpar\n# sent_id = 1\n")  # as text's
    # raw text given to a model without a tokenizer, or without saying it is raw text
    for path, given in ((parser_only, "tokenized input"),  # a front end
                        (MODELS / "perceptron-v2.npz", "CoNLL-U whose words have tags")):
        r = run(cli, ["parse", "--model", str(path), "--input-format", "text", str(raw)])
        assert r.exit_code == 1 and "no tokenizer" in r.output and f"give {given}" in r.output
    r = run(cli, ["parse", "--model", str(model), str(raw)])
    assert r.exit_code == 1 and "--input-format text" in r.output


def test_pipeline_keeps_given_tags_unless_told(tmp_path):
    from arborparse.pipeline import Pipeline
    from arborparse.text.tagger import Tagger

    data = separable()
    tagger = Tagger(epochs=3, bits=14, progress=False).fit(data)
    odd = [s.with_columns({3: ["X"] * len(s)}) for s in data[:2]]  # every UPOS "X"
    pipeline = Pipeline(tagger)
    assert all(s.upos == ["X"] * len(s) for s in pipeline.parse(odd))
    assert [s.upos for s in pipeline.parse(odd, retag=True)] == [s.upos for s in data[:2]]
    words = [s.with_columns({3: ["_"] * len(s)}) for s in data[:2]]  # no UPOS to keep
    with pytest.raises(TreebankFormatError, match=r":\d+: the words have no tags \(UPOS "
                       r"empty\), and keep_tags \(parse --keep-tags\) keeps the input's"):
        pipeline.parse(words, keep_tags=True)
    made = words_sentence(["Dogs", "bark"], 4)  # made in memory: named by number and words
    with pytest.raises(TreebankFormatError, match=r"^sentence 4 \(Dogs bark \.\.\.\): the "
                       "words have no tags"):
        pipeline.parse([made], keep_tags=True)
    with pytest.raises(TreebankFormatError, match=r"^sentence 4 \(Dogs bark \.\.\.\): the "
                       r"words have no tags \(columns UPOS"):
        arborparse.load(MODELS / "perceptron-v2.npz").parse([made])


def test_parse_with_a_model_without_a_parser_says_so(tmp_path):
    """A model of a tagger alone tags, and parse says on stderr that the trees are the
    input's, serially and on a cluster; the output is written."""
    from arborparse.pipeline import Pipeline
    from arborparse.text.tagger import Tagger

    data = separable()
    model, given = tmp_path / "tagger.npz", tmp_path / "in.conllu"
    Pipeline(Tagger(epochs=3, bits=14, progress=False).fit(data)).save(model)
    given.write_text(separable_text(1))
    for extra in ([], ["--scheduler", "local", "--workers", "1"]):
        out = tmp_path / f"out{len(extra)}.conllu"
        r = CliRunner().invoke(cli, ["parse", "--model", str(model), str(given), "-o",
                                     str(out), "--retag", *extra])
        assert r.exit_code == 0, r.output
        assert f"Warning: {model} has no parser (arborparse info names its components): it " \
            "tokenizes, tags or lemmatizes, and HEAD and DEPREL are left as the input has " \
            "them" in " ".join(r.stderr.split())
        assert [s.heads.tolist() for s in read_conllu(out)] == \
            [s.heads.tolist() for s in read_conllu(given)]


def test_pipeline_refuses_a_component_of_another_version(tmp_path):
    from arborparse.pipeline import Pipeline
    from arborparse.text.tagger import Tagger

    pipeline = Pipeline(Tagger(epochs=1, bits=12, progress=False).fit(separable(1)),
                        parser=arborparse.load(MODELS / "perceptron-v2.npz"))
    header, arrays = pipeline.parts()
    header["components"]["tagger"]["version"] = 99
    model_files.save(tmp_path / "p.npz", "pipeline", 1, header, arrays)
    with pytest.raises(ModelFileError, match="the pipeline's tagger is version 99.*newer "
                                             "arborparse: upgrade"):
        arborparse.load(tmp_path / "p.npz")
    header["components"]["tagger"]["version"] = 1
    model_files.save(tmp_path / "p.npz", "pipeline", 1, header, arrays, force=True)
    with pytest.raises(ModelFileError, match="the pipeline's tagger is version 1.*retrain"):
        arborparse.load(tmp_path / "p.npz")


def test_the_sentences_read_before_an_input_error_are_given_first(english_pipeline):
    """The pipeline tags a chunk of sentences at a time and its parser parses a chunk at a
    time: where the input fails within them (a malformed line in the 40th sentence), the
    39 sentences before it are tagged, parsed and given first, then the error."""
    pipeline = arborparse.load(english_pipeline)
    text = "".join(s.to_text() for s in pipeline.parse(read_conllu(io.StringIO(
        "1\tDogs\t_\t_\t_\t_\t_\t_\t_\t_\n2\tbark\t_\t_\t_\t_\t_\t_\t_\t_\n\n" * 39))))
    broken = text + "1\tCats\t_\t_\n\n" + text
    parsed = pipeline.iter_parse(iter_conllu(io.StringIO(broken)))
    got = [next(parsed) for _ in range(39)]
    assert [s.forms for s in got] == [["Dogs", "bark"]] * 39 and all(s.has_tree for s in got)
    with pytest.raises(TreebankFormatError, match="expected 10 tab-separated columns"):
        next(parsed)


def test_a_model_file_says_what_it_offers_from_its_header(english_pipeline):
    from pathlib import Path

    from arborparse.pipeline import load, offer

    models = Path(__file__).parent / "data" / "models"
    for path in (english_pipeline, *(models / f"{name}-v2.npz"
                                     for name in ("perceptron", "latent", "isbn"))):
        model = load(path)
        kind = getattr(getattr(model, "parser", None), "kind", model.kind)
        assert offer(path) == (kind, model.capabilities), path
