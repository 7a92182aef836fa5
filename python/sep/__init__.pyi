"""Type stubs of the ``sep`` package (the runtime module is ``__init__.py``)."""

import io
import os
from typing import IO, Any, Literal, Optional, Union, overload

from ._sep import (
    FORMAT_VERSION as FORMAT_VERSION,
    MAX_THREADS as MAX_THREADS,
    Buffer,
    Preset,
    Prior as Prior,
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
        seek_table: bool = False,
        format_version: int = 3,
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
    seek_table: bool = False,
    format_version: int = 3,
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
    seek_table: bool = False,
    format_version: int = 3,
    encoding: Optional[str] = None,
    errors: Optional[str] = None,
    newline: Optional[str] = None,
) -> io.TextIOWrapper: ...

def compress_array(
    array: Any,
    *,
    abs: Optional[float] = None,
    rel: Optional[float] = None,
    psnr: Optional[float] = None,
    ratio: Optional[float] = None,
    fill: Optional[float] = None,
) -> bytes:
    """Lossy compression of a float32/float64 array (1 to 4 axes) within one bound."""

def decompress_array(data: Buffer, *, max_output: Optional[int] = None) -> Any:
    """The numpy array of a lossy archive, dtype and shape restored."""
