import io
import unicodedata

import pytest
from treebanks import separable_text

from arborparse.io import read_conllu
from arborparse.io.conllu import LEMMA
from arborparse.io.model_files import ModelFileError
from arborparse.text.lemmatizer import (Lemmatizer, applies, apply_script, dropped_marks,
                                        edit_script, writing_system)


@pytest.mark.parametrize("form, lemma, script", [
    ("Puppies", "puppy", ("", "", "ies", "y", "lower")),
    ("ran", "run", ("", "", "an", "un", "lower")),
    ("London", "London", ("", "", "", "", "keep")),
    ("went", "go", ("went", "go", "", "", "keep")),
    ("ungebunden", "binden", ("ungebu", "bi", "", "", "lower")),
    ("SMITH", "Smith", ("", "", "", "", "title")),
    ("ՀԱՅԱՍՏԱՆԻ", "Հայաստան", ("", "", "ի", "", "title")),
    ("smith", "Smith", ("", "", "", "", "title"))])
def test_edit_scripts(form, lemma, script):
    assert edit_script(form, lemma) == script
    assert apply_script(form, script) == lemma and applies(form, script)


def test_scripts_round_trip_every_training_pair(ud_files):
    for path in ud_files:
        if path.name.endswith("-train.conllu"):
            for s in read_conllu(path):
                for form, lemma in zip(s.forms, s.lemmas):
                    assert apply_script(form, edit_script(form, lemma)) == lemma, (form, lemma)


def lemmatized(text):
    return read_conllu(io.StringIO(text.replace("\tdogs\tdogs\t", "\tdogs\tdog\t")
                                   .replace("\truns\truns\t", "\truns\trun\t")))


def test_seen_words_and_new_words():
    train = lemmatized(separable_text())
    lemmatizer = Lemmatizer(epochs=5, bits=16).fit(train)
    new = read_conllu(io.StringIO("1\tcats\t_\tNOUN\tNOUN\t_\t2\tnsubj\t_\t_\n"
                                  "2\truns\t_\tVERB\tVERB\t_\t0\troot\t_\t_\n\n"))
    assert lemmatizer.lemmas(train)[:2] == [s.lemmas for s in train[:2]]
    (out,) = lemmatizer.lemmatize(new)
    assert out.lemmas == ["cat", "run"] and out.forms == ["cats", "runs"]


def test_an_unseen_capitalised_word_in_capitals_gets_a_capitalised_lemma():
    """Proper nouns written in capitals whose lemmas are capitalised (a heading's names)
    teach the capitalising script: a name in capitals never seen gets its lemma so, a word
    in capitals whose lemmas are lower case stays lower case."""
    rows = []
    for k, name in enumerate(["SMITH", "JONES", "BROWN", "TAYLOR", "WILSON", "DAVIES"] * 3):
        rows.append(f"1\tTHE\tthe\tDET\t_\t_\t2\tdet\t_\t_\n"
                    f"2\t{name}\t{name.title()}\tPROPN\t_\t_\t0\troot\t_\t_\n\n")
        rows.append(f"1\tthe\tthe\tDET\t_\t_\t2\tdet\t_\t_\n"
                    f"2\t{name.title()}\t{name.title()}\tPROPN\t_\t_\t0\troot\t_\t_\n\n")
    lemmatizer = Lemmatizer(epochs=5, bits=14).fit(read_conllu(io.StringIO("".join(rows))))
    new = read_conllu(io.StringIO("1\tTHE\t_\tDET\t_\t_\t2\tdet\t_\t_\n"
                                  "2\tROBERTS\t_\tPROPN\t_\t_\t0\troot\t_\t_\n\n"))
    assert lemmatizer.lemmas(new) == [["the", "Roberts"]]


def test_a_lemmatizer_of_the_version_before_capitalising_scripts_loads(tmp_path):
    """A model file whose lemmatizer is version 5 (no capitalising scripts, each applied as
    it was) loads and lemmatizes as before; 4 is refused."""
    import arborparse
    from arborparse.io import model_files
    from arborparse.io.model_files import ModelFileError
    from arborparse.pipeline import Pipeline

    train = lemmatized(separable_text())
    header, arrays = Pipeline(lemmatizer=Lemmatizer(epochs=2, bits=12).fit(train)).parts()
    for version in (5, 4):
        header["components"]["lemmatizer"]["version"] = version
        model_files.save(tmp_path / "p.npz", "pipeline", 1, header, arrays, force=True)
        if version == 5:
            loaded = arborparse.load(tmp_path / "p.npz")
            assert loaded.lemmatizer.lemmas(train[:2]) == [s.lemmas for s in train[:2]]
        else:
            with pytest.raises(ModelFileError, match="lemmatizer is version 4"):
                arborparse.load(tmp_path / "p.npz")


