import codecs
import io

import numpy as np
import pytest

from arborparse.errors import ArborparseError, EncodingError, TreebankFormatError
from arborparse.io import check_tree, iter_conllu, read_conllu, write_conllu
from arborparse.io.conllu import MISC, UPOS
from arborparse.io.plain import words_sentence

GOOD = """# sent_id = 1
# text = Don't go.
1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tDo\tdo\tAUX\tVBP\t_\t3\taux\t3:aux\t_
2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t3:advmod\t_
3\tgo\tgo\tVERB\tVB\t_\t0\troot\t0:root\tSpaceAfter=No
3.1\tgo\tgo\tVERB\tVB\t_\t_\t_\t3:conj\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t3:punct\t_

1\tHi\thi\tINTJ\tUH\t_\t0\troot\t0:root\t_

"""


def write(tmp_path, text, name="x.conllu", binary=False):
    path = tmp_path / name
    if binary:
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_reads_words_ranges_empty_nodes_and_comments(tmp_path):
    s1, s2 = read_conllu(write(tmp_path, GOOD))
    assert s1.comments == ["# sent_id = 1", "# text = Don't go."]
    assert len(s1) == 4 and s1.forms == ["Do", "n't", "go", "."]
    assert s1.heads.tolist() == [-1, 3, 3, 0, 3]
    assert s1.deprels == ["aux", "advmod", "root", "punct"]
    assert s1.word_line(4) == 8 and s2.line == 10
    assert len(s2) == 1 and s2.upos == ["INTJ"]
    # surface tokens: the range line holds words 1-2; the empty node is none
    assert s1.tokens() == [(0, [1, 2]), (3, [3]), (5, [4])] and s2.tokens() == [(0, [1])]


def test_round_trip_is_byte_identical(tmp_path):
    path = write(tmp_path, GOOD)
    out = tmp_path / "out.conllu"
    write_conllu(read_conllu(path), out)
    assert out.read_bytes() == path.read_bytes()


def test_round_trip_on_every_ud_file(ud_files, tmp_path):
    for path in ud_files:
        out = tmp_path / path.name
        write_conllu(iter_conllu(path), out)
        assert out.read_bytes() == path.read_bytes(), path


def test_with_tree_changes_only_the_tree(tmp_path):
    """HEAD and DEPREL change; DEPS, which described the old tree, becomes _."""
    s = read_conllu(write(tmp_path, GOOD))[0]
    t = s.with_tree(np.array([-1, 0, 1, 2, 3]), ["root", "a", "b", "c"])
    before = s.to_text().splitlines()
    after = t.to_text().splitlines()
    for x, y in zip(before, after):
        cx, cy = x.split("\t"), y.split("\t")
        if len(cx) == 10 and cx[0].isdigit():
            assert cx[:6] + cx[9:] == cy[:6] + cy[9:] and cy[8] == "_"
        else:
            assert x == y
    assert t.heads.tolist() == [-1, 0, 1, 2, 3] and t.deprels == ["root", "a", "b", "c"]
    assert s.heads.tolist() == [-1, 3, 3, 0, 3]
    conllx = read_conllu(io.StringIO("1\tA\ta\tN\tNN\t_\t0\tROOT\t0\tROOT\n\n"))[0]
    assert conllx.with_tree(np.array([-1, 0])).rows[0][8:] == ["_", "_"]


