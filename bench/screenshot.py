"""The web page's screenshot for the README: the service on loopback with MODEL, a sentence
typed and parsed, a word hovered; Debian's Chromium driven by Playwright.

    python bench/screenshot.py MODEL [--text "..."] [-o docs/page.png]
"""

import argparse
import socket
import threading
import time

import uvicorn
from playwright.sync_api import sync_playwright

import arborparse
from arborparse.service.app import create_app

FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--text", default="I saw the man with the telescope on the hill yesterday.")
    ap.add_argument("--word", type=int, default=7, help="the word hovered (1 is the first)")
    ap.add_argument("-o", "--output", default="docs/page.png")
    args = ap.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(arborparse.load(args.model)),
                                           host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        page = browser.new_page(viewport={"width": 1000, "height": 620})
        page.goto(f"http://127.0.0.1:{port}/")
        page.fill("#text", args.text)
        page.click("#parse")
        page.wait_for_selector("svg.arborparse-tree")
        page.locator(".tree svg g.word").nth(args.word - 1).hover()
        page.locator("#heads").wait_for(state="visible")
        page.screenshot(path=args.output)
        browser.close()
    server.should_exit = True
    print(args.output)


if __name__ == "__main__":
    main()
