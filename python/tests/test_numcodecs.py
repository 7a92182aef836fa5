"""The numcodecs codec: configuration, entry point, zarr."""

from importlib.metadata import entry_points

import numcodecs
import numpy as np
import pytest
import zarr

import sep
from sep.numcodecs import Sep


def test_round_trip_and_config():
    x = np.linspace(0, 1000, 50000).astype("float32")
    codec = Sep(preset="order2")
    enc = codec.encode(x)
    assert len(enc) < x.nbytes
    assert sep.decompress(enc) == x.tobytes()  # a plain archive
    dec = np.frombuffer(codec.decode(enc), dtype=x.dtype)
    assert np.array_equal(dec, x)
    out = np.empty_like(x)
    codec.decode(enc, out=out)
    assert np.array_equal(out, x)
    config = codec.get_config()
    assert config == {"id": "sep", "preset": "order2", "threads": 1, "block_size": None}
    assert Sep.from_config(config) == codec
    assert numcodecs.get_codec(dict(config)) == codec
    # Non-contiguous input is encoded as the C-ordered copy.
    m = np.arange(10000, dtype="int64").reshape(100, 100).T
    assert sep.decompress(codec.encode(np.ascontiguousarray(m))) == np.ascontiguousarray(m).tobytes()


def test_registered_by_entry_point():
    eps = entry_points(group="numcodecs.codecs")
    ep = [e for e in eps if e.name == "sep"]
    assert ep and ep[0].value == "sep.numcodecs:Sep"
    assert ep[0].load() is Sep


def test_corrupt_chunk_raises():
    codec = Sep(preset=1)
    enc = bytearray(codec.encode(np.arange(1000)))
    enc[-30] ^= 0xFF
    with pytest.raises(sep.SepError):
        codec.decode(bytes(enc))


def test_zarr_array(tmp_path):
    x = (np.arange(200_000) % 1000).astype("int32").reshape(400, 500)
    z = zarr.create_array(
        str(tmp_path / "a.zarr"),
        shape=x.shape,
        chunks=(100, 500),
        dtype=x.dtype,
        compressors=Sep(preset="fast"),
        zarr_format=2,
    )
    z[:] = x
    again = zarr.open_array(str(tmp_path / "a.zarr"), mode="r")
    assert np.array_equal(again[:], x)
    assert again.metadata.compressor.get_config()["id"] == "sep"
    chunk = (tmp_path / "a.zarr" / "0.0").read_bytes()
    assert sep.decompress(chunk) == x[:100].tobytes()
