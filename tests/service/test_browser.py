"""The web page in a real browser: Debian's Chromium driven by Playwright against the
service on loopback. The example parsed on first load, type a sentence, see one arc per
word, hover a word for its head probabilities (the panel beside the sentence, not over it,
on a phone too), step through the k-best trees; no two arc labels overlap over the 200
first sentences of Gothic-PROIEL and EWT test, on the service's page and on
`arborparse.render.page`."""

import itertools
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

import arborparse
from arborparse.io import read_conllu
from arborparse.render import page as render_page
from arborparse.service.app import create_app, serving

CHROMIUM = "/usr/bin/chromium"
PHONE = {"width": 390, "height": 844}
GOTHIC = ("UD_Gothic-PROIEL", "got_proiel-ud-test.conllu")
EWT = ("UD_English-EWT", "en_ewt-ud-test.conllu")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def url(english_pipeline):
    with serving(create_app(arborparse.load(english_pipeline))) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (make test does)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


def opened(browser, url, **options):
    """A new tab on `url`, once its example is parsed and drawn."""
    page = browser.new_page(**options)
    page.goto(url)
    page.wait_for_selector("svg.arborparse-tree")
    return page


def parse(page, text: str):
    """Put `text` in the text box (as pasted: `fill` types 180 kB too slowly), parse it
    and wait for its trees (the page draws only the answer to its latest request)."""
    page.eval_on_selector("#text", "(box, text) => { box.value = text; }", text)
    page.eval_on_selector("#result", "result => result.replaceChildren()")
    page.click("#parse")
    page.wait_for_selector("svg.arborparse-tree")


def test_the_example_is_parsed_on_first_load(url, browser):
    page = opened(browser, url)
    example = page.input_value("#text")
    assert example.strip() and page.locator(".sentence .text").inner_text() == example
    assert page.locator(".sentence h3").all_inner_texts() == ["Sentence 1"]
    assert page.locator(".tree svg g.word").count() >= len(example.split())


def test_type_parse_hover_and_step_through_the_kbest_trees(url, browser, tmp_path):
    page = opened(browser, url)
    page.fill("#k", "3")
    parse(page, "The old dog barks at the cat.")
    words = page.locator(".tree svg g.word")
    assert words.count() == 8  # seven words and the full stop
    assert page.locator(".tree svg g.arc").count() == 8  # one arc per word
    first = page.locator(".tree svg").inner_html()
    words.nth(2).hover()
    panel = page.locator("#heads")
    panel.wait_for(state="visible")
    assert "head of 3 dog" in panel.inner_text() and "%" in panel.inner_text()
    assert page.locator("#heads tr.head-row").count() >= 1
    assert page.locator(".kbest .which").inner_text().startswith("best tree")
    page.click(".kbest .next")  # tree 1 of 3: the most probable tree
    assert page.locator(".kbest .which").inner_text().startswith("tree 1 of 3")
    page.click(".kbest .next")  # tree 2 of 3: another tree
    assert page.locator(".kbest .which").inner_text().startswith("tree 2 of 3")
    heads = lambda: [page.locator(".tree svg g.arc").nth(i).get_attribute("data-head")  # noqa
                     for i in range(8)]
    second = heads()
    page.click(".kbest .prev")
    assert heads() != second and page.locator(".tree svg").inner_html() != first
    page.screenshot(path=str(tmp_path / "page.png"), full_page=True)
    assert (tmp_path / "page.png").stat().st_size > 10_000


def test_an_error_is_shown_on_the_page(url, browser):
    page = opened(browser, url)
    page.fill("#text", "   ")
    page.click("#parse")
    page.wait_for_function("document.getElementById('error').textContent.length > 0")
    assert "empty" in page.locator("#error").inner_text()


def rectangles(locator) -> list[dict]:
    """Where the elements of `locator` are on the screen."""
    return locator.evaluate_all("els => els.map(e => e.getBoundingClientRect().toJSON())")


def meet(a: dict, b: dict) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and \
        a["top"] < b["bottom"] and b["top"] < a["bottom"]


LABELS = """svgs => svgs.map(svg => [...svg.querySelectorAll("g.arc > text")]
  .map(label => label.getBoundingClientRect().toJSON()))"""


@pytest.mark.parametrize("where", ["service", "render"])
@pytest.mark.parametrize("treebank", [GOTHIC, EWT], ids=["Gothic-PROIEL", "EWT"])
def test_no_two_arc_labels_overlap(url, browser, ud, treebank, where):
    """The 200 first sentences of a test set: their words parsed on the service's page,
    and their gold trees on `arborparse.render.page`; every label's box as the browser
    draws it. (Gothic-PROIEL's met nowhere before labels took room in the layout; EWT's
    met three times.)"""
    sentences = read_conllu(ud.joinpath(*treebank))[:200]
    page = opened(browser, url)
    if where == "service":  # their words (tokenized text would split "pic's" as raw text)
        page.select_option("#format", "conllu")
        page.fill("#k", "")
        parse(page, "".join("".join(f"{i}\t{form}" + "\t_" * 8 + "\n"
                                    for i, form in enumerate(s.forms, 1)) + "\n"
                            for s in sentences))
    else:
        page.set_content(render_page(sentences))
    labels = page.locator("svg.arborparse-tree").evaluate_all(LABELS)
    assert len(labels) == 200 and sum(map(len, labels)) == sum(map(len, sentences))
    pairs = [sum(meet(a, b) for a, b in itertools.combinations(boxes, 2)) for boxes in labels]
    overlapping = [(k, n) for k, n in enumerate(pairs, 1) if n]
    assert not overlapping, f"{sum(p for _, p in overlapping)} overlapping label pairs in " \
                            f"{len(overlapping)} sentences (number, pairs): {overlapping[:10]}"


def test_the_hover_panel_leaves_the_sentence_visible_on_a_phone(url, browser):
    """On a 390 px wide screen, hover words of the second sentence, each scrolled to the
    top of the screen and to the bottom: the panel is on the screen and covers none of the
    sentence's words."""
    page = opened(browser, url, viewport=PHONE)
    parse(page, " ".join(["The old dog barks at the cat in the garden."] * 8))
    assert page.locator(".tree").count() >= 6
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    words = page.locator(".tree").nth(1).locator("g.word")
    for k, block in itertools.product((0, 4, words.count() - 1), ("start", "end")):
        words.nth(k).evaluate("(word, block) => word.scrollIntoView({block})", block)
        words.nth(k).hover()
        page.locator("#heads").wait_for(state="visible")
        panel = rectangles(page.locator("#heads"))[0]
        assert 0 <= panel["left"] and panel["right"] <= PHONE["width"]
        assert 0 <= panel["top"] and panel["bottom"] <= PHONE["height"]
        assert not any(meet(panel, word) for word in rectangles(words)), (k, block)
