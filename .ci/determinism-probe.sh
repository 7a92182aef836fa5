#!/usr/bin/env bash
# Determinism probe: the same training must give the same bits for every build, thread
# count and kernel instruction set.
#
# Builds crates/nn/examples/determinism_probe.rs twice (release profile):
#   baseline  RUSTFLAGS=-Ctarget-cpu=x86-64   CARGO_TARGET_DIR=target/probe-baseline
#   native    RUSTFLAGS=-Ctarget-cpu=native   CARGO_TARGET_DIR=target/probe-native
# and runs each with 1 and 2 kernel threads, with the default instruction set and with
# each of scalar/sse2/avx2/avx512 forced (skipping, with a note, those this CPU lacks).
# Every run prints one hash; the script fails (exit 1), printing all hashes, if any
# differs. On a non-x86-64 machine the baseline build uses the toolchain's default CPU.
#
# Environment: PROBE_STEPS (default 150) training steps per run.
set -euo pipefail
cd "$(dirname "$0")/.."

steps="${PROBE_STEPS:-150}"
if [ "$(uname -m)" = "x86_64" ]; then
    baseline_flags="-Ctarget-cpu=x86-64"
    isas="default scalar sse2 avx2 avx512"
else
    baseline_flags=""
    isas="default scalar"
fi

build() { # name rustflags
    echo "determinism-probe: building $1 (RUSTFLAGS='$2')" >&2
    CARGO_TARGET_DIR="target/probe-$1" RUSTFLAGS="$2" \
        cargo build --quiet --release -p sep-nn --example determinism_probe
}
build baseline "$baseline_flags"
build native "-Ctarget-cpu=native"

reference=""
failed=0
results=()
for b in baseline native; do
    exe="target/probe-$b/release/examples/determinism_probe"
    for isa in $isas; do
        for threads in 1 2; do
            args=(--threads "$threads" --steps "$steps")
            [ "$isa" = default ] || args+=(--isa "$isa")
            set +e
            out="$(SEP_KERNELS_ISA= "$exe" "${args[@]}" 2>/dev/null)"
            rc=$?
            set -e
            label="$b isa=$isa threads=$threads"
            if [ "$rc" -eq 3 ]; then
                echo "note: $label skipped: this CPU does not support $isa" >&2
                continue
            elif [ "$rc" -ne 0 ]; then
                echo "error: $label exited with status $rc" >&2
                failed=1
                continue
            fi
            results+=("$out  $label")
            if [ -z "$reference" ]; then
                reference="$out"
            elif [ "$out" != "$reference" ]; then
                failed=1
            fi
        done
    done
done

printf '%s\n' "${results[@]}"
if [ "$failed" -ne 0 ] || [ "${#results[@]}" -eq 0 ]; then
    echo "determinism-probe: FAILED: the hashes above differ (or a run failed)" >&2
    exit 1
fi
echo "determinism-probe: OK, ${#results[@]} runs agree on $reference" >&2
