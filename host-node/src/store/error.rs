//! What can go wrong talking to a store, each variant naming what was wrong.

use std::sync::Arc;

use leasehold_core::lease::StealError;

use super::JobId;

/// The error of every [`Store`](super::Store) operation.
///
/// Input errors (`Invalid*`, `UnknownJob`) are raised before anything is
/// written, so they lose no data. A lost fence is not an error: fenced writes
/// answer a [`FenceOutcome`](leasehold_core::lease::FenceOutcome) instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A queue name that is empty, too long, or has a character outside
    /// `A-Z a-z 0-9 _ - . :`.
    #[error("invalid queue name {name:?}: {reason}")]
    InvalidQueueName {
        /// The name as given.
        name: String,
        /// Which rule it broke.
        reason: &'static str,
    },
    /// A payload handed in as text that does not parse as JSON.
    #[error("payload is not JSON: {0}")]
    InvalidPayload(#[source] serde_json::Error),
    /// An enqueue or store option out of range (names the option and the rule).
    #[error("invalid option `{option}`: {reason}")]
    InvalidOption {
        /// The option's name.
        option: &'static str,
        /// What it must be.
        reason: String,
    },
    /// No job has this id: none was queued with it, or it was deleted once
    /// finished ([`Store::purge`](super::Store::purge), or a completion
    /// under [`OnSuccess::Delete`](super::OnSuccess::Delete)).
    #[error("unknown job id {0} (never queued, or deleted once finished: purged, or succeeded under delete-on-success)")]
    UnknownJob(JobId),
    /// A job in a state the steering action does not apply to (cancel:
    /// queued or running; retry: dead or cancelled). Nothing was changed.
    #[error("job {job} is {state}: {expected} (nothing was changed)")]
    WrongState {
        /// The job.
        job: JobId,
        /// The state it is in, as it shows (`queued`, `scheduled`, `retrying`,
        /// `running`, `succeeded`, `dead`, `cancelled`): a queued job not yet
        /// due is `scheduled`, one queued again after a failed attempt
        /// `retrying`.
        state: &'static str,
        /// Which states the action applies to, in words.
        expected: &'static str,
    },
    /// A queue with no job and no schedule (pause, resume, bulk cancel).
    #[error("unknown queue {0:?}: no job or schedule was ever queued on it")]
    UnknownQueue(String),
    /// No schedule has this name.
    #[error("unknown schedule {0:?}")]
    UnknownSchedule(String),
    /// A schedule of this name exists already (it was left as it was).
    #[error("a schedule named {0:?} exists already (remove it first to replace it)")]
    DuplicateSchedule(String),
    /// A store URL whose scheme is neither `sqlite:` nor `postgres:`/`postgresql:`,
    /// or a `sqlite:` URL that names no file (`sqlite://`: SQLite would open
    /// a temporary database, deleted on close; `sqlite::memory:` is one in
    /// memory).
    #[error("unsupported store URL {url:?}: expected sqlite://PATH (a file), sqlite::memory: or postgres://...")]
    UnsupportedUrl {
        /// The URL with any password removed.
        url: String,
    },
    /// A URL for a backend this build left out.
    #[error("store URL {url:?} needs the `{feature}` feature of leasehold, which this build lacks")]
    BackendNotEnabled {
        /// The URL with any password removed.
        url: String,
        /// The cargo feature to enable.
        feature: &'static str,
    },
    /// A SQLite file this process may not write, found when it could not be
    /// opened for writing: the file is read-only to it, or its `-wal` or
    /// `-shm` file is, or its folder is (SQLite writes those two beside the
    /// file, and creates a missing file there), or the folder of a file to
    /// create does not exist, or it is on a read-only file system. Nothing was
    /// changed; [`StoreConfig::read_only`](super::StoreConfig::read_only)
    /// opens such a file for reading.
    #[error("cannot write the SQLite database {}: {reason} (nothing was changed)", path.display())]
    NotWritable {
        /// The database file, as the URL names it.
        path: std::path::PathBuf,
        /// Which of the file, its folder or its file system may not be
        /// written, in words.
        reason: String,
    },
    /// The database could not be reached or opened at start.
    #[error("cannot reach the database at {url:?}: {}", unreachable(.url, .source))]
    Unreachable {
        /// The URL with any password removed.
        url: String,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// The database holds a migration of `namespace` newer than this build
    /// knows: it was migrated by a newer leasehold, and this one refuses to
    /// run against a schema it does not understand.
    #[error(
        "database schema of {namespace:?} is at migration {applied_id} ({applied_name:?}), newer than this build's latest {known_id}; upgrade leasehold"
    )]
    SchemaTooNew {
        /// The migration set's namespace.
        namespace: String,
        /// The newest applied id in that namespace's block.
        applied_id: i64,
        /// Its recorded name.
        applied_name: String,
        /// The newest id this build knows.
        known_id: i64,
    },
    /// The database records a migration id under another name or namespace
    /// than this build's migration of that id: the schemas have diverged.
    #[error(
        "migration {id} is recorded as {found_namespace:?}/{found_name:?} but this build has {namespace:?}/{expected_name:?}"
    )]
    MigrationMismatch {
        /// The id both claim.
        id: i64,
        /// This build's namespace for it.
        namespace: String,
        /// This build's name for it.
        expected_name: String,
        /// The recorded namespace.
        found_namespace: String,
        /// The recorded name.
        found_name: String,
    },
    /// Migration sets that cannot be composed: two share a namespace or an
    /// id block, a block is not a whole multiple of the block size, or a
    /// set's migration numbers are not strictly ascending within 1..block size.
    #[error("invalid migration sets: {0}")]
    InvalidMigrationSets(String),
    /// The steal rules refused the takeover.
    #[error(transparent)]
    StealRefused(#[from] StealError),
    /// A row holds a value this build cannot read (a negative token, an
    /// unknown state): the table was written by something else.
    #[error("corrupt row in {table}: {detail}")]
    CorruptRow {
        /// The table.
        table: &'static str,
        /// What was wrong.
        detail: String,
    },
    /// One coalesced statement carrying this write failed; every write in it
    /// gets the same error.
    #[error("coalesced write failed: {0}")]
    Coalesced(#[source] Arc<StoreError>),
    /// The store's coalescing task has stopped (its runtime shut down).
    #[error("the store's coalescing task has stopped")]
    CoalescerStopped,
    /// The database answered with an error, or the connection failed mid-way.
    /// Nothing partial was committed: every operation runs in one transaction.
    #[error("database error: {}", driver(.0))]
    Database(#[from] sqlx::Error),
}

/// Shorthand for results of store operations.
pub type StoreResult<T> = Result<T, StoreError>;

/// A URL with any password replaced by `***`, for error messages: the one
/// in its authority (`user:password@`) and the value of any query parameter
/// named `password` (or ending in it, as libpq's `sslpassword`), which
/// PostgreSQL URLs accept too.
pub(crate) fn redact_url(url: &str) -> String {
    // The authority first, over the whole URL: a password may hold an
    // unencoded `?`, which is no query then.
    let url = redact_authority(url);
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url.as_str(), None),
    };
    let mut redacted = base.to_owned();
    if let Some(query) = query {
        let params: Vec<String> = query
            .split('&')
            .map(|param| match param.split_once('=') {
                Some((key, _)) if key.to_ascii_lowercase().ends_with("password") => format!("{key}=***"),
                _ => param.to_owned(),
            })
            .collect();
        redacted.push('?');
        redacted.push_str(&params.join("&"));
    }
    redacted
}

