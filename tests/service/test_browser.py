"""The web page in a real browser: Debian's Chromium driven by Playwright against the
service on loopback. Type a sentence, see one arc per word, hover a word for its head
probabilities, step through the k-best trees."""

import socket
import threading
import time
from pathlib import Path

import pytest
import uvicorn
from playwright.sync_api import sync_playwright

import arborparse
from arborparse.service.app import create_app

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def url(english_pipeline):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(arborparse.load(english_pipeline)),
                                           host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/"
    server.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (make test does)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


def test_type_parse_hover_and_step_through_the_kbest_trees(url, browser, tmp_path):
    page = browser.new_page()
    page.goto(url)
    page.fill("#text", "The old dog barks at the cat.")
    page.fill("#k", "3")
    page.click("#parse")
    page.wait_for_selector("svg.arborparse-tree")
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
    page = browser.new_page()
    page.goto(url)
    page.fill("#text", "   ")
    page.click("#parse")
    page.wait_for_function("document.getElementById('error').textContent.length > 0")
    assert "empty" in page.locator("#error").inner_text()