def test_with_tree_refuses_what_a_file_could_not_hold(tmp_path):
    s = read_conllu(write(tmp_path, GOOD))[0]  # four words
    for heads, what in (([-1, 99, 0, 1, 1], r"heads\[1\] = 99: a head is a whole number, a "
                                             r"word 1..4 other than 1 or 0 for the root"),
                        ([-1, 0, -5, 1, 1], r"heads\[2\] = -5"),
                        ([-1, 0, 1, 3, 1], r"heads\[3\] = 3"),  # its own head
                        ([-1, 0, 1.5, 1, 1], r"heads\[2\] = 1.5"),
                        ([-1, 0, 1, float("inf"), 1], r"heads\[3\] = inf"),
                        ([-1, 0, None, 1, 1], r"heads\[2\] = None"),
                        ([-1, 0, 1, 2 ** 70, 1], r"heads\[3\] = 1180591620717411303424"),
                        (["-1", "0", "1", "1", "1"], r"heads\[1\] = '0'"),
                        ([False, True, True, True, True], r"heads\[1\] = True")):
        with pytest.raises(ValueError, match=what):
            s.with_tree(heads)
    for deprels, what in ((["root", "a\tb", "c", "d"], r"deprels\[1\] = 'a\\tb'"),
                          (["root", "", "c", "d"], r"deprels\[1\] = '': a label is a "
                                                   r"non-empty string without tabs or line "
                                                   r"ends"),
                          (["root", "a", "c\n", "d"], r"deprels\[2\]"),
                          (["root", "a", None, "d"], r"deprels\[2\] = None")):
        with pytest.raises(ValueError, match=what):
            s.with_tree([-1, 0, 1, 1, 1], deprels)
    assert s.with_tree(np.array([-1.0, 0.0, 1.0, 1.0, 1.0]), ["root", "a b", "c", "d"]
                       ).heads.tolist() == [-1, 0, 1, 1, 1]
    assert s.with_tree(np.array([-1, 0, 1, 1, 1], dtype=object)).heads.tolist() == \
        [-1, 0, 1, 1, 1]
    with pytest.raises(ValueError, match=r"UPOS value 'a\\rb': a column value must be "
                                         r"non-empty, without tabs or line ends"):
        s.with_columns({UPOS: ["N", "a\rb", "N", "N"]})


def test_with_misc_replaces_its_keys():
    s = read_conllu(io.StringIO("1\tA\ta\tN\tNN\t_\t0\troot\t_\tSpaceAfter=No|HeadProb=0.5\n\n"))[0]
    t = s.with_misc(["HeadProb=0.9000|LabelProb=1.0000"])
    assert t.rows[0][9] == "SpaceAfter=No|HeadProb=0.9000|LabelProb=1.0000"
    assert t.with_misc(["HeadProb=0.8000|LabelProb=0.5000"]).rows[0][9] == \
        "SpaceAfter=No|HeadProb=0.8000|LabelProb=0.5000"


def test_a_new_tree_drops_the_old_trees_probabilities():
    """HeadProb and LabelProb described the old tree's arcs (`parse --marginals`)."""
    s = read_conllu(io.StringIO("1\tA\ta\tN\tNN\t_\t2\tdet\t_\tSpaceAfter=No|HeadProb=0.5\n"
                                "2\tB\tb\tN\tNN\t_\t0\troot\t_\tHeadProb=0.9|LabelProb=1\n\n"))[0]
    t = s.with_tree(np.array([-1, 0, 1]), ["root", "dep"])
    assert t.column(MISC) == ["SpaceAfter=No", "_"]


def test_stream_from_file_objects():
    binary = io.BytesIO(GOOD.encode())
    assert len(list(iter_conllu(binary))) == 2
    text = io.StringIO(GOOD)
    assert len(read_conllu(text)) == 2


def test_conllx_is_read_by_suffix_and_content(tmp_path):
    text = "1\tA\ta\tN\tNN\t_\t2\tnsubj\t_\t_\n2\tb\tb\tV\tVB\t_\t0\tROOT\t0\tROOT\n\n"
    for name in ("x.conll", "x.conllx", "x.txt"):
        (s,) = read_conllu(write(tmp_path, text, name))
        assert s.format == "conllx" and s.heads.tolist() == [-1, 2, 0]
    (s,) = read_conllu(write(tmp_path, text, "x.conllu"))
    assert s.format == "conllu"
    # .conll is used for both formats: it goes by content
    conllu = "# sent_id = 1\n" + text.replace("\t0\tROOT\n", "\t_\t_\n")
    (s,) = read_conllu(write(tmp_path, conllu, "y.conll"))
    assert s.format == "conllu"


def test_conllx_rejects_conllu_only_lines(tmp_path):
    text = "1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n1\tA\ta\tN\tNN\t_\t0\tROOT\t_\t_\n\n"
    with pytest.raises(TreebankFormatError, match=r"x\.conllx:1: malformed ID"):
        read_conllu(write(tmp_path, text, "x.conllx"))
    text = "# newdoc\n# sent_id = 1\n1\tA\ta\tN\tNN\t_\t0\troot\t_\t_\n\n"
    with pytest.raises(TreebankFormatError, match=r"^\S+y\.conllu:1: a comment line, which "
                       r"CoNLL-X has not: this looks like CoNLL-U \(read it as conllu\)$"):
        read_conllu(write(tmp_path, text, "y.conllu"), format="conllx")


