"""Issue 22: SepFile.seek() through the seek table or the block-header walk,
and sep.compress_array / decompress_array (the lossy mode), also in the codec."""

import io

import numpy as np
import pytest

import sep
from sep.numcodecs import Sep


class CountingFile(io.RawIOBase):
    """A seekable binary file over bytes that counts the bytes read from it."""

    def __init__(self, data):
        self._f = io.BytesIO(data)
        self.read_bytes = 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def readinto(self, b):
        n = self._f.readinto(b)
        self.read_bytes += n
        return n

    def read(self, size=-1):
        data = self._f.read(size)
        self.read_bytes += len(data)
        return data

    def seek(self, offset, whence=io.SEEK_SET):
        return self._f.seek(offset, whence)

    def tell(self):
        return self._f.tell()


DATA = bytes((i * 7 + i // 4096) % 251 for i in range(40 * 4096))


@pytest.mark.parametrize("table", [False, True])
def test_seek_reads_only_the_blocks_it_needs(table):
    archive = sep.compress(DATA, preset="store", block_size=4096, seek_table=table)
    fp = CountingFile(archive)
    with sep.SepFile(fp) as f:
        assert f.seek(30 * 4096 + 5) == 30 * 4096 + 5
        assert f.read(10) == DATA[30 * 4096 + 5 : 30 * 4096 + 15]
        # The blocks from 30 on and the headers (or the table), not blocks 0..29.
        # (A few blocks are read ahead; forward decoding would read 31.)
        assert fp.read_bytes < 6 * 4096 + 40 * 40, fp.read_bytes
        # Backwards, across a block border, relative and from the end.
        assert f.seek(4090) == 4090
        assert f.read(12) == DATA[4090:4102]
        assert f.seek(100, io.SEEK_CUR) == 4202
        assert f.read(3) == DATA[4202:4205]
        assert f.seek(-7, io.SEEK_END) == len(DATA) - 7
        assert f.read() == DATA[-7:]
        # Past the end: clamped, reads nothing.
        assert f.seek(len(DATA) + 100) == len(DATA)
        assert f.read(5) == b""
        assert f.seek(0) == 0
        assert f.read() == DATA


def test_seek_on_an_archive_that_does_not_start_the_file_and_concatenated_archives():
    a = sep.compress(DATA[:50000], preset=1, block_size=4096, seek_table=True)
    b = sep.compress(DATA[50000:], preset="store", block_size=4096)
    buf = io.BytesIO(b"prefix" + a + b)
    buf.seek(6)
    with sep.SepFile(buf) as f:
        assert f.seek(49990) == 49990
        assert f.read(20) == DATA[49990:50010]
        assert f.seek(-1, io.SEEK_END) == len(DATA) - 1
        assert f.read() == DATA[-1:]


def test_seek_table_round_trips_through_the_compressor_and_sepfile(tmp_path):
    plain = sep.compress(DATA, preset=1, block_size=4096)
    tabled = sep.compress(DATA, preset=1, block_size=4096, seek_table=True)
    assert len(tabled) == len(plain) + 20 + 8 * 40
    assert sep.decompress(tabled) == DATA
    c = sep.SepCompressor(preset=1, block_size=4096, content_length=len(DATA), seek_table=True)
    assert c.compress(DATA) + c.flush() == tabled
    path = tmp_path / "t.sep"
    with sep.open(path, "wb", preset=1, block_size=4096, seek_table=True) as f:
        f.write(DATA)
    with sep.open(path) as f:
        f.seek(123456)
        assert f.read(100) == DATA[123456:123556]
    # A damaged table: SepError, not a crash.
    bad = bytearray(tabled)
    bad[-10] ^= 1
    with pytest.raises(sep.SepError):
        sep.decompress(bytes(bad))


@pytest.mark.parametrize("dtype", ["float32", "float64", ">f8"])
def test_compress_array_round_trip_within_the_bound(dtype):
    rng = np.random.default_rng(1)
    x = (np.sin(np.linspace(0, 20, 6000)).reshape(20, 300) + rng.normal(0, 0.01, (20, 300))).astype(dtype)
    x[3, 4] = np.nan
    x[5, 6] = -1e10
    archive = sep.compress_array(x, abs=1e-3, fill=-1e10)
    assert len(archive) < x.nbytes / 3
    y = sep.decompress_array(archive)
    assert y.shape == x.shape and y.dtype == x.dtype.newbyteorder("=")
    assert y.flags.writeable
    assert np.isnan(y[3, 4]) and y[5, 6] == -1e10
    ok = ~np.isnan(x) & (x != -1e10)
    assert np.abs(y[ok].astype("f8") - x[ok].astype("f8")).max() <= 1e-3
    for bound in ({"rel": 1e-2}, {"psnr": 40}, {"ratio": 8}):
        assert sep.decompress_array(sep.compress_array(x, **bound)).shape == x.shape


def test_compress_array_bad_input():
    with pytest.raises(TypeError):
        sep.compress_array(np.arange(10))
    with pytest.raises(ValueError):
        sep.compress_array(np.zeros((2,) * 5, "f4"))
    with pytest.raises(ValueError):
        sep.compress_array(np.zeros(10, "f4"), abs=1e-3, rel=1e-3)
    with pytest.raises(ValueError):
        sep.compress_array(np.zeros(10, "f4"), abs=-1)
    with pytest.raises(sep.SepError):
        sep.decompress_array(sep.compress(b"lossless"))
    archive = sep.compress_array(np.linspace(0, 1, 1000), abs=1e-4)
    with pytest.raises(sep.SepError):
        sep.decompress_array(archive[:-5])
    with pytest.raises(sep.SepError):
        sep.decompress_array(archive, max_output=100)


def test_codec_lossy_option():
    x = np.linspace(-5, 5, 30000).astype("float32")
    codec = Sep(abs=0.01)
    enc = codec.encode(x)
    assert len(enc) < x.nbytes / 4
    y = np.frombuffer(codec.decode(enc), dtype=x.dtype)
    assert np.abs(y - x).max() <= 0.01
    out = np.empty_like(x)
    codec.decode(enc, out=out)
    assert np.array_equal(out, y)
    config = codec.get_config()
    assert config["abs"] == 0.01
    assert Sep.from_config(config) == codec
    # The lossless codec still decodes lossless chunks, and both kinds.
    assert np.array_equal(np.frombuffer(Sep().decode(enc), dtype=x.dtype), y)
    with pytest.raises(TypeError):
        codec.encode(np.arange(10))
    with pytest.raises(ValueError):
        Sep(abs=1, rel=1)
