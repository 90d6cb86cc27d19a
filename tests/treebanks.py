"""Small synthetic treebanks whose trees a first-order model can fit exactly."""

import io

from arborparse.io import read_conllu

# Heads follow from POS alone: DET -> next NOUN, ADJ -> next NOUN, NOUN -> VERB, ADV -> VERB,
# VERB -> root; PRON -> VERB. Labels follow from the POS pair.
PATTERNS = [
    [("the", "DET"), ("dog", "NOUN"), ("runs", "VERB")],
    [("a", "DET"), ("big", "ADJ"), ("cat", "NOUN"), ("sleeps", "VERB"), ("now", "ADV")],
    [("she", "PRON"), ("sees", "VERB"), ("the", "DET"), ("red", "ADJ"), ("car", "NOUN")],
    [("dogs", "NOUN"), ("bark", "VERB")],
    [("quickly", "ADV"), ("he", "PRON"), ("left", "VERB")],
    [("the", "DET"), ("old", "ADJ"), ("man", "NOUN"), ("saw", "VERB"), ("a", "DET"),
     ("bird", "NOUN"), ("today", "ADV")],
]
LABEL = {"DET": "det", "ADJ": "amod", "ADV": "advmod", "PRON": "nsubj", "VERB": "root"}


def _heads(tags):
    verb = tags.index("VERB") + 1
    heads, labels = [], []
    for i, tag in enumerate(tags, 1):
        if tag == "VERB":
            heads.append(0)
            labels.append("root")
        elif tag in ("DET", "ADJ"):
            heads.append(next(j for j in range(i + 1, len(tags) + 1) if tags[j - 1] == "NOUN"))
            labels.append(LABEL[tag])
        elif tag == "NOUN":
            heads.append(verb)
            labels.append("nsubj" if i < verb else "obj")
        else:
            heads.append(verb)
            labels.append(LABEL[tag])
    return heads, labels


def separable_text(copies: int = 3) -> str:
    lines = []
    for c in range(copies):
        for pattern in PATTERNS:
            tags = [t for _, t in pattern]
            heads, labels = _heads(tags)
            lines.append(f"# sent_id = {c}-{len(lines)}")
            for i, ((form, tag), h, lab) in enumerate(zip(pattern, heads, labels), 1):
                lines.append(f"{i}\t{form}\t{form}\t{tag}\t{tag}\t_\t{h}\t{lab}\t_\t_")
            lines.append("")
    return "\n".join(lines) + "\n"


def separable(copies: int = 3):
    return read_conllu(io.StringIO(separable_text(copies)))
