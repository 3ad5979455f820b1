#!/usr/bin/env bash
# The lease promise under chaos: the real `leasehold` binary, real workers, real faults.
#
#   scripts/chaos.sh                  every experiment on SQLite and PostgreSQL (about 10 minutes)
#   scripts/chaos.sh --quick          a short run of each store's telling experiments (under 2 minutes)
#   scripts/chaos.sh --store sqlite   one store (sqlite or postgres)
#   scripts/chaos.sh --only kill9,lock   these experiments only (names: see --list)
#   scripts/chaos.sh --skip pause        all (or the --quick ones) but these
#   scripts/chaos.sh --list           the experiments and what each does
#   scripts/chaos.sh --keep           keep the work folder (logs, databases) for a look afterwards
#                                     (a run that fails keeps it without being asked)
#
# The partition and deaf experiments need Node.js (`node`) for their TCP proxy.
#
# Environment: LEASEHOLD_BIN (the binary to test; default: built here with
# `cargo build --release -p leasehold --features cli,postgres`), CHAOS_PG_DIR and CHAOS_PG_PORT
# (the private PostgreSQL cluster this script starts and stops with scripts/pg-cluster.sh;
# default /tmp/leasehold-chaos-pg-PID and 54391), PG_BIN (the server binaries).
#
# Each experiment queues jobs whose commands record their own execution in a log: a line
# at the start (job, a unique execution id, the worker), a heartbeat every 100 ms while
# they run and a line at the end, each stamped with `date +%s%N`. A killed command writes
# no more heartbeats, so its last one bounds its true end to within ~100 ms. Meanwhile
# the script breaks things: it kills workers with SIGKILL, pauses one with SIGSTOP inside
# a pid namespace of its own (`unshare --pid --fork --mount-proc`: its owner id names a
# process no other worker can see, so only its lease can speak for it), stops
# PostgreSQL, locks the jobs table (SQLite: `BEGIN EXCLUSIVE`), cancels running jobs and
# retries them as an operator would, and gives commands that take seconds to exit after
# SIGTERM. Then it lets the queue drain and counts, per
# experiment:
#
#   jobs       queued (enough to keep every slot busy through the chaos)
#   execs      executions started (a job killed with its worker runs again)
#   lost       not succeeded once the queue drained (a job never finished)
#   overlap    pairs of executions of one job that ran at the same time (the promise)
#   max ms     the longest such overlap
#   double     jobs whose success was settled twice (job-done events)
#   rerun k/p  finished work run again after its worker was killed or paused, or after the
#              job was cancelled and retried (expected: the worker died or froze before
#              its settle landed, or the cancel fenced the settle out)
#   rerun tk   finished work run again by another worker that took the job over after its
#              lease went stale (allowed only where the outage outlasted the stale window
#              and there are other workers: the fence then refused the late settle)
#   rerun bad  any other re-run of finished work: by the worker that finished it, or where
#              no takeover is allowed (one worker; an outage shorter than the stale window)
#
# After a `stop` experiment's row, a line says how long after each restart of PostgreSQL
# a command started again (the workers noticed the database back).
#
# It exits 1 unless lost, overlap, double and rerun bad are 0 in every experiment run, and
# prints one table row per experiment. An experiment whose tool is missing (PostgreSQL
# server binaries, unshare without root) is skipped with one line saying so.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

quick=0
stores="sqlite postgres"
only=""
skip=""
keep=0
list=0
while (($#)); do
  case $1 in
    --quick) quick=1 ;;
    --store) stores=$2; shift ;;
    --only) only=",$2,"; shift ;;
    --skip) skip=",$2,"; shift ;;
    --keep) keep=1 ;;
    --list) list=1 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "chaos.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

