#!/usr/bin/env bash
# Builds the npm package `leasehold` (folder pkg/) from the crate leasehold-wasm.
#
#   scripts/build-pkg.sh
#
# Works offline once scripts/install-tools.sh has run (rust target wasm32-unknown-unknown,
# wasm-bindgen-cli at Cargo.lock's wasm-bindgen version, pkg/node_modules with binaryen).
# Output, all in pkg/dist/ (ignored by git), one folder so that each .wasm ships once and
# both glues find it beside themselves:
#   leasehold_bg.wasm        the runner and run leases (one copy, loaded by both glues below)
#   leasehold_trace_bg.wasm  the trace ring, a module of its own, loaded only for trace sinks
#   index.cjs, index.mjs     the Node.js entries (`require` and `import` share one instance;
#                            the .wasm is compiled synchronously at load)
#   browser.mjs              the browser entry: no top-level await; `await init()` loads the
#                            .wasm (from beside itself, or from the URL/bytes/module given)
#   auto.mjs                 `leasehold/auto`: browser.mjs after `await init()` (top-level await)
#   runner.js, lease.js, trace.js, timing.js   the JS glue (pkg/src, CommonJS)
#   runner.mjs, lease.mjs, trace.mjs, timing.mjs  the same glue as ES modules, for browsers
#   leasehold_node.cjs, leasehold_trace_node.cjs  wasm-bindgen --target nodejs (CommonJS)
#   leasehold_web.mjs, leasehold_trace_web.mjs    wasm-bindgen --target web (ES modules)
#   index.d.ts, index.d.mts  the types: CommonJS (no default export) and ES module views
#   indexeddb.mjs, .cjs, -node.mjs, .d.ts, .d.mts  `leasehold/indexeddb`, with its glue
#                            idb-*.js / idb-*.mjs (the job queue over IndexedDB)
#   postgres.cjs, .mjs, .d.ts, .d.mts  `leasehold/postgres` (Node.js only): the job queue over a
#                            node-postgres pool, with its glue queue*.js, postgres.js and
#                            postgres-sql.cjs, core's PostgreSQL statement catalogue (scripts/pkg-sql.mjs)
#   pglite.cjs, .mjs, .d.ts, .d.mts  `leasehold/pglite` (Node.js only): the same queue on PGlite
#   postgres-browser.mjs, pglite-browser.mjs, eventlog-browser.mjs  what a browser bundle
#                            gets for those three: calls that say they run in Node.js only
#                            (node-only.mjs)
#   eventlog.cjs, .mjs, .d.ts, .d.mts  `leasehold/eventlog` (Node.js only), with its glue
#                            eventlog*.js and its own modules, nodejs target only:
#                            leasehold_eventlog_bg.wasm (+ _node.cjs), leasehold_pump_bg.wasm
#   otel.js, otel.mjs, otel.d.ts, .d.mts  `leasehold/otel`: trace events as OpenTelemetry spans
# Each .wasm goes through `wasm-opt -O3`; the script prints its gzipped size and fails above
# the budget (60 KiB gzipped, per module). It also copies the licence texts into pkg/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

crate_file=leasehold_wasm # the crate's name as a file name
out_name=leasehold        # what the generated files are called in dist/
dist=pkg/dist
budget=$((60 * 1024))

want=$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/^version = "|"$/, ""); print; exit }' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{ print $2 }' || true)
if [[ $have != "$want" ]]; then
  echo "build-pkg: wasm-bindgen ${have:-missing}, Cargo.lock wants $want: run scripts/install-tools.sh" >&2
  exit 1
fi
wasm_opt=pkg/node_modules/.bin/wasm-opt
if [[ ! -x $wasm_opt ]]; then
  echo "build-pkg: $wasm_opt missing: run scripts/install-tools.sh (or npm install in pkg/)" >&2
  exit 1
fi

# strip = false here: rustc's `strip` also drops the `target_features` section that tells
# wasm-bindgen which features (reference types: externref) the module may use; wasm-opt
# strips names and debug info from the final module instead.
# opt-level = 3 (the profile says "s"): after wasm-opt the module is the same size either
# way (about 27 KiB gzipped), and the runner's hot path is faster.
# Wherever the target folder is (CARGO_TARGET_DIR, build.target-dir): cargo says.
target_dir=$(cargo metadata --format-version 1 --no-deps |
  node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).target_directory')
