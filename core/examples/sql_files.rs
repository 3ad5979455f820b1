//! Writes the queue's statements of one dialect whole, as the catalogue holds
//! them (shared fragments spliced in, parameters numbered), one `NAME.sql`
//! per statement, and its migrations as `migrations/NNNN_name.sql`:
//!
//! ```text
//! cargo run -p leasehold-core --example sql_files -- postgres DIR
//! ```
//!
//! For reading a statement whole, and for the npm package's build, which
//! turns the folder into its statement module (`scripts/pkg-sql.mjs`).
//! Exits 2 with a usage line on a wrong argument.

use std::path::PathBuf;

use leasehold_core::queue::migrations::QUEUE;
use leasehold_core::queue::statements::{Dialect, postgres, sqlite};

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dialect, statements) = match args.first().map(String::as_str) {
        Some("postgres") => (Dialect::Postgres, postgres::ALL),
        Some("sqlite") => (Dialect::Sqlite, sqlite::ALL),
        _ => usage(),
    };
    let Some(dir) = args.get(1).map(PathBuf::from).filter(|_| args.len() == 2) else { usage() };
    std::fs::create_dir_all(dir.join("migrations"))?;
    for statement in statements {
        std::fs::write(dir.join(format!("{}.sql", statement.name)), statement.text)?;
    }
    for migration in QUEUE {
        let text = if dialect == Dialect::Postgres { migration.postgres } else { migration.sqlite };
        std::fs::write(dir.join("migrations").join(format!("{}.sql", migration.name)), text)?;
    }
    Ok(())
}

fn usage() -> ! {
    eprintln!("usage: sql_files postgres|sqlite DIR (writes DIR/NAME.sql and DIR/migrations/)");
    std::process::exit(2);
}
