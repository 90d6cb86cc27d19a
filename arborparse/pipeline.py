"""`load(path)`: any model file, the right parser.

The model kind written in the file's header picks the family; each family's parser has the
same face (`load`, `save`, `parse`, `iter_parse`, `options`, `kind`; see
`arborparse.options`).
"""

from __future__ import annotations

from importlib import import_module

from arborparse.io.model_files import ModelFileError, kind_of

# model kind -> (module, class); imported on demand, so loading one family never pays
# for another's dependencies
FAMILIES = {"first-order": ("arborparse.linear.parser", "Parser"),
            "isbn": ("arborparse.isbn.parser", "ISBNParser")}


def load(path):
    """The parser stored in the model file at `path`, whatever its family.

    Raises `ModelFileError` for a file that is not a model of ours, of a kind this version
    does not know, or of another version.
    """
    kind = kind_of(path)
    if kind not in FAMILIES:
        raise ModelFileError(f"{path}: a model of kind {kind!r}, which this arborparse does "
                             f"not read (it reads {', '.join(FAMILIES)})")
    module, name = FAMILIES[kind]
    return getattr(import_module(module), name).load(path)
