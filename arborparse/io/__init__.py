"""Reading and writing CoNLL-U and CoNLL-X; the Sentence type; gold-tree checks; model files."""

from arborparse.io.conllu import Sentence, iter_conllu, read_conllu, write_conllu
from arborparse.io.validate import check_tree

__all__ = ["Sentence", "iter_conllu", "read_conllu", "write_conllu", "check_tree"]
