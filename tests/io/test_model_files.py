import json
import re
import zipfile
import zlib

import numpy as np
import pytest
from treebanks import separable

from arborparse.linear.online import OnlineTrainer
from arborparse.io import model_files as files
from arborparse.io.model_files import ModelFileError
from arborparse.linear.parser import LinearParser


@pytest.fixture(scope="module")
def parser():
    data = separable()
    return OnlineTrainer("perceptron", epochs=3, hash_bits=14, progress=False).fit(data).parser_


def test_round_trip(parser, tmp_path):
    path = tmp_path / "m.npz"
    parser.save(path)
    loaded = LinearParser.load(path)
    data = separable(1)
    assert [s.to_text() for s in loaded.parse(data)] == [s.to_text() for s in parser.parse(data)]
    assert loaded.decoder == parser.decoder and loaded.single_root == parser.single_root
    assert loaded.model.labels == parser.model.labels
    with zipfile.ZipFile(path) as z:
        assert not any(name.endswith(".pkl") for name in z.namelist())
    np.load(path, allow_pickle=False)  # loads without pickle


def test_wrong_version_and_kind(parser, tmp_path):
    path = tmp_path / "m.npz"
    files.save(path, "first-order", 999, {}, {"weights": np.zeros(4)})
    with pytest.raises(ModelFileError, match="version 999.*reads versions 2 to 3.*newer "
                                             "arborparse: upgrade"):
        LinearParser.load(path)
    files.save(path, "first-order", 1, {}, {"weights": np.zeros(4)}, force=True)
    with pytest.raises(ModelFileError, match="version 1.*reads versions 2 to 3.*retrain the "
                                             "model"):
        LinearParser.load(path)
    files.save(path, "isbn", 1, {}, {"weights": np.zeros(4)})
    with pytest.raises(ModelFileError, match="kind 'isbn'"):
        LinearParser.load(path)
    header = {"labels": ["root"], "decoder": "mst", "single_root": True}
    files.save(path, "first-order", 2, header, {"weights": np.zeros(4)})
    with pytest.raises(ModelFileError, match="no 'keys' array"):
        LinearParser.load(path)
    empty = np.zeros(0, dtype=np.uint64)
    arrays = {"weights": np.zeros(4), "keys": empty, "label_keys": empty}
    files.save(path, "first-order", 2, header, arrays)
    with pytest.raises(ModelFileError, match="header is invalid.*clusters"):
        LinearParser.load(path)
    files.save(path, "first-order", 2, {**header, "clusters": 0}, arrays)
    with pytest.raises(ModelFileError, match="header is invalid"):
        LinearParser.load(path)


def test_hand_edited_headers_are_refused(parser, tmp_path):
    path = tmp_path / "m.npz"
    parser.save(path)
    with pytest.raises(ModelFileError, match="version 3, this arborparse reads version 2; it "
                                             "was written by a newer arborparse"):
        files.load(path, "linear", 2)  # what a reader of version 2 says of it
    header, arrays = files.load(path, "linear", 3)
    for change, message in (({"labels": []}, "non-empty list of labels"),
                            ({"labels": "nsubj"}, "non-empty list of labels"),
                            ({"labels": [1, 2]}, "non-empty list of labels"),
                            ({"version": "2"}, "version is '2', not a number")):
        edited = {k: v for k, v in {**header, **change}.items() if k not in ("format", "kind")}
        version = edited.pop("version")
        files.save(path, "first-order", version, edited, arrays)
        with pytest.raises(ModelFileError, match=message):
            LinearParser.load(path)
    meta = {k: v for k, v in header.items() if k not in ("format", "kind", "version")}
    files.save(path, "first-order", 2, meta, {**arrays, "weights": arrays["weights"][:1000]})
    with pytest.raises(ModelFileError, match=r"weights have shape \(1000,\), expected a power"):
        LinearParser.load(path)


