//! `leasehold enqueue`: one command, its options, its due time.

use crate::args::{EnqueueArgs, parse_duration};
use crate::fail::CliError;
use crate::handler::payload;
use leasehold::core::Millis;
use leasehold::runner::{Clock, TokioClock};
use leasehold::store::{EnqueueOptions, Store};
use std::time::UNIX_EPOCH;

/// When `--at` makes a job due: an absolute time or a delay from now.
#[derive(Debug, PartialEq, Eq)]
pub enum Due {
    /// At this time.
    At(Millis),
    /// This long after the enqueue.
    After(std::time::Duration),
}

/// Reads `--at`: RFC 3339 (`2030-01-01T09:00:00Z`, or with an offset from
/// UTC: `2030-01-01T09:00:00+02:00`; without either it is read as UTC) or a
/// duration (`30s`).
pub fn parse_due(text: &str) -> Result<Due, CliError> {
    let before_1970 = || CliError::input(format!("--at {text:?} is before 1970"));
    if let Ok(at) = humantime::parse_rfc3339_weak(text) {
        let ms = at.duration_since(UNIX_EPOCH).map_err(|_| before_1970())?;
        return Ok(Due::At(Millis(u64::try_from(ms.as_millis()).unwrap_or(u64::MAX))));
    }
    // humantime reads UTC (`Z`) only; an offset such as +02:00 is RFC 3339 too.
    if let Ok(at) = text.parse::<jiff::Timestamp>() {
        return u64::try_from(at.as_millisecond()).map(|ms| Due::At(Millis(ms))).map_err(|_| before_1970());
    }
    parse_duration(text)
        .map(Due::After)
        .map_err(|_| CliError::input(format!("--at {text:?} is neither an RFC 3339 time (2030-01-01T09:00:00Z) nor a duration like 30s")))
}

/// The command line of `words`: one word is taken as a whole line (it may use
/// shell syntax); several are quoted where needed so each stays one argument.
pub fn command_line(words: &[String]) -> String {
    if let [line] = words {
        return line.clone();
    }
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

fn quote(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:,+@%".contains(c));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

/// Queues the command; prints its id.
pub async fn enqueue(store: &Store, args: &EnqueueArgs) -> Result<(), CliError> {
    let line = command_line(&args.command);
    if line.trim().is_empty() {
        return Err(CliError::input("the command is empty"));
    }
    crate::exec::check_argument_sizes(&line).map_err(|e| CliError::input(format!("{e}; nothing was queued")))?;
    let mut options = EnqueueOptions {
        max_attempts: args.job.max_attempts,
        timeout: args.job.timeout,
        idempotency_key: args.idempotency_key.clone(),
        ..Default::default()
    };
    let now = TokioClock::new().now();
    let due = match args.at.as_deref().map(parse_due).transpose()? {
        Some(Due::At(at)) => {
            options.run_at = Some(at);
            at.0
        }
        Some(Due::After(delay)) => {
            options.delay = Some(delay);
            now.0.saturating_add(u64::try_from(delay.as_millis()).unwrap_or(u64::MAX))
        }
        None => now.0,
    };
    if due > crate::inspect::LAST_RFC3339_MS {
        return Err(CliError::input(format!(
            "--at {:?} is after the year 9999",
            args.at.as_deref().unwrap_or_default()
        )));
    }
    let sent = payload(&line);
    let id = store.enqueue(&args.job.queue, &sent, &options, now).await.map_err(crate::fail::in_flags)?;
    outln!("{id}");
    // A key already held answers the earlier job: said when that job runs another
    // command, as this one was not queued (the same command again is the key's purpose).
    if let Some(key) = &args.idempotency_key
        && let Ok(earlier) = store.job(id).await
        && earlier.payload != sent
    {
        errln!(
            "leasehold: job {id}, queued earlier with --idempotency-key {key:?}, runs {:?}: this command ({line:?}) was not queued",
            crate::inspect::command(&earlier)
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_takes_an_rfc3339_time_or_a_duration() {
        assert_eq!(parse_due("2030-01-01T00:00:00Z").unwrap(), Due::At(Millis(1_893_456_000_000)));
        assert_eq!(parse_due("30s").unwrap(), Due::After(std::time::Duration::from_secs(30)));
        assert!(parse_due("tomorrow-ish").is_err());
    }

    #[test]
    fn at_takes_an_rfc3339_time_with_an_offset_from_utc() {
        assert_eq!(parse_due("2030-01-01T02:00:00+02:00").unwrap(), Due::At(Millis(1_893_456_000_000)));
        assert_eq!(parse_due("2029-12-31T19:30:00-04:30").unwrap(), Due::At(Millis(1_893_456_000_000)));
        assert!(parse_due("1970-01-01T01:00:00+02:00").is_err(), "before 1970 once at UTC");
    }

    #[test]
    fn several_words_keep_their_argument_boundaries() {
        let words: Vec<String> = ["sh", "-c", "echo it's"].map(String::from).to_vec();
        assert_eq!(command_line(&words), r"sh -c 'echo it'\''s'");
        assert_eq!(command_line(&["echo a | wc".to_owned()]), "echo a | wc");
    }
}