def test_marks_the_lemmas_leave_out_are_taken_out_of_new_forms():
    """Forms written with a combining mark their lemmas never hold (an acute here, Biblical
    Hebrew's vowel points in a treebank): a new form loses it wherever it stands, before
    its script; a mark the lemmas keep (a dot below) stays; a file keeps the marks, and
    one written before them takes none out."""
    acute, dot = "\u0301", "\u0323"
    rows = []
    for stem in ["cat", "dog", "hat", "pig", "cow", "rat"]:
        marked = stem[0] + acute + stem[1:]
        rows.append(f"1\t{marked}s\t{stem}\tNOUN\t_\t_\t0\troot\t_\t_\n\n"
                    f"1\ts{dot}{marked}\ts{dot}{stem}\tNOUN\t_\t_\t0\troot\t_\t_\n\n")
    rows.append(f"1\tf{acute}ox\tvixen\tNOUN\t_\t_\t0\troot\t_\t_\n\n")
    lemmatizer = Lemmatizer(epochs=5, bits=14).fit(read_conllu(io.StringIO("".join(rows))))
    assert lemmatizer.dropped == acute
    new = read_conllu(io.StringIO(f"1\tbi{acute}rds\t_\tNOUN\t_\t_\t0\troot\t_\t_\n\n"
                                  f"1\ts{dot}e{acute}al\t_\tNOUN\t_\t_\t0\troot\t_\t_\n\n"))
    assert lemmatizer.lemmas(new) == [["bird"], [f"s{dot}eal"]]
    other = read_conllu(io.StringIO(f"1\tfo{acute}x\t_\tNOUN\t_\t_\t0\troot\t_\t_\n\n"))
    assert lemmatizer.lemmas(other) == [["vixen"]]  # seen with its marks elsewhere
    assert lemmatizer.bare_dictionary["NOUN\tfox"] == "vixen"
    alone = read_conllu(io.StringIO(f"1\t{acute}\t_\tPUNCT\t_\t_\t0\troot\t_\t_\n\n"))
    assert lemmatizer.lemmatize(alone)[0].lemmas == [acute]  # never an empty lemma
    header, arrays = lemmatizer.parts()
    assert Lemmatizer.from_parts(header, arrays, "m.npz").lemmas(new) == [["bird"], [f"s{dot}eal"]]
    for bad in (None, "x", ["\u0301"]):  # a file with anything but combining marks there
        with pytest.raises(ModelFileError, match="dropped"):
            Lemmatizer.from_parts({**header, "dropped": bad}, arrays, "m.npz")
    decomposed = [(unicodedata.normalize("NFD", w), w) for w in ["café", "été", "señor"] * 5]
    assert dropped_marks(decomposed) == ""  # the same accents, written another way
    del header["dropped"]  # a file written before
    assert Lemmatizer.from_parts(header, arrays, "m.npz").lemmas(new)[0] == [f"bi{acute}rd"]


def test_treebank_without_lemmas():
    text = separable_text()
    bare = [s.with_columns({LEMMA: ["_"] * len(s)}) for s in read_conllu(io.StringIO(text))]
    lemmatizer = Lemmatizer(epochs=2, bits=12).fit(bare)
    assert not lemmatizer.enabled
    assert lemmatizer.lemmas(bare[:1]) == [["_"] * len(bare[0])]


def test_no_script_gives_an_empty_lemma():
    """A form that is exactly what a script cuts ("'nin" after "Ali'nin" -> "Ali") keeps a
    lemma: such scripts do not apply to it."""
    script = edit_script("Ali'nin", "Ali")
    assert script[2] == "'nin" and not applies("'nin", script) and applies("Ayşe'nin", script)
    train = read_conllu(io.StringIO("1\tAli'nin\tAli\tPROPN\t_\t_\t0\troot\t_\t_\n\n"
                                    "1\tev\tev\tNOUN\t_\t_\t0\troot\t_\t_\n\n"))
    lemmatizer = Lemmatizer(epochs=2, bits=12).fit(train)
    new = read_conllu(io.StringIO("1\t'nin\t_\tPROPN\t_\t_\t0\troot\t_\t_\n\n"))
    assert lemmatizer.lemmas(new) == [["'nin"]]


