import pytest

from arborparse.errors import ArborparseError, TreebankFormatError
from arborparse.io.plain import iter_tokenized, prose_lines, text_lines


def test_tokenized_text_one_sentence_per_line(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("The dog  barks .\n\n\nIt runs\t!\nYes\n", encoding="utf-8")
    out = list(iter_tokenized(path))
    assert [s.forms for s in out] == [["The", "dog", "barks", "."], ["It", "runs", "!"],
                                      ["Yes"]]
    assert out[0].comments == ["# newdoc", "# newpar", "# sent_id = 1",
                               "# text = The dog barks ."]  # as the tokenizer opens a text
    assert "# newdoc" not in out[1].comments
    assert out[1].comments[0] == "# newpar" and "# newpar" not in out[2].comments
    assert (out[1].line, out[2].heads.tolist()) == (4, [-1, -1])  # where it starts; no tree


def test_bad_utf8_is_named_with_its_line_and_byte(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine\n\xff\xfe oops\n")
    with pytest.raises(ArborparseError, match=r"bad.txt:2: not valid UTF-8 at byte 5$"):
        list(iter_tokenized(path))
    with pytest.raises(ArborparseError, match=r"bad.txt:2: not valid UTF-8 at byte 5$"):
        list(text_lines(path))


def test_text_in_another_encoding_is_cut_at_newlines_alone(tmp_path):
    path = tmp_path / "in.txt"
    text = "ਊਊ one\u2028two\r\n\nthree ਊ\n"  # U+0A0A is the bytes 0a 0a in UTF-16-LE
    path.write_bytes(text.encode("utf-16"))
    assert list(text_lines(path, "utf-16")) == ["ਊਊ one\u2028two\r\n", "\n", "three ਊ\n"]
    assert [s.forms for s in iter_tokenized(path, "utf-16")] == [["ਊਊ", "one", "two"],
                                                                 ["three", "ਊ"]]
    path.write_bytes(text.encode("utf-16")[:-1])  # half a character at the end
    with pytest.raises(ArborparseError, match=r"in.txt:3: not valid utf-16 at byte 42$"):
        list(text_lines(path, "utf-16"))


def test_text_lines_skip_a_byte_order_mark_and_keep_newlines(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes("\ufeffOne.\nTwo.".encode("utf-8"))
    assert list(text_lines(path)) == ["One.\n", "Two."]


def test_a_carriage_return_alone_ends_a_line_too(tmp_path):
    """Old Mac line ends (a bare carriage return) cut lines as newlines do; Windows' \\r\\n
    is one line end."""
    path = tmp_path / "in.txt"
    path.write_bytes(b"One dog .\rTwo cats\r\rThree\r\nFour\r")
    assert list(text_lines(path)) == ["One dog .\r", "Two cats\r", "\r", "Three\r\n",
                                      "Four\r"]
    out = list(iter_tokenized(path))
    assert [s.forms for s in out] == [["One", "dog", "."], ["Two", "cats"], ["Three"],
                                      ["Four"]]
    assert [s.line for s in out] == [1, 2, 4, 5] and "# newpar" in out[2].comments
    path.write_bytes(b"Good line.\rSecond line.\rBad \xff byte.\r")  # named by its line
    with pytest.raises(ArborparseError, match=r"in.txt:3: not valid UTF-8 at byte 28$"):
        list(text_lines(path))
    # text in memory (the library's nlp(text), the service) is cut the same way, not at
    # the other line ends of str.splitlines (U+2028, form feed, ...)
    text = "One dog .\rTwo\u2028cats\x0c\r\rThree\r\nFour\r"
    assert list(prose_lines(text, "<text>", "")) == ["One dog .\r", "Two\u2028cats\x0c\r",
                                                     "\r", "Three\r\n", "Four\r"]


CONLLU = "# sent_id = 1\n# text = Hi\n1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n\n"


@pytest.mark.parametrize("text, line, why", [
    (CONLLU, 1, 'a "# sent_id =" comment'),
    ("\n# newdoc id = a\n" + CONLLU, 2, 'a "# newdoc" comment'),
    ("# a title of ours\n" + CONLLU.split("\n", 2)[2], 2, "10 tab-separated columns"),
    ("Some prose.\n\n" + CONLLU[14:], 3, 'a "# text =" comment'),  # any paragraph
    ("1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n", 1, "10 tab-separated columns"),  # CoNLL-X
])
def test_text_that_looks_like_conll_is_refused(tmp_path, text, line, why):
    path = tmp_path / "in.txt"
    path.write_text(text, encoding="utf-8")
    message = rf"in.txt:{line}: looks like CoNLL-U \({why}\), not text: read it with " \
        r"--input-format auto \(or conllu\)$"
    for read in (text_lines, iter_tokenized):
        with pytest.raises(TreebankFormatError, match=message):
            list(read(path))


def test_text_with_comments_and_tabs_of_its_own_is_text(tmp_path):
    path = tmp_path / "in.txt"
    text = ("# A title\n\n# text messages are short\nA line\twith\ta tab.\n\n"
            "1\tTwo columns, and a line # sent_id = 1 inside\n")
    path.write_text(text, encoding="utf-8")
    assert "".join(text_lines(path)) == text
