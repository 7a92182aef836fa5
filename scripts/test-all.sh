#!/usr/bin/env bash
# The whole test suite: the Rust workspace, then the Python package (python/).
# README.md's test command and .ci/run's test step run this script.
#
# The Python part creates a virtual environment under the Cargo target folder
# (ignored by git), installs the pinned test tools (python/requirements-test.txt),
# builds the extension with maturin (optimised dev profile) and installs the
# wheel, then runs pytest on python/tests and the package's doctests.
# Needs python3 (3.9+) with venv and network access to PyPI on the first run.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace

target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
venv="$target/pyenv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r python/requirements-test.txt
rm -rf "$target/wheels"
CARGO_TARGET_DIR="$target/python" "$venv/bin/maturin" build --quiet --profile dev \
    --manifest-path python/Cargo.toml --interpreter "$venv/bin/python" --out "$target/wheels"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$target"/wheels/*.whl

# The byte-identity tests compare with the command line that `cargo test` built.
export SEP_BIN="$target/debug/sep"
# pytest's own entry point, not `python -m`, so that python/sep (the sources,
# without the extension) does not shadow the installed package.
"$venv/bin/pytest" -q -p no:cacheprovider python/tests
"$venv/bin/pytest" -q -p no:cacheprovider --doctest-modules --pyargs sep
