"""Scale-out on Dask: many files, or the chunks of a zarr array, on a cluster.

Every file is one task (``sep``'s blocks are independent, so files need no
coordination); each archive is written to a temporary file in ``out_dir`` and
renamed when complete, so a worker that dies mid-task leaves no partial
archive, and Dask's retry writes it again. Archives are byte-identical to
``sep -c --prior none FILE`` with the same preset and block size.

Local, two worker processes::

    from dask.distributed import Client, LocalCluster
    import sep.dask
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster, \\
            Client(cluster) as client:
        outputs = sep.dask.compress_files(paths, "out/", client=client, preset="fast")

On a cluster, point the same code at the scheduler: ``Client("tcp://host:8786")``;
``out_dir`` must then be a folder every worker can write (a shared file system).

A zarr array is compressed chunk-parallel by :func:`to_zarr`: Dask writes each
chunk from the worker that computed it through the :class:`sep.numcodecs.Sep`
codec.
"""

from __future__ import annotations

import os
import tempfile

from . import SepCompressor

__all__ = ["compress_file", "compress_files", "to_zarr"]

_CHUNK = 1 << 20


def compress_file(path, out_dir, preset=None, block_size=None, threads=1):
    """Compresses ``path`` to ``out_dir/NAME.sep`` atomically; returns that path.

    Streams the file (memory stays bounded by the block size and threads),
    recording its length in the header as ``sep -c`` does, so the archive is
    byte-identical to ``sep -c --prior none path`` with the same preset and
    block size (``sep`` itself may code a file of up to 64 KiB with a
    built-in prior; the library never picks one by itself).
    """
    path = os.fspath(path)
    out_dir = os.fspath(out_dir)
    name = os.path.basename(path)
    target = os.path.join(out_dir, name + ".sep")
    with open(path, "rb") as src:
        length = os.fstat(src.fileno()).st_size
        comp = SepCompressor(preset, threads, block_size, length)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=out_dir)
        try:
            with os.fdopen(fd, "wb") as dst:
                while chunk := src.read(_CHUNK):
                    dst.write(comp.compress(chunk))
                dst.write(comp.flush())
                dst.flush()
                os.fsync(dst.fileno())
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    return target


def compress_files(paths, out_dir, client=None, preset=None, block_size=None, retries=2):
    """Compresses each file of ``paths`` to ``out_dir/NAME.sep``, one task a file.

    ``client`` is a ``dask.distributed.Client`` (``None``: the current client
    if there is one, else the files are compressed here one after the other).
    Returns the archives' paths in the order of ``paths``. Names must be
    distinct (the outputs share ``out_dir``). A failed task is retried
    ``retries`` times; outputs are written atomically, so a retry never sees
    or leaves a partial archive.
    """
    paths = [os.path.abspath(os.fspath(p)) for p in paths]
    names = [os.path.basename(p) for p in paths]
    if len(set(names)) != len(names):
        raise ValueError("two inputs have the same file name; their archives would collide")
    out_dir = os.path.abspath(os.fspath(out_dir))
    os.makedirs(out_dir, exist_ok=True)
    if client is None:
        try:
            from dask.distributed import get_client

            client = get_client()
        except (ImportError, ValueError):
            client = None
    if client is None:
        return [compress_file(p, out_dir, preset, block_size) for p in paths]
    futures = client.map(
        compress_file,
        paths,
        out_dir=out_dir,
        preset=preset,
        block_size=block_size,
        pure=False,
        retries=retries,
    )
    return client.gather(futures)


def to_zarr(array, store, chunks=None, preset=None, block_size=None, client=None, **kwargs):
    """Writes ``array`` (a NumPy, zarr or dask array) to a new zarr array in
    ``store``, each chunk compressed with sep by the Dask worker that holds it.

    ``chunks`` defaults to the array's own chunking. Returns the zarr array.
    With ``client`` (or a current client), the chunks are written on the
    cluster; ``store`` must be reachable from every worker.
    """
    import dask.array as da
    import zarr

    from .numcodecs import Sep

    x = array if isinstance(array, da.Array) else da.from_array(array, chunks=chunks or "auto")
    if chunks is not None:
        x = x.rechunk(chunks)
    z = zarr.create_array(
        store,
        shape=x.shape,
        chunks=tuple(c[0] for c in x.chunks),
        dtype=x.dtype,
        compressors=Sep(preset=preset, block_size=block_size),
        zarr_format=2,
        **kwargs,
    )
    stored = da.store(x, z, lock=False, compute=False)
    if client is not None:
        client.compute(stored).result()
    else:
        stored.compute()
    return z
