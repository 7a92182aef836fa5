"""Shared fixtures: the repository's test corpus and the `sep` command line."""

import os
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus" / "files"


@pytest.fixture(scope="session")
def corpus():
    """The small corpus kept in the repository (tests/corpus/files)."""
    files = sorted(CORPUS.iterdir())
    assert files, f"no files in {CORPUS}"
    return files


@pytest.fixture(scope="session")
def sep_bin():
    """The `sep` binary to compare archives with: $SEP_BIN (scripts/test-all.sh
    sets it), else target/debug/sep, else `sep` on PATH. Required: the
    byte-identity tests must not pass by being skipped."""
    for candidate in (os.environ.get("SEP_BIN"), str(ROOT / "target" / "debug" / "sep"), shutil.which("sep")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    pytest.fail("no sep binary: build it with `cargo build -p sep-cli` or set SEP_BIN")
