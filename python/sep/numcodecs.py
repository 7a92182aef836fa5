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

With zarr (format 2 arrays take numcodecs codecs as their compressor)::

    z = zarr.create_array(store, shape=x.shape, chunks=(1 << 20,), dtype=x.dtype,
                          compressors=Sep(preset="fast"), zarr_format=2)
"""

from __future__ import annotations

from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray, ndarray_copy
from numcodecs.registry import register_codec

from . import compress, decompress

__all__ = ["Sep"]


class Sep(Codec):
    """Lossless sep compression of a buffer.

    ``preset``, ``threads`` and ``block_size`` are those of :func:`sep.compress`;
    ``preset`` is kept in the configuration as given. The encoded chunk is a
    complete sep archive (``sep -d`` restores it).
    """

    codec_id = "sep"

    def __init__(self, preset=None, threads=1, block_size=None):
        self.preset = preset
        self.threads = threads
        self.block_size = block_size

    def encode(self, buf):
        """Compresses a buffer (any contiguous array) into an archive."""
        buf = ensure_contiguous_ndarray(buf)
        return compress(buf, self.preset, self.threads, self.block_size)

    def decode(self, buf, out=None):
        """Decompresses an archive, into ``out`` when given."""
        buf = ensure_contiguous_ndarray(buf)
        return ndarray_copy(decompress(buf, self.threads), out)

    def get_config(self):
        """The codec's configuration (JSON-serialisable)."""
        return {
            "id": self.codec_id,
            "preset": self.preset,
            "threads": self.threads,
            "block_size": self.block_size,
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
        return f"Sep(preset={self.preset!r}, threads={self.threads!r}, block_size={self.block_size!r})"


register_codec(Sep)