def test_damaged_files(tmp_path):
    garbage = tmp_path / "g.npz"
    garbage.write_bytes(b"not a zip at all")
    for content in (b"not a zip at all", bytes(range(256)) * 4, b"\x80\x04K\x01."):
        garbage.write_bytes(content)  # the last one is a pickle
        with pytest.raises(ModelFileError, match="not an arborparse model file") as err:
            LinearParser.load(garbage)
        assert "pickle" not in str(err.value)
    garbage.write_bytes(b"PK\x03\x04" + bytes(100))
    with pytest.raises(ModelFileError, match="a damaged model file"):
        LinearParser.load(garbage)
    with pytest.raises(ModelFileError, match="no such model file"):
        LinearParser.load(tmp_path / "missing.npz")
    other = tmp_path / "o.npz"
    np.savez(other, header=np.frombuffer(json.dumps({"format": "x"}).encode(), dtype=np.uint8))
    with pytest.raises(ModelFileError, match="not an arborparse model file"):
        LinearParser.load(other)
    plain = tmp_path / "p.npz"
    np.savez(plain, a=np.zeros(3))
    with pytest.raises(ModelFileError, match="no header"):
        LinearParser.load(plain)


def test_save_is_atomic(parser, tmp_path, monkeypatch):
    path = tmp_path / "m.npz"
    parser.save(path)
    before = path.read_bytes()

    def crash(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(np.lib.format, "write_array", crash)  # in the middle of the file
    with pytest.raises(RuntimeError):
        parser.save(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]


def test_mostly_zero_arrays_are_stored_sparse(tmp_path):
    """A large array with at most a third of its entries non-zero is stored as their
    positions and values and comes back equal, dtype and shape included; small or dense
    arrays are stored as they are; the header read alone does not show the layout."""
    rng = np.random.default_rng(0)
    sparse = np.zeros(files.SPARSE_SIZE * 2, dtype=np.float32)
    sparse[rng.choice(sparse.size, 1000, replace=False)] = rng.standard_normal(1000)
    square = np.zeros((512, 512))
    square[3, 5] = -2.5
    dense = rng.standard_normal(files.SPARSE_SIZE)
    arrays = {"parser.weights": sparse, "square": square, "dense": dense,
              "small": np.zeros(4, dtype=np.int64)}
    path = tmp_path / "m.npz"
    files.save(path, "test-kind", 1, {"labels": ["a"]}, arrays)
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
    assert {"parser.weights.nonzero.npy", "parser.weights.values.npy", "square.nonzero.npy",
            "dense.npy", "small.npy"} <= names and "parser.weights.npy" not in names
    header, loaded = files.load(path, "test-kind", 1)
    assert header["labels"] == ["a"] and "sparse" not in header
    assert files.header(path) == header
    assert set(loaded) == set(arrays)
    for name, array in arrays.items():
        assert loaded[name].dtype == array.dtype and loaded[name].shape == array.shape
        np.testing.assert_array_equal(loaded[name], array)
    # a sparse array whose positions are lost is a damaged file, not a crash
    with zipfile.ZipFile(path) as z:
        kept = {n: z.read(n) for n in z.namelist() if n != "square.nonzero.npy"}
    with zipfile.ZipFile(path, "w") as z:
        for name, data in kept.items():
            z.writestr(name, data)
    with pytest.raises(ModelFileError, match="a damaged model file"):
        files.load(path, "test-kind", 1)


def test_large_arrays_are_stored_and_the_rest_deflated(tmp_path):
    """Arrays of `SPARSE_SIZE` entries or more (a sparse array's positions and values
    too) are stored as they are, read without inflating them; the header and smaller
    arrays are deflated at level 1; the same arrays still give the same bytes."""
    rng = np.random.default_rng(0)
    sparse = np.zeros(files.SPARSE_SIZE * 4, dtype=np.float32)
    sparse[rng.choice(sparse.size, files.SPARSE_SIZE, replace=False)] = 1.5
    arrays = {"weights": rng.standard_normal(files.SPARSE_SIZE).astype(np.float32),
              "table": np.arange(files.SPARSE_SIZE - 1) % 7, "sparse": sparse}
    path = tmp_path / "m.npz"
    files.save(path, "test-kind", 1, {"labels": ["a"] * 1000}, arrays)
    with zipfile.ZipFile(path) as z:
        methods = {i.filename: i.compress_type for i in z.infolist()}
    assert methods == {"weights.npy": zipfile.ZIP_STORED, "table.npy": zipfile.ZIP_DEFLATED,
                       "sparse.nonzero.npy": zipfile.ZIP_STORED,
                       "sparse.values.npy": zipfile.ZIP_STORED,
                       "header.npy": zipfile.ZIP_DEFLATED}
    with zipfile.ZipFile(path) as z:  # level 1 (fast), not zlib's default
        raw = z.read("table.npy")
        level1 = zlib.compressobj(1, zlib.DEFLATED, -15)
        assert z.getinfo("table.npy").compress_size == len(level1.compress(raw)
                                                             + level1.flush())
    first = path.read_bytes()
    files.save(path, "test-kind", 1, {"labels": ["a"] * 1000}, arrays)
    assert path.read_bytes() == first
    _, loaded = files.load(path, "test-kind", 1)
    for name, array in arrays.items():
        np.testing.assert_array_equal(loaded[name], array)
    # a deflated member whose bytes changed is a damaged file (zlib's error), not a traceback
    with zipfile.ZipFile(path) as z:
        table = z.getinfo("table.npy")
    data = bytearray(first)
    data[table.header_offset + 30 + len(table.filename) + 20] ^= 0x10  # its first bytes
    path.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="a damaged model file"):
        files.load(path, "test-kind", 1)
    with pytest.raises(ModelFileError, match=r"a damaged model file \(table\.npy "):
        files.check_whole(path)  # the damaged array named, whatever zlib says of it
    # a stored member whose bytes changed is a damaged file (its CRC), not other weights
    data = bytearray(first)
    data[first.index(arrays["weights"].tobytes()) + 100] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="a damaged model file"):
        files.load(path, "test-kind", 1)
    # its header alone reads well; the whole file is checked where asked (arborparse info)
    assert files.header(path)["kind"] == "test-kind"
    with pytest.raises(ModelFileError, match=r"a damaged model file \(weights\.npy fails "
                                             r"its CRC-32 check\)"):
        files.check_whole(path)
    path.write_bytes(first)
    files.check_whole(path)


