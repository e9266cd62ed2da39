#!/bin/sh
# Builds the benchmark programs (Release) and runs them, keeping each program's output.
#
#   bench/run.sh            the full figures: 100,000 entries (~260 MB file; a few minutes)
#   bench/run.sh --smoke    1,000 entries: a quick check that everything runs
#
# Environment: BUILD (build folder, default build/bench), OUT (where the outputs go, default
# $BUILD/results), SEED (default 1). The programs' own options are in bench/README.md.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build/bench}
out=${OUT:-$build/results}
seed=${SEED:-1}
entries=100000
[ "${1:-}" = "--smoke" ] && entries=1000

# Only the benchmarks and the tool (bench_branchy runs it): tests and examples are not needed.
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DAGENTCORE_BUILD_TESTS=OFF \
      -DAGENTCORE_BUILD_EXAMPLES=OFF -DAGENTCORE_BUILD_TOOLS=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target bench_memory bench_gen_session bench_jsonl bench_branchy agentcore_cli

bin=$build/bench
mkdir -p "$out"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/agentcore-bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

"$bin/bench_memory" --entries "$entries" --seed "$seed" | tee "$out/memory.txt"
echo
"$bin/bench_gen_session" --entries "$entries" --seed "$seed" --dialect native --out "$scratch/native.jsonl" \
    | tee "$out/gen_session.txt"
"$bin/bench_gen_session" --entries "$entries" --seed "$seed" --dialect pi --out "$scratch/pi.jsonl" \
    | tee -a "$out/gen_session.txt"
rm -f "$scratch/native.jsonl" "$scratch/pi.jsonl"
echo
"$bin/bench_jsonl" --entries "$entries" --seed "$seed" --dir "$scratch/jsonl" | tee "$out/jsonl.txt"
echo
"$bin/bench_branchy" --entries "$entries" --tool "$build/tools/agentcore" --dir "$scratch/branchy" \
    | tee "$out/branchy.txt"
echo
echo "outputs in $out"
