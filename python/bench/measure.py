"""Measurements behind python/README.md's numbers (not run by the tests).

    python python/bench/measure.py first-byte
    python python/bench/measure.py speed FILE SEP_BIN [PRESET]
    python python/bench/measure.py dask DIR [PRESET]   # DIR holds the input files

first-byte: a fresh interpreter from before `import sep` to the first archive byte
(a 1-byte input, preset order2 and default), best of 5. speed: sep.compress vs
`sep -c -T1` on FILE, best of 3 each, checking the archives are identical.
dask: sep.dask.compress_files on a LocalCluster with 1, then 2 worker processes
(one thread each), wall clock, checking the outputs are identical.
"""

import os
import subprocess
import sys
import tempfile
import time


def first_byte():
    code = (
        "import time; t=time.perf_counter(); import sep; a=sep.compress(b'x', preset={p!r}); "
        "print((time.perf_counter()-t)*1000)"
    )
    for preset in ("order2", "default"):
        runs = [float(subprocess.run([sys.executable, "-c", code.format(p=preset)], check=True,
                                     capture_output=True, text=True).stdout) for _ in range(5)]
        print(f"import to first byte, preset {preset}: best {min(runs):.1f} ms, runs {[round(r, 1) for r in runs]}")


def speed(path, sep_bin, preset="order2"):
    import sep

    data = open(path, "rb").read()
    level = {"order2": "-1", "fast": "-3", "default": "-6", "max": "-9"}[preset]
    py, cli = [], []
    archive = None
    for _ in range(3):
        t = time.perf_counter()
        archive = sep.compress(data, preset=preset)
        py.append(time.perf_counter() - t)
        t = time.perf_counter()
        out = subprocess.run([sep_bin, "-c", "-T", "1", level, path], check=True, capture_output=True).stdout
        cli.append(time.perf_counter() - t)
    assert out == archive, "archives differ"
    mb = len(data) / 1e6
    print(f"{path} ({len(data)} bytes), preset {preset}: python {mb / min(py):.2f} MB/s (best {min(py):.2f} s), "
          f"cli {mb / min(cli):.2f} MB/s (best {min(cli):.2f} s); python/cli time {min(py) / min(cli):.3f}; "
          f"runs py {[round(x, 2) for x in py]} cli {[round(x, 2) for x in cli]}")


def dask(folder, preset="order2"):
    from dask.distributed import Client, LocalCluster

    import sep.dask

    paths = sorted(os.path.join(folder, f) for f in os.listdir(folder))
    total = sum(os.path.getsize(p) for p in paths)
    results = {}
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            client.run(lambda: __import__("sep"))  # warm the workers' imports
            out = tempfile.mkdtemp()
            t = time.perf_counter()
            outs = sep.dask.compress_files(paths, out, client=client, preset=preset)
            dt = time.perf_counter() - t
            results[workers] = [open(o, "rb").read() for o in outs]
            print(f"{workers} worker(s): {len(paths)} files, {total} bytes, {dt:.2f} s, {total / dt / 1e6:.2f} MB/s")
    assert results[1] == results[2], "outputs differ"
    print("outputs identical")


if __name__ == "__main__":
    {"first-byte": first_byte, "speed": speed, "dask": dask}[sys.argv[1]](*sys.argv[2:])
