"""Rendering: the SVG's structure (one arc per word, labels, UPOS, levels that keep longer
arcs above the arcs they overlap and labels apart), marginals shown, right-to-left order,
the HTML page, and the command. (Labels apart as the browser draws them:
tests/service/test_browser.py.)"""

import io
import re
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from arborparse.cli import cli
from arborparse.io import read_conllu
from arborparse.render import page, svg
from arborparse.render.svg import columns, label_boxes, levels, right_to_left

NS = {"s": "http://www.w3.org/2000/svg"}
NONPROJECTIVE = """# sent_id = np1
# text = A hearing is scheduled on the issue today .
1\tA\ta\tDET\t_\t_\t2\tdet\t_\t_
2\thearing\thearing\tNOUN\t_\t_\t4\tnsubj\t_\tHeadProb=0.9100
3\tis\tbe\tAUX\t_\t_\t4\taux\t_\tHeadProb=0.9990
4\tscheduled\tschedule\tVERB\t_\t_\t0\troot\t_\tHeadProb=0.9700
5\ton\ton\tADP\t_\t_\t7\tcase\t_\t_
6\tthe\tthe\tDET\t_\t_\t7\tdet\t_\t_
7\tissue\tissue\tNOUN\t_\t_\t2\tnmod\t_\tHeadProb=0.3100
8\ttoday\ttoday\tNOUN\t_\t_\t4\tobl\t_\t_
9\t.\t.\tPUNCT\t_\t_\t4\tpunct\t_\t_

"""
HEBREW = """1\tשלום\t_\tINTJ\t_\t_\t0\troot\t_\t_
2\tלכם\t_\tPRON\t_\t_\t1\tobl\t_\t_

"""


def sentence(text=NONPROJECTIVE):
    return read_conllu(io.StringIO(text))[0]


def test_one_arc_per_word_with_labels_and_tags():
    s = sentence()
    root = ET.fromstring(svg(s))
    arcs = root.findall("s:g[@class]", NS)
    arcs = [g for g in arcs if g.get("class").startswith("arc")]
    assert [(int(g.get("data-dep")), int(g.get("data-head")), g.get("data-label"))
            for g in arcs] == [(m, int(s.heads[m]), s.deprels[m - 1]) for m in range(1, 10)]
    words = root.findall("s:g[@class='word']", NS)
    assert [[t.text for t in g.findall("s:text", NS)] for g in words] == \
        [[f, u] for f, u in zip(s.forms, s.upos)]
    assert svg(s) == svg(s)  # deterministic


def test_marginals_set_opacity_and_mark_unsure_arcs():
    root = ET.fromstring(svg(sentence(), threshold=0.5))
    by_dep = {int(g.get("data-dep")): g for g in root.findall("s:g", NS)
              if g.get("class", "").startswith("arc")}
    assert by_dep[7].get("class") == "arc unsure" and by_dep[7].get("data-prob") == "0.3100"
    assert float(by_dep[7].get("opacity")) == 0.31
    assert by_dep[2].get("class") == "arc" and float(by_dep[2].get("opacity")) == 0.91
    assert by_dep[1].get("opacity") == "1.000" and by_dep[1].get("data-prob") is None
    assert "stroke-dasharray" in ET.tostring(by_dep[7]).decode()


def random_tree(raw):
    heads = [-1] + [h % (len(raw) + 1) for h in raw]
    return [h if h != m else 0 for m, h in enumerate(heads)]


def assert_longer_overlapping_arcs_higher(heads, level):
    span = {m: (min(h, m), max(h, m)) for m, h in enumerate(heads) if m > 0 and h > 0}
    for a, (l1, r1) in span.items():
        for b, (l2, r2) in span.items():
            if r2 - l2 < r1 - l1 and l2 < r1 and r2 > l1:
                assert level[a] > level[b]


@given(st.lists(st.integers(0, 12), min_size=1, max_size=12))
def test_a_longer_overlapping_arc_is_always_higher(raw):
    heads = random_tree(raw)
    assert_longer_overlapping_arcs_higher(heads, levels(heads))