def test_no_lemma_begins_with_a_mark_no_training_lemma_begins_with():
    """Korean-GSD joins a lemma's morphemes with + (``학생이라며`` -> ``학생+이+라며``): the
    script read off it, applied to a form that is all suffix (``이라며``), would give
    ``+이+라며``, which no training lemma looks like; such scripts are not candidates."""
    rows = "".join(f"1\t{form}\t{lemma}\tVERB\t_\t_\t0\troot\t_\t_\n\n" for form, lemma in
                   [("학생이라며", "학생+이+라며"), ("친구라며", "친구+라며")] * 3)
    lemmatizer = Lemmatizer(epochs=3, bits=12).fit(read_conllu(io.StringIO(rows)))
    script = edit_script("학생이라며", "학생+이+라며")
    assert applies("이라며", script) and apply_script("이라며", script) == "+이+라며"
    new = read_conllu(io.StringIO("1\t이라며\t_\tVERB\t_\t_\t0\troot\t_\t_\n\n"))
    assert lemmatizer.lemmas(new) == [["이+라며"]]


def test_columns_never_get_empty_values():
    (s,) = read_conllu(io.StringIO("1\tev\tev\tNOUN\t_\t_\t0\troot\t_\t_\n\n"))
    with pytest.raises(ValueError, match="non-empty"):
        s.with_columns({LEMMA: [""]})


def test_scripts_share_their_parts(tmp_path):
    from arborparse.pipeline import Pipeline
    from arborparse.text.lemmatizer import script_parts

    assert script_parts(Lemmatizer._name(("ge", "", "t", "en", "lower"))) == [
        "prefix\tge\t", "suffix\tt\ten", "case\tlower"]
    # dogs -> dog, runs -> run: one suffix rewrite, one case, two scripts' ids for none
    train = lemmatized(separable_text())
    lemmatizer = Lemmatizer(epochs=5, bits=16).fit(train)
    classifier = lemmatizer.classifier
    parts = {s: list(classifier.pids[classifier.pptr[k]:classifier.pptr[k + 1]])
             for k, s in enumerate(lemmatizer.scripts)}
    keep, strip = ("", "", "", "", "lower"), ("", "", "s", "", "lower")
    assert parts[keep][0] == parts[strip][0] and parts[keep][2] == parts[strip][2]
    assert parts[keep][1] != parts[strip][1]
    # a model file gives back the same parts and the same lemmas
    path = tmp_path / "lemmatizer.npz"
    Pipeline(lemmatizer=lemmatizer).save(path)
    loaded = Pipeline.load(path).lemmatizer
    assert (loaded.classifier.pids == classifier.pids).all()
    assert loaded.lemmas(train) == lemmatizer.lemmas(train)


def fits(lemmatizer, form, i):
    """The script adds nothing, or was seen with the form's writing system; and its lemma
    begins with a letter, a digit or what a training lemma begins with."""
    script = lemmatizer.scripts[i]
    first = apply_script(form, script)[:1]
    return (writing_system(form) in lemmatizer.systems[i] or not (script[1] or script[3])) \
        and (first.isalnum() or first in {lemma[:1] for lemma in lemmatizer.dictionary.values()})


