"""sep: lossless compression with models that learn while they code.

The interface follows the standard library's ``lzma`` and ``bz2``:

>>> import sep
>>> data = b"to be or not to be, that is the question " * 50
>>> archive = sep.compress(data)
>>> len(archive) < len(data) // 4
True
>>> sep.decompress(archive) == data
True

Archives are those of the ``sep`` command line: ``sep.compress(data)`` is what
``sep -c FILE`` writes for a file holding ``data`` (same preset and block
size; the thread count never changes an archive).

Incrementally, with bounded memory:

>>> c = sep.SepCompressor(preset="order2")
>>> archive = c.compress(b"spam " * 1000) + c.flush()
>>> d = sep.SepDecompressor()
>>> d.decompress(archive + b"tail") == b"spam " * 1000, d.eof, d.unused_data
(True, True, b'tail')

As a file object (``io.BufferedIOBase``), streaming:

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "x.sep")
>>> with sep.open(path, "wb", preset=1) as f:
...     _ = f.write(b"line\\n" * 100)
>>> with sep.open(path, "rt") as f:
...     f.readline()
'line\\n'

``preset`` is a level 1..9 (as ``sep -1`` .. ``sep -9``) or a name: ``"store"``,
``"order2"``, ``"fast"``, ``"default"`` (the default), ``"max"``, ``"hybrid"``.
``threads`` is the number of blocks coded at once (0: one per core); the GIL is
released while coding, so other Python threads run meanwhile. Corrupt or
truncated archives raise :class:`SepError`; wrong types ``TypeError``; invalid
settings ``ValueError``.
"""

from __future__ import annotations

import builtins
import io
import os

from ._sep import (
    FORMAT_VERSION,
    MAX_THREADS,
    Prior,
    SepCompressor,
    SepDecompressor,
    SepError,
    _compress_array,
    _content_length,
    _decompress_array,
    _RangeReader,
    compress,
    decompress,
)

__all__ = [
    "FORMAT_VERSION",
    "MAX_THREADS",
    "Prior",
    "SepCompressor",
    "SepDecompressor",
    "SepError",
    "SepFile",
    "compress",
    "compress_array",
    "decompress",
    "decompress_array",
    "open",
]

#: Bytes read from the underlying file at a time when decompressing.
_CHUNK = 1 << 16

_MODE_CLOSED, _MODE_READ, _MODE_WRITE = 0, 1, 2


class _Reader(io.RawIOBase):
    """Decodes the archives of a binary file object, one after the other."""

    def __init__(self, fp, max_output):
        self._fp = fp
        self._max_output = max_output
        self._start = fp.tell() if fp.seekable() else None
        self._reset()

    def _reset(self):
        self._range = None  # a _RangeReader once seek() was called
        self._dec = SepDecompressor(self._max_output)
        self._eof = False
        self._pos = 0
        self._started = False

    def readable(self):
        return True

    def readinto(self, b):
        with memoryview(b) as view, view.cast("B") as out:
            data = self.read(len(out))
            out[: len(data)] = data
        return len(data)

    def read(self, size=-1):
        if size < 0:
            return self.readall()
        if size == 0 or self._eof:
            return b""
        if self._range is not None:
            data = self._range.read(size)
            self._pos += len(data)
            return data
        data = b""
        while not data:
            if self._dec.eof:
                rest = self._dec.unused_data or self._fp.read(_CHUNK)
                if not rest:
                    self._eof = True
                    return b""
                self._dec = SepDecompressor(self._max_output)
                data = self._dec.decompress(rest, size)
            elif self._dec.needs_input:
                raw = self._fp.read(_CHUNK)
                if not raw:
                    raise SepError(
                        "corrupt archive: truncated (the file ends before the archive's end record)"
                    )
                data = self._dec.decompress(raw, size)
            else:
                data = self._dec.decompress(b"", size)
        self._pos += len(data)
        return data

    def readall(self):
        chunks = []
        while data := self.read(io.DEFAULT_BUFFER_SIZE * 16):
            chunks.append(data)
        return b"".join(chunks)

    def seekable(self):
        return self._start is not None

    def tell(self):
        return self._pos

    def seek(self, offset, whence=io.SEEK_SET):
        # Issue 22: decode from the block that holds the offset, found with the
        # archive's seek table or by walking the block headers (seeking over
        # the payloads), instead of decoding everything before it.
        if whence == io.SEEK_CUR:
            offset += self._pos
        elif whence == io.SEEK_END:
            offset += _content_length(self._fp, self._start)
        elif whence != io.SEEK_SET:
            raise ValueError(f"invalid whence ({whence!r}, should be 0, 1 or 2)")
        offset = max(offset, 0)
        if offset != self._pos:
            self._range = _RangeReader(self._fp, offset, self._start, 1, self._max_output)
            self._eof = False
            self._pos = self._range.position
        return self._pos


