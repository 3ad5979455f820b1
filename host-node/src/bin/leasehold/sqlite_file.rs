//! What a `sqlite://PATH` names, checked before the store opens it: the
//! store would create and migrate whatever it finds, so a folder, a missing
//! folder or another application's database would otherwise end in a
//! driver's error code or, worse, in queue tables added to that database.

use crate::fail::CliError;
use sqlx::Connection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use std::io::Read;
use std::path::Path;

/// The first 16 bytes of every SQLite database file.
const HEADER: &[u8; 16] = b"SQLite format 3\0";
/// Tables of another application named in the refusal, at most.
const NAMED_TABLES: usize = 5;

/// Refuses `url` when it names a SQLite path that cannot be a queue: a
/// folder, a file in a folder that does not exist, a file that is not a
/// SQLite database, or a SQLite database with tables and none of
/// leasehold's. Anything else (another backend, a missing file in an
/// existing folder, an empty file, a queue) passes, and so does a file this
/// check cannot read (the store's own error says why).
///
/// # Errors
/// One of the four refusals, naming the path (and the tables found); nothing
/// was opened for writing.
pub async fn check(url: &str) -> Result<(), CliError> {
    let Some(path) = crate::events::sqlite_file(url) else { return Ok(()) };
    if path.is_dir() {
        return Err(CliError::input(format!(
            "{} is a folder, not a database file: name a file in it (sqlite://{}/queue.db)",
            path.display(),
            path.display().to_string().trim_end_matches('/')
        )));
    }
    if !path.exists() {
        return match path.parent() {
            Some(folder) if !folder.as_os_str().is_empty() && !folder.is_dir() => Err(CliError::input(format!(
                "no folder {} for the database {}: leasehold creates the file, not its folder",
                folder.display(),
                path.display()
            ))),
            _ => Ok(()),
        };
    }
    let mut header = [0u8; 16];
    let read = std::fs::File::open(&path).and_then(|mut f| f.read(&mut header));
    match read {
        Ok(0) | Err(_) => return Ok(()),
        Ok(n) if n < HEADER.len() || &header != HEADER => {
            return Err(CliError::input(format!("{} is not a SQLite database file (nothing was changed)", path.display())));
        }
        Ok(_) => {}
    }
    // sqlite_* tables are SQLite's own (sqlite_sequence, sqlite_stat1).
    let tables: Vec<String> = tables(&path).await.unwrap_or_default().into_iter().filter(|t| !t.starts_with("sqlite_")).collect();
    if tables.is_empty() || tables.iter().any(|t| t.starts_with("leasehold_")) {
        return Ok(());
    }
    let mut named = tables.iter().take(NAMED_TABLES).cloned().collect::<Vec<_>>().join(", ");
    if tables.len() > NAMED_TABLES {
        named.push_str(", …");
    }
    Err(CliError::input(format!(
        "{} is not a leasehold queue: it is another SQLite database (tables: {named}); nothing was changed: \
         give a new file or a queue's",
        path.display()
    )))
}

/// The tables of the database at `path`, read over a read-only connection.
async fn tables(path: &Path) -> Result<Vec<String>, sqlx::Error> {
    let options = SqliteConnectOptions::new().filename(path).read_only(true);
    let mut conn = SqliteConnection::connect_with(&options).await?;
    let names = sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .fetch_all(&mut conn)
        .await;
    let _ = conn.close().await;
    names
}
