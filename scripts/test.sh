#!/usr/bin/env bash
# Runs every test of leasehold: the README's test command, and what .ci/run calls.
#
#   scripts/test.sh               install what is missing (scripts/install-tools.sh), then test
#   scripts/test.sh --no-install  test with the tools already on this machine
#
# Sections run in order and the script stops at the first failure. A section whose subject
# is not in the tree yet (no wasm tests, no package tests, no simulator) or whose tool is
# missing (Chromium, PostgreSQL) prints one SKIP line saying why. The shared conformance
# suite runs only where ../shared exists (CI); a user's fresh clone passes without it.
# The last line counts the tests that the runners reported: `tests: N passed, N failed, N skipped`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

install=1
for arg in "$@"; do
  case $arg in
    --no-install) install=0 ;;
    -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

log=$(mktemp)   # what the test runners print, read back for the closing count
# A one-shot CI run gains nothing from incremental compilation, which doubles target/'s size.
if [[ -n ${CI:-} ]]; then export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}; fi
current="setup" # the section running now, named when the script fails
started=$SECONDS
ran=()
skipped=()
pg_stop=""      # commands that stop the throwaway PostgreSQL cluster, if one was started

section() {
  current=$1
  section_started=$SECONDS
  printf '\n===== %s =====\n' "$1"
}
section_passed() { ran+=("$current ($((SECONDS - section_started))s)"); }
skip() {
  printf 'SKIP %s: %s\n' "$1" "$2"
  skipped+=("$1")
}
# Runs a command, echoing it, with its output also appended to $log.
run() {
  printf '+ %s\n' "$*"
  "$@" 2>&1 | tee -a "$log"
}

