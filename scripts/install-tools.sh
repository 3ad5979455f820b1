#!/usr/bin/env bash
# Installs what scripts/test.sh and scripts/build-pkg.sh need on a fresh machine.
#
# Idempotent and quick when everything is present (each step checks first):
#   1. the Rust targets wasm32-unknown-unknown (the npm package, wasm tests) and
#      wasm32v1-none (proof that leasehold-core builds without std);
#   2. wasm-bindgen-cli (wasm-bindgen + wasm-bindgen-test-runner) at exactly the version of
#      the `wasm-bindgen` crate in Cargo.lock: the CLI refuses a module built by another
#      version, so the version is read from the lock file rather than written down twice;
#   3. Chromium and ChromeDriver from Debian (and a font, for pages that render text), for
#      the browser tests. Optional: where apt is not usable (not root, no network) this
#      warns and the browser tests are skipped;
#   4. the npm packages that pkg/package.json lists (binaryen for wasm-opt, playwright-core
#      for driving Chromium from the package's own tests);
#   5. the consumer checks' bundlers and linters (pkg/test/consumers; optional);
#   6. Node.js 22, 24 and 26 beside the machine's own, from the npm registry, so the npm
#      package's tests run on every Node.js line its users have (optional).
# A required step that fails (1, 2, 4) stops the script with a non-zero exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '[install] %s\n' "$*"; }

# --- 1. Rust targets -------------------------------------------------------------------
installed_targets=$(rustup target list --installed)
for target in wasm32-unknown-unknown wasm32v1-none; do
  if grep -qx "$target" <<<"$installed_targets"; then
    say "rust target $target: present"
  else
    say "rust target $target: adding"
    rustup target add "$target"
  fi
done

# --- 2. wasm-bindgen-cli, pinned to Cargo.lock -------------------------------------------
# The [[package]] entry is `name = "wasm-bindgen"` followed by its `version = "X"` line.
want=$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/^version = "|"$/, ""); print; exit }' Cargo.lock)
if [[ -z $want ]]; then
  say "Cargo.lock has no wasm-bindgen package: cannot pick a wasm-bindgen-cli version" >&2
  exit 1
fi
have=$(wasm-bindgen --version 2>/dev/null | awk '{ print $2 }' || true)
have_runner=$(wasm-bindgen-test-runner --version 2>/dev/null | awk '{ print $2 }' || true)
if [[ $have == "$want" && $have_runner == "$want" ]]; then
  say "wasm-bindgen-cli $want: present"
else
  say "wasm-bindgen-cli $want: installing (found '${have:-none}'; takes about two minutes)"
  # Without --locked: the CLI's own lock file can name a yanked transitive version.
  cargo install wasm-bindgen-cli --version "$want"
fi

# --- 3. Chromium + ChromeDriver (optional) -----------------------------------------------
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
  say "chromium + chromedriver: present"
elif [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
  say "chromium + chromedriver: installing from Debian"
  export DEBIAN_FRONTEND=noninteractive
  if apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium chromium-driver fonts-liberation >/dev/null; then
    say "chromium + chromedriver: installed ($(chromium --version 2>/dev/null || echo '?'))"
  else
    say "WARNING: apt-get could not install chromium/chromium-driver: browser tests will be skipped" >&2
  fi
else
  say "WARNING: chromium/chromedriver missing and apt-get unusable here (needs root): browser tests will be skipped" >&2
fi

# --- 4. npm packages of pkg/ -------------------------------------------------------------
if [[ -f pkg/package.json ]]; then
  wanted=$(node -e '
    const p = require("./pkg/package.json");
    console.log(Object.keys({ ...p.dependencies, ...p.devDependencies }).length);')
  stamp=pkg/node_modules/.package-lock.json # npm rewrites it on every install
  if [[ $wanted -eq 0 ]]; then
    say "pkg/: no npm packages listed"
  elif [[ -f $stamp && $stamp -nt pkg/package.json && ( ! -f pkg/package-lock.json || $stamp -nt pkg/package-lock.json ) ]]; then
    say "pkg/node_modules: up to date"
  elif [[ -f pkg/package-lock.json ]]; then
    say "pkg/: npm ci"
    (cd pkg && npm ci --no-audit --no-fund --loglevel=error)
  else
    say "pkg/: npm install (no package-lock.json yet)"
    (cd pkg && npm install --no-audit --no-fund --loglevel=error)
  fi
else
  say "pkg/package.json absent: no npm packages to install"
fi

# --- 5. the consumer checks' tools (pkg/test/consumers) -----------------------------------
# attw, publint, esbuild, Vite 5 and current, webpack 5: what scripts/test.sh uses to check
# the packed package as its users will. A package of their own, so that pkg/'s install
# stays small. Optional: if the install fails, those checks print SKIP lines.
consumers=pkg/test/consumers
if [[ -f $consumers/package-lock.json ]]; then
  stamp=$consumers/node_modules/.package-lock.json
  if [[ -f $stamp && $stamp -nt $consumers/package.json && $stamp -nt $consumers/package-lock.json ]]; then
    say "$consumers/node_modules: up to date"
  else
    say "$consumers/: npm ci (bundlers and linters for the consumer checks)"
    (cd "$consumers" && npm ci --no-audit --no-fund --loglevel=error) ||
      say "WARNING: npm ci in $consumers failed: the consumer checks will skip their tools" >&2
  fi
fi

# --- 6. other Node.js release lines (target/node-lines) ---------------------------------
# The npm registry carries Node.js's own release binaries as packages named
# node-<platform>-<arch> (what the `node` package installs), so they come from the registry
# npm already reaches. Pinned, so a run tests what the last one did; scripts/test.sh runs
# the package's tests with each one found here. Optional: a line that cannot be fetched
# is skipped there with one line saying so.
node_lines=(22.23.5 24.22.3 26.12.1)
lines_dir=target/node-lines
node_pkg="node-$(node -p 'process.platform')-$(node -p 'process.arch')"
for version in "${node_lines[@]}"; do
  if [[ -x $lines_dir/$version/bin/node ]]; then
    say "Node.js $version: present"
    continue
  fi
  say "Node.js $version: fetching $node_pkg@$version from the npm registry"
  scratch=$(mktemp -d)
  if tarball=$(cd "$scratch" && npm pack --silent "$node_pkg@$version" 2>/dev/null | tail -n 1) &&
    [[ -n $tarball ]] && tar xzf "$scratch/$tarball" -C "$scratch" &&
    "$scratch/package/bin/node" --version >/dev/null; then
    mkdir -p "$lines_dir/$version"
    rm -rf "$lines_dir/$version"
    mv "$scratch/package" "$lines_dir/$version"
  else
    say "WARNING: could not fetch $node_pkg@$version: the package's tests skip Node.js $version" >&2
  fi
  rm -rf "$scratch"
done
