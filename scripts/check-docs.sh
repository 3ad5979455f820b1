#!/usr/bin/env bash
# Fails when docs point at code that is not there: a file cited in rustdoc, a module doc or
# the README (`tests/x.rs`, `src/...`, `examples/...`, `scripts/...`) that does not exist,
# or a core runner method or action named in the README's run loop that the core does not
# have. Cheap, text only: it reads files, builds nothing.
#
#   scripts/check-docs.sh     prints each stale pointer; exit 1 if there is one
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

found=0
# Files cited in doc comments and READMEs, looked up from the root, the citing crate and
# the citing file's folder.
while IFS=: read -r file line ref; do
  ref=${ref#\`}
  dir=$(dirname "$file")
  crate=${file%%/*}
  ok=0
  for base in . "$crate" "$dir"; do
    if [[ -e $base/$ref ]]; then ok=1; break; fi
  done
  if ((!ok)); then echo "$file:$line: cites $ref, which does not exist"; found=1; fi
done < <(
  {
    grep -rnoE '^\s*(///|//!).*' --include='*.rs' core host-node host-wasm tests | grep -v '/target/' || true
    git ls-files -- '*README.md' | xargs grep -noE '.*' || true
  } | grep -oE '^[^:]+:[0-9]+:|`?([a-z][a-z-]*/)*(tests|src|examples|scripts)/[A-Za-z0-9_./-]+\.(rs|sh|mjs)' |
    awk '/^[^`].*:[0-9]+:$/ { loc = $0; next } { print loc $0 }' | sed 's/:`/:/' | sort -u
)

# The README's run loop: every `runner.NAME(` is a public method of the core runner, every
# `Action::NAME` one of its actions.
runner_src=$(cat core/src/runner/*.rs)
for name in $(grep -oE 'runner\.[a-z_]+\(' README.md | sed 's/runner\.//; s/($//' | sort -u); do
  if ! grep -qE "pub fn $name\b" <<<"$runner_src"; then
    echo "README.md: runner.$name( is not a method of leasehold_core::runner::Runner"; found=1
  fi
done
for name in $(grep -oE 'Action::[A-Za-z]+' README.md | sed 's/Action:://' | sort -u); do
  if ! grep -qE "^\s+$name( \{|\(|,)" <<<"$runner_src"; then
    echo "README.md: Action::$name is not a runner action"; found=1
  fi
done

if ((found)); then
  echo "docs above point at code that is not there: fix the pointer or the code" >&2
  exit 1
fi
echo "docs: every cited file exists; the README's run loop names the core runner's own methods and actions"