ERRORS = [
    ("1\tA\ta\tN\tNN\t_\t0\troot\t_\n\n", 1, "expected 10 tab-separated columns, found 9"),
    ("1\tA\ta\tN\tNN\t_\tx\troot\t_\t_\n\n", 1, "HEAD 'x' is not an integer"),
    ("1\tA\ta\tN\tNN\t_\t-1\troot\t_\t_\n\n", 1,
     "HEAD -1 out of range (0 is the root, 1 to n the words)"),
    ("1\tA\ta\tN\tNN\t_\t0\troot\t_\t_\n2\tB\tb\tN\tNN\t_\t7\tdep\t_\t_\n\n", 2,
     "HEAD 7 out of range"),
    ("1\tA\ta\tN\tNN\t_\t0\troot\t_\t_\n3\tB\tb\tN\tNN\t_\t1\tdep\t_\t_\n\n", 2,
     "word ID 3 out of order"),
    ("1\tA\ta\tN\tNN\t_\t0\troot\t_\t_\n1\tB\tb\tN\tNN\t_\t1\tdep\t_\t_\n\n", 2,
     "word ID 1 out of order"),
    ("1\tA\ta\tN\tNN\t_\t1\troot\t_\t_\n\n", 1, "its own head"),
    ("1\tA\ta\tN\tNN\t_\t0\troot\t_\t_\n\n1\tA\ta\tN", 3, "last line is truncated (4 of 10"),
    ("1\tA\ta\tN\tNN\t_\t0\troot\t_\t_\n\n1\tA\ta\tN\tNN\t_\t2\tdep\t_\t_\n", 3,
     "HEAD 2 out of range (the sentence has 1 word) (the file ends without a blank line "
     "after this sentence: was it cut short?)"),  # cut after a whole line
    ("A dog barks.\nIt sleeps.\n", 1, "does not look like CoNLL-U: the line has 1 column"),
    ("# text = plain\nA dog barks.\n\n", 2, "does not look like CoNLL-U: the line has 1"),
    ("A dog barks.", 1, "does not look like CoNLL-U: the line has 1"),  # not "truncated"
    ("1\tA\ta\tN\tNN\t_\t0\troot\t_\t_\n# late\n\n", 2, "comment line after"),
    ("1\tA\ta\tN\t\t_\t0\troot\t_\t_\n\n", 1, "column XPOS is empty"),
    ("2-3\tAB\t_\t_\t_\t_\t_\t_\t_\t_\n1\tA\ta\tN\tNN\t_\t0\troot\t_\t_\n\n", 1,
     "multiword token range 2-3"),
    ("1\tA\ta\tN\tNN\t_\t0\troot\t_\t_\n1.2\tA\ta\tN\tNN\t_\t_\t_\t_\t_\n\n", 2,
     "empty node ID 1.2"),
    ("1\tA\ta\tN\tNN\t_\t0\troot\t_\t_\n1-2\tA\ta\tN\tNN\t_\t_\t_\t_\t_\n\n", 2,
     "multiword token range 1-2"),
    ("1-3\tABC\t_\t_\t_\t_\t_\t_\t_\t_\n1\tA\ta\tN\tNN\t_\t0\troot\t_\t_\n"
     "2\tB\tb\tN\tNN\t_\t1\tx\t_\t_\n3-4\tCD\t_\t_\t_\t_\t_\t_\t_\t_\n"
     "3\tC\tc\tN\tNN\t_\t1\tx\t_\t_\n4\tD\td\tN\tNN\t_\t1\tx\t_\t_\n\n", 4,
     "multiword token range 3-4 overlaps the range 1-3 of line 1"),
    ("1-3\tABC\t_\t_\t_\t_\t_\t_\t_\t_\n1\tA\ta\tN\tNN\t_\t0\troot\t_\t_\n"
     "4-5\tDE\t_\t_\t_\t_\t_\t_\t_\t_\n\n", 3,
     "multiword token range 4-5 out of order or malformed (expected a range starting at 2)"),
    ("1-3\tABC\t_\t_\t_\t_\t_\t_\t_\t_\n1\tA\ta\tN\tNN\t_\t0\troot\t_\t_\n"
     "x-y\tDE\t_\t_\t_\t_\t_\t_\t_\t_\n\n", 3,
     "multiword token range x-y out of order or malformed"),
    ("# only a comment\n\n", 1, "sentence has no words"),
    ("# sent_id = 1\n1\tA\ta\tN\tNN\t_\t0\troot\t_\t_\n2-20\tBC\t_\t_\t_\t_\t_\t_\t_\t_\n"
     "2\tB\tb\tN\tNN\t_\t1\tx\t_\t_\n3\tC\tc\tN\tNN\t_\t1\tx\t_\t_\n\n", 3,
     "multiword token range reaches word 20 but the sentence has 3 words"),  # its own line
]