# Sums the closing lines of cargo test and wasm-bindgen-test-runner
# (`test result: ok. N passed; N failed; N ignored; ...`) and of node --test
# (`# pass N` in the TAP reporter, `ℹ pass N` in the spec reporter).
count_tests() {
  awk '
    /^test result:/ {
      for (i = 1; i < NF; i++) {
        if ($(i + 1) ~ /^passed;?$/) p += $i
        if ($(i + 1) ~ /^failed;?$/) f += $i
        if ($(i + 1) ~ /^ignored;?$/) s += $i
      }
    }
    /^(# |ℹ )pass [0-9]+$/ { p += $NF }
    /^(# |ℹ )fail [0-9]+$/ { f += $NF }
    /^(# |ℹ )(skipped|todo) [0-9]+$/ { s += $NF }
    END { printf "%d %d %d\n", p, f, s }' "$log"
}

finish() {
  local rc=$?
  if [[ -n $pg_stop ]]; then
    eval "$pg_stop" || echo "warning: stopping the PostgreSQL cluster failed" >&2
  fi
  local passed failed skipped_tests
  read -r passed failed skipped_tests < <(count_tests)
  if ((rc != 0)); then
    # What a CI page shows is often only the end of the output: repeat the failing
    # section's last lines and the machine's room here, so the cause is in that end.
    echo
    echo "===== the last lines before the failure ====="
    tail -n 40 "$log" 2>/dev/null || true
    echo "--- room: $(df -h --output=avail "$root" 2>/dev/null | tail -n 1 | tr -d ' ') free on disk," \
      "$(awk '/MemAvailable/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo 2>/dev/null) memory available"
  fi
  rm -f "$log"
  echo
  echo "===== summary ($((SECONDS - started))s) ====="
  if ((${#ran[@]})); then printf 'ran: %s\n' "${ran[@]}"; fi
  if ((${#skipped[@]})); then printf 'skipped: %s\n' "${skipped[@]}"; fi
  if ((rc != 0)); then
    echo "FAILED in section '$current' (exit $rc)"
  fi
  echo "tests: $passed passed, $failed failed, $skipped_tests skipped"
  exit "$rc"
}
trap finish EXIT

# ---------------------------------------------------------------------------------------
if ((install)); then
  section "install tools"
  scripts/install-tools.sh
  section_passed
fi

# ---------------------------------------------------------------------------------------
section "user-facing text explains itself"
run scripts/check-user-text.sh
section_passed

# ---------------------------------------------------------------------------------------
section "docs point at code that is there"
run scripts/check-docs.sh
section_passed

# ---------------------------------------------------------------------------------------
section "PostgreSQL for the store tests"
if [[ -n ${LEASEHOLD_TEST_PG_URL:-} ]]; then
  echo "using LEASEHOLD_TEST_PG_URL from the environment"
  section_passed
elif [[ -x scripts/pg-cluster.sh && -x ${PG_BIN:-/usr/lib/postgresql/15/bin}/initdb ]]; then
  # scripts/pg-cluster.sh start prints the export line of a throwaway cluster
  # (private socket folder and port); it is stopped (and removed) on exit. The
  # folder is this run's own, so another run (or a benchmark) that starts and
  # stops the default cluster never pulls the server from under these tests.
  export LEASEHOLD_PG_DIR=${LEASEHOLD_PG_DIR:-$(mktemp -d /tmp/leasehold-pg-test.XXXXXX)}
  if exports=$(scripts/pg-cluster.sh start); then
    eval "$exports"
    pg_stop="scripts/pg-cluster.sh stop"
  fi
  echo "LEASEHOLD_TEST_PG_URL=${LEASEHOLD_TEST_PG_URL:-(unset: the cluster did not start; PostgreSQL tests will skip)}"
  section_passed
else
  skip "PostgreSQL" "no PostgreSQL server binaries (initdb) on this machine: the PostgreSQL tests skip themselves"
fi

# ---------------------------------------------------------------------------------------
# leasehold-tests (cross-crate tests, the simulator) runs in release below, once.
section "cargo test --workspace (debug)"
# The postgres feature is on so its tests compile (they skip without LEASEHOLD_TEST_PG_URL),
# cli so the command-line tool and its end-to-end tests build, otel so its spans are tested.
run cargo test --workspace --exclude leasehold-tests --features leasehold/postgres,leasehold/cli,leasehold/otel
section_passed

# ---------------------------------------------------------------------------------------
section "leasehold ui in headless Chromium (the dashboard's pages, live update, buttons, token)"
# The binary the workspace tests just built; playwright-core from pkg/node_modules.
if [[ ! -x /usr/bin/chromium ]]; then
  skip "dashboard in Chromium" "no Chromium at /usr/bin/chromium (scripts/install-tools.sh installs it as root)"
elif [[ ! -d pkg/node_modules/playwright-core ]]; then
  skip "dashboard in Chromium" "no playwright-core in pkg/node_modules (npm ci in pkg/)"
else
  run env LEASEHOLD_BIN="$root/target/debug/leasehold" node --test host-node/tests/ui_browser.test.mjs
  section_passed
fi

# ---------------------------------------------------------------------------------------
section "chaos: the command-line tool under kill -9, pauses and database outages (quick)"
# The binary the workspace tests just built (cli + postgres). scripts/chaos.sh starts a
# PostgreSQL cluster of its own and skips, with one line, what it cannot run here (no
# PostgreSQL server binaries; unshare without root).
run env LEASEHOLD_BIN="$root/target/debug/leasehold" scripts/chaos.sh --quick
section_passed

# ---------------------------------------------------------------------------------------
section "leasehold-core without std (wasm32v1-none)"
run cargo build -p leasehold-core --no-default-features --target wasm32v1-none
section_passed

# ---------------------------------------------------------------------------------------
section "crates: every feature combination of leasehold builds without warnings"
# `cargo check` replays the warnings of units it does not rebuild, so a warning is seen
# whether or not this run compiled the crate. Dependencies' warnings are not shown.
for features in "" sqlite postgres metrics "sqlite metrics" otel "sqlite otel" cli "sqlite postgres cli"; do
  printf '+ cargo check -p leasehold --no-default-features --features "%s"\n' "$features"
  out=$(cargo check -p leasehold --no-default-features --features "$features" --message-format short 2>&1) || {
    echo "$out"
    exit 1
  }
  if grep -E '(^|: )warning' <<<"$out"; then
    echo "features '$features': leasehold builds with warnings (above)" >&2
    exit 1
  fi
done
section_passed

section "crates: clippy finds nothing in the libraries and the command-line tool"
# The workspace's lints (Cargo.toml [workspace.lints]) and the binary's own (its ban on bare
# println!, whose lines would panic on a closed pipe) hold only if something runs them.
if cargo clippy --version >/dev/null 2>&1; then
  run cargo clippy --workspace --features leasehold/postgres,leasehold/cli,leasehold/otel -- -D warnings
  section_passed
else
  skip "clippy" "cargo clippy is not installed (rustup component add clippy)"
fi

section "crates: the command-line tool's tests ask for the cli feature"
# They run the built binary, which exists only with `--features cli`: without the
# [[test]] entry, `cargo test -p leasehold` would build them and fail at run time.
missing=0
for file in host-node/tests/cli_*.rs; do
  name=$(basename "$file" .rs)
  if ! awk -v n="name = \"$name\"" '$0 == n { getline; found = ($0 == "required-features = [\"cli\"]") } END { exit !found }' host-node/Cargo.toml; then
    echo "host-node/Cargo.toml has no [[test]] $name with required-features = [\"cli\"]" >&2
    missing=1
  fi
done
((missing == 0)) || exit 1
echo "every host-node/tests/cli_*.rs needs the cli feature"
section_passed

section "crates: rust-version matches the dependency tree"
run node scripts/rust-version.mjs --check
section_passed

section "crates: the test-only mutations of leasehold-core refuse a dependent crate"
# A crate outside this repository (so without its .cargo/config.toml) that turns the
# feature on must fail to build, saying why.
dependent=$(mktemp -d)
mkdir -p "$dependent/src"
printf '[package]\nname = "dependent"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\nleasehold-core = { path = "%s/core", features = ["mutations"] }\n' \
  "$root" >"$dependent/Cargo.toml"
echo 'fn main() {}' >"$dependent/src/main.rs"
echo "+ cargo check (a dependent crate asking for leasehold-core/mutations)"
if out=$(cd "$dependent" && env -u LEASEHOLD_CORE_MUTATIONS cargo check --offline --target-dir "$root/target/mutations-guard" 2>&1); then
  echo "a dependent crate built leasehold-core with its mutations on" >&2
  rm -rf "$dependent"
  exit 1
fi
rm -rf "$dependent"
grep -q 'deliberately broken lease' <<<"$out" || { echo "$out"; echo "it failed, but not for the guard's reason" >&2; exit 1; }
echo "refused: $(grep -m1 -o "the .mutations. feature compiles in deliberately broken lease supervision" <<<"$out")"
section_passed

section "crates: rustdoc builds without warnings"
# A broken intra-doc link is only a warning to rustdoc, so it reaches docs.rs unseen: the
# docs are built as docs.rs builds them (leasehold's [package.metadata.docs.rs] features)
# and with every library feature, each with warnings as errors.
for features in "leasehold/sqlite,leasehold/postgres,leasehold/metrics" "leasehold/postgres,leasehold/cli,leasehold/otel"; do
  run env RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p leasehold-core -p leasehold --features "$features"
done
section_passed

section "crates: cargo package in publish order (leasehold-core, then leasehold)"
# Packaged together, cargo verifies leasehold against the packaged leasehold-core
# through a local registry overlay, as crates.io will see them once core is published.
# Cargo takes a registry crate of the same version for unchanged: it reuses the overlay's
# unpacked leasehold-core ($CARGO_HOME/registry/src/-HASH/) and its compiled artifacts on the
# next run even when the tree has changed since. So the check builds in a target folder of
# its own, from which it first removes every leasehold-core (and that unpacked copy).
package_target=$root/target/package-check
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/leasehold-core-* \
  "$package_target"/debug/.fingerprint/leasehold-core-* "$package_target"/debug/build/leasehold-core-* \
  "$package_target"/debug/deps/libleasehold_core-* "$package_target"/debug/deps/leasehold_core-*
run cargo package -p leasehold-core -p leasehold --allow-dirty --target-dir "$package_target"
section_passed

# ---------------------------------------------------------------------------------------
section "leasehold-tests: cross-crate tests and simulator (release)"
run cargo test -p leasehold-tests --release
if [[ -f tests/src/bin/sim.rs || -f tests/src/bin/sim/main.rs ]]; then
  run cargo run -p leasehold-tests --release --bin sim
else
  echo "(no simulator binary tests/src/bin/sim.rs; simulator tests, if any, ran above)"
fi
section_passed

# ---------------------------------------------------------------------------------------
# wasm-bindgen tests of leasehold-wasm. .cargo/config.toml makes wasm-bindgen-test-runner
# the runner for wasm32-unknown-unknown: Node.js by default, a browser with
# WASM_BINDGEN_USE_BROWSER. Suites pinned to one side by wasm_bindgen_test_configure! run
# only in that pass (WASM_BINDGEN_TEST_ONLY_NODE / _ONLY_WEB skip the others).
has_wasm_tests=0
if compgen -G 'host-wasm/tests/*.rs' >/dev/null || grep -rqs 'wasm_bindgen_test' host-wasm/src; then
  has_wasm_tests=1
fi

section "leasehold-wasm tests in Node.js"
if ((has_wasm_tests)); then
  run env WASM_BINDGEN_TEST_ONLY_NODE=1 \
    cargo test -p leasehold-wasm --target wasm32-unknown-unknown
  section_passed
else
  skip "wasm tests (Node.js)" "host-wasm has no wasm_bindgen_test tests yet"
fi

section "simulator in wasm (Node.js): 100 seeds, the same golden traces as native"
run env WASM_BINDGEN_TEST_ONLY_NODE=1 \
  cargo test -p leasehold-tests --release --target wasm32-unknown-unknown --test sim_wasm
section_passed

section "leasehold-wasm tests in headless Chromium"
if ((!has_wasm_tests)); then
  skip "wasm tests (Chromium)" "host-wasm has no wasm_bindgen_test tests yet"
elif ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  skip "wasm tests (Chromium)" "chromium/chromedriver not installed (scripts/install-tools.sh installs them as root)"
else
  # The runner itself adds headless, no-sandbox (needed as root) and disable-dev-shm-usage
  # to Chrome's arguments; scripts/webdriver.json adds the flags that keep Chromium off the
  # network. The timeouts are raised because 2 busy cores start Chromium slowly.
  run env WASM_BINDGEN_USE_BROWSER=1 WASM_BINDGEN_TEST_ONLY_WEB=1 \
    CHROMEDRIVER="$(command -v chromedriver)" \
    WASM_BINDGEN_TEST_WEBDRIVER_JSON="$root/scripts/webdriver.json" \
    WASM_BINDGEN_TEST_DRIVER_TIMEOUT=30 WASM_BINDGEN_TEST_TIMEOUT=120 \
    cargo test -p leasehold-wasm --target wasm32-unknown-unknown
  section_passed
fi

# ---------------------------------------------------------------------------------------
section "npm package: build"
run scripts/build-pkg.sh
section_passed

section "npm package: its own tests"
if node -e 'process.exit(require("./pkg/package.json").scripts?.test ? 0 : 1)' 2>/dev/null; then
  (cd pkg && run npm test)
  section_passed
else
  skip "npm package tests" "pkg/package.json has no test script yet"
fi

section "npm package: its own tests on the other Node.js lines (22, 24, 26)"
# The Node.js binaries scripts/install-tools.sh fetched into target/node-lines, each first on
# PATH in turn (the tests start child processes with `node` and with process.execPath).
lines=()
for node_bin in target/node-lines/*/bin/node; do
  if [[ -x $node_bin ]]; then lines+=("$node_bin"); fi
done
if ((${#lines[@]} == 0)); then
  skip "npm package tests on other Node.js lines" "none in target/node-lines (scripts/install-tools.sh fetches them from the npm registry)"
else
  for node_bin in "${lines[@]}"; do
    echo "--- Node.js $("$node_bin" --version)"
    (cd pkg && run env PATH="$root/$(dirname "$node_bin"):$PATH" node --test --test-concurrency=1 test/*.test.mjs)
  done
  section_passed
fi

section "npm package: the IndexedDB queue in headless Chromium (tabs closed, reloaded, frozen mid-job)"
if [[ ! -x /usr/bin/chromium ]]; then
  skip "IndexedDB queue" "no Chromium at /usr/bin/chromium (scripts/install-tools.sh installs it as root)"
else
  (cd pkg && run node --test --test-concurrency=1 test/indexeddb/*.test.mjs)
  section_passed
fi

section "npm package: leasehold/postgres and the leasehold CLI on one queue, each killed with kill -9"
# Node.js workers of leasehold/postgres and `leasehold work` (the binary the workspace tests
# built with cli + postgres) drain one queue while each is killed with SIGKILL in turn:
# nothing lost, no overlapping executions, no double success. About 15 s.
if [[ -z ${LEASEHOLD_TEST_PG_URL:-} ]]; then
  skip "leasehold/postgres with the CLI" "no PostgreSQL cluster (LEASEHOLD_TEST_PG_URL unset)"
else
  (cd pkg && run env LEASEHOLD_BIN="$root/target/debug/leasehold" node --test --test-concurrency=1 test/postgres/*.test.mjs)
  section_passed
fi

section "npm package: as its users install it (pack, attw, publint, tsc, Node.js, bundlers in Chromium)"
# Packs the tarball, lints it, installs it into a scratch project, and runs it from strict
# TypeScript, Node.js programs and apps built with esbuild, Vite 5, current Vite and webpack 5.
# Each tool that is missing (pkg/test/consumers not installed, no Chromium) prints one SKIP line.
run node pkg/test/consumers/check.mjs
section_passed

# ---------------------------------------------------------------------------------------
section "shared conformance suite against the built package"
if [[ ! -f ../shared/conformance/run.sh ]]; then
  skip "conformance" "../shared is not beside this clone (it is in CI); the project's own tests above carry its checks"
elif [[ ! -d pkg/src ]] && ! grep -rqs 'createJobRunner' host-wasm/src; then
  skip "conformance" "the package does not export createJobRunner yet (no pkg/src/, none in host-wasm/src)"
else
  run bash ../shared/conformance/run.sh "$root/pkg"
  section_passed
fi
