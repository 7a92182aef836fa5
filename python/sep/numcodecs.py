"""A numcodecs codec for sep, for zarr chunks and anything else that takes one.

The codec id is ``sep``; it is registered through the ``numcodecs.codecs``
entry point, so ``numcodecs.get_codec({"id": "sep"})`` finds it once the
package is installed (importing this module also registers it).

>>> import numpy as np
>>> from sep.numcodecs import Sep
>>> codec = Sep(preset="order2")
>>> x = np.arange(10000, dtype="int32")
>>> enc = codec.encode(x)
>>> len(enc) < x.nbytes
True
>>> np.array_equal(np.frombuffer(codec.decode(enc), dtype="int32"), x)
True
>>> Sep.from_config(codec.get_config()) == codec
True

Lossy, for float chunks, with one bound of :func:`sep.compress_array`
(``abs``, ``rel``, ``psnr`` or ``ratio``); decoding tells the two apart:

>>> lossy = Sep(abs=0.01)
>>> f = np.linspace(0, 1, 5000)
>>> g = np.frombuffer(lossy.decode(lossy.encode(f)), dtype=f.dtype)
>>> bool(np.abs(g - f).max() <= 0.01)
True

With zarr (format 2 arrays take numcodecs codecs as their compressor)::

    z = zarr.create_array(store, shape=x.shape, chunks=(1 << 20,), dtype=x.dtype,
                          compressors=Sep(preset="fast"), zarr_format=2)
"""

from __future__ import annotations

from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray, ndarray_copy
from numcodecs.registry import register_codec

from . import compress, compress_array, decompress, decompress_array

__all__ = ["Sep"]


_BOUNDS = ("abs", "rel", "psnr", "ratio")


class Sep(Codec):
    """sep compression of a buffer: lossless, or lossy for float chunks.

    ``preset``, ``threads`` and ``block_size`` are those of :func:`sep.compress`;
    ``preset`` is kept in the configuration as given. The encoded chunk is a
    complete sep archive (``sep -d`` restores it). With one of ``abs``,
    ``rel``, ``psnr`` or ``ratio`` (the bounds of :func:`sep.compress_array`),
    float32 and float64 chunks are compressed lossily instead (the chunk as a
    flat array); other dtypes are then a ``TypeError``.
    """

    codec_id = "sep"

    def __init__(self, preset=None, threads=1, block_size=None, abs=None, rel=None,
                 psnr=None, ratio=None):
        self.preset = preset
        self.threads = threads
        self.block_size = block_size
        given = dict(zip(_BOUNDS, (abs, rel, psnr, ratio)))
        self.lossy = {k: v for k, v in given.items() if v is not None}
        if len(self.lossy) > 1:
            raise ValueError("give at most one of abs=, rel=, psnr=, ratio=")

    def encode(self, buf):
        """Compresses a buffer (any contiguous array) into an archive."""
        buf = ensure_contiguous_ndarray(buf)
        if self.lossy:
            return compress_array(buf.reshape(-1), **self.lossy)
        return compress(buf, self.preset, self.threads, self.block_size)

    def decode(self, buf, out=None):
        """Decompresses an archive (lossless or lossy), into ``out`` when given."""
        buf = ensure_contiguous_ndarray(buf)
        if buf.view("u1")[4:5].tobytes() == b"\x02":  # format version 2: lossy
            return ndarray_copy(decompress_array(buf), out)
        return ndarray_copy(decompress(buf, self.threads), out)

    def get_config(self):
        """The codec's configuration (JSON-serialisable)."""
        return {
            "id": self.codec_id,
            "preset": self.preset,
            "threads": self.threads,
            "block_size": self.block_size,
            **self.lossy,
        }

    @classmethod
    def from_config(cls, config):
        """The codec of a configuration (with or without its ``id``)."""
        config = dict(config)
        codec_id = config.pop("id", cls.codec_id)
        if codec_id != cls.codec_id:
            raise ValueError(f"not a sep codec configuration: id {codec_id!r}")
        return cls(**config)

    def __repr__(self):
        lossy = "".join(f", {k}={v!r}" for k, v in self.lossy.items())
        return (f"Sep(preset={self.preset!r}, threads={self.threads!r}, "
                f"block_size={self.block_size!r}{lossy})")


register_codec(Sep)