wasm=$target_dir/wasm32-unknown-unknown/wasm/$crate_file.wasm

rm -rf "$dist"
mkdir -p "$dist"
# Two modules from the one crate, by its features: the runner and run leases
# (leasehold_bg.wasm), and the trace ring (leasehold_trace_bg.wasm, issue 6), so that the
# serde code the trace ring needs to save and resume spans does not weigh on every user of
# the runner, and each module keeps within the budget.
module() { # features out-name [node-only]
  local tmp=$dist/.bindgen
  cargo build -p leasehold-wasm --target wasm32-unknown-unknown --profile wasm \
    --no-default-features --features "$1" \
    --config 'profile.wasm.strip=false' --config 'profile.wasm.opt-level=3'
  # The two glues differ; the .wasm they load is the same file, so it ships once. No
  # wasm-bindgen .d.ts: the package's own types (pkg/src/index.d.ts and its parts) are what users see.
  wasm-bindgen --target nodejs --no-typescript --out-dir "$tmp/node" --out-name "$2" "$wasm"
  if [[ ${3:-} == node-only ]]; then
    mv "$tmp/node/${2}_bg.wasm" "$dist/"
    mv "$tmp/node/$2.js" "$dist/${2}_node.cjs"
    rm -rf "$tmp"
    return
  fi
  wasm-bindgen --target web --no-typescript --out-dir "$tmp/web" --out-name "$2" "$wasm"
  cmp -s "$tmp/node/${2}_bg.wasm" "$tmp/web/${2}_bg.wasm" ||
    { echo "build-pkg: the nodejs and web builds of $2 gave different .wasm files" >&2; exit 1; }
  mv "$tmp/node/${2}_bg.wasm" "$dist/"
  # Both glues look for `${2}_bg.wasm` beside themselves (`__dirname`, `import.meta.url`).
  mv "$tmp/node/$2.js" "$dist/${2}_node.cjs"
  mv "$tmp/web/$2.js" "$dist/${2}_web.mjs"
  rm -rf "$tmp"
}
module runner "$out_name"
module trace "${out_name}_trace"
# The event log and its pump (`leasehold/eventlog`, Node.js only): a module each, loaded
# by their users (the pump's when the first EventPump is made).
module eventlog "${out_name}_eventlog" node-only
module pump "${out_name}_pump" node-only

cp pkg/src/index.cjs pkg/src/index.mjs pkg/src/browser.mjs pkg/src/auto.mjs "$dist/"
# Types, once per module kind: NAME.d.mts as written, NAME.d.ts (CommonJS) without the
# default export, since `require('leasehold')` is the namespace itself (an `export default`
# there would make TypeScript under node16 expect a `.default`).
# A module's types may be written in parts (pkg/src/PART.d.ts, joined in the order given,
# the module's own file last), so that no declaration file grows past a screenful of concerns.
types() { # name in pkg/src, without .d.ts; then the parts that come before it
  local name=$1 part
  shift
  for part in "$@" "$name"; do cat "pkg/src/$part.d.ts"; done >"$dist/$name.d.mts"
  awk '/^\/\/ <esm-only>/ { skip = 1; next } /^\/\/ <\/esm-only>/ { skip = 0; next } !skip' \
    "$dist/$name.d.mts" >"$dist/$name.d.ts"
}
types index job-runner job-trace run-lease
types eventlog
types otel
# `leasehold/postgres` and `leasehold/pglite` (Node.js only): the job queue over the Rust
# store's tables. Its statements are core/sql/postgres as one generated module, loaded only by
# these entries (no SQL text reaches a browser bundle); its types open with the queue API
# every store shares (pkg/src/queue.d.ts), so each entry's declarations stand alone.
# The statements whole, as core's catalogue holds them (shared fragments spliced in).
sql_dir=$(mktemp -d)
cargo run -q -p leasehold-core --example sql_files -- postgres "$sql_dir"
node scripts/pkg-sql.mjs "$sql_dir" "$dist/postgres-sql.cjs"
rm -r "$sql_dir"
cp pkg/src/queue*.js pkg/src/postgres.js pkg/src/pglite.js pkg/src/postgres.cjs pkg/src/postgres.mjs \
  pkg/src/pglite.cjs pkg/src/pglite.mjs pkg/src/node-only.mjs pkg/src/postgres-browser.mjs \
  pkg/src/pglite-browser.mjs "$dist/"
