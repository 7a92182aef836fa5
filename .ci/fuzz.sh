#!/usr/bin/env bash
# Bounded fuzzing: builds the cargo-fuzz targets of fuzz/ and runs each one for a fixed
# time from the committed seeds (fuzz/seeds/TARGET) and crashers (fuzz/artifacts/TARGET),
# in a scratch folder (nothing is written into the repository but fuzz/target, which git
# ignores). Fails on any crash, panic, timeout (a hang) or memory blow-up, and prints per
# target the executions and executions per second. See fuzz/README.md.
#
#   bash .ci/fuzz.sh                       # every target, 30 s each
#   FUZZ_SECONDS=300 bash .ci/fuzz.sh decode_neural
#
# Environment:
#   FUZZ_SECONDS   seconds per target (default 30)
#   FUZZ_TIMEOUT   seconds one input may take before it counts as a hang (default 20)
#   FUZZ_RSS_MB    memory limit in MiB, also the largest single allocation (default 2048)
#   FUZZ_WORK      scratch folder, kept; its corpora grow from run to run (default: a fresh
#                  mktemp -d, removed at the end unless a target failed)
#   FUZZ_SANITIZER address (default) or none
#   FUZZ_TRACE_COMPARES  1: build with libFuzzer's comparison tracing (default off: in the
#                  networks' f32 kernels it is half the run time, and the header target
#                  reaches the same coverage without it; see fuzz/README.md)
# Stable Rust builds the targets with RUSTC_BOOTSTRAP=1 (cargo-fuzz needs -Z flags).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

# cargo-fuzz, pinned: 0.13.2 builds with the stable toolchain CI uses (1.89 and later).
CARGO_FUZZ_VERSION=0.13.2
ALL_TARGETS=(header decode_order2 decode_neural decode_mix decode_mix2 decode_hybrid roundtrip transforms decode_lossy prior)
if [ $# -gt 0 ]; then targets=("$@"); else targets=("${ALL_TARGETS[@]}"); fi
seconds=${FUZZ_SECONDS:-30}
timeout_s=${FUZZ_TIMEOUT:-20}
rss_mb=${FUZZ_RSS_MB:-2048}
sanitizer=${FUZZ_SANITIZER:-address}
# The same flags for build and run, or cargo fuzz run rebuilds.
flags=(--sanitizer "$sanitizer")
[ "${FUZZ_TRACE_COMPARES:-0}" = 1 ] || flags+=(--no-trace-compares)
export RUSTC_BOOTSTRAP=1
export CARGO_TERM_COLOR=never

fail() { echo "fuzz: $*" >&2; exit 1; }
# libFuzzer reads -max_total_time=0 as "no limit".
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || fail "FUZZ_SECONDS must be a positive number of seconds"

if ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
    echo "fuzz: installing cargo-fuzz $CARGO_FUZZ_VERSION"
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi
cargo fuzz --version

for t in "${targets[@]}"; do
    [ -f "fuzz/fuzz_targets/$t.rs" ] || fail "no target $t (fuzz/fuzz_targets/$t.rs)"
done

build_start=$(date +%s)
# cargo fuzz build takes one target or none (all).
one=()
[ ${#targets[@]} -ne 1 ] || one=("${targets[0]}")
(cd fuzz && cargo fuzz build "${flags[@]}" ${one[@]+"${one[@]}"})
echo "fuzz: built in $(( $(date +%s) - build_start ))s"

work=${FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/sep-fuzz.XXXXXX")}
mkdir -p "$work"
summary=()
failed=()
total_execs=0
for t in "${targets[@]}"; do
    corpus="$work/corpus/$t"
    artifacts="$work/artifacts/$t"
    rm -rf "$artifacts"
    mkdir -p "$corpus" "$artifacts"
    cp fuzz/seeds/"$t"/* "$corpus"/ 2>/dev/null || true
    # Past crashers are the best seeds (the regression tests replay them too).
    find "fuzz/artifacts/$t" -maxdepth 1 -type f ! -name '*.md' -exec cp {} "$corpus"/ \; 2>/dev/null || true
    log="$work/$t.log"
    echo
    echo "=== fuzz $t: ${seconds}s from $(find "$corpus" -type f | wc -l) seeds"
    set +e
    # No -jobs: one process (CI machines are small and shared). cargo fuzz run
    # rebuilds nothing (built above) and runs from the fuzz folder.
    (cd fuzz && cargo fuzz run "${flags[@]}" "$t" "$corpus" -- \
        -max_total_time="$seconds" -timeout="$timeout_s" -rss_limit_mb="$rss_mb" \
        -malloc_limit_mb="$rss_mb" -artifact_prefix="$artifacts/" -print_final_stats=1) \
        >"$log" 2>&1
    rc=$?
    set -e
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    crashes=$(find "$artifacts" -type f | wc -l)
    if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
        echo "fuzz: $t FAILED (exit $rc, $crashes crashing inputs); the end of its log:" >&2
        grep -v '^#[0-9]' "$log" | tail -60 >&2
        for a in "$artifacts"/*; do
            [ -f "$a" ] || continue
            echo "fuzz: crasher $a ($(stat -c %s "$a") bytes): copy it to $repo/fuzz/artifacts/$t/," >&2
            echo "      fix the bug, and commit both (crates/sep/tests/fuzz_regressions.rs replays it)" >&2
        done
        failed+=("$t")
        summary+=("$(printf '%-14s %12s %10s %8s  FAILED' "$t" "${execs:-?}" "${rate:-?}" "${rss:-?}")")
        continue
    fi
    [ -n "$execs" ] || fail "$t: no final statistics in $log"
    total_execs=$(( total_execs + execs ))
    summary+=("$(printf '%-14s %12s %10s %8s  ok' "$t" "$execs" "$rate" "$rss")")
    echo "fuzz: $t ok: $execs executions, $rate/s, peak RSS $rss MiB, corpus $(find "$corpus" -type f | wc -l) inputs"
done

echo
echo "=== fuzz summary (${seconds}s per target: ${flags[*]})"
printf '%-14s %12s %10s %8s  %s\n' target executions exec/s 'RSS MiB' result
printf '%s\n' "${summary[@]}"
echo "total executions: $total_execs"
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: FAILED: ${failed[*]}; logs and crashers are in $work" >&2
    exit 1
fi
[ -n "${FUZZ_WORK:-}" ] || rm -rf "$work"
