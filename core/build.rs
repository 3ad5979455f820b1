//! Two jobs: the queue's SQL catalogue, and a guard on the `mutations`
//! feature.
//!
//! **The SQL catalogue.** Every `.sql` file of `sql/<dialect>/` is one
//! statement of [`queue::statements`](src/queue/statements/mod.rs), and every
//! file of `sql/<dialect>/migrations/` one migration of
//! [`queue::migrations`](src/queue/migrations.rs). This script writes the Rust
//! that names them (`$OUT_DIR/<dialect>_statements.rs`,
//! `$OUT_DIR/migrations.rs`), taking each statement's parameter names from
//! its header (`-- $1 = name: …`, `-- ?1 = name: …` for SQLite), so the
//! names live in one place, and fails the build, naming the file, when a
//! header does not open with the statement's name, numbers its parameters
//! out of order, or names other parameters than the SQL uses.
//!
//! **The `mutations` feature** compiles in deliberately broken lease
//! supervision and lease watches for the simulator's mutation check. Cargo lets any crate in a
//! dependency graph turn a feature on, so the feature alone is no guard: this
//! script refuses it unless `LEASEHOLD_CORE_MUTATIONS=allow` is in the
//! build's environment, which this repository's `.cargo/config.toml` sets for
//! its own simulator and tests and which no dependent crate gets by accident.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    guard_mutations();
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    println!("cargo:rerun-if-changed=sql");
    let mut migrations = Vec::new();
    for (dialect, variant, mark) in [("postgres", "Postgres", '$'), ("sqlite", "Sqlite", '?')] {
        let folder = root.join("sql").join(dialect);
        println!("cargo:rerun-if-changed=sql/{dialect}");
        println!("cargo:rerun-if-changed=sql/{dialect}/migrations");
        println!("cargo:rerun-if-changed=sql/{dialect}/fragments");
        let whole = out.join("sql").join(dialect);
        std::fs::create_dir_all(&whole).expect("OUT_DIR is writable");
        let code = catalogue(&folder, &whole, variant, mark).unwrap_or_else(|e| fail(&e));
        std::fs::write(out.join(format!("{dialect}_statements.rs")), code).expect("OUT_DIR is writable");
        migrations.push(sql_files(&folder.join("migrations")));
    }
    if migrations[0].iter().map(|p| stem(p)).ne(migrations[1].iter().map(|p| stem(p))) {
        fail("sql/postgres/migrations and sql/sqlite/migrations must hold the same file names");
    }
    let code = migration_list(&migrations[0], &migrations[1]).unwrap_or_else(|e| fail(&e));
    std::fs::write(out.join("migrations.rs"), code).expect("OUT_DIR is writable");
}

fn guard_mutations() {
    println!("cargo:rerun-if-env-changed=LEASEHOLD_CORE_MUTATIONS");
    let wanted = std::env::var_os("CARGO_FEATURE_MUTATIONS").is_some();
    let allowed = std::env::var("LEASEHOLD_CORE_MUTATIONS").is_ok_and(|v| v == "allow");
    if wanted && !allowed {
        // `cargo::error` fails the build with this message alone (no backtrace).
        println!(
            "cargo::error=the `mutations` feature compiles in deliberately broken lease \
             supervision for leasehold's own simulator, and something in this build turned it \
             on. Remove `features = [\"mutations\"]` from the dependency that asks for it; \
             leasehold's repository allows it with LEASEHOLD_CORE_MUTATIONS=allow."
        );
    }
}

fn fail(message: &str) -> ! {
    println!("cargo::error={message}");
    std::process::exit(1);
}

/// The `.sql` files directly in `folder`, by name.
fn sql_files(folder: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
        .unwrap_or_else(|e| fail(&format!("{}: {e}", folder.display())))
        .map(|entry| entry.expect("a readable folder entry").path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|e| e == "sql"))
        .collect();
    files.sort();
    files
}

fn stem(path: &Path) -> String {
    path.file_stem().expect("a file name").to_string_lossy().into_owned()
}