/// `scheme://user:password@host...` → `scheme://user:***@host...`.
fn redact_authority(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let (head, rest) = url.split_at(scheme_end + 3);
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    if let Some(at) = authority.rfind('@') {
        return match authority[..at].find(':') {
            Some(colon) => format!("{head}{}:***{}", &rest[..colon], &rest[at..]),
            None => url.to_owned(),
        };
    }
    // A password holding an unencoded `/`, `?` or `#` ends the authority
    // inside itself, as URL parsers read it, and leaves no `@` in it: what
    // follows its `:` is then no port. Everything from there to the URL's
    // last `@` (or its end) may be that password, so all of it is hidden. (A
    // SQLite URL holds a path, never a password.)
    match authority.find(':') {
        Some(colon)
            if !head.starts_with("sqlite")
                && !authority.starts_with('[')
                && !authority[colon + 1..].bytes().all(|b| b.is_ascii_digit()) =>
        {
            let end = rest.rfind('@').unwrap_or(rest.len());
            format!("{head}{}:***{}", &rest[..colon], &rest[end..])
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn redact_url_hides_the_password_only() {
        assert_eq!(
            redact_url("postgres://me:secret@db:5432/x?sslmode=disable"),
            "postgres://me:***@db:5432/x?sslmode=disable"
        );
        assert_eq!(redact_url("postgres://me@db/x"), "postgres://me@db/x");
        assert_eq!(redact_url("sqlite:///tmp/a.db"), "sqlite:///tmp/a.db");
    }

    #[test]
    fn redact_url_hides_a_password_given_in_the_query_string() {
        assert_eq!(
            redact_url("postgres://me@db/x?password=secret&sslmode=disable"),
            "postgres://me@db/x?password=***&sslmode=disable"
        );
        assert_eq!(
            redact_url("postgres://me:a@db/x?host=/run/pg&sslpassword=k3y&PASSWORD=s"),
            "postgres://me:***@db/x?host=/run/pg&sslpassword=***&PASSWORD=***"
        );
        assert_eq!(redact_url("postgres://db/x?host=/run/pg&port=5432"), "postgres://db/x?host=/run/pg&port=5432");
    }

    #[test]
    fn redact_url_hides_a_password_holding_a_slash_question_mark_or_hash() {
        // Unencoded, they end the authority early, as URL parsers read it: the password
        // was shown whole (the driver's error is about the "port" they leave).
        assert_eq!(redact_url("postgres://me:pa/ss@db:5432/x"), "postgres://me:***@db:5432/x");
        assert_eq!(redact_url("postgres://me:pa?ss@db/x?sslmode=disable"), "postgres://me:***@db/x?sslmode=disable");
        assert_eq!(redact_url("postgres://me:p#a/s?s@db/x"), "postgres://me:***@db/x");
        assert_eq!(redact_url("postgres://me:secret"), "postgres://me:***");
        // A port, a path and a query with an `@` in it, or an IPv6 host, hide nothing.
        assert_eq!(redact_url("postgres://db:5432/x?application_name=a@b"), "postgres://db:5432/x?application_name=a@b");
        assert_eq!(redact_url("postgres://me:pw@db/x?application_name=a@b"), "postgres://me:***@db/x?application_name=a@b");
        assert_eq!(redact_url("postgres://[::1]:5432/x"), "postgres://[::1]:5432/x");
        assert_eq!(redact_url("sqlite://data:v2/queue.db"), "sqlite://data:v2/queue.db");
    }
}

/// The driver's error as a user reads it: a database's answer without the
/// line of the database server's own source code it came from, which sqlx
/// appends to a PostgreSQL error (`database "x" does not exist at line
/// 948`, read as a line of something the user wrote).
fn driver(error: &sqlx::Error) -> String {
    match error {
        sqlx::Error::Database(db) => format!("error returned from database: {}", db.message()),
        other => other.to_string(),
    }
}

/// Why a database could not be reached, as [`driver`] says it; a PostgreSQL
/// socket that is not there (`?host=/folder`) is named, where the driver
/// said only "No such file or directory".
fn unreachable(url: &str, error: &sqlx::Error) -> String {
    let said = driver(error);
    let sqlx::Error::Io(io) = error else { return said };
    if io.kind() != std::io::ErrorKind::NotFound || !url.starts_with("postgres") {
        return said;
    }
    let query = url.split_once('?').map_or("", |(_, query)| query);
    let param = |name: &str| query.split('&').find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='));
    let Some(folder) = param("host").filter(|host| host.starts_with('/')) else { return said };
    // The port of the URL's query, else of its authority, else PostgreSQL's default.
    let authority = url.split_once("://").map_or("", |(_, rest)| rest.split(['/', '?']).next().unwrap_or(""));
    let port = param("port")
        .or_else(|| authority.rsplit_once(':').map(|(_, port)| port).filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())))
        .unwrap_or("5432");
    format!(
        "{said}: no server listens at {}/.s.PGSQL.{port} (is the server running, with its sockets in that folder and on that port?)",
        folder.trim_end_matches('/')
    )
}