def test_candidates_are_the_scripts_that_apply(ud_files):
    """`_candidates` finds by suffix and prefix exactly the scripts seen with the UPOS that
    `applies` to the form (and `fits` it), each once (forms from the treebanks, and each
    script's own cut strings as forms: the cases where the whole form is cut; and forms of
    50,000 characters, whose suffixes are not each looked up)."""
    for path in ud_files:
        if not path.name.endswith("-train.conllu"):
            continue
        train = read_conllu(path)[:400]
        lemmatizer = Lemmatizer(epochs=1, bits=12).fit(train)
        seen = {}
        for (upos, _), ids in lemmatizer.scripts_by_suffix.items():
            seen.setdefault(upos, set()).update(ids)
        cuts = {(s[0] + s[2], upos) for upos, ids in seen.items()
                for s in (lemmatizer.scripts[i] for i in ids)}
        words = {(f, u) for s in train for f, u in zip(s.forms, s.upos)}
        long = {("q" * 50_000 + f, u) for f, u in sorted(words)[::50]}
        for form, upos in sorted(words | cuts | long | {(f.upper(), u) for f, u in words}):
            found = lemmatizer._candidates(form, upos)
            assert len(found) == len(set(found))
            assert sorted(found) == sorted(i for i in seen.get(upos, ()) if applies(
                form, lemmatizer.scripts[i]) and fits(lemmatizer, form, i)), \
                (path.name, form, upos)
    # cuts that overlap (abA: "ab" and "ba"), that take the whole form and add nothing,
    # and that take it and add something
    made = Lemmatizer()
    made.dictionary = {}
    made.scripts = [("ab", "", "ba", "x", "lower"), ("ab", "", "a", "y", "lower"),
                    ("a", "", "ba", "", "lower"), ("", "", "aba", "z", "lower")]
    made.scripts_by_suffix = {("X", "ba"): [0, 2], ("X", "a"): [1], ("X", "aba"): [3]}
    made.systems = [["LATIN"]] * 4
    made._index_prefixes()
    assert made._candidates("abA", "X") == [1, 3]
    assert [applies("abA", s) for s in made.scripts] == [False, True, False, True]


def test_a_script_adding_letters_keeps_to_the_writing_systems_it_was_seen_with(tmp_path):
    """A script that adds a Tamil vowel sign (``செய்த`` -> ``செய்து``) applies to Tamil
    words: a Latin word, a URL or a number in the same text never gets a Tamil ending."""
    from arborparse.pipeline import Pipeline

    rows = "".join(f"1\t{form}\t{lemma}\tVERB\t_\t_\t0\troot\t_\t_\n\n" for form, lemma in
                   [("செய்த", "செய்து"), ("வந்த", "வந்து"), ("போன", "போனு")] * 3)
    lemmatizer = Lemmatizer(epochs=3, bits=12).fit(read_conllu(io.StringIO(rows)))
    forms = ["கொண்ட", "iPhone", "https://example.com/a?b=c", "1995"]
    new = read_conllu(io.StringIO("".join(f"{i}\t{form}\t_\tVERB\t_\t_\t0\troot\t_\t_\n"
                                          for i, form in enumerate(forms, 1)) + "\n"))
    assert lemmatizer.lemmas(new) == [["கொண்டு", *forms[1:]]]
    path = tmp_path / "m.npz"
    Pipeline(lemmatizer=lemmatizer).save(path)
    assert Pipeline.load(path).lemmatizer.lemmas(new) == lemmatizer.lemmas(new)


def test_urls_addresses_and_paths_are_their_own_lemmas_unless_the_treebank_says_otherwise(
        tmp_path):
    """A lemmatizer that lowercases nouns leaves a URL, an e-mail address and a path it
    never saw as they are (the tokenizer keeps them whole), where its treebank lemmatizes
    them so or has none; a treebank that lowercases its URLs has them lowercased."""
    from arborparse.pipeline import Pipeline

    nouns = [("Dogs", "dog"), ("Cats", "cat"), ("Houses", "house")] * 3
    unseen = ["https://eu.wikipedia.org/wiki/Euskara", "Jon.Garcia@EHU.eus",
              "/usr/Local/BIN", "Trees"]

    def rows(pairs):
        return read_conllu(io.StringIO("".join(f"1\t{form}\t{lemma}\tNOUN\t_\t_\t0\troot\t_\t_"
                                               f"\n\n" for form, lemma in pairs)))
    new = rows([(form, "_") for form in unseen])
    urls = [("https://A.org/X", "https://A.org/X"), ("www.B.com/Y", "www.B.com/Y")]
    for train in (nouns, nouns + urls):
        lemmatizer = Lemmatizer(epochs=3, bits=12).fit(rows(train))
        assert lemmatizer.own == ("url", "email", "path")
        assert [s.lemmas[0] for s in lemmatizer.lemmatize(new)] == [*unseen[:3], "tree"]
        path = tmp_path / "m.npz"
        Pipeline(lemmatizer=lemmatizer).save(path)
        assert Pipeline.load(path).lemmatizer.lemmas(new) == lemmatizer.lemmas(new)
    lowered = Lemmatizer(epochs=3, bits=12).fit(rows(
        nouns + [(form, lemma.lower()) for form, lemma in urls]))
    assert lowered.own == ("email", "path")
    assert lowered.lemmatize(new)[0].lemmas == ["https://eu.wikipedia.org/wiki/euskara"]
