"""The lzma-like API: one-shot, incremental, file objects, errors, the GIL."""

import io
import os
import resource
import subprocess
import threading
import time

import pytest

import sep

TEXT = b"to be or not to be, that is the question; " * 200


@pytest.mark.parametrize("preset", [None, 1, 2, 9, "store", "order2", "fast", "default", "max"])
def test_round_trip_presets(preset):
    archive = sep.compress(TEXT, preset=preset)
    assert sep.decompress(archive) == TEXT
    if preset != "store":
        assert len(archive) < len(TEXT) // 4


def test_accepts_bytes_like_objects():
    import array

    ref = sep.compress(TEXT, preset=1)
    for obj in (bytearray(TEXT), memoryview(TEXT), array.array("B", TEXT)):
        assert sep.compress(obj, preset=1) == ref
    assert sep.decompress(bytearray(ref)) == TEXT
    assert sep.decompress(memoryview(ref)) == TEXT
    # Non-byte formats are compressed as their raw bytes, in C order.
    ints = array.array("i", range(1000))
    assert sep.decompress(sep.compress(ints, preset=1)) == ints.tobytes()


def test_empty_input():
    assert sep.decompress(sep.compress(b"")) == b""


def test_threads_do_not_change_the_archive():
    data = os.urandom(1 << 14) + TEXT * 10
    one = sep.compress(data, preset=1, threads=1, block_size=16384)
    assert sep.compress(data, preset=1, threads=4, block_size=16384) == one
    assert sep.compress(data, preset=1, threads=0, block_size=16384) == one
    assert sep.decompress(one, threads=3) == data


def test_wrong_types_and_values():
    with pytest.raises(TypeError):
        sep.compress("text")
    with pytest.raises(TypeError):
        sep.compress(12)
    with pytest.raises(TypeError):
        sep.decompress(None)
    with pytest.raises(TypeError):
        sep.compress(b"x", preset=1.5)
    with pytest.raises(ValueError, match="preset"):
        sep.compress(b"x", preset="nope")
    with pytest.raises(ValueError, match="level"):
        sep.compress(b"x", preset=10)
    with pytest.raises(ValueError, match="block"):
        sep.compress(b"x", block_size=100)
    with pytest.raises(OverflowError):
        sep.compress(b"x", threads=-1)