@pytest.mark.parametrize("sparse", [None, [], "w", {"w": [-1]}, {"w": [4]}, {"w": [1 << 40]},
                                    {"x": [8]}])
def test_a_hand_edited_sparse_layout_is_a_damaged_file(tmp_path, sparse):
    """A header whose "sparse" entry is not an object of shapes that the stored positions
    and values fit is refused as a damaged file, never a traceback."""
    meta = {"format": "arborparse", "kind": "test-kind", "version": 1, "sparse": sparse}
    path = tmp_path / "m.npz"
    np.savez(path, header=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
             **{"w.nonzero": np.array([1, 6], dtype=np.uint32),
                "w.values": np.array([0.5, -1.0], dtype=np.float32)})
    with pytest.raises(ModelFileError, match="a damaged model file"):
        files.load(path, "test-kind", 1)


@pytest.mark.parametrize("member", ["w", "header"])
def test_an_array_with_a_damaged_header_is_a_damaged_file(tmp_path, member):
    """An array whose .npy header numpy cannot tokenize (bytes written inside its
    dictionary, its CRC made to match) is refused as a damaged file naming the array,
    never a traceback."""
    meta = {"format": "arborparse", "kind": "test-kind", "version": 1}
    path = tmp_path / "m.npz"
    np.savez(path, header=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
             w=np.arange(4.0))
    with zipfile.ZipFile(path) as z:
        kept = {n: z.read(n) for n in z.namelist()}
    kept[f"{member}.npy"] = kept[f"{member}.npy"].replace(b"False", b"(((((")
    with zipfile.ZipFile(path, "w") as z:
        for name, data in kept.items():
            z.writestr(name, data)
    named = "w.npy has an unreadable array header" if member == "w" else \
        "the header's array header is unreadable"
    with pytest.raises(ModelFileError, match=re.escape(f"a damaged model file ({named})")):
        files.load(path, "test-kind", 1)