class SepFile(io.BufferedIOBase):
    """A file object that compresses what is written to it, or decompresses
    what is read from it, streaming with bounded memory.

    ``filename`` is a path (``str``, ``bytes``, ``os.PathLike``) or a binary
    file object. ``mode`` is ``"r"``, ``"w"``, ``"x"`` or ``"a"`` (with or
    without ``"b"``); appending adds one more archive, and concatenated
    archives read as one stream. ``preset``, ``threads`` and ``block_size`` are
    those of :func:`compress` (writing: the length is not known in advance, so
    the archive is the one ``cat FILE | sep -c`` writes, with no content length
    in its header; :func:`sep.dask.compress_file` gives ``sep -c FILE``'s
    bytes); ``max_output`` bounds the decoded
    size (reading); ``seek_table`` writes the archive's seek table (``sep
    --seek-table``); ``format_version`` is the written archive's layout, 3
    (compact, the default) or 1 (``sep --format-version 1``). Seeking is supported when reading a seekable file: it
    decodes from the block that holds the new position, found with the seek
    table (or, without one, by walking the block headers), so it reads only
    the blocks from there on, backwards as well as forwards.

    >>> import io, sep
    >>> buf = io.BytesIO()
    >>> with sep.SepFile(buf, "wb", preset="order2") as f:
    ...     _ = f.write(b"hello " * 100)
    >>> _ = buf.seek(0)
    >>> sep.SepFile(buf).read(11)
    b'hello hello'
    """

    def __init__(
        self,
        filename,
        mode="r",
        *,
        preset=None,
        threads=1,
        block_size=None,
        max_output=None,
        seek_table=False,
        format_version=3,
    ):
        self._fp = None
        self._closefp = False
        self._mode = _MODE_CLOSED
        if mode in ("r", "rb"):
            mode_code = _MODE_READ
        elif mode in ("w", "wb", "x", "xb", "a", "ab"):
            mode_code = _MODE_WRITE
        else:
            raise ValueError(f"invalid mode: {mode!r}")
        if isinstance(filename, (str, bytes, os.PathLike)):
            raw_mode = mode.rstrip("b") + "b"
            self._fp = builtins.open(filename, raw_mode)
            self._closefp = True
        elif hasattr(filename, "read") or hasattr(filename, "write"):
            self._fp = filename
        else:
            raise TypeError("filename must be a str, bytes, os.PathLike or file object")
        self._mode = mode_code
        if mode_code == _MODE_READ:
            self._buffer = io.BufferedReader(_Reader(self._fp, max_output))
        else:
            try:
                self._compressor = SepCompressor(
                    preset,
                    threads,
                    block_size,
                    seek_table=seek_table,
                    format_version=format_version,
                )
            except BaseException:
                self._close_fp()
                raise
            self._pos = 0

    def _close_fp(self):
        try:
            if self._closefp and self._fp is not None:
                self._fp.close()
        finally:
            self._fp = None
            self._closefp = False
            self._mode = _MODE_CLOSED

    def close(self):
        """Flushes the last block and the end record (writing) and closes."""
        if self._mode == _MODE_CLOSED:
            return
        try:
            if self._mode == _MODE_READ:
                self._buffer.close()
                self._buffer = None
            else:
                self._fp.write(self._compressor.flush())
                self._compressor = None
        finally:
            self._close_fp()

    @property
    def closed(self):
        """True once the file is closed."""
        return self._mode == _MODE_CLOSED

    def _check(self, mode):
        if self._mode == _MODE_CLOSED:
            raise ValueError("I/O operation on closed file")
        if mode is not None and self._mode != mode:
            what = "reading" if mode == _MODE_READ else "writing"
            raise io.UnsupportedOperation(f"file not open for {what}")

    def fileno(self):
        """The file descriptor of the underlying file."""
        self._check(None)
        return self._fp.fileno()

    def readable(self):
        self._check(None)
        return self._mode == _MODE_READ

    def writable(self):
        self._check(None)
        return self._mode == _MODE_WRITE

    def seekable(self):
        self._check(None)
        return self._mode == _MODE_READ and self._buffer.seekable()

    def read(self, size=-1):
        """Reads up to ``size`` decompressed bytes (all with ``size < 0``)."""
        self._check(_MODE_READ)
        return self._buffer.read(size)

    def read1(self, size=-1):
        """Reads up to ``size`` bytes with at most one decoding step."""
        self._check(_MODE_READ)
        if size < 0:
            size = io.DEFAULT_BUFFER_SIZE
        return self._buffer.read1(size)

    def readinto(self, b):
        self._check(_MODE_READ)
        return self._buffer.readinto(b)

    def readline(self, size=-1):
        self._check(_MODE_READ)
        return self._buffer.readline(size)

    def peek(self, size=-1):
        """Bytes ahead of the position, without moving it."""
        self._check(_MODE_READ)
        return self._buffer.peek(size)

    def write(self, data):
        """Compresses ``data`` (any bytes-like object); returns its length."""
        self._check(_MODE_WRITE)
        if isinstance(data, (bytes, bytearray)):
            length = len(data)
        else:
            length = memoryview(data).nbytes
        self._fp.write(self._compressor.compress(data))
        self._pos += length
        return length

    def seek(self, offset, whence=io.SEEK_SET):
        """Moves to a decompressed offset (reading only)."""
        self._check(_MODE_READ)
        if not self._buffer.seekable():
            raise io.UnsupportedOperation("the underlying file is not seekable")
        return self._buffer.seek(offset, whence)

    def tell(self):
        """The position in the decompressed data."""
        self._check(None)
        if self._mode == _MODE_READ:
            return self._buffer.tell()
        return self._pos