# ---------------------------------------------------------------- experiments
# name | stores | what it does (the chaos function is chaos_<name with - as _>)
experiments=(
  "kill9|sqlite postgres|4 workers x 2 slots; one worker killed with SIGKILL every 1-2 s and a new one started"
  "pause|sqlite postgres|3 workers x 2 slots, one in its own pid namespace, paused with SIGSTOP for twice the stale window while its commands run, then resumed; half the commands take 4 s to exit after SIGTERM"
  "lock|sqlite postgres|3 workers x 2 slots; the jobs table locked (PostgreSQL LOCK TABLE ACCESS EXCLUSIVE, SQLite BEGIN EXCLUSIVE) for twice the stale window; half the commands take 4 s to exit after SIGTERM"
  "lock-short|sqlite postgres|3 workers x 2 slots; the jobs table locked for half the stale window, three times: no finished work may run again"
  "lock-single|sqlite postgres|1 worker x 2 slots; the jobs table locked for twice the stale window while commands finish: each is recorded once, never run again"
  "stop|postgres|3 workers x 2 slots; PostgreSQL stopped (pg_ctl stop -m fast) for twice the stale window, then started"
  "stop-single|postgres|1 worker x 2 slots; PostgreSQL stopped for twice the stale window while commands finish: each is recorded once, never run again"
  "partition|postgres|3 workers x 2 slots, one in its own pid namespace behind a TCP proxy that holds all its traffic both ways for twice the stale window while its commands run, then lets it through; half the commands take 4 s to exit after SIGTERM"
  "deaf|postgres|as partition, but the proxy holds only the database's answers: the worker's statements land (renewals, settles, claims) and it hears none of it until the hold ends"
  "steer|sqlite postgres|3 workers x 2 slots, one in its own pid namespace; while it is paused (SIGSTOP, twice the stale window) a command of it is cancelled, retried, cancelled again while it waits and retried again, and so is a command of another worker; half the commands take 4 s to exit after SIGTERM"
)
# The quick run (CI): the experiments that tell most, in under two minutes for both stores.
quick_set=",sqlite:kill9,sqlite:pause,sqlite:lock-single,sqlite:steer,postgres:pause,postgres:stop,postgres:steer,"

if ((list)); then
  for e in "${experiments[@]}"; do
    IFS='|' read -r name on what <<<"$e"
    printf '%-12s [%s] %s\n' "$name" "$on" "$what"
  done
  exit 0
fi

if ((quick)); then
  stale=2       # --stale-after, seconds
  chaos_for=6   # seconds of chaos
else
  stale=3
  chaos_for=25
fi

say() { echo "chaos: $*" >&2; }

bin=${LEASEHOLD_BIN:-}
if [[ -z $bin ]]; then
  say "building leasehold (release, with PostgreSQL)"
  (cd "$root" && cargo build --release -q -p leasehold --features cli,postgres)
  bin=$root/target/release/leasehold
fi
[[ -x $bin ]] || { say "no leasehold binary at $bin"; exit 2; }

work=$(mktemp -d /tmp/leasehold-chaos.XXXXXX)
chmod 755 "$work"
pg_dir=${CHAOS_PG_DIR:-/tmp/leasehold-chaos-pg-$$}
pg_port=${CHAOS_PG_PORT:-54391}
pg_bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
pg_url=""
pids=()        # every worker (or its unshare) this script started
declare -A worker_pid=()   # tag -> the pid to signal (the leasehold process itself)
failed=0
rows=()

