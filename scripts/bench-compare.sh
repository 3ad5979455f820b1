#!/usr/bin/env bash
# The store and runner benchmark figures of two or more commits, measured in the same run:
# each commit's release store_bench and runner_bench are built once, then run in rotation
# (round r starts with the r-th commit), a CHECKPOINT before each store run, and the
# medians printed side by side with the ratio to the first commit.
#
#   eval "$(scripts/pg-cluster.sh start)"     # for the PostgreSQL rows (else SQLite only)
#   scripts/bench-compare.sh [--rounds 5] [--store '--jobs 10000'] [--runner ''] BEFORE AFTER...
#
#   --rounds N      runs of each benchmark per commit (default 5)
#   --store ARGS    store_bench's arguments (default '--jobs 10000 --page 100 --pgbench-secs 0
#                   --only pg-pages,pg-single,pg-pages-delete,pg-single-delete,sqlite-pages,sqlite-single')
#   --runner ARGS   runner_bench's arguments (default none: its own item count)
#   --no-runner     store_bench only
#   --report        no builds, no runs: print the medians of the runs a former call left in
#                   BENCH_DIR.bins/runs/ (rounds 1..N)
#
# BENCH_DIR (default /tmp/leasehold-bench) is a detached git worktree the commits are checked
# out and built in one after the other (one target folder: each build after the first is
# incremental); the binaries are kept in BENCH_DIR.bins/COMMIT/ and reused by a later call,
# and every run's output in BENCH_DIR.bins/runs/. A release build of the two examples needs
# about 3 GB of disk. Remove both when done: git worktree remove --force "$BENCH_DIR";
# rm -r "$BENCH_DIR.bins".
#
# Output: one row per figure (store_bench's jobs/s per run label; runner_bench's items/s per
# configuration and its bytes per in-flight item), each commit's median, and each later
# commit's median over the first's (above 1 is faster, except for bytes).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

rounds=5
store_args='--jobs 10000 --page 100 --only pg-pages,pg-single,pg-pages-delete,pg-single-delete,sqlite-pages,sqlite-single'
runner_args=''
runner=1
report_only=0
commits=()
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --store) store_args=$2; shift 2 ;;
    --runner) runner_args=$2; shift 2 ;;
    --no-runner) runner=0; shift ;;
    --report) report_only=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench-compare: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) commits+=("$(git -C "$root" rev-parse --short "$1^{commit}")"); shift ;;
  esac
done
if [ ${#commits[@]} -lt 2 ]; then
  echo "bench-compare: give at least two commits (see --help)" >&2
  exit 2
fi
dir=${BENCH_DIR:-/tmp/leasehold-bench}
bins=$dir.bins
mkdir -p "$bins/runs"

# Build each commit's binaries (kept, so a second call only runs).
for c in "${commits[@]}"; do
  [ $report_only = 1 ] && break
  [ -x "$bins/$c/store_bench" ] && [ -x "$bins/$c/runner_bench" ] && continue
  [ -d "$dir" ] || git -C "$root" worktree add --detach "$dir" "$c" >/dev/null
  git -C "$dir" checkout -q --detach "$c"
  echo "bench-compare: building $c in $dir" >&2
  (cd "$dir" && cargo build -q --release -p leasehold --features postgres --example store_bench --example runner_bench)
  mkdir -p "$bins/$c"
  cp "$dir/target/release/examples/store_bench" "$dir/target/release/examples/runner_bench" "$bins/$c/"
done

checkpoint() {
  [ -n "${LEASEHOLD_TEST_PG_URL:-}" ] && command -v psql >/dev/null && psql -X -q "$LEASEHOLD_TEST_PG_URL" -c CHECKPOINT 2>/dev/null || true
}

# Rounds, the starting commit rotating.
n=${#commits[@]}
for r in $(seq "$rounds"); do
  [ $report_only = 1 ] && break
  for i in $(seq 0 $((n - 1))); do
    c=${commits[$(((i + r - 1) % n))]}
    checkpoint
    # shellcheck disable=SC2086 # the arguments are words
    (cd "$bins" && "$bins/$c/store_bench" $store_args >"runs/$c.store.$r" 2>&1) || echo "bench-compare: store_bench of $c failed (runs/$c.store.$r)" >&2
    if [ $runner = 1 ]; then
      # shellcheck disable=SC2086
      (cd "$bins" && "$bins/$c/runner_bench" $runner_args >"runs/$c.runner.$r" 2>&1) || echo "bench-compare: runner_bench of $c failed" >&2
    fi
    echo "bench-compare: round $r/$rounds, $c done" >&2
  done
done

# figure<TAB>commit<TAB>value, then medians per figure and commit.
for c in "${commits[@]}"; do
  for r in $(seq "$rounds"); do
    awk -v c="$c" -F': ' '/ jobs\/s / { split($2, a, " = "); split(a[2], b, " "); print "store: " $1 "\t" c "\t" b[1] }' "$bins/runs/$c.store.$r"
    [ $runner = 1 ] && [ -e "$bins/runs/$c.runner.$r" ] || continue
    awk -v c="$c" '
      /^configuration/ { table = 1; next }
      /^memory:/ { print "runner: bytes per in-flight item\t" c "\t" $2; table = 0; next }
      table && NF >= 4 { label = $1; for (i = 2; i <= NF - 3; i++) label = label " " $i; print "runner: " label " (items/s)\t" c "\t" $(NF - 2) }
    ' "$bins/runs/$c.runner.$r"
  done
done | awk -F'\t' -v order="${commits[*]}" '
  function median(list,   v, k, m, i, j, t) {
    m = split(list, v, " ")
    for (i = 2; i <= m; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] + 0 > t + 0; j--) v[j + 1] = v[j]; v[j + 1] = t }
    return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
  }
  { if (!($1 in seen)) { seen[$1] = 1; figures[++nf] = $1 } values[$1, $2] = values[$1, $2] " " $3 }
  END {
    nc = split(order, cs, " ")
    printf "%-86s", "figure (median of the runs of each commit)"
    for (k = 1; k <= nc; k++) printf " %12s", cs[k]
    for (k = 2; k <= nc; k++) printf " %9s", cs[k] "/" substr(cs[1], 1, 4)
    printf "\n"
    for (f = 1; f <= nf; f++) {
      printf "%-86s", substr(figures[f], 1, 86)
      for (k = 1; k <= nc; k++) { med[k] = median(values[figures[f], cs[k]]); printf " %12.0f", med[k] }
      for (k = 2; k <= nc; k++) printf " %9.2f", (med[1] > 0 ? med[k] / med[1] : 0)
      printf "\n"
    }
  }'
echo "runs: $bins/runs/COMMIT.{store,runner}.ROUND; $rounds rounds, load now $(cut -d' ' -f1-3 /proc/loadavg)"
