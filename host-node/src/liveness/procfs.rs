//! What the pid probe and owner identity read from Linux's `/proc`: a
//! process's state and start time (`/proc/<pid>/stat`) and the kernel boot id.
//!
//! Every reader answers `None` where the file is missing or unreadable (not
//! Linux, `/proc` not mounted, `hidepid`): callers treat that as "no evidence",
//! never as death.

use std::fs;

/// The two fields of `/proc/<pid>/stat` that liveness needs: the state (a
/// zombie is dead) and the start time (a pid reused by a later process is not
/// the owner). A bare pid probe cannot tell either.
///
/// Parsed by [`ProcStat::parse`]; read by [`ProcStat::read`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcStat {
    /// Field 3, the one-letter state: `R` running, `S` sleeping, `Z` zombie
    /// (exited, not yet reaped), `X` dead, and others (`man 5 proc`).
    pub state: char,
    /// Field 22, `starttime`: when the process started, in clock ticks since
    /// boot. Together with the pid and boot id it names one process for good:
    /// a reused pid has a later start time.
    pub start_time: u64,
}

/// Why a `/proc/<pid>/stat` line could not be parsed; names what was wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProcStatError {
    /// No `)` closes the comm field (field 2).
    #[error("/proc stat line has no ')' closing the comm field")]
    NoCommEnd,
    /// The line ends before field `field` (1-based, as in `man 5 proc`).
    #[error("/proc stat line ends before field {field} ({name})")]
    MissingField {
        /// The 1-based field number.
        field: usize,
        /// Its name in `man 5 proc`.
        name: &'static str,
    },
    /// Field 3 is not a single character.
    #[error("/proc stat field 3 (state) is not one character: {0:?}")]
    BadState(String),
    /// Field 22 is not an unsigned integer.
    #[error("/proc stat field 22 (starttime) is not an unsigned integer: {0:?}")]
    BadStartTime(String),
}

/// Fields after the comm's closing `)` start at field 3.
const FIRST_FIELD_AFTER_COMM: usize = 3;
const STATE_FIELD: usize = 3;
const START_TIME_FIELD: usize = 22;

impl ProcStat {
    /// Parses one `/proc/<pid>/stat` line: `pid (comm) state ppid … starttime …`.
    ///
    /// The comm (field 2) is the executable name in parentheses and may itself
    /// hold spaces and `)` (a process can name itself `a) Z (b`), so the line
    /// is split at its LAST `)`: everything after it is fields 3 onwards,
    /// separated by single spaces.
    ///
    /// # Errors
    ///
    /// [`ProcStatError`] naming the missing `)`, the missing field, or the
    /// field that did not parse.
    pub fn parse(line: &str) -> Result<ProcStat, ProcStatError> {
        let (_, after_comm) = line.rsplit_once(')').ok_or(ProcStatError::NoCommEnd)?;
        let mut fields = after_comm.split_ascii_whitespace();
        let state_text = fields.next().ok_or(ProcStatError::MissingField { field: STATE_FIELD, name: "state" })?;
        let mut state_chars = state_text.chars();
        let state = match (state_chars.next(), state_chars.next()) {
            (Some(state), None) => state,
            _ => return Err(ProcStatError::BadState(state_text.to_owned())),
        };
        // `state` was field 3; skip to field 22.
        let start_text = fields
            .nth(START_TIME_FIELD - FIRST_FIELD_AFTER_COMM - 1)
            .ok_or(ProcStatError::MissingField { field: START_TIME_FIELD, name: "starttime" })?;
        let start_time = start_text.parse().map_err(|_| ProcStatError::BadStartTime(start_text.to_owned()))?;
        Ok(ProcStat { state, start_time })
    }

    /// Reads and parses `/proc/<pid>/stat`. `None` when the file cannot be
    /// read (no such process, not Linux, hidden by `hidepid`) or does not
    /// parse: no evidence either way.
    pub fn read(pid: u32) -> Option<ProcStat> {
        Self::read_path(&format!("/proc/{pid}/stat"))
    }

    /// [`ProcStat::read`] for the calling process (`/proc/self/stat`).
    pub fn read_self() -> Option<ProcStat> {
        Self::read_path("/proc/self/stat")
    }