cleanup() {
  local pid
  # The workers themselves too: a worker in a pid namespace outlives its unshare, paused.
  for pid in "${pids[@]}" "${worker_pid[@]}"; do kill -CONT "$pid" 2>/dev/null || true; kill -KILL "$pid" 2>/dev/null || true; done
  if [[ -n $pg_url ]]; then
    LEASEHOLD_PG_DIR=$pg_dir LEASEHOLD_PG_PORT=$pg_port "$root/scripts/pg-cluster.sh" stop 2>/dev/null || true
  fi
  # A failed run keeps its work folder (the execution log, the event logs, the databases):
  # a rare failure leaves nothing to look at otherwise.
  if ((keep || failed)); then say "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# Runs a server binary as the cluster's owner (`postgres` when we are root).
as_pg_owner() { if [[ $(id -u) = 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_sql() {
  as_pg_owner env PGOPTIONS=--client-min-messages=warning \
    "$pg_bin/psql" -h "$pg_dir/sock" -p "$pg_port" -U postgres -d leasehold -qAtc "$1"
}

# The command every job runs: sh job.sh LOG JOB DURATION_MS SLOW_EXIT_S. It writes
#   S job exec worker ns   at its start
#   H job exec ns          every 100 ms while it runs
#   E job exec ns          once it ran to completion (it then exits 0)
# each line one small O_APPEND write. With SLOW_EXIT_S > 0 it catches SIGTERM and goes
# on for that long (heartbeats included) before it exits 143.
cat >"$work/job.sh" <<'EOF'
log=$1 job=$2 dur=$3 slow=$4
ex=$(cat /proc/sys/kernel/random/uuid)
now() { date +%s%N; }
echo "S $job $ex ${CHAOS_WORKER:-?} $(now)" >>"$log"
slow_exit() {
  trap '' TERM
  t=0
  while [ "$t" -lt "$((slow * 10))" ]; do sleep 0.1; echo "H $job $ex $(now)" >>"$log"; t=$((t + 1)); done
  exit 143
}
if [ "$slow" -gt 0 ]; then trap slow_exit TERM; fi
i=0
while [ "$i" -lt "$((dur / 100))" ]; do
  sleep 0.1
  echo "H $job $ex $(now)" >>"$log"
  i=$((i + 1))
done
echo "E $job $ex $(now)" >>"$log"
EOF

# A TCP proxy to the PostgreSQL socket: node proxy.mjs SOCKET PORT_FILE MODE. SIGUSR1
# holds traffic (MODE both: every byte either way; answers: what the server sends), in
# order, on every connection (new ones too); SIGUSR2 lets it all through.
cat >"$work/proxy.mjs" <<'EOF'
import fs from 'node:fs';
import net from 'node:net';
const [socket, portFile, mode] = process.argv.slice(2);
let held = false;
let gate;
let open = () => undefined;
process.on('SIGUSR1', () => {
  if (!held) { held = true; gate = new Promise((resolve) => (open = resolve)); }
});
process.on('SIGUSR2', () => { held = false; open(); });
const server = net.createServer((client) => {
  const upstream = net.connect({ path: socket });
  let up = Promise.resolve();
  let down = Promise.resolve();
  client.on('data', (chunk) => {
    const wait = held && mode === 'both' ? gate : undefined;
    up = up.then(() => wait).then(() => upstream.write(chunk));
  });
  upstream.on('data', (chunk) => {
    const wait = held ? gate : undefined;
    down = down.then(() => wait).then(() => client.write(chunk));
  });
  const close = () => { client.destroy(); upstream.destroy(); };
  client.on('error', close).on('close', close);
  upstream.on('error', close).on('close', close);
});
server.listen(0, '127.0.0.1', () => fs.writeFileSync(portFile, String(server.address().port)));
EOF

# ---------------------------------------------------------------- one experiment
# Globals of the experiment running: name, store, dir, url, log, workers (tags alive).
exp_name="" exp_store="" dir="" url="" log=""
live=()
next_worker=0

lh() { "$bin" --database "$url" --events "$dir/events" --stale-after "${stale}s" "$@"; }

# start_worker [ns]: a worker with the next tag, left in $started; `ns`: inside a pid
# namespace of its own, on $ns_url when set. (Not in $(...): it records the worker in
# this shell.)
start_worker() {
  local tag="w$((next_worker += 1))" pid child
  if [[ ${1:-} == ns ]]; then
    CHAOS_WORKER=$tag unshare --pid --fork --mount-proc \
      "$bin" --database "${ns_url:-$url}" --events "$dir/events" --stale-after "${stale}s" \
      work --queue chaos --concurrency "$slots" >>"$dir/$tag.out" 2>&1 &
    pid=$!
    pids+=("$pid")
    # Signals go to leasehold itself, the namespace's pid 1, not to unshare.
    for _ in $(seq 50); do
      child=$(pgrep -P "$pid" || true)
      [[ -n $child ]] && break
      sleep 0.05
    done
    worker_pid[$tag]=${child:?the namespaced worker did not start}
  else
    CHAOS_WORKER=$tag "$bin" --database "$url" --events "$dir/events" --stale-after "${stale}s" \
      work --queue chaos --concurrency "$slots" >>"$dir/$tag.out" 2>&1 &
    pid=$!
    pids+=("$pid")
    worker_pid[$tag]=$pid
  fi
  live+=("$tag")
  started=$tag
}

# Counts of the chaos queue by state: "queued running succeeded dead", where queued also
# counts the jobs not due yet and those waiting to retry. `leasehold status` columns:
# queue, queued, scheduled, retrying, running, succeeded, dead, cancelled, paused.
queue_counts() {
  lh status 2>/dev/null | sed 's/[│┆]/|/g' | awk -F'|' '$2 ~ / chaos / { gsub(/ /, ""); print $3 + $4 + $5, $6, $7, $8 }'
}

# Sets up the experiment's database and queues its jobs.
setup() {
  exp_name=$1 exp_store=$2 exp_started=$SECONDS
  dir="$work/$exp_store-$exp_name"
  mkdir -p "$dir"
  chmod 755 "$dir"
  log="$dir/executions.log"
  : >"$log"
  chmod 666 "$log"
  : >"$dir/killed"
  : >"$dir/paused"
  : >"$dir/recovered"
  : >"$dir/cancelled"
  : >"$dir/ids"
  live=()
  next_worker=0
  if [[ $exp_store == sqlite ]]; then
    url="sqlite://$dir/queue.db"
  else
    local schema="chaos_${exp_name//-/_}"
    pg_sql "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema"
    url="$pg_url&options[search_path]=$schema"
  fi
  local j dur slowj id
  for ((j = 1; j <= jobs_n; j++)); do
    dur=$((dur_min + (j * 373) % dur_spread)) # spread evenly
    slowj=0
    if ((slow_exit > 0 && j % 2 == 0)); then slowj=$slow_exit; fi
    local due=()
    if ((trickle_ms > 0)); then due=(--at "$((j * trickle_ms))ms"); fi
    id=$(lh enqueue --queue chaos --max-attempts 1000 "${due[@]}" -- sh "$work/job.sh" "$log" "$j" "$dur" "$slowj" 2>>"$dir/enqueue.err")
    echo "$j $id" >>"$dir/ids"
  done
}

# Lets the queue drain (up to a minute after the chaos), then stops every worker.
drain() {
  local deadline=$((SECONDS + 60)) counts q r
  while ((SECONDS < deadline)); do
    counts=$(queue_counts)
    read -r q r _ <<<"${counts:-1 1 0 0}"
    if [[ $q == 0 && $r == 0 ]]; then break; fi
    sleep 0.5
  done
  local tag
  for tag in "${live[@]}"; do kill -CONT "${worker_pid[$tag]}" 2>/dev/null || true; done
  for tag in "${live[@]}"; do kill -TERM "${worker_pid[$tag]}" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
}

# Reads the execution log and the store; prints the experiment's row; marks a failure.
# $1: whether a takeover may re-run finished work here (1) or not (0).
report() {
  local takeover_ok=$1 counts succeeded
  counts=$(queue_counts)
  read -r _ _ succeeded _ <<<"${counts:-0 0 0 0}"
  local double
  double=$(lh events --json 2>/dev/null | grep '"job-done"' | grep -o '"job":[0-9]*' | sort | uniq -d | wc -l)
  local row took=$((SECONDS - exp_started))
  row=$(awk -v jobs="$jobs_n" -v succeeded="${succeeded:-0}" -v double="$double" -v takeover_ok="$takeover_ok" -v took="$took" \
    -v name="$exp_store $exp_name" -v killedf="$dir/killed" -v pausedf="$dir/paused" -v cancelledf="$dir/cancelled" '
    BEGIN {
      while ((getline t < killedf) > 0) killed[t] = 1
      while ((getline t < pausedf) > 0) paused[t] = 1
      while ((getline t < cancelledf) > 0) cancelled[t] = 1
    }
    $1 == "S" { job[$3] = $2; worker[$3] = $4; start[$3] = $5; last[$3] = $5; n++; order[n] = $3 }
    $1 == "H" && ($3 in start) { if ($4 > last[$3]) last[$3] = $4 }
    $1 == "E" && ($3 in start) { if ($4 > last[$3]) last[$3] = $4; ended[$3] = $4 }
    END {
      overlap = 0; maxms = 0; kp = 0; tk = 0; bad = 0
      for (i = 1; i <= n; i++) for (k = i + 1; k <= n; k++) {
        a = order[i]; b = order[k]
        if (job[a] != job[b]) continue
        if (start[a] < last[b] && start[b] < last[a]) {
          overlap++
          ms = ((last[a] < last[b] ? last[a] : last[b]) - (start[a] > start[b] ? start[a] : start[b])) / 1e6
          if (ms > maxms) maxms = ms
        }
        # finished work run again: one ended, the other started after it
        if ((a in ended) && start[b] > ended[a]) { f = a; g = b } else if ((b in ended) && start[a] > ended[b]) { f = b; g = a } else continue
        if ((worker[f] in killed) || (worker[f] in paused) || (job[f] in cancelled)) kp++
        else if (takeover_ok && worker[g] != worker[f]) tk++
        else bad++
      }
      lost = jobs - succeeded
      printf "%-24s %5d %6d %5d %8d %8.0f %7d %10d %9d %10d %5ds", name, jobs, n, lost, overlap, maxms, double, kp, tk, bad, took
      exit (lost > 0 || overlap > 0 || double > 0 || bad > 0) ? 1 : 0
    }' "$log") && row+="  ok" || { row+="  FAIL"; failed=1; }
  rows+=("$row")
  echo "$row"
  local recovery
  recovery=$(recovery_times)
  if [[ -n $recovery ]]; then echo "  first command after each restart of the database: $recovery"; fi
}

# ---------------------------------------------------------------- the faults
pause_worker() { echo "$1" >>"$dir/paused"; kill -STOP "${worker_pid[$1]}"; }
resume_worker() { kill -CONT "${worker_pid[$1]}"; }

# Holds an exclusive lock on the jobs table for $1 seconds; returns once it is released.
lock_table() {
  local secs=$1
  if [[ $exp_store == sqlite ]]; then
    { echo ".timeout 10000"; echo "BEGIN EXCLUSIVE;"; sleep "$secs"; echo "COMMIT;"; } \
      | sqlite3 "$dir/queue.db" >"$dir/lock.out" 2>&1 || say "the lock holder failed: $(cat "$dir/lock.out")"
  else
    local schema="chaos_${exp_name//-/_}"
    pg_sql "BEGIN; LOCK TABLE $schema.leasehold_jobs IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep($secs); COMMIT;" \
      >"$dir/lock.out" 2>&1 || say "the lock holder failed: $(cat "$dir/lock.out")"
  fi
}

stop_database() {
  as_pg_owner "$pg_bin/pg_ctl" -D "$pg_dir/data" -m fast -w stop >/dev/null
  sleep "$1"
  as_pg_owner "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -t 60 start >/dev/null
  date +%s%N >>"$dir/recovered"
}

# After each restart: how long until a command started again (the workers noticed the
# database back), in ms.
recovery_times() {
  [[ -s $dir/recovered ]] || return 0
  awk 'NR == FNR { back[++n] = $1; next }
       $1 == "S" { for (i = 1; i <= n; i++) if ($5 >= back[i] && (!(i in first) || $5 < first[i])) first[i] = $5 }
       END { for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? ", " : ""), (i in first ? sprintf("%.0f ms", (first[i] - back[i]) / 1e6) : "none") }' \
    "$dir/recovered" "$log"
}

# Waits until some command of worker $1 runs (at most 10 s).
until_running_on() {
  local t
  for t in $(seq 100); do
    awk -v w="$1" '$1 == "S" && $4 == w { s[$3] = 1 } $1 == "E" { delete s[$3] } END { for (x in s) exit 0; exit 1 }' "$log" && return 0
    sleep 0.1
  done
}

chaos_kill9() {
  local end=$((SECONDS + chaos_for)) victim i
  while ((SECONDS < end)); do
    sleep "$((1 + RANDOM % 2)).$((RANDOM % 10))"
    i=$((RANDOM % ${#live[@]}))
    victim=${live[$i]}
    echo "$victim" >>"$dir/killed"
    kill -KILL "${worker_pid[$victim]}" 2>/dev/null || true
    wait "${worker_pid[$victim]}" 2>/dev/null || true
    live=("${live[@]:0:$i}" "${live[@]:$((i + 1))}")
    start_worker
  done
}

chaos_pause() {
  local end=$((SECONDS + chaos_for)) tag=$1
  while ((SECONDS < end)); do
    until_running_on "$tag"
    pause_worker "$tag"
    sleep "$((2 * stale))"
    resume_worker "$tag"
    sleep 1
  done
}

# Starts the proxy ($1: both or answers) in front of the experiment's database; sets
# ns_url to the database through it, and proxy_pid.
start_proxy() {
  rm -f "$dir/proxy.port"
  node "$work/proxy.mjs" "$pg_dir/sock/.s.PGSQL.$pg_port" "$dir/proxy.port" "$1" >"$dir/proxy.out" 2>&1 &
  proxy_pid=$!
  # Not waited for with the workers (drain): it is ended after them.
  disown "$proxy_pid"
  pids+=("$proxy_pid")
  for _ in $(seq 100); do [[ -s $dir/proxy.port ]] && break; sleep 0.05; done
  local schema="chaos_${exp_name//-/_}"
  ns_url="postgres://postgres@127.0.0.1:$(cat "$dir/proxy.port")/leasehold?options[search_path]=$schema"
}

# Holds the traffic of worker $1 (behind the proxy) for twice the stale window while a
# command of it runs, then lets it through, over and over.
chaos_partition() {
  local end=$((SECONDS + chaos_for)) tag=$1
  while ((SECONDS < end)); do
    until_running_on "$tag"
    kill -USR1 "$proxy_pid"
    sleep "$((2 * stale))"
    kill -USR2 "$proxy_pid"
    sleep 1
  done
}

# The job number of a command of worker $1 that started and has not ended (the latest), if any.
running_job_of() {
  awk -v w="$1" '$1 == "S" && $4 == w { s[$3] = $2 } $1 == "E" { delete s[$3] } END { for (x in s) j = s[x]; if (j != "") print j }' "$log"
}
# A running command's job number of any worker but $1, if any.
running_job_not_of() {
  awk -v w="$1" '$1 == "S" && $4 != w { s[$3] = $2 } $1 == "E" { delete s[$3] } END { for (x in s) j = s[x]; if (j != "") print j }' "$log"
}

# Cancels job number $1 and queues it again, as an operator would; with $2 = twice, cancels
# it again while it waits and queues it again. A cancel that lands is noted (its job may
# rightly run again after finishing: the cancel fences its settle out).
cancel_and_retry() {
  local id k times=1
  [[ ${2:-} == twice ]] && times=2
  id=$(awk -v j="$1" '$1 == j { print $2 }' "$dir/ids")
  [[ -n $id ]] || return 0
  for ((k = 1; k <= times; k++)); do
    if lh cancel "$id" --reason chaos >/dev/null 2>>"$dir/steer.err"; then
      echo "$1" >>"$dir/cancelled"
      lh retry "$id" >/dev/null 2>>"$dir/steer.err" || say "retry of job $id failed: $(tail -1 "$dir/steer.err")"
    fi
    sleep "0.$((RANDOM % 5))"
  done
}

# While worker $1 is paused (it hears no cancel), cancels and retries a command of it twice,
# and one of another worker, over and over.
chaos_steer() {
  local end=$((SECONDS + chaos_for)) tag=$1 job
  while ((SECONDS < end)); do
    until_running_on "$tag"
    pause_worker "$tag"
    job=$(running_job_of "$tag")
    if [[ -n $job ]]; then cancel_and_retry "$job" twice; fi
    job=$(running_job_not_of "$tag")
    if [[ -n $job ]]; then cancel_and_retry "$job"; fi
    sleep "$((2 * stale))"
    resume_worker "$tag"
    sleep 1
  done
}

repeat_outage() { # $1: what (lock|stop), $2: seconds each, $3: how many
  local k
  for ((k = 1; k <= $3; k++)); do
    sleep 1
    if [[ $1 == lock ]]; then lock_table "$2"; else stop_database "$2"; fi
  done
}

# ---------------------------------------------------------------- running them
run_experiment() {
  local name=$1 store=$2
  local workers=3 ns=0 takeover_ok=1
  slots=2 slow_exit=0 trickle_ms=0
  dur_min=500 dur_spread=1500 # commands of 0.5 to 2 s
  case $name in
    kill9) workers=4 ;;
    # Commands that outlast the pause's stale window: the paused worker's go on running.
    pause) ns=1; slow_exit=4; dur_min=$((1000 * stale)) dur_spread=$((2000 * stale)) ;;
    lock) slow_exit=4 ;;
    lock-short) takeover_ok=0 ;;
    lock-single | stop-single) workers=1; takeover_ok=0 ;;
    # As pause: commands outlast the hold, and the held worker's peers may take over.
    partition | deaf) ns=1; slow_exit=4; dur_min=$((1000 * stale)) dur_spread=$((2000 * stale)) ;;
    steer) ns=1; slow_exit=4; dur_min=$((1000 * stale)) dur_spread=$((2000 * stale)) ;;
  esac
  if ((ns)) && ! unshare --pid --fork --mount-proc true 2>/dev/null; then
    echo "SKIP $store $name: unshare --pid --fork --mount-proc is not allowed here (it needs root)"
    return
  fi
  if [[ $name == partition || $name == deaf ]] && ! command -v node >/dev/null; then
    echo "SKIP $store $name: no node (Node.js) for the TCP proxy"
    return
  fi
  # Enough work to keep every slot busy through the chaos.
  jobs_n=$((workers * slots * (chaos_for + 4) * 1000 / (dur_min + dur_spread / 2)))
  if [[ $name == steer ]]; then
    # Half as much, due one after another: slots stay free, so a job queued again is claimed
    # at once when it is due (behind a backlog, any due time would look safe).
    trickle_ms=$((2 * (dur_min + dur_spread / 2) / (workers * slots)))
    jobs_n=$(((chaos_for + 4) * 1000 / trickle_ms))
  fi
  setup "$name" "$store"
  local w paused_tag=""
  ns_url=""
  case $name in
    partition) start_proxy both ;;
    deaf) start_proxy answers ;;
  esac
  for ((w = 1; w <= workers - ns; w++)); do start_worker; done
  if ((ns)); then start_worker ns; paused_tag=$started; fi
  sleep 1
  case $name in
    kill9) chaos_kill9 ;;
    pause) chaos_pause "$paused_tag" ;;
    lock | lock-single) repeat_outage lock "$((2 * stale))" "$((quick ? 1 : 2))" ;;
    lock-short) repeat_outage lock "$(awk -v s="$stale" 'BEGIN { print s / 2 }')" 3 ;;
    stop | stop-single) repeat_outage stop "$((2 * stale))" "$((quick ? 1 : 2))" ;;
    partition | deaf) chaos_partition "$paused_tag" ;;
    steer) chaos_steer "$paused_tag" ;;
  esac
  drain
  if [[ -n $ns_url ]]; then kill "$proxy_pid" 2>/dev/null || true; fi
  report "$takeover_ok"
}