@pytest.mark.parametrize("text,line,message", ERRORS)
def test_malformed_input_names_file_line_and_problem(tmp_path, text, line, message):
    path = write(tmp_path, text)
    with pytest.raises(TreebankFormatError) as info:
        read_conllu(path)
    assert info.value.line == line
    assert info.value.path == str(path)
    assert message in str(info.value)
    assert str(info.value).startswith(f"{path}:{line}: ")


def test_undecodable_bytes_are_named_by_line_and_byte(tmp_path):
    data = b"1\tA\ta\tN\tNN\t_\t0\troot\t_\t_\n\n1\tA\xff\ta\tN\tNN\t_\t0\troot\t_\t_\n\n"
    with pytest.raises(EncodingError, match=r"x\.conllu:3: not valid UTF-8 at byte 28$") as info:
        read_conllu(write(tmp_path, data, binary=True))
    assert data[info.value.offset] == 0xFF
    bom = codecs.BOM_UTF8 + data  # the offset counts the byte-order mark
    with pytest.raises(EncodingError, match="at byte 31$"):
        read_conllu(write(tmp_path, bom, binary=True))
    truncated = data.replace(b"\xff", "é".encode()[:1])  # the last byte of a sequence missing
    with pytest.raises(EncodingError, match=r"x\.conllu:3: not valid UTF-8 at byte 28$"):
        read_conllu(write(tmp_path, truncated, binary=True))


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16", "utf-32-le", "cp1252"])
def test_other_encodings(tmp_path, encoding):
    sign = "¤" if encoding == "latin-1" else "€"
    text = ("# text = Ça\n1\tÇa\tça\tPRON\t_\t_\t0\troot\t_\t_\n\n"
            f"1\t{sign}\t{sign}\tSYM\t_\t_\t0\troot\t_\t_\n\n")
    path = write(tmp_path, text.encode(encoding), binary=True)
    sentences = read_conllu(path, encoding=encoding)
    assert [s.forms for s in sentences] == [["Ça"], [sign]]
    assert "".join(s.to_text() for s in sentences) == text
    with pytest.raises(ArborparseError, match="unknown encoding 'klingon'"):
        read_conllu(path, encoding="klingon")
    with pytest.raises(ArborparseError, match="unknown encoding 'base64'"):  # not text
        read_conllu(path, encoding="base64")


def test_missing_file():
    """One line naming the file, and a FileNotFoundError for code that catches one (as
    `arborparse.train` of a path not there raises it)."""
    import arborparse

    with pytest.raises(TreebankFormatError, match="cannot open"):
        read_conllu("/no/such/file.conllu")
    for missing in (lambda: read_conllu("/no/such/file.conllu"),
                    lambda: arborparse.train("/no/such/file.conllu", progress=False),
                    lambda: arborparse.load("/no/such/model.npz")):
        with pytest.raises(FileNotFoundError, match="/no/such/"):
            missing()


def test_write_is_atomic(tmp_path):
    out = tmp_path / "out.conllu"
    out.write_text("old")
    s = read_conllu(io.StringIO(GOOD))

    def broken():
        yield s[0]
        raise RuntimeError("crash while writing")

    with pytest.raises(RuntimeError):
        write_conllu(broken(), out)
    assert out.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.conllu"]


