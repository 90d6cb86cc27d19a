"""Seeing the trees: `svg(sentence)` draws one tree as SVG (`svg`), `page(sentences)` a
whole file as one HTML page with navigation (`page`)."""

from arborparse.render.page import page
from arborparse.render.svg import svg

__all__ = ["page", "svg"]