header=$(printf "%-24s %5s %6s %5s %8s %8s %7s %10s %9s %10s %6s" experiment jobs execs lost overlap "max ms" double "rerun k/p" "rerun tk" "rerun bad" took)
echo "stale window ${stale}s, ${chaos_for}s of chaos; binary $bin"
echo "$header"
for store in $stores; do
  if [[ $store == postgres ]]; then
    if [[ ! -x $pg_bin/initdb ]]; then
      echo "SKIP postgres: no PostgreSQL server binaries at $pg_bin"
      continue
    fi
    pg_url=$(LEASEHOLD_PG_DIR=$pg_dir LEASEHOLD_PG_PORT=$pg_port "$root/scripts/pg-cluster.sh" start 2>/dev/null \
      | sed -n "s/^export LEASEHOLD_TEST_PG_URL='\(.*\)'$/\1/p")
    [[ -n $pg_url ]] || { say "the PostgreSQL cluster did not start"; exit 2; }
  fi
  for e in "${experiments[@]}"; do
    IFS='|' read -r name on _ <<<"$e"
    [[ " $on " == *" $store "* ]] || continue
    [[ $skip == *",$name,"* ]] && continue
    if [[ -n $only ]]; then [[ $only == *",$name,"* ]] || continue
    elif ((quick)); then [[ $quick_set == *",$store:$name,"* ]] || continue
    fi
    run_experiment "$name" "$store"
  done
done

echo
echo "$header"
printf '%s\n' "${rows[@]}"
if ((failed)); then
  echo "chaos: FAILED: lost, overlapping, doubly settled or wrongly re-run work above"
  exit 1
fi
echo "chaos: every experiment kept the promise"
