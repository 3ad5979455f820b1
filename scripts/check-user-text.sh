#!/usr/bin/env bash
# Fails when user-facing text points at words a user has never seen: the reference
# sources' file numbers ("seed 000"), their package names, the folder they sit in
# beside a clone, or issue numbers; or leans on the reimplemented TypeScript modules
# ("as in the reference implementation", "the reference runner's passes") instead of
# saying the behaviour itself. Such pointers belong in docs/provenance.md alone.
#
#   scripts/check-user-text.sh     prints each offending line; exit 1 if there is one
#
# User-facing text: every README, the package's type declarations (what editors show on
# hover), Cargo manifests (crates.io shows their descriptions), rustdoc (`///`, `//!`)
# in the published crates and the wasm host, which is also where `--help` comes from,
# and the command-line tool's other text (help constants, messages).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

words='[Ss]eed[- ]?[0-9]{3}|@flowdular|\.\./shared|[Ii]ssues? #?[0-9]+|\(#[0-9]+\)'
# Comparisons with the reimplemented modules: "the reference implementation('s)", "the
# reference runner", "the reference's", "reference passes/behaviour/pump/sources", and "as
# in / like / unlike / beyond / following the reference". Not "a reference to" (Rust's).
ref='[Rr]eference (implementations?|runners?|behaviou?r|passes|pump|run store|sources?|TypeScript)'
ref+="|[Rr]eference's\b|\b([Aa]s|[Ll]ike|[Uu]nlike|than|[Bb]eyond|[Ff]ollow(s|ing)?) (in )?the reference\b"
found=0
# Whole files.
files=$(git ls-files -co --exclude-standard -- '*README.md' 'pkg/src/*.d.ts' '*Cargo.toml' | grep -v '^docs/' || true)
if [[ -n $files ]] && grep -nE "$words" $files; then found=1; fi
decls=$(grep -E '\.d\.ts$|Cargo\.toml$' <<<"$files" || true)
if [[ -n $decls ]] && grep -nE "$ref" $decls; then found=1; fi
# Rustdoc lines only: plain comments may keep a pointer for maintainers.
if grep -rnE "^\s*(///|//!|#!?\[doc).*($words|$ref)" core/src host-node/src host-wasm/src; then found=1; fi
# The command-line tool's help constants and messages: every line but a plain comment.
if grep -rnE "$words|$ref" host-node/src/bin | grep -vE '^[^:]+:[0-9]+:\s*//([^/!]|$)'; then found=1; fi
# READMEs compare against the original in places (the npm package's differences, benchmark
# rows measuring it): allowed once the README says in plain words what it is, the TypeScript
# job runner leasehold reimplements, and links docs/provenance.md. "Reference
# implementation" itself (which of three?) is never allowed there.
for readme in $(grep 'README\.md$' <<<"$files" || true); do
  if grep -nE "[Rr]eference implementations?" "$readme" | sed "s|^|$readme:|"; then found=1; fi
  grep -qE "$ref" "$readme" || continue
  if ! { grep -q 'TypeScript job runner' "$readme" && grep -q 'reimplements' "$readme" && grep -q 'provenance\.md' "$readme"; }; then
    grep -nE "$ref" "$readme" | sed "s|^|$readme:|"
    echo "$readme: names the reference runner without saying what it is (the TypeScript job runner leasehold reimplements; docs/provenance.md)" >&2
    found=1
  fi
done
if ((found)); then
  echo "user-facing text above names a reference source, its folder or an issue, or compares with the reference: say the behaviour in plain words (provenance: docs/provenance.md)" >&2
  exit 1
fi
echo "user-facing text: no reference file numbers, package names, ../shared, issue numbers or comparisons with the reference"