def _sentence(heads):
    lines = [f"{m}\tw{m}\t_\tX\t_\t_\t{h}\tdep\t_\t_" for m, h in enumerate(heads[1:], 1)]
    return read_conllu(io.StringIO("\n".join(lines) + "\n\n"))[0]


def test_check_tree_finds_cycles_and_root_count():
    check_tree(_sentence([-1, 2, 0, 2]))
    with pytest.raises(TreebankFormatError, match=r"cycle \(1 -> 3 -> 1\)"):
        check_tree(_sentence([-1, 3, 0, 1]))
    with pytest.raises(TreebankFormatError, match="2 words attach to the root"):
        check_tree(_sentence([-1, 0, 0, 2]))
    check_tree(_sentence([-1, 0, 0, 2]), single_root=False)
    with pytest.raises(TreebankFormatError, match="cycle"):
        check_tree(_sentence([-1, 2, 3, 1]), single_root=False)
    made = words_sentence(["Dogs", "bark", "loudly"], 5)  # made in memory: named by number
    with pytest.raises(TreebankFormatError, match=r"^sentence 5 \(Dogs bark loudly \.\.\.\), "
                       r"word 1: the heads form a cycle"):
        check_tree(made.with_tree([-1, 3, 0, 1]))
    with pytest.raises(TreebankFormatError, match=r"^sentence 5 \(Dogs bark loudly \.\.\.\), "
                       "word 2: 2 words attach to the root"):
        check_tree(made.with_tree([-1, 0, 0, 2]))


def test_check_tree_needs_heads():
    s = read_conllu(io.StringIO("1\tA\t_\tX\t_\t_\t_\t_\t_\t_\n\n"))[0]
    assert not s.has_tree
    with pytest.raises(TreebankFormatError, match="word 1 has no HEAD"):
        check_tree(s)


def test_byte_order_mark_and_no_final_blank_line(tmp_path):
    text = "1\tA\ta\tN\tNN\t_\t0\troot\t_\t_\n\n1\tB\tb\tN\tNN\t_\t0\troot\t_\t_"
    for content in (text, text + "\n", "\ufeff" + text + "\n"):
        sentences = read_conllu(write(tmp_path, content, "x.conllu"))
        assert [s.forms for s in sentences] == [["A"], ["B"]]


def test_a_directory_is_one_line(tmp_path):
    with pytest.raises(TreebankFormatError, match="cannot open: Is a directory"):
        read_conllu(tmp_path)


def test_ud_gold_trees_are_single_rooted(ud_files):
    for path in ud_files:
        for s in iter_conllu(path):
            check_tree(s, single_root=True)


def test_written_files_get_normal_permissions(tmp_path):
    import os
    out = tmp_path / "out.conllu"
    write_conllu(read_conllu(io.StringIO(GOOD)), out)
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask


def test_with_misc_appends_to_misc_only():
    s = read_conllu(io.StringIO(GOOD))[0]
    t = s.with_misc(["A=1", "B=2", "C=3", "D=4"])
    words = [r for r in t.rows if r[0].isdigit()]
    assert [r[9] for r in words] == ["A=1", "B=2", "SpaceAfter=No|C=3", "D=4"]
    assert t.heads.tolist() == s.heads.tolist()
    assert s.rows[3][9] == "SpaceAfter=No"
    with pytest.raises(ValueError, match="need 4 MISC items"):
        s.with_misc(["x"])


def test_old_mac_and_windows_line_ends_read_as_newlines(tmp_path):
    """A lone carriage return ends a line, as in Python's universal newlines (which the
    CoNLL 2018 evaluation script reads with); CRLF is one line end."""
    expected = [s.to_text() for s in read_conllu(write(tmp_path, GOOD))]
    for end in ("\r", "\r\n"):
        path = write(tmp_path, GOOD.replace("\n", end).encode(), binary=True)
        assert [s.to_text() for s in read_conllu(path)] == expected
        assert read_conllu(path)[1].line == 10  # the line numbers count those line ends
    bad = GOOD.replace("\n", "\r").replace("\tHi\thi", "\tHi").encode()
    with pytest.raises(TreebankFormatError, match=r"x.conllu:10: "):
        read_conllu(write(tmp_path, bad, binary=True))