@given(st.lists(st.tuples(st.integers(0, 12), st.integers(10, 90), st.integers(1, 14)),
                min_size=1, max_size=12))
def test_labels_at_one_level_never_meet_and_longer_arcs_stay_higher(words):
    """Words of random widths (10 to 90 px), arcs with labels of random lengths."""
    heads = random_tree([h for h, _, _ in words])
    x = [0.0]
    for _, width, _ in words:
        x.append(x[-1] + width)
    boxes = label_boxes(x, heads, ["x" * length for _, _, length in words])
    level = levels(heads, boxes)
    for a, (l1, r1) in boxes.items():
        for b, (l2, r2) in boxes.items():
            if a != b and level[a] == level[b]:
                assert r1 <= l2 or r2 <= l1
    assert_longer_overlapping_arcs_higher(heads, level)


def test_short_words_with_long_labels_are_raised_apart():
    """Two neighbouring arcs whose labels are wider than the words under them: the second
    is lifted a level (without labels both would be at level 1)."""
    s = sentence("1\ta\t_\tX\t_\t_\t2\tcompound:prt\t_\t_\n"
                 "2\tb\t_\tX\t_\t_\t0\troot\t_\t_\n"
                 "3\tc\t_\tX\t_\t_\t2\tnsubj:outer\t_\t_\n\n")
    assert levels(s.heads) == {1: 1, 3: 1}
    root = ET.fromstring(svg(s))
    y = {g.get("data-label"): float(g.find("s:text", NS).get("y"))
         for g in root.findall("s:g", NS) if g.get("class", "").startswith("arc")}
    assert y["nsubj:outer"] < y["compound:prt"] - 12  # a label's height apart


def test_a_wide_character_takes_two_widths():
    """Hangul and Han are drawn about twice as wide as Latin letters (a word box that
    counted them as one ran into its neighbours); a combining mark takes none."""
    assert columns("dog") == 3 and columns("경기부양") == columns("漢字漢字") == 8
    assert columns("Cafe\u0301") == 4 and columns("ＡＢ") == 4
    korean = sentence("1\t경기국제의료관광협의회\t_\tNOUN\t_\t_\t2\tnsubj\t_\t_\n"
                      "2\t통화당국의\t_\tNOUN\t_\t_\t0\troot\t_\t_\n\n")
    root = ET.fromstring(svg(korean))
    x = [float(g.find("s:text", NS).get("x")) for g in root.findall("s:g[@class='word']", NS)]
    assert x[1] - x[0] >= 8.4 * (columns("경기국제의료관광협의회") + columns("통화당국의")) / 2


def test_right_to_left_sentences_start_at_the_right():
    s = sentence(HEBREW)
    assert right_to_left(s.forms) and not right_to_left(["dogs", "bark"])
    # the first strong character decides, as in the Unicode bidirectional algorithm
    assert right_to_left(["(2020)", "בשנת", "https://example.com/page", "!"])
    assert not right_to_left(["12", "Tel", "Aviv", "בשנת"]) and not right_to_left(["12"])
    root = ET.fromstring(svg(s))
    assert root.get("direction") == "rtl"
    x = [float(g.find("s:text", NS).get("x")) for g in root.findall("s:g[@class='word']", NS)]
    assert x[0] > x[1]


def test_the_page_has_every_sentence_and_navigation():
    sentences = read_conllu(io.StringIO(NONPROJECTIVE * 2 + HEBREW))
    html = page(sentences, "test")
    assert re.findall(r"<h2>(.*?)</h2>", html) == \
        ["Sentence 1 <small>np1</small>", "Sentence 2 <small>np1</small>", "Sentence 3"]
    assert html.count("<svg") == 3 and html.count('<section id="s') == 3
    # each sentence's text reads in its own direction (the Hebrew one from the right)
    assert html.count('<p dir="auto">') == 3 and html.count('dir="auto">3. ') == 1
    numbered = read_conllu(io.StringIO("# sent_id = 1\n" + HEBREW))
    assert re.findall(r"<h2>(.*?)</h2>", page(numbered)) == ["Sentence 1"]
    assert re.findall(r'href="#s(\d)"', html)[:3] == ["1", "2", "3"]
    assert "next &rarr;" in html and "overflow-x: auto" in html


