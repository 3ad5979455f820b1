#!/usr/bin/env bash
# Fails when docs point at code that is not there: a file cited in rustdoc, a module doc or
# the README (`tests/x.rs`, `src/...`, `examples/...`, `scripts/...`) that does not exist;
# a core runner method or action named in the README's run loop that the core does not
# have; a `cargo test --test NAME` with no tests/NAME.rs; a `--flag` of the leasehold command it does not take; an enum doc whose count
# ("three kinds") is not its number of variants; a `Type::item`, `function()` or JS
# option a README names that the code does not. Cheap, text only: it reads files, builds
# nothing (rustdoc's own link check covers [`links`] in doc comments).
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

# Options of the `leasehold` command: every `--flag` in a README line that runs it (up to a
# ` -- `, after which the words are the job's command) and in the doc comments of the
# libraries (which the CLI's --help and the rustdoc show) is a long option its clap
# definitions declare (`#[arg(long ...)]` above a field, or `long = "name"`).
cli_flags=$(find host-node/src/bin/leasehold -name '*.rs' | xargs awk '
  /#\[arg\(.*long *= *"/ { match($0, /long *= *"[^"]+"/); s = substr($0, RSTART, RLENGTH)
    sub(/long *= *"/, "", s); sub(/"$/, "", s); print "--" s; pending = 0; next }
  /#\[arg\(/ && /[(, ]long[,)]/ { pending = 1; next }
  pending && /^[[:space:]]*(pub(\([a-z]+\))? )?[a-z_][a-z0-9_]*:/ { f = $0
    sub(/^[[:space:]]*(pub(\([a-z]+\))? )?/, "", f); sub(/:.*/, "", f); gsub(/_/, "-", f); print "--" f; pending = 0 }')
cli_flags+=$'\n--help\n--version\n--features' # clap's own, and cargo's in the docs' build lines
while IFS=: read -r file line flag; do
  if ! grep -qxF -- "$flag" <<<"$cli_flags"; then
    echo "$file:$line: $flag is not an option of the leasehold command"; found=1
  fi
done < <(
  {
    git ls-files -- '*README.md' | xargs grep -nE '(^|[^a-z/_.-])leasehold [a-z]+' | sed 's/ -- .*//'
    git grep -nE '^\s*//[/!]' -- 'core/src/*.rs' 'host-node/src/*.rs' 'host-wasm/src/*.rs'
  } | awk '{
    loc = $0; sub(/:.*/, "", loc); rest = substr($0, length(loc) + 2); line = rest; sub(/:.*/, "", line)
    text = " " substr(rest, length(line) + 2)
    while (match(text, /[ `(]--[a-z][a-z0-9-]+/)) {
      print loc ":" line ":" substr(text, RSTART + 1, RLENGTH - 1); text = substr(text, RSTART + RLENGTH)
    }
  }' | sort -u
)

# Test targets named in `cargo test ... --test NAME` lines: a tests/NAME.rs of some crate.
while IFS=: read -r file line name; do
  if ! compgen -G "*/tests/$name.rs" >/dev/null; then
    echo "$file:$line: cargo test --test $name names no test file (*/tests/$name.rs)"; found=1
  fi
done < <(git grep -nE 'cargo test.* --test [a-z_0-9]+' -- '*.md' '*.rs' '*.sh' |
  sed -E 's/^([^:]+:[0-9]+):.*cargo test.* --test ([a-z_0-9]+).*/\1:\2/' | sort -u)

# Counts in enum docs: a doc that says "three kinds" (variants, cases) above a `pub enum`
# has that many variants.
while IFS=: read -r file line said counted; do
  echo "$file:$line: the doc says $said, the enum has $counted variants"; found=1
done < <(
  git ls-files -- 'core/src/*.rs' 'host-node/src/*.rs' 'host-wasm/src/*.rs' 'tests/src/*.rs' | xargs awk '
    BEGIN { split("two three four five six seven eight nine ten", w, " "); for (i in w) n[w[i]] = i + 1 }
    FNR == 1 { said = ""; inenum = 0 }
    /^[[:space:]]*\/\/\// { if (match(tolower($0), /(two|three|four|five|six|seven|eight|nine|ten) (kinds|variants|cases)/)) {
        said = substr(tolower($0), RSTART, RLENGTH); saidline = FNR }
      next }
    /^[[:space:]]*#\[/ { next }
    inenum && $0 ~ "^" indent "}" { split(said, parts, " "); if (n[parts[1]] != count) print FILENAME ":" saidline ":" said ":" count
      inenum = 0; said = ""; next }
    inenum { if ($0 ~ "^" indent "    [A-Z][A-Za-z0-9]*([ ({,]|$)") count++; next }
    said != "" && /^[[:space:]]*pub(\([a-z]+\))? enum / { match($0, /^[[:space:]]*/); indent = substr($0, 1, RLENGTH)
      inenum = 1; count = 0; next }
    { said = "" }'
)

# Names the READMEs cite: `Type::item` and `function()` in the Rust READMEs are identifiers
# of the crates; in the npm package's README, a `function(` or `...Ms` option is declared in
# its types (or defined in the README's own example code).
for readme in README.md core/README.md host-node/README.md host-wasm/README.md; do
  [[ -f $readme ]] || continue
  for name in $(grep -oE '`[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)+(\(\))?`|`[a-z_][a-z0-9_]*\(\)`' "$readme" | tr -d '`()' | sed 's/.*:://' | sort -u); do
    if ! git grep -qw -- "$name" -- core/src host-node/src host-wasm/src tests/src; then
      echo "$readme: \`$name\` is not in the code"; found=1
    fi
  done
done
for name in $( { grep -oE '`[a-z][a-zA-Z0-9.]*\(' pkg/README.md | tr -d '`(' | sed 's/.*\.//'; grep -oE '\b[a-z][a-zA-Z0-9]*Ms\b' pkg/README.md; } | sort -u); do
  if ! grep -qw -- "$name" pkg/src/*.d.ts && ! grep -qE "function $name\b" pkg/README.md; then
    echo "pkg/README.md: \`$name\` is not declared in pkg/src/*.d.ts"; found=1
  fi
done

# The crate README's feature table (crates.io shows it): one row per feature of the crate.
for name in $(awk '/^\[features\]/ { on = 1; next } /^\[/ { on = 0 } on && /^[a-z][a-z0-9_-]* *=/ && $1 != "default" { print $1 }' host-node/Cargo.toml); do
  if ! grep -qE "^\| \`$name\` \|" host-node/README.md; then
    echo "host-node/README.md: the feature table has no row for \`$name\` (host-node/Cargo.toml)"; found=1
  fi
done

if ((found)); then
  echo "docs above point at code that is not there: fix the pointer or the code" >&2
  exit 1
fi
echo "docs: every cited file exists; the README's run loop names the core runner's own methods and actions;"
echo "      every --flag cited is the leasehold command's; enum docs count their variants; README names exist"
