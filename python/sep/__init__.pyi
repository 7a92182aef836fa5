"""Type stubs of the ``sep`` package (the runtime module is ``__init__.py``)."""

import io
import os
from typing import IO, Literal, Optional, Union, overload

from ._sep import (
    FORMAT_VERSION as FORMAT_VERSION,
    MAX_THREADS as MAX_THREADS,
    Buffer,
    Preset,
    SepCompressor as SepCompressor,
    SepDecompressor as SepDecompressor,
    SepError as SepError,
    compress as compress,
    decompress as decompress,
)

_Path = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
_BinaryMode = Literal["r", "rb", "w", "wb", "x", "xb", "a", "ab"]
_TextMode = Literal["rt", "wt", "xt", "at"]

class SepFile(io.BufferedIOBase):
    """A binary file object that compresses writes or decompresses reads."""

    def __init__(
        self,
        filename: Union[_Path, IO[bytes]],
        mode: _BinaryMode = "r",
        *,
        preset: Preset = None,
        threads: int = 1,
        block_size: Optional[int] = None,
        max_output: Optional[int] = None,
    ) -> None: ...
    def read(self, size: Optional[int] = -1) -> bytes: ...
    def read1(self, size: int = -1) -> bytes: ...
    def peek(self, size: int = -1) -> bytes: ...
    def write(self, data: Buffer) -> int: ...
    def seek(self, offset: int, whence: int = 0) -> int: ...
    def tell(self) -> int: ...

@overload
def open(
    filename: Union[_Path, IO[bytes]],
    mode: _BinaryMode = "rb",
    *,
    preset: Preset = None,
    threads: int = 1,
    block_size: Optional[int] = None,
    max_output: Optional[int] = None,
    encoding: None = None,
    errors: None = None,
    newline: None = None,
) -> SepFile: ...
@overload
def open(
    filename: Union[_Path, IO[bytes]],
    mode: _TextMode,
    *,
    preset: Preset = None,
    threads: int = 1,
    block_size: Optional[int] = None,
    max_output: Optional[int] = None,
    encoding: Optional[str] = None,
    errors: Optional[str] = None,
    newline: Optional[str] = None,
) -> io.TextIOWrapper: ...