def test_the_command(tmp_path):
    path = tmp_path / "in.conllu"
    path.write_text(NONPROJECTIVE + HEBREW)
    run = lambda *args: CliRunner().invoke(cli, list(map(str, args)))  # noqa: E731
    r = run("render", path, "-o", tmp_path / "two.svg", "--sentence", 2)
    assert r.exit_code == 0, r.output
    assert 'direction="rtl"' in (tmp_path / "two.svg").read_text()
    r = run("render", path, "-o", tmp_path / "all.html")
    assert r.exit_code == 0 and (tmp_path / "all.html").read_text().count("<svg") == 2
    assert "Warning" not in r.output
    cycle = "1\ta\t_\tX\t_\t_\t2\tx\t_\t_\n2\tb\t_\tX\t_\t_\t1\tx\t_\t_\n\n"
    roots = "1\ta\t_\tX\t_\t_\t0\tx\t_\t_\n2\tb\t_\tX\t_\t_\t0\tx\t_\t_\n\n"
    (tmp_path / "cycle.conllu").write_text(roots + cycle * 3)
    r = run("render", tmp_path / "cycle.conllu", "-o", tmp_path / "cycle.html")
    assert r.exit_code == 0 and (tmp_path / "cycle.html").exists()  # drawn, to be seen
    assert r.output == f"Warning: {tmp_path / 'cycle.conllu'}:4: the heads form a cycle " \
                       "(1 -> 2 -> 1); drawn as it is (and 2 more sentences with a cycle)\n"
    r = run("render", tmp_path / "cycle.conllu", "-o", tmp_path / "roots.svg")
    assert r.exit_code == 0 and r.output == ""  # a multi-root parser's tree
    r = run("render", path, "-o", tmp_path / "x.svg", "--sentence", 3)
    assert r.exit_code == 1 and "--sentence 3, the file has 2" in r.output
    r = run("render", path, "-o", tmp_path / "x.png")
    assert r.exit_code == 2 and "name an .svg or an .html file" in r.output
    (tmp_path / "untagged.conllu").write_text("1\tdogs\t_\t_\t_\t_\t_\t_\t_\t_\n\n")
    r = run("render", tmp_path / "untagged.conllu", "-o", tmp_path / "u.svg")
    assert r.exit_code == 1 and "untagged.conllu:1: the sentence has no tree" in r.output
    r = run("render", path, "-o", tmp_path / "one.html", "--sentence", 2)  # not ignored
    assert r.exit_code == 2 and "--sentence picks the sentence of an SVG" in r.output
    (tmp_path / "empty.conllu").write_text("")
    r = run("render", tmp_path / "empty.conllu", "-o", tmp_path / "e.html")
    assert r.exit_code == 1 and "empty.conllu: no sentences" in r.output
    assert not (tmp_path / "one.html").exists() and not (tmp_path / "e.html").exists()


def test_what_nlp_returns_renders_and_control_characters_stay_valid_xml():
    from arborparse.document import Document

    doc = Document([sentence()])
    assert svg(doc.sentences[0]) == svg(sentence())  # a document's sentence view
    assert page(doc) == page(doc.sentences) == page([sentence()])
    assert "<strong>1 sentence</strong>" in page(doc)
    assert repr(doc) == f"Document(1 sentence, {len(sentence())} words)"
    odd = sentence().with_columns({1: ["a\x0bb", "c\x01", *sentence().forms[2:]]})
    drawn = svg(odd, title="x\x00y")
    root = ET.fromstring(drawn)  # well-formed: the control characters shown as U+FFFD
    assert "a\ufffdb" in "".join(root.itertext()) and "x\ufffdy" in drawn
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f]", page([odd]))
    with pytest.raises(TypeError, match="render a Sentence or a document's sentence, not str"):
        svg("a dog")