/// The Rust naming each statement of `folder`: a constant per file (its
/// header as its doc) and `ALL`; each statement whole is written to
/// `whole/NAME.sql`, the file the constant includes.
fn catalogue(folder: &Path, whole: &Path, variant: &str, mark: char) -> Result<String, String> {
    let mut code = String::new();
    let mut names = Vec::new();
    for path in sql_files(folder) {
        let name = stem(&path);
        let source = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let shown = format!("sql/{}/{name}.sql", folder.file_name().unwrap().to_string_lossy());
        let params = header_params(&source, mark).map_err(|e| format!("{shown}: {e}"))?;
        let text = assemble(folder, &source, &params, mark).map_err(|e| format!("{shown}: {e}"))?;
        let path = whole.join(format!("{name}.sql"));
        std::fs::write(&path, &text).expect("OUT_DIR is writable");
        let opening = format!("-- {name}: ");
        if !text.starts_with(&opening) {
            return Err(format!("{shown}: the header must open with `{opening}` and what the statement does"));
        }
        let used = placeholders(&text, mark);
        if used != (1..=params.len()).collect::<BTreeSet<_>>() {
            return Err(format!(
                "{shown}: the header names {} parameter(s), the SQL uses {used:?}",
                params.len()
            ));
        }
        let doc: String = text
            .lines()
            .take_while(|line| line.starts_with("--"))
            .map(|line| line.trim_start_matches("--").strip_prefix(' ').unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n")
            // Markdown: the header's `'<schema>/<queue>'` would be read as
            // HTML tags, and rustdoc would show nothing of them.
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        let doc = format!(
            "`{name}.sql`: {}\n\n```sql\n{}\n```",
            doc.strip_prefix(&format!("{name}: ")).unwrap_or(&doc),
            body(&text)
        );
        let constant = name.to_uppercase();
        writeln!(code, "#[doc = {doc:?}]").unwrap();
        writeln!(
            code,
            "pub const {constant}: Statement = Statement {{ name: {name:?}, dialect: Dialect::{variant}, \
             text: include_str!({:?}), params: &{params:?} }};\n",
            path.display().to_string()
        )
        .unwrap();
        names.push(constant);
    }
    writeln!(code, "/// Every statement of this dialect, by file name.").unwrap();
    writeln!(code, "pub const ALL: &[Statement] = &[{}];", names.join(", ")).unwrap();
    Ok(code)
}

/// `source` whole: each `\include fragments/NAME.sql` line replaced by that
/// file of `folder`, or where `folder` has none, of the `sql` folder above it
/// (`sql/fragments/`: a part both dialects share word for word), and what
/// follows the file name on the line; then each `{mark}{name}` by
/// `{mark}N`, N the number `params` (the header's names) gives `name`.
fn assemble(folder: &Path, source: &str, params: &[String], mark: char) -> Result<String, String> {
    let mut spliced = String::with_capacity(source.len());
    for line in source.split_inclusive('\n') {
        let Some(rest) = line.trim_end().strip_prefix("\\include ") else {
            spliced.push_str(line);
            continue;
        };
        let Some(end) = rest.find(".sql") else {
            return Err(format!("malformed include {:?} (want `\\include fragments/NAME.sql`)", line.trim_end()));
        };
        let (file, after) = rest.split_at(end + ".sql".len());
        let own = folder.join(file);
        let shared = folder.parent().map_or_else(|| own.clone(), |sql| sql.join(file));
        let found = if own.exists() { own } else { shared };
        let fragment = std::fs::read_to_string(&found).map_err(|e| format!("\\include {file}: {e}"))?;
        if fragment.lines().any(|l| l.starts_with("\\include ")) {
            return Err(format!("{file}: a fragment includes no other fragment"));
        }
        spliced.push_str(fragment.trim_end());
        spliced.push_str(after);
        spliced.push('\n');
    }
    let open = format!("{mark}{{");
    let mut text = String::with_capacity(spliced.len());
    let mut rest = spliced.as_str();
    while let Some(at) = rest.find(&open) {
        text.push_str(&rest[..at]);
        let after = &rest[at + open.len()..];
        let Some((name, _)) = after.split_once('}') else {
            return Err(format!("`{open}` without its closing `}}`"));
        };
        let Some(number) = params.iter().position(|p| p == name) else {
            return Err(format!("`{open}{name}}}` names no parameter of the header"));
        };
        write!(text, "{mark}{}", number + 1).unwrap();
        rest = &after[name.len() + 1..];
    }
    text.push_str(rest);
    Ok(text)
}

/// The SQL below the header.
fn body(text: &str) -> &str {
    let header: usize = text.lines().take_while(|l| l.starts_with("--")).map(|l| l.len() + 1).sum();
    text.get(header..).unwrap_or("").trim_end()
}

/// The names of the header's `-- $N = name: …` lines, checked to be
/// numbered 1, 2, … in order.
fn header_params(text: &str, mark: char) -> Result<Vec<String>, String> {
    let prefix = format!("-- {mark}");
    let mut params = Vec::new();
    for line in text.lines().take_while(|l| l.starts_with("--")) {
        let Some(rest) = line.strip_prefix(prefix.as_str()) else { continue };
        let Some((number, rest)) = rest.split_once(" = ") else { continue };
        let (Ok(number), Some((name, _))) = (number.parse::<usize>(), rest.split_once(':')) else {
            return Err(format!("malformed parameter line {line:?} (want `{prefix}N = name: meaning`)"));
        };
        if number != params.len() + 1 {
            return Err(format!("parameter {mark}{number} is out of order (expected {mark}{})", params.len() + 1));
        }
        params.push(name.to_owned());
    }
    Ok(params)
}

/// The placeholder numbers the SQL uses, comments left out.
fn placeholders(text: &str, mark: char) -> BTreeSet<usize> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("--").next().unwrap_or("");
        for (i, _) in code.match_indices(mark) {
            let digits: String = code[i + 1..].chars().take_while(char::is_ascii_digit).collect();
            if let Ok(n) = digits.parse() {
                found.insert(n);
            }
        }
    }
    found
}

/// The Rust listing the migrations (`NNNN_name.sql` in both dialects).
fn migration_list(postgres: &[PathBuf], sqlite: &[PathBuf]) -> Result<String, String> {
    let mut code = String::from("&[\n");
    for (i, (pg, lite)) in postgres.iter().zip(sqlite).enumerate() {
        let name = stem(pg);
        let number: i64 = name
            .split_once('_')
            .and_then(|(n, _)| n.parse().ok())
            .ok_or_else(|| format!("migration {name}: name it NNNN_what.sql"))?;
        if number != i as i64 + 1 {
            return Err(format!("migration {name}: numbers must run 1, 2, … without gaps (expected {})", i + 1));
        }
        writeln!(
            code,
            "    Migration {{ number: {number}, name: {name:?}, sqlite: include_str!({:?}), postgres: include_str!({:?}) }},",
            lite.display().to_string(),
            pg.display().to_string()
        )
        .unwrap();
    }
    code.push(']');
    Ok(code)
}
