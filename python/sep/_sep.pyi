"""Type stubs of the extension module ``sep._sep`` (re-exported by ``sep``)."""

from typing import Optional, Union

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
) -> bytes:
    """Compresses ``data`` into a complete archive (what ``sep -c`` writes)."""

def decompress(data: Buffer, threads: int = 1, max_output: Optional[int] = None) -> bytes:
    """Decompresses a complete archive (or several concatenated ones)."""

class SepCompressor:
    """An incremental compressor; ``compress`` then ``flush``."""

    def __init__(
        self,
        preset: Preset = None,
        threads: int = 1,
        block_size: Optional[int] = None,
        content_length: Optional[int] = None,
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
