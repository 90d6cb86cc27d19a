"""A whole file of trees as one HTML page: a list of the sentences to jump to, each sentence's
tree (`svg`) in a box that scrolls sideways when the sentence is long, and links to the
previous and next sentence. Self-contained (no script, no outside resource) and
deterministic. A sentence's text, in the list and above its tree, takes the direction of its
first strong character (``dir="auto"``), as its tree does (`svg`)."""

from __future__ import annotations

from collections.abc import Iterable

from arborparse.errors import counted
from arborparse.io.conllu import Sentence
from arborparse.render.svg import SURE, UNSURE, escape, svg, tree

STYLE = f"""body {{ font-family: sans-serif; margin: 0; display: flex; }}
nav {{ width: 18rem; height: 100vh; overflow-y: auto; position: sticky; top: 0;
      border-right: 1px solid #ddd; font-size: 13px; padding: 0.5rem; box-sizing: border-box; }}
nav a {{ display: block; white-space: nowrap; overflow: hidden; text-overflow: ellipsis;
        color: #2c3e50; text-decoration: none; padding: 1px 0; }}
main {{ flex: 1; min-width: 0; padding: 0 1rem; }}
section {{ border-bottom: 1px solid #eee; padding: 0.5rem 0; }}
.tree {{ overflow-x: auto; }}
.legend .sure {{ color: {SURE}; }} .legend .unsure {{ color: {UNSURE}; }}
.steps a {{ margin-right: 1rem; font-size: 13px; }}"""


def sentence_text(sentence: Sentence) -> str:
    """The sentence's ``# text``, else its words joined by spaces."""
    text = sentence.comment("text")
    return " ".join(sentence.forms) if text is None else text


def page(sentences: Iterable[Sentence], title: str = "arborparse",
         threshold: float = 0.5) -> str:
    """The HTML page of `sentences` (each with HEAD and DEPREL; a document of ``nlp(...)``
    or its sentences too)."""
    sentences = [tree(s) for s in getattr(sentences, "sentences", sentences)]
    links, sections = [], []
    for k, s in enumerate(sentences, 1):
        name, text = s.comment("sent_id"), sentence_text(s)
        links.append(f'<a href="#s{k}" title="{escape(text)}" dir="auto">{k}. '
                     f'{escape(text)}</a>')
        steps = "".join(f'<a href="#s{j}">{word}</a>' for j, word in
                        ((k - 1, "&larr; previous"), (k + 1, "next &rarr;"))
                        if 1 <= j <= len(sentences))
        heading = f"Sentence {k}" + (f" <small>{escape(name)}</small>"
                                     if name and name != str(k) else "")
        sections.append(f'<section id="s{k}"><h2>{heading}</h2>'
                        f'<p dir="auto">{escape(text)}</p><div class="tree">'
                        f'{svg(s, threshold)}</div><p class="steps">{steps}</p></section>')
    legend = (f'<p class="legend">Arcs: <span class="sure">solid</span>; with marginals '
              f'(parse --marginals) an arc is as opaque as its probability and '
              f'<span class="unsure">dashed</span> below {threshold:g}.</p>')
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<title>{escape(title)}</title><style>{STYLE}</style></head>\n<body>'
            f'<nav><strong>{counted(len(sentences), "sentence")}</strong>{"".join(links)}</nav>\n'
            f'<main><h1>{escape(title)}</h1>{legend}\n' + "\n".join(sections)
            + "\n</main></body></html>\n")