def test_corrupt_and_truncated_archives_raise_sep_error():
    archive = bytearray(sep.compress(TEXT, preset=1))
    with pytest.raises(sep.SepError, match="not a sep archive"):
        sep.decompress(b"not an archive at all")
    with pytest.raises(sep.SepError, match="truncated"):
        sep.decompress(bytes(archive[:-5]))
    archive[len(archive) // 2] ^= 1
    with pytest.raises(sep.SepError, match="corrupt"):
        sep.decompress(bytes(archive))
    with pytest.raises(sep.SepError):
        sep.decompress(b"")
    assert issubclass(sep.SepError, Exception)


def test_max_output():
    archive = sep.compress(TEXT, preset=1)
    assert sep.decompress(archive, max_output=len(TEXT)) == TEXT
    with pytest.raises(sep.SepError, match="limit|max|exceed"):
        sep.decompress(archive, max_output=len(TEXT) - 1)


def test_same_archive_as_the_cli(sep_bin, corpus, tmp_path):
    for path in corpus[:4]:
        for args, preset in (([], None), (["-1"], 1), (["-p", "fast"], "fast")):
            cli = subprocess.run([sep_bin, "-c", "-T", "1", *args, str(path)], check=True, capture_output=True).stdout
            assert sep.compress(path.read_bytes(), preset=preset) == cli, (path.name, args)
            # And the CLI restores what Python wrote.
            out = tmp_path / "x.sep"
            out.write_bytes(sep.compress(path.read_bytes(), preset=preset))
            restored = subprocess.run([sep_bin, "-dc", str(out)], check=True, capture_output=True).stdout
            assert restored == path.read_bytes()


def test_format_version_1_is_the_clis_and_3_is_the_default(sep_bin, corpus, tmp_path):
    """`format_version` writes the layout `sep --format-version` writes: the
    same archive bytes as the CLI for 1 and 3, version in byte 4, both decode."""
    path = corpus[0]
    data = path.read_bytes()
    for version in (1, 3):
        cli = subprocess.run(
            [sep_bin, "-c", "-T", "1", "-1", "--format-version", str(version), str(path)],
            check=True,
            capture_output=True,
        ).stdout
        archive = sep.compress(data, preset=1, format_version=version)
        assert archive == cli, version
        assert archive[4] == version
        assert sep.decompress(archive) == data
        c = sep.SepCompressor(preset=1, content_length=len(data), format_version=version)
        assert c.compress(data) + c.flush() == archive
        out = tmp_path / f"v{version}.sep"
        with sep.open(out, "wb", preset=1, format_version=version) as f:
            f.write(data)
        assert out.read_bytes()[4] == version
        with sep.open(out, "rb") as f:
            assert f.read() == data
    assert sep.compress(data, preset=1) == sep.compress(data, preset=1, format_version=3)
    # A small one-block archive: version 3's varint header, block header and
    # end record are at least 40 bytes shorter than version 1's fixed-width
    # ones (43 for sizes under 16 KiB; larger sizes take longer varints).
    small = data[:2000]
    assert len(sep.compress(small, preset=1, format_version=1)) - len(sep.compress(small, preset=1)) >= 40
    for bad in (0, 2, 4, 255):
        with pytest.raises(ValueError, match="format_version"):
            sep.compress(data, format_version=bad)
        with pytest.raises(ValueError, match="format_version"):
            sep.SepCompressor(format_version=bad)
        with pytest.raises(ValueError, match="format_version"):
            sep.open(tmp_path / "bad.sep", "wb", format_version=bad)
    assert not (tmp_path / "bad.sep").exists() or (tmp_path / "bad.sep").stat().st_size == 0


def test_compressor_incremental_equals_one_archive():
    data = os.urandom(5000) + TEXT * 5
    c = sep.SepCompressor(preset=1, block_size=4096)
    parts = [c.compress(data[i : i + 777]) for i in range(0, len(data), 777)]
    parts.append(c.flush())
    archive = b"".join(parts)
    assert sum(1 for p in parts[:-1] if p) > 1, "full blocks are returned before flush()"
    assert sep.decompress(archive) == data
    with pytest.raises(ValueError, match="flush"):
        c.flush()
    with pytest.raises(ValueError):
        c.compress(b"more")


def test_compressor_with_content_length_is_the_one_shot_archive():
    c = sep.SepCompressor(preset=1, content_length=len(TEXT))
    assert c.compress(TEXT) + c.flush() == sep.compress(TEXT, preset=1)
    c = sep.SepCompressor(preset=1, content_length=len(TEXT) + 1)
    c.compress(TEXT)
    with pytest.raises(sep.SepError):
        c.flush()


def test_decompressor_byte_by_byte_with_unused_data():
    data = os.urandom(3000) + TEXT
    archive = sep.compress(data, preset=1, block_size=4096)
    d = sep.SepDecompressor()
    out = []
    feed = archive + b"TRAILER"
    for i in range(0, len(feed), 97):
        assert not d.eof
        out.append(d.decompress(feed[i : i + 97]))
    assert b"".join(out) == data
    assert d.eof
    assert d.unused_data == b"TRAILER"
    with pytest.raises(EOFError):
        d.decompress(b"x")


def test_decompressor_returns_blocks_before_the_archive_is_complete():
    data = os.urandom(4096 * 4)
    archive = sep.compress(data, preset="store", block_size=4096)
    d = sep.SepDecompressor()
    # Three of four blocks: the decoder reads one block ahead, so at least
    # the first is returned.
    got = d.decompress(archive[: len(archive) * 3 // 4])
    assert 4096 <= len(got) < len(data) and data.startswith(got)
    assert not d.eof and d.needs_input
    got += d.decompress(archive[len(archive) * 3 // 4 :])
    assert got == data and d.eof


def test_decompressor_max_length():
    data = TEXT * 20
    d = sep.SepDecompressor()
    got = d.decompress(sep.compress(data, preset=1), max_length=1000)
    assert got == data[:1000]
    assert not d.needs_input and not d.eof
    while not d.eof:
        got += d.decompress(b"", max_length=5000)
    assert got == data


def test_decompressor_corrupt_data():
    d = sep.SepDecompressor()
    with pytest.raises(sep.SepError, match="not a sep archive"):
        d.decompress(b"garbage garbage")
    archive = bytearray(sep.compress(TEXT, preset=1))
    archive[-30] ^= 0xFF
    d = sep.SepDecompressor()
    with pytest.raises(sep.SepError):
        d.decompress(bytes(archive))
    with pytest.raises(sep.SepError):
        d.decompress(b"")


def test_gil_is_released_while_coding():
    # Compressible text only: random bytes would be stored at once by the
    # encoder's incompressibility probe. 200 KB with the default preset take
    # about a second, far longer than the 5 ticks asked below need.
    data = (TEXT * (200_000 // len(TEXT) + 1))[:200_000]
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.005)

    t = threading.Thread(target=ticker)
    t.start()
    time.sleep(0.02)
    before = len(ticks)
    start = time.perf_counter()
    sep.compress(data)
    elapsed = time.perf_counter() - start
    during = len(ticks) - before
    stop.set()
    t.join()
    # With the GIL held the ticker could not run while compressing (one tick at
    # most, at the start); released, it ticks about every 5 ms. A loose bound,
    # as the machine may be busy.
    assert during >= 5, (during, elapsed)


def test_sepfile_write_read_binary_and_text(tmp_path):
    path = tmp_path / "t.sep"
    with sep.open(path, "wb", preset=1) as f:
        assert isinstance(f, io.BufferedIOBase)
        assert f.write(TEXT) == len(TEXT)
        assert f.write(memoryview(TEXT)[:10]) == 10
        assert f.tell() == len(TEXT) + 10
    assert sep.decompress(path.read_bytes()) == TEXT + TEXT[:10]
    with sep.open(path) as f:
        assert f.read(5) == TEXT[:5]
        assert f.peek(1)[:1] == TEXT[5:6]
        assert f.read() == TEXT[5:] + TEXT[:10]
        assert f.read() == b""
    with sep.open(path, "wt", preset=1, encoding="utf-8") as f:
        f.write("héllo\nwörld\n")
    with sep.open(path, "rt", encoding="utf-8") as f:
        assert list(f) == ["héllo\n", "wörld\n"]
    # Append: a second archive; concatenated archives read as one stream.
    with sep.open(path, "ab", preset="store") as f:
        f.write(b"more")
    assert sep.open(path).read() == "héllo\nwörld\n".encode() + b"more"


def test_sepfile_seek(tmp_path):
    data = bytes(range(256)) * 200
    path = tmp_path / "s.sep"
    path.write_bytes(sep.compress(data, preset=1, block_size=4096))
    with sep.SepFile(path) as f:
        assert f.seekable()
        assert f.seek(10000) == 10000
        assert f.read(10) == data[10000:10010]
        assert f.seek(100) == 100
        assert f.read(3) == data[100:103]
        assert f.seek(-6, io.SEEK_END) == len(data) - 6
        assert f.read() == data[-6:]


def test_sepfile_on_file_objects_and_errors(tmp_path):
    buf = io.BytesIO()
    with sep.SepFile(buf, "wb", preset=1) as f:
        f.write(TEXT)
    assert not buf.closed  # a file object passed in is not closed
    buf.seek(0)
    f = sep.SepFile(buf)
    assert f.read() == TEXT
    f.close()
    assert f.closed
    with pytest.raises(ValueError, match="closed"):
        f.read()
    with pytest.raises(ValueError, match="mode"):
        sep.SepFile(buf, "rw")
    with pytest.raises(TypeError):
        sep.SepFile(42)
    with pytest.raises(io.UnsupportedOperation):
        sep.SepFile(io.BytesIO(), "wb").read()
    with pytest.raises(ValueError):
        sep.open(buf, "rb", encoding="utf-8")
    # Truncated and corrupt files raise SepError, not a crash.
    archive = sep.compress(TEXT, preset=1)
    with pytest.raises(sep.SepError, match="truncated"):
        sep.SepFile(io.BytesIO(archive[:-3])).read()
    with pytest.raises(sep.SepError):
        sep.SepFile(io.BytesIO(b"\x8fSEPxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")).read()
    with pytest.raises(sep.SepError):
        sep.SepFile(io.BytesIO(archive + b"junk")).read()


def _rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_sepfile_streams_with_bounded_memory(tmp_path):
    """256 MiB through SepFile both ways; the resident set stays far below it."""
    path = tmp_path / "big.sep"
    chunk = os.urandom(1 << 20)
    total = 256
    base = _rss_mib()
    peak = base
    with sep.open(path, "wb", preset="store", block_size=1 << 20) as f:
        for i in range(total):
            f.write(chunk)
            if i % 16 == 0:
                peak = max(peak, _rss_mib())
    with sep.open(path, "rb") as f:
        n = 0
        while data := f.read(1 << 20):
            assert data == chunk
            n += len(data)
            if n % (16 << 20) == 0:
                peak = max(peak, _rss_mib())
    assert n == total << 20
    assert peak - base < 64, (base, peak)


def test_sepfile_writes_what_sep_writes_from_a_pipe(sep_bin, corpus, tmp_path):
    data = corpus[0].read_bytes()
    buf = io.BytesIO()
    with sep.SepFile(buf, "wb", preset=1) as f:
        f.write(data)
    cli = subprocess.run([sep_bin, "-c", "-1"], input=data, check=True, capture_output=True).stdout
    assert buf.getvalue() == cli
