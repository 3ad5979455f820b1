//! How the tool fails: one line on stderr (`leasehold: …`) and an exit code,
//! never a panic or a backtrace.

use leasehold::store::StoreError;
use std::process::ExitCode;

/// Exit code of bad input, an unreachable database, or any other error.
pub const EXIT_ERROR: u8 = 2;
/// Exit code of a `run` with dead-lettered jobs.
pub const EXIT_DEAD_LETTERED: u8 = 1;
/// Exit code of a `run` cut short by Ctrl-C (128 + SIGINT).
pub const EXIT_INTERRUPTED: u8 = 130;

/// An error to report and exit on.
#[derive(Debug)]
pub struct CliError {
    message: String,
}

impl CliError {
    /// Bad input or a failed operation, described by `message`.
    pub fn input(message: impl Into<String>) -> Self {
        CliError { message: message.into() }
    }

    /// The same error with `note` added to its message.
    pub fn noting(mut self, note: &str) -> Self {
        self.message.push_str(note);
        self
    }

    /// Prints the one line and answers the exit code.
    pub fn report(&self) -> ExitCode {
        // One line, whatever the driver's message held.
        let line = self.message.split_whitespace().collect::<Vec<_>>().join(" ");
        errln!("leasehold: {line}");
        ExitCode::from(EXIT_ERROR)
    }
}

impl From<StoreError> for CliError {
    fn from(e: StoreError) -> Self {
        if missing_table(&e) == Some("leasehold_jobs") {
            return CliError::input(NO_QUEUE);
        }
        if let StoreError::NotWritable { path, .. } = &e
            && path.is_file()
        {
            return CliError::input(format!("{e}; status, jobs, show, events and ui --read-only, which only read, work on it"));
        }
        CliError::input(e.to_string())
    }
}

/// A store's refusal of an option in the words of the command line's flags
/// (`--timeout: must be at least 1ms`, not "invalid option `timeout`");
/// any other error as it is.
pub fn in_flags(e: StoreError) -> CliError {
    match e {
        StoreError::InvalidOption { option, reason } => {
            let flag = match option {
                "every" => "--every",
                "cron" => "--cron",
                "time_zone" => "--tz",
                "max_attempts" => "--max-attempts",
                "timeout" => "--timeout",
                "idempotency_key" => "--idempotency-key",
                "run_at" | "delay" => "--at",
                "reason" => "--reason",
                "state" => "--state",
                other => other,
            };
            CliError::input(format!("{flag}: {reason}"))
        }
        other => other.into(),
    }
}

/// What a read of a database without the queue's tables says (a read-only
/// command never creates them).
pub const NO_QUEUE: &str = "the database holds no leasehold queue (nothing has been queued there yet): \
                            check --database, or queue a job first";

/// The leasehold table a failed statement found missing, by the driver's
/// message: SQLite's `no such table: NAME`, PostgreSQL's `relation "NAME"
/// does not exist`.
pub fn missing_table(e: &StoreError) -> Option<&'static str> {
    let StoreError::Database(e) = e else { return None };
    let text = e.to_string();
    let missing = text.contains("no such table") || (text.contains("relation") && text.contains("does not exist"));
    const TABLES: [&str; 2] = ["leasehold_jobs", "leasehold_settlements"];
    TABLES.into_iter().find(|t| missing && text.contains(t))
}

/// Writes `text` to stdout; `false` once the reader has gone away (a closed
/// pipe, as under `| head`), which ends the output quietly instead of
/// panicking like `print!` would.
pub fn print(text: &str) -> bool {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).is_ok()
}