def open(
    filename,
    mode="rb",
    *,
    preset=None,
    threads=1,
    block_size=None,
    max_output=None,
    seek_table=False,
    format_version=3,
    encoding=None,
    errors=None,
    newline=None,
):
    """Opens a sep archive in binary or text mode, as ``lzma.open`` does.

    ``mode`` is ``"r"``, ``"w"``, ``"x"``, ``"a"`` with ``"b"`` (binary, the
    default) or ``"t"`` (text, with ``encoding``, ``errors``, ``newline``).

    >>> import os, tempfile, sep
    >>> path = os.path.join(tempfile.mkdtemp(), "notes.txt.sep")
    >>> with sep.open(path, "wt", encoding="utf-8") as f:
    ...     _ = f.write("héllo\\n")
    >>> sep.open(path, "rt", encoding="utf-8").read()
    'héllo\\n'
    """
    if "t" in mode:
        if "b" in mode:
            raise ValueError(f"invalid mode: {mode!r}")
    else:
        if encoding is not None:
            raise ValueError("argument 'encoding' not supported in binary mode")
        if errors is not None:
            raise ValueError("argument 'errors' not supported in binary mode")
        if newline is not None:
            raise ValueError("argument 'newline' not supported in binary mode")
    binary = SepFile(
        filename,
        mode.replace("t", ""),
        preset=preset,
        threads=threads,
        block_size=block_size,
        max_output=max_output,
        seek_table=seek_table,
        format_version=format_version,
    )
    if "t" in mode:
        encoding = io.text_encoding(encoding)
        return io.TextIOWrapper(binary, encoding, errors, newline)
    return binary


_LOSSY_MODES = ("abs", "rel", "psnr", "ratio")


def compress_array(array, *, abs=None, rel=None, psnr=None, ratio=None, fill=None):
    """Compresses a float array within an error bound (lossy; format version 2).

    ``array`` is anything ``numpy.asarray`` takes, of dtype ``float32`` or
    ``float64`` with 1 to 4 axes. Give one bound: ``abs=E`` (every value within
    ``E``), ``rel=E`` (within ``E`` times the value range), ``psnr=DB`` (at
    least this PSNR) or ``ratio=R`` (the best fidelity that compresses ``R``
    times); without one, ``rel=1e-3``. NaN, infinities and ``fill`` (a value
    such as a land mask) are kept exactly. The archive is what ``sep --lossy``
    writes for the raw array; :func:`decompress_array` restores dtype and shape.

    >>> import numpy as np, sep
    >>> x = np.linspace(0, 1, 10_000, dtype=np.float32).reshape(100, 100)
    >>> archive = sep.compress_array(x, abs=1e-3)
    >>> len(archive) < x.nbytes // 4
    True
    >>> y = sep.decompress_array(archive)
    >>> y.dtype, y.shape, bool(np.abs(y - x).max() <= 1e-3)
    (dtype('float32'), (100, 100), True)
    """
    import numpy as np

    given = [(m, v) for m, v in zip(_LOSSY_MODES, (abs, rel, psnr, ratio)) if v is not None]
    if len(given) > 1:
        raise ValueError("give at most one of abs=, rel=, psnr=, ratio=")
    mode, value = given[0] if given else ("rel", 1e-3)
    a = np.asarray(array)
    if a.dtype.kind != "f" or a.dtype.itemsize not in (4, 8):
        raise TypeError(f"compress_array takes float32 or float64 arrays, not {a.dtype}")
    if not 1 <= a.ndim <= 4:
        raise ValueError(f"compress_array takes arrays of 1 to 4 axes, not {a.ndim}")
    little = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
    name = "f32" if a.dtype.itemsize == 4 else "f64"
    return _compress_array(
        memoryview(little).cast("B"), name, list(a.shape), mode, float(value),
        None if fill is None else float(fill),
    )


def decompress_array(data, *, max_output=None):
    """Restores the array of a :func:`compress_array` archive (or of ``sep
    --lossy``) as a writable numpy array of its dtype and shape; ``max_output``
    bounds its size in bytes. A lossless archive raises :class:`SepError`."""
    import numpy as np

    values, name, shape = _decompress_array(data, max_output)
    dtype = np.dtype("<f4" if name == "f32" else "<f8")
    return np.frombuffer(values, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="), copy=False)
