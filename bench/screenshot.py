"""The web page's screenshots, on a desktop screen and on a 390 px wide phone: the service on
loopback with MODEL, a sentence typed and parsed, a word hovered (its head panel shown);
Debian's Chromium driven by Playwright. Writes OUTPUT-desktop.png and OUTPUT-phone.png
(the screen only, not the whole page, so that each stays small) and prints their sizes.

    python bench/screenshot.py MODEL [--text "..."] [--word 7] [-o bench/page]
"""

import argparse
import os

from playwright.sync_api import sync_playwright

import arborparse
from arborparse.service.app import create_app, serving

FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENS = {"desktop": {"width": 1000, "height": 800}, "phone": {"width": 390, "height": 844}}


def shoot(browser, url: str, screen: dict, text: str, word: int, path: str) -> None:
    """The page on a `screen`-sized viewport, `text` parsed, word `word` hovered, saved
    as a PNG at `path`."""
    page = browser.new_page(viewport=screen)
    page.goto(url)
    page.wait_for_selector("svg.arborparse-tree")  # the example, parsed as the page opens
    page.fill("#text", text)
    page.eval_on_selector("#result", "result => result.replaceChildren()")
    page.click("#parse")
    page.wait_for_selector("svg.arborparse-tree")
    hovered = page.locator(".tree svg g.word").nth(word - 1)
    hovered.scroll_into_view_if_needed()
    hovered.hover()
    page.locator("#heads").wait_for(state="visible")
    page.screenshot(path=path)
    page.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--text", default="I saw the man with the telescope on the hill yesterday.")
    ap.add_argument("--word", type=int, default=7, help="the word hovered (1 is the first)")
    ap.add_argument("-o", "--output", default="bench/page",
                    help="the PNGs' names without -desktop.png and -phone.png")
    args = ap.parse_args()
    with serving(create_app(arborparse.load(args.model))) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        for name, screen in SCREENS.items():
            path = f"{args.output}-{name}.png"
            shoot(browser, url, screen, args.text, args.word, path)
            print(f"{path}: {screen['width']}x{screen['height']}, "
                  f"{os.path.getsize(path) / 1024:.0f} KB")
        browser.close()


if __name__ == "__main__":
    main()