for entry in postgres pglite; do
  cat pkg/src/queue.d.ts "pkg/src/$entry.d.ts" >"$dist/$entry.d.mts"
  awk '/^\/\/ <esm-only>/ { skip = 1; next } /^\/\/ <\/esm-only>/ { skip = 0; next } !skip' \
    "$dist/$entry.d.mts" >"$dist/$entry.d.ts"
done
cp LICENSE-MIT LICENSE-APACHE pkg/
cp pkg/src/eventlog*.js pkg/src/eventlog.cjs pkg/src/eventlog.mjs pkg/src/eventlog-browser.mjs "$dist/"
# The glue files (CommonJS) go beside the entries, and for browsers each is wrapped as an ES
# module: the CommonJS source runs inside a function that receives a `module` object, and its
# exports are re-exported. Arguments: the file's name in pkg/src and its exports.
glue() {
  local name=${1%.js}
  cp "pkg/src/$1" "$dist/"
  {
    echo "// Generated by scripts/build-pkg.sh from $1: the same glue as an ES module."
    echo 'const module = { exports: {} };'
    echo '(function (module) {'
    cat "pkg/src/$1"
    echo '})(module);'
    echo "export const { $2 } = module.exports;"
  } >"$dist/$name.mjs"
}
glue timing.js 'settle, attempt, unrefTimer, clearTimer, createDeadlineTimer, checkedSignal, itemSignals' # shared by the two below
glue runner.js 'createApi, JobClaimLostError, JOB_CLAIM_LOST'
glue lease.js 'createLeaseApi, LeaseLostError, LEASE_LOST' # run leases
glue trace.js createTraceApi  # the trace sink
glue otel.js 'jobEventSpans, LEASE_LOST' # `leasehold/otel`: events as OpenTelemetry spans
# `leasehold/indexeddb`: the job queue over IndexedDB. Entries: indexeddb.mjs (browsers,
# over browser.mjs), indexeddb.cjs and indexeddb-node.mjs (Node.js, over index.cjs); its
# glue as for the runner. Its types open with the queue API every store shares
# (pkg/src/queue.d.ts), so each store's declarations stand alone.
glue idb-input.js 'kindOf, nearOption, checkKeys, checkName, checkInteger, checkIds, checkJson, jsonData, enqueueFields, queueNameRule, byteLength'
glue idb-open.js 'openQueueDatabase, QueueUnavailableError, SCHEMA_VERSION'
glue idb-store.js 'createJobStore, shownState, QueueError'
glue idb-queue.js createIndexedDbApi
cp pkg/src/indexeddb.mjs pkg/src/indexeddb.cjs pkg/src/indexeddb-node.mjs "$dist/"
cat pkg/src/queue.d.ts pkg/src/indexeddb.d.ts >"$dist/indexeddb.d.mts"
cp "$dist/indexeddb.d.mts" "$dist/indexeddb.d.ts"

status=0
for module in "$dist"/*.wasm; do
  # The features rustc enables by default for wasm32-unknown-unknown; wasm-opt must
  # accept them, and enabling no others keeps the output loadable where the input was.
  "$wasm_opt" -O3 --strip-debug --strip-producers --strip-target-features \
    --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue \
    "$module" -o "$module"
  size=$(wc -c <"$module")
  gz=$(gzip -9 -c "$module" | wc -c)
  printf 'build-pkg: %s: %d bytes, %d bytes gzipped (budget %d)\n' "$module" "$size" "$gz" "$budget"
  if ((gz > budget)); then
    echo "build-pkg: $module is over the size budget" >&2
    status=1
  fi
done
exit "$status"