    fn read_path(path: &str) -> Option<ProcStat> {
        let line = fs::read_to_string(path).ok()?;
        match ProcStat::parse(&line) {
            Ok(stat) => Some(stat),
            Err(error) => {
                // A kernel format we do not understand is worth a line in the
                // log; the probe goes on without the evidence.
                tracing::warn!(path, %error, "unparseable /proc stat line; ignoring it as liveness evidence");
                None
            }
        }
    }

    /// Whether the process has exited: `Z` (zombie: exited, waiting for its
    /// parent to reap it) or `X`/`x` (dead). Such a process does no more work,
    /// though `kill(pid, 0)` still succeeds on a zombie.
    #[must_use]
    pub fn has_exited(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }

    /// Whether the process is stopped: `T` (by a signal: `SIGSTOP`,
    /// `SIGTSTP`, ctrl-Z) or `t` (by a debugger or tracer). It exists but runs
    /// nothing until continued.
    #[must_use]
    pub fn is_stopped(&self) -> bool {
        matches!(self.state, 'T' | 't')
    }
}

/// The kernel's boot id (`/proc/sys/kernel/random/boot_id`, trimmed): a random
/// id the kernel picks at each boot. `None` where unreadable or empty.
pub(crate) fn boot_id() -> Option<String> {
    read_trimmed("/proc/sys/kernel/random/boot_id")
}

/// The machine id (`/etc/machine-id`, trimmed). `None` where unreadable or
/// empty (an image that ships the file empty until first boot).
pub(crate) fn machine_id() -> Option<String> {
    read_trimmed("/etc/machine-id")
}

/// The calling process's pid namespace as the kernel names it
/// (`readlink /proc/self/ns/pid`, e.g. `pid:[4026531836]`). `None` where
/// unreadable.
pub(crate) fn pid_namespace() -> Option<String> {
    let link = fs::read_link("/proc/self/ns/pid").ok()?;
    link.to_str().map(str::to_owned)
}

fn read_trimmed(path: &str) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real line (from `cat /proc/self/stat`), starttime 56768.
    const LINE: &str = "13566 (cat) R 13564 13564 5017 0 -1 4194304 102 0 0 0 0 0 0 0 20 0 1 0 56768 3133440 411 \
                        18446744073709551615 93922901344256 93922901364137 140730364146672 0 0 0 0 0 0 0 0 0 17 1 0 0 \
                        0 0 0";

    #[test]
    fn parses_state_and_field_22() {
        assert_eq!(ProcStat::parse(LINE), Ok(ProcStat { state: 'R', start_time: 56768 }));
    }

    #[test]
    fn comm_with_spaces_and_parentheses_splits_at_the_last_paren() {
        let line = LINE.replacen("(cat)", "(a) Z 1 (b c))", 1);
        assert_eq!(ProcStat::parse(&line), Ok(ProcStat { state: 'R', start_time: 56768 }));
    }

    #[test]
    fn missing_comm_end_is_named() {
        assert_eq!(ProcStat::parse("1 (cat R 1"), Err(ProcStatError::NoCommEnd));
    }

    #[test]
    fn short_lines_name_the_missing_field() {
        assert_eq!(ProcStat::parse("1 (cat)"), Err(ProcStatError::MissingField { field: 3, name: "state" }));
        assert_eq!(
            ProcStat::parse("1 (cat) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18"),
            Err(ProcStatError::MissingField { field: 22, name: "starttime" })
        );
        // Exactly 22 fields is enough: field n holds n - 3 here.
        assert_eq!(
            ProcStat::parse("1 (cat) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19"),
            Ok(ProcStat { state: 'S', start_time: 19 })
        );
    }

    #[test]
    fn unparseable_fields_are_named() {
        assert_eq!(ProcStat::parse("1 (cat) RS 1"), Err(ProcStatError::BadState("RS".into())));
        let line = LINE.replacen(" 56768 ", " -5 ", 1);
        assert_eq!(ProcStat::parse(&line), Err(ProcStatError::BadStartTime("-5".into())));
        assert_eq!(
            ProcStatError::BadStartTime("-5".into()).to_string(),
            "/proc stat field 22 (starttime) is not an unsigned integer: \"-5\""
        );
    }

    #[test]
    fn zombie_and_dead_states_have_exited() {
        for state in ['Z', 'X', 'x'] {
            assert!(ProcStat { state, start_time: 1 }.has_exited(), "{state}");
        }
        for state in ['R', 'S', 'D', 'T', 't', 'I'] {
            assert!(!ProcStat { state, start_time: 1 }.has_exited(), "{state}");
        }
    }
}
