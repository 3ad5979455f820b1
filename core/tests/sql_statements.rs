//! The statement catalogue against the `.sql` files it includes: every
//! file is in it under its own name and text, and each header names the
//! parameters the catalogue lists, in placeholder order. (The build itself
//! refuses a header whose parameters are not the ones its SQL uses.)

use std::collections::BTreeSet;
use std::path::PathBuf;

use leasehold_core::queue::statements::{Dialect, Statement, postgres, sqlite};

const DIALECTS: [Dialect; 2] = [Dialect::Postgres, Dialect::Sqlite];

fn folder(dialect: Dialect) -> PathBuf {
    let name = match dialect {
        Dialect::Postgres => "postgres",
        Dialect::Sqlite => "sqlite",
    };
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sql").join(name)
}

/// Every statement of `dialect`, as the build generated them.
fn catalogue(dialect: Dialect) -> &'static [Statement] {
    match dialect {
        Dialect::Postgres => postgres::ALL,
        Dialect::Sqlite => sqlite::ALL,
    }
}

fn marker(dialect: Dialect) -> char {
    match dialect {
        Dialect::Postgres => '$',
        Dialect::Sqlite => '?',
    }
}

/// `(number, name)` of each `-- $N = name: …` header line.
fn header_params(statement: &Statement) -> Vec<(usize, String)> {
    let prefix = format!("-- {}", marker(statement.dialect));
    statement
        .text
        .lines()
        .filter_map(|line| line.strip_prefix(prefix.as_str()))
        .filter_map(|rest| {
            let (number, rest) = rest.split_once(" = ")?;
            let (name, _) = rest.split_once(':')?;
            Some((number.parse().ok()?, name.to_owned()))
        })
        .collect()
}

/// `text` with each `\include fragments/NAME.sql` line replaced by the
/// fragment (the dialect's own, else the one `sql/fragments/` holds for
/// both) and what follows the file name, its `${name}` parameters still by
/// name: the catalogue's text, once those are numbered.
fn spliced(dialect: Dialect, text: &str) -> String {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        match line.trim_end().strip_prefix("\\include ") {
            Some(rest) => {
                let (file, after) = rest.split_at(rest.find(".sql").expect("an include names a .sql file") + 4);
                let own = folder(dialect).join(file);
                let found = if own.exists() { own } else { folder(dialect).join("..").join(file) };
                let fragment = std::fs::read_to_string(found).expect("the included fragment");
                out.push_str(fragment.trim_end());
                out.push_str(after);
                out.push('\n');
            }
            None => out.push_str(line),
        }
    }
    out
}

/// The statement whole as the build should make it from file `text`: spliced,
/// each `${name}` numbered by the header.
fn whole(dialect: Dialect, text: &str) -> String {
    let mut out = spliced(dialect, text);
    let mark = marker(dialect);
    let header: Vec<String> = text
        .lines()
        .take_while(|l| l.starts_with("--"))
        .filter_map(|l| l.strip_prefix(&format!("-- {mark}"))?.split_once(" = ")?.1.split_once(':').map(|(n, _)| n.to_owned()))
        .collect();
    for (i, name) in header.iter().enumerate() {
        out = out.replace(&format!("{mark}{{{name}}}"), &format!("{mark}{}", i + 1));
    }
    out
}

#[test]
fn a_fragment_is_spliced_in_whole_with_its_parameters_numbered_by_the_statement() {
    let complete = postgres::ALL.iter().find(|s| s.name == "complete").expect("complete.sql");
    let claim = postgres::ALL.iter().find(|s| s.name == "claim").expect("claim.sql");
    for statement in [complete, claim] {
        assert!(!statement.text.contains("\\include"), "{}: no include left", statement.name);
        assert!(!statement.text.contains("${"), "{}: every fragment parameter numbered", statement.name);
        assert!(statement.text.contains("kept_results AS ("), "{}: the settle fragment is in", statement.name);
    }
    // One fragment, two numberings: the settle ids are complete's $1 and claim's $11.
    assert!(complete.text.contains("JOIN unnest($1::int8[], $2::int8[], $3::text[])"));
    assert!(claim.text.contains("JOIN unnest($11::int8[], $12::int8[], $13::text[])"));
}

#[test]
fn every_sql_file_is_in_the_catalogue_under_its_own_name_and_text() {
    for dialect in DIALECTS {
        let mut on_disk = BTreeSet::new();
        for entry in std::fs::read_dir(folder(dialect)).expect("the dialect's folder") {
            let path = entry.expect("a folder entry").path();
            if path.extension().is_some_and(|e| e == "sql") {
                let name = path.file_stem().unwrap().to_string_lossy().into_owned();
                let text = std::fs::read_to_string(&path).expect("readable");
                let statement = catalogue(dialect).iter().find(|s| s.name == name).unwrap_or_else(|| panic!("{name}.sql is not in the catalogue"));
                assert_eq!(statement.text, whole(dialect, &text), "{name}: the catalogue's text is the file's, fragments spliced in");
                assert_eq!(statement.dialect, dialect);
                on_disk.insert(name);
            }
        }
        let listed: BTreeSet<String> = catalogue(dialect).iter().map(|s| s.name.to_owned()).collect();
        assert_eq!(listed, on_disk, "{dialect:?}: the catalogue lists exactly the files");
        assert_eq!(listed.len(), catalogue(dialect).len(), "{dialect:?}: no name twice");
    }
}

#[test]
fn each_header_names_the_parameters_the_statement_binds_in_order() {
    for dialect in DIALECTS {
        for statement in catalogue(dialect) {
            let header = header_params(statement);
            let numbers: Vec<usize> = header.iter().map(|(n, _)| *n).collect();
            let names: Vec<&str> = header.iter().map(|(_, name)| name.as_str()).collect();
            assert_eq!(numbers, (1..=header.len()).collect::<Vec<_>>(), "{}: numbered 1, 2, … in order", statement.name);
            assert_eq!(names, statement.params, "{}: the header's names are the catalogue's", statement.name);
        }
    }
}

#[test]
fn each_file_opens_with_its_name_and_what_it_does() {
    for dialect in DIALECTS {
        for statement in catalogue(dialect) {
            let first = statement.text.lines().next().unwrap_or("");
            assert!(first.starts_with(&format!("-- {}: ", statement.name)), "{}: opens with `-- {}: …`", statement.name, statement.name);
            assert!(!statement.text.trim_end().ends_with(';'), "{}: one statement, no trailing `;`", statement.name);
        }
    }
}

#[test]
fn every_migration_file_is_listed_in_number_order_for_both_dialects() {
    use leasehold_core::queue::migrations::QUEUE;
    for dialect in DIALECTS {
        let mut on_disk: Vec<String> = std::fs::read_dir(folder(dialect).join("migrations"))
            .expect("the migrations folder")
            .map(|e| e.expect("an entry").path().file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let listed: Vec<&str> = QUEUE.iter().map(|m| m.name).collect();
        assert_eq!(listed, on_disk, "{dialect:?}: one file per migration");
        for (i, migration) in QUEUE.iter().enumerate() {
            assert_eq!(migration.number, i as i64 + 1, "{}: numbered in order", migration.name);
            assert!(migration.name.starts_with(&format!("{:04}_", migration.number)), "{}: named by its number", migration.name);
            let text = match dialect {
                Dialect::Postgres => migration.postgres,
                Dialect::Sqlite => migration.sqlite,
            };
            let file = folder(dialect).join("migrations").join(format!("{}.sql", migration.name));
            assert_eq!(text, std::fs::read_to_string(file).expect("readable"), "{}: the file's text", migration.name);
        }
    }
}
