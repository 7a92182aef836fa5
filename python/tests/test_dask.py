"""Scale-out on a dask.distributed LocalCluster with two worker processes."""

import os
import subprocess

import numpy as np
import pytest
import zarr
from dask.distributed import Client, LocalCluster

import sep
import sep.dask


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as c:
            yield c


def test_compress_files_identical_to_cli(client, corpus, sep_bin, tmp_path):
    paths = corpus[:6]
    out = sep.dask.compress_files(paths, tmp_path / "out", client=client, preset=1)
    assert [os.path.basename(p) for p in out] == [p.name + ".sep" for p in paths]
    for p, o in zip(paths, out):
        cli = subprocess.run([sep_bin, "-c", "-1", str(p)], check=True, capture_output=True).stdout
        with open(o, "rb") as f:
            assert f.read() == cli, p.name
    assert sorted(os.listdir(tmp_path / "out")) == sorted(p.name + ".sep" for p in paths), "no temporary files left"
    assert len(client.scheduler_info()["workers"]) == 2


def test_compress_files_without_client_and_default_preset(corpus, sep_bin, tmp_path):
    small = [p for p in corpus if p.stat().st_size < 20000][:2]
    out = sep.dask.compress_files(small, tmp_path)
    for p, o in zip(small, out):
        # The CLI may pick a built-in prior for inputs up to 64 KiB; the
        # library never adds one by itself.
        cli = subprocess.run(
            [sep_bin, "-c", "--prior", "none", str(p)], check=True, capture_output=True
        ).stdout
        assert open(o, "rb").read() == cli


def test_compress_files_rejects_colliding_names(tmp_path, corpus):
    with pytest.raises(ValueError, match="same file name"):
        sep.dask.compress_files([corpus[0], corpus[0]], tmp_path)


def test_failed_task_leaves_no_partial_output(client, tmp_path):
    missing = tmp_path / "missing.bin"
    with pytest.raises(FileNotFoundError):
        sep.dask.compress_files([missing], tmp_path / "o", client=client, retries=0)
    assert os.listdir(tmp_path / "o") == []


def test_to_zarr_chunk_parallel(client, tmp_path):
    x = (np.arange(1 << 20, dtype="int32") % 4099).reshape(1024, 1024)
    z = sep.dask.to_zarr(x, str(tmp_path / "z.zarr"), chunks=(256, 1024), preset=1, client=client)
    assert np.array_equal(zarr.open_array(str(tmp_path / "z.zarr"), mode="r")[:], x)
    assert z.metadata.compressor.get_config()["id"] == "sep"
    assert sep.decompress((tmp_path / "z.zarr" / "1.0").read_bytes()) == x[256:512].tobytes()
