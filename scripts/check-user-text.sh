#!/usr/bin/env bash
# Fails when user-facing text points at words a user has never seen: the reference
# sources' file numbers ("seed 000"), their package names, the folder they sit in
# beside a clone, or issue numbers. Such pointers belong in docs/provenance.md alone.
#
#   scripts/check-user-text.sh     prints each offending line; exit 1 if there is one
#
# User-facing text: every README, the package's type declarations (what editors show on
# hover), Cargo manifests (crates.io shows their descriptions), and rustdoc (`///`, `//!`)
# in the published crates and the wasm host, which is also where `--help` comes from.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

words='[Ss]eed[- ]?[0-9]{3}|@flowdular|\.\./shared|[Ii]ssues? #?[0-9]+|\(#[0-9]+\)'
found=0
# Whole files.
files=$(git ls-files -co --exclude-standard -- '*README.md' 'pkg/src/*.d.ts' '*Cargo.toml' | grep -v '^docs/' || true)
if [[ -n $files ]] && grep -nE "$words" $files; then found=1; fi
# Rustdoc lines only: plain comments may keep a pointer for maintainers.
if grep -rnE "^\s*(///|//!|#!?\[doc).*($words)" core/src host-node/src host-wasm/src; then found=1; fi
if ((found)); then
  echo "user-facing text above names a reference source, its folder or an issue: say it in plain words (provenance: docs/provenance.md)" >&2
  exit 1
fi
echo "user-facing text: no reference file numbers, package names, ../shared or issue numbers"
