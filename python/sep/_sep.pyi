"""Type stubs of the extension module ``sep._sep`` (re-exported by ``sep``)."""

from typing import List, Optional, Tuple, Union

import sys

if sys.version_info >= (3, 12):
    from collections.abc import Buffer
else:
    Buffer = Union[bytes, bytearray, memoryview]

Preset = Union[int, str, None]

FORMAT_VERSION: int
MAX_THREADS: int

class SepError(Exception):
    """A sep archive could not be read or written."""

def compress(
    data: Buffer,
    preset: Preset = None,
    threads: int = 1,
    block_size: Optional[int] = None,
    seek_table: bool = False,
    prior: Optional[Prior] = None,
    format_version: int = 3,
) -> bytes:
    """Compresses ``data`` into a complete archive (what ``sep -c`` writes;
    with ``seek_table``, ``sep -c --seek-table``; with ``prior``,
    ``sep --prior FILE``, whose model is used when ``preset`` is None;
    ``format_version`` 1 writes the fixed-width layout of ``sep
    --format-version 1``, 3 the compact one)."""

def decompress(
    data: Buffer,
    threads: int = 1,
    max_output: Optional[int] = None,
    prior: Optional[Prior] = None,
) -> bytes:
    """Decompresses a complete archive (or several concatenated ones); an
    archive coded with a prior needs the same ``Prior``."""

class Prior:
    """A prior file (what ``sep train`` writes), loaded once and shared."""

    def __init__(self, data: Buffer) -> None: ...
    @staticmethod
    def train(samples: List[Buffer], preset: Preset = None) -> bytes:
        """Trains a prior on ``samples`` and returns the prior file's bytes."""
    @property
    def id(self) -> str:
        """The prior's id, 32 hexadecimal digits."""

class SepCompressor:
    """An incremental compressor; ``compress`` then ``flush``."""

    def __init__(
        self,
        preset: Preset = None,
        threads: int = 1,
        block_size: Optional[int] = None,
        content_length: Optional[int] = None,
        seek_table: bool = False,
        format_version: int = 3,
    ) -> None: ...
    def compress(self, data: Buffer) -> bytes: ...
    def flush(self) -> bytes: ...

class SepDecompressor:
    """An incremental decompressor of one archive."""

    def __init__(self, max_output: Optional[int] = None) -> None: ...
    def decompress(self, data: Buffer, max_length: int = -1) -> bytes: ...
    @property
    def eof(self) -> bool: ...
    @property
    def needs_input(self) -> bool: ...
    @property
    def unused_data(self) -> bytes: ...

class _RangeReader:
    """Decodes from a content offset of a seekable binary file (``SepFile.seek``)."""

    position: int
    def __init__(
        self,
        fp: object,
        start: int,
        base: int = 0,
        threads: int = 1,
        max_output: Optional[int] = None,
    ) -> None: ...
    def read(self, size: int) -> bytes: ...

def _content_length(fp: object, base: int = 0) -> int:
    """The content length of the archive(s) in a seekable binary file."""

def _compress_array(
    data: Buffer,
    dtype: str,
    shape: List[int],
    mode: str,
    value: float,
    fill: Optional[float] = None,
) -> bytes:
    """Lossy compression of a raw little-endian float array."""

def _decompress_array(
    data: Buffer, max_output: Optional[int] = None
) -> Tuple[bytearray, str, List[int]]:
    """The values, dtype name and shape of a lossy archive."""
