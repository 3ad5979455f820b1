#!/usr/bin/env bash
# Throughput of the `leasehold` CLI: 2,000 trivial commands (`true`) through `leasehold run`
# with 1 and 4 workers (--concurrency), on a fresh SQLite file and, when LEASEHOLD_TEST_PG_URL
# is set (scripts/pg-cluster.sh start), on a fresh PostgreSQL schema. Prints jobs/s per case.
#
#   scripts/cli-bench.sh            # builds the release binary first
#   JOBS=5000 scripts/cli-bench.sh
#   LEASEHOLD_BIN=/tmp/leasehold-before scripts/cli-bench.sh   # another build, e.g. an older commit's
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${LEASEHOLD_BIN:-}" ]; then
    bin=$LEASEHOLD_BIN
else
    cargo build -q -p leasehold --features cli --release --bin leasehold
    bin=target/release/leasehold
fi
jobs=${JOBS:-2000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for _ in $(seq "$jobs"); do echo true; done > "$work/jobs.txt"

bench() { # label url concurrency
    local start end
    start=$(date +%s.%N)
    "$bin" --database "$2" --events "$work/events" run "$work/jobs.txt" --concurrency "$3" > "$work/out" 2>/dev/null
    end=$(date +%s.%N)
    grep -q "^done: *$jobs$" "$work/out" || { echo "$1: not every job was done" >&2; cat "$work/out" >&2; exit 1; }
    awk -v l="$1" -v c="$3" -v n="$jobs" -v s="$start" -v e="$end" \
        'BEGIN { printf "%-10s %d worker(s): %5d jobs in %6.2fs = %7.1f jobs/s\n", l, c, n, e - s, n / (e - s) }'
}

for c in 1 4; do
    rm -f "$work"/q.db*
    bench sqlite "sqlite://$work/q.db" "$c"
done
if [ -n "${LEASEHOLD_TEST_PG_URL:-}" ]; then
    for c in 1 4; do
        schema="cli_bench_$c"
        sep='?'; [[ "$LEASEHOLD_TEST_PG_URL" == *\?* ]] && sep='&'
        command -v psql > /dev/null || { echo "postgres: psql missing; skipped"; break; }
        # A fresh schema per case (and the check that the server is reached).
        psql -q "$LEASEHOLD_TEST_PG_URL" -c "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema;"
        bench postgres "$LEASEHOLD_TEST_PG_URL${sep}options[search_path]=$schema" "$c"
    done
else
    echo "postgres: skipped (LEASEHOLD_TEST_PG_URL is not set; scripts/pg-cluster.sh start)"
fi
