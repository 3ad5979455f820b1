#!/usr/bin/env bash
# Builds the npm package `leasehold` (folder pkg/) from the crate leasehold-wasm.
#
# Works offline once scripts/install-tools.sh has run. Output, all ignored by git:
#   pkg/dist/node/  wasm-bindgen --target nodejs: CommonJS glue + .wasm, loaded synchronously;
#                   Node's `import` of a CommonJS file goes through the same module cache as
#                   `require`, so both share one instance.
#   pkg/dist/web/   wasm-bindgen --target web: an ES module that fetches the .wasm beside it
#                   (marked "type": "module" by its own package.json).
#   pkg/dist/*      the hand-written JS glue and types from pkg/src/, copied as they are,
#                   when that folder exists.
# Each .wasm goes through `wasm-opt -Os` when pkg/node_modules has binaryen, and the script
# prints the gzipped size of the result (issue 3's budget: 60 KiB gzipped).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

crate_file=leasehold_wasm # the crate's name as a file name
out_name=leasehold        # what the generated files are called in dist/
dist=pkg/dist

# strip = false here: rustc's `strip` also drops the `target_features` section that tells
# wasm-bindgen which features (reference types: externref) the module may use; wasm-opt
# strips names and debug info from the final module instead.
cargo build -p leasehold-wasm --target wasm32-unknown-unknown --profile wasm \
  --config 'profile.wasm.strip=false'
# Wherever the target folder is (CARGO_TARGET_DIR, build.target-dir): cargo says.
target_dir=$(cargo metadata --format-version 1 --no-deps |
  node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).target_directory')
wasm=$target_dir/wasm32-unknown-unknown/wasm/$crate_file.wasm

rm -rf "$dist"
mkdir -p "$dist"
wasm-bindgen --target nodejs --out-dir "$dist/node" --out-name "$out_name" "$wasm"
wasm-bindgen --target web --out-dir "$dist/web" --out-name "$out_name" "$wasm"
# The package itself is CommonJS; the web build's .js files are ES modules.
printf '{ "type": "module" }\n' >"$dist/web/package.json"

if [[ -d pkg/src ]]; then
  cp -R pkg/src/. "$dist/"
fi

wasm_opt=pkg/node_modules/.bin/wasm-opt
for module in "$dist"/node/*.wasm "$dist"/web/*.wasm; do
  if [[ -x $wasm_opt ]]; then
    # The features rustc enables by default for wasm32-unknown-unknown; wasm-opt must
    # accept them, and enabling no others keeps the output loadable where the input was.
    "$wasm_opt" -Os --strip-debug --strip-producers --strip-target-features \
      --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
      --enable-mutable-globals --enable-reference-types --enable-multivalue \
      "$module" -o "$module"
  fi
  printf 'build-pkg: %s: %d bytes, %d bytes gzipped%s\n' "$module" \
    "$(wc -c <"$module")" "$(gzip -9 -c "$module" | wc -c)" \
    "$([[ -x $wasm_opt ]] || echo ' (no wasm-opt: run scripts/install-tools.sh)')"
done
