//! Input checks that run before anything is written, and the conversion of
//! enqueue options into the plain values both backends bind.

use std::sync::OnceLock;
use std::time::Duration;

use leasehold_core::queue::rules;
use leasehold_core::Millis;

use super::{EnqueueOptions, StoreError, StoreResult};

/// Longest queue name and idempotency key accepted, in bytes (the core's:
/// every host checks them alike).
pub use leasehold_core::queue::rules::{MAX_IDEMPOTENCY_KEY_LEN, MAX_QUEUE_NAME_LEN};

/// Checks a queue name: 1 to [`MAX_QUEUE_NAME_LEN`] bytes of `A-Z a-z 0-9 _ - . :`.
/// The set is narrow on purpose: names travel in NOTIFY payloads, log lines
/// and CLI arguments, where anything wider needs quoting.
pub fn queue_name(name: &str) -> StoreResult<()> {
    name_rule(name).map_err(|reason| StoreError::InvalidQueueName {
        name: name.to_owned(),
        reason,
    })
}

/// The rule of queue (and schedule) names: 1 to [`MAX_QUEUE_NAME_LEN`]
/// bytes of `A-Z a-z 0-9 _ - . :` (the core's [`rules::check_queue_name`]);
/// answers the rule broken, in words.
pub fn name_rule(name: &str) -> Result<(), &'static str> {
    // Worded from the core's rules once per process, so a change there reaches the text.
    static TOO_LONG: OnceLock<String> = OnceLock::new();
    static ALLOWED: OnceLock<String> = OnceLock::new();
    rules::check_queue_name(name).map_err(|rule| match rule {
        rules::QueueNameRule::TooLong => TOO_LONG.get_or_init(|| rule.to_string()).as_str(),
        rules::QueueNameRule::Character => ALLOWED.get_or_init(|| rule.to_string()).as_str(),
        rules::QueueNameRule::Empty => "empty",
    })
}

/// Why JSON holding U+0000 is refused, on every backend.
pub(crate) const NUL_IN_JSON: &str =
    "holds the NUL character (\\u0000) in a string or key, which PostgreSQL's jsonb can not store";

/// Whether a string or key anywhere in `value` holds U+0000.
pub(crate) fn holds_nul(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::String(s) => s.contains('\0'),
        serde_json::Value::Array(items) => items.iter().any(holds_nul),
        serde_json::Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || holds_nul(v)),
        _ => false,
    }
}

/// Parses a payload handed in as text.
pub fn payload_text(text: &str) -> StoreResult<serde_json::Value> {
    serde_json::from_str(text).map_err(StoreError::InvalidPayload)
}

/// Milliseconds of a span as the databases store them (BIGINT), refusing
/// spans that do not fit.
pub fn duration_ms(option: &'static str, span: Duration) -> StoreResult<i64> {
    i64::try_from(span.as_millis()).map_err(|_| StoreError::InvalidOption {
        option,
        reason: format!("{span:?} does not fit in i64 milliseconds"),
    })
}

/// Milliseconds of an instant as stored (BIGINT).
pub fn millis(option: &'static str, at: Millis) -> StoreResult<i64> {
    i64::try_from(at.0).map_err(|_| StoreError::InvalidOption {
        option,
        reason: format!("{at} does not fit in i64 milliseconds"),
    })
}

/// Room left, in ms, for a database clock ahead of the caller's when a
/// delay is checked against the latest due time (PostgreSQL adds a delay to
/// its own clock).
const CLOCK_ROOM_MS: i64 = 86_400_000;

/// Checks that each job's delay, added to the insert's clock (`now_ms`),
/// leaves its due time within i64 milliseconds since the Unix epoch, less a
/// day for the database's clock: past that, PostgreSQL answered only "bigint
/// out of range" and SQLite kept the job due at the largest instant instead.
pub fn delays_fit(jobs: &[NewJob], now_ms: i64) -> StoreResult<()> {
    let latest = i64::MAX - CLOCK_ROOM_MS;
    match jobs.iter().find(|j| j.run_at.is_none() && j.delay_ms > latest.saturating_sub(now_ms)) {
        None => Ok(()),
        Some(job) => Err(StoreError::InvalidOption {
            option: "delay",
            reason: format!(
                "{}ms puts the job due past {latest}ms since the Unix epoch, the latest due time a store keeps (i64 milliseconds, less a day for the database's clock)",
                job.delay_ms
            ),
        }),
    }
}

/// A lease length: at least 1 ms.
pub fn lease_ms(lease: Duration) -> StoreResult<i64> {
    let ms = duration_ms("lease", lease)?;
    if ms < 1 {
        return Err(StoreError::InvalidOption {
            option: "lease",
            reason: "must be at least 1ms".to_owned(),
        });
    }
    Ok(ms)
}

/// One job ready to insert: validated, payload serialized, times in ms.
#[derive(Clone, Debug)]
pub struct NewJob {
    /// The payload as JSON text.
    pub payload: String,
    /// Priority (lower first).
    pub priority: i32,
    /// Absolute due time, when given.
    pub run_at: Option<i64>,
    /// Delay after the insert's clock; 0 when neither is given.
    pub delay_ms: i64,
    /// Attempt budget, at least 1.
    pub max_attempts: i32,
    /// Per-attempt timeout.
    pub timeout_ms: Option<i64>,
    /// Idempotency key.
    pub idempotency_key: Option<String>,
}

impl NewJob {
    /// Validates `options` and serializes `payload`.
    pub fn new(payload: &serde_json::Value, options: &EnqueueOptions) -> StoreResult<NewJob> {
        fn invalid<T>(option: &'static str, reason: &str) -> StoreResult<T> {
            Err(StoreError::InvalidOption {
                option,
                reason: reason.to_owned(),
            })
        }
        if options.run_at.is_some() && options.delay.is_some() {
            return invalid("run_at", "give run_at or delay, not both");
        }
        if holds_nul(payload) {
            // Refused on SQLite too, so a queue moves between backends.
            return invalid("payload", NUL_IN_JSON);
        }
        if options.max_attempts == 0 {
            return invalid("max_attempts", "must be at least 1");
        }
        let max_attempts = i32::try_from(options.max_attempts)
            .or_else(|_| invalid("max_attempts", "must fit in i32"))?;
        if let Some(key) = &options.idempotency_key {
            if key.is_empty() {
                return invalid("idempotency_key", "must not be empty");
            }
            if key.len() > MAX_IDEMPOTENCY_KEY_LEN {
                return invalid(
                    "idempotency_key",
                    &format!("longer than {MAX_IDEMPOTENCY_KEY_LEN} bytes"),
                );
            }
            if key.contains('\0') {
                // Refused on SQLite too, as a payload's NUL is: PostgreSQL answered
                // only its bare encoding error for it.
                return invalid(
                    "idempotency_key",
                    "holds the NUL character (\\u0000), which PostgreSQL can not store",
                );
            }
        }
        let timeout_ms = match options.timeout {
            // Stored in whole milliseconds: a shorter span would be kept as 0 ms.
            Some(t) if t < Duration::from_millis(1) => return invalid("timeout", "must be at least 1ms"),
            Some(t) => Some(duration_ms("timeout", t)?),
            None => None,
        };
        Ok(NewJob {
            payload: payload.to_string(),
            priority: options.priority,
            run_at: options.run_at.map(|at| millis("run_at", at)).transpose()?,
            delay_ms: options
                .delay
                .map(|d| duration_ms("delay", d))
                .transpose()?
                .unwrap_or(0),
            max_attempts,
            timeout_ms,
            idempotency_key: options.idempotency_key.clone(),
        })
    }

    /// The due time given the insert's clock reading.
    pub fn due(&self, now: i64) -> i64 {
        self.run_at
            .unwrap_or_else(|| now.saturating_add(self.delay_ms))
    }
}

/// Reads a non-negative BIGINT column as `u64`.
pub fn unsigned(table: &'static str, column: &str, value: i64) -> StoreResult<u64> {
    u64::try_from(value).map_err(|_| StoreError::CorruptRow {
        table,
        detail: format!("{column} is negative ({value})"),
    })
}

/// Reads a non-negative INTEGER column as `u32`.
pub fn unsigned32(table: &'static str, column: &str, value: i64) -> StoreResult<u32> {
    u32::try_from(value).map_err(|_| StoreError::CorruptRow {
        table,
        detail: format!("{column} is out of range ({value})"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn queue_names_with_allowed_characters_pass() {
        assert!(queue_name("emails").is_ok());
        assert!(queue_name("billing:eu-west.v2_retry").is_ok());
    }

    #[test]
    fn a_payload_holding_nul_is_refused_on_every_backend() {
        let options = EnqueueOptions::default();
        for payload in [json!("a\u{0}b"), json!({ "k": ["x", "\u{0}"] }), json!({ "k\u{0}": 1 })] {
            let err = NewJob::new(&payload, &options).map(|_| ()).unwrap_err();
            assert!(err.to_string().contains("NUL character"), "{payload}: {err}");
        }
        assert!(NewJob::new(&json!({ "k": "\\u0000 is text here" }), &options).is_ok());
    }

    #[test]
    fn an_idempotency_key_holding_nul_is_refused_on_every_backend() {
        let options = EnqueueOptions { idempotency_key: Some("order-\u{0}7".to_owned()), ..EnqueueOptions::default() };
        let err = NewJob::new(&serde_json::Value::Null, &options).unwrap_err();
        assert!(matches!(err, StoreError::InvalidOption { option: "idempotency_key", .. }), "{err}");
        assert!(err.to_string().contains("NUL character"), "{err}");
    }

    #[test]
    fn queue_name_with_space_or_quote_is_refused_naming_the_rule() {
        for name in ["bad name", "x'; drop", "é", "a/b"] {
            let err = queue_name(name).unwrap_err();
            assert!(err.to_string().contains("only A-Z"), "{name}: {err}");
        }
    }

    #[test]
    fn empty_and_overlong_queue_names_are_refused() {
        assert!(queue_name("").unwrap_err().to_string().contains("empty"));
        assert!(
            queue_name(&"q".repeat(129))
                .unwrap_err()
                .to_string()
                .contains("128")
        );
        assert!(queue_name(&"q".repeat(128)).is_ok());
    }

    #[test]
    fn refusals_name_the_limits_and_marks_of_the_core_rules() {
        let too_long = "q".repeat(MAX_QUEUE_NAME_LEN + 1);
        assert_eq!(
            name_rule(&too_long),
            Err(format!("longer than {MAX_QUEUE_NAME_LEN} bytes").as_str())
        );
        let marks = rules::QUEUE_NAME_PUNCTUATION
            .chars()
            .map(String::from)
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(
            name_rule("a/b"),
            Err(format!("only A-Z a-z 0-9 {marks} are allowed").as_str())
        );
        let options = EnqueueOptions {
            idempotency_key: Some("k".repeat(MAX_IDEMPOTENCY_KEY_LEN + 1)),
            ..EnqueueOptions::default()
        };
        let err = NewJob::new(&serde_json::Value::Null, &options).unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("longer than {MAX_IDEMPOTENCY_KEY_LEN} bytes")),
            "{err}"
        );
    }

    #[test]
    fn payload_text_that_is_not_json_is_refused() {
        let err = payload_text("{not json").unwrap_err();
        assert!(matches!(err, StoreError::InvalidPayload(_)));
        assert!(err.to_string().starts_with("payload is not JSON"));
        assert_eq!(payload_text("[1,2]").unwrap(), serde_json::json!([1, 2]));
    }

    #[test]
    fn run_at_and_delay_together_are_refused() {
        let options = EnqueueOptions {
            run_at: Some(Millis(5)),
            delay: Some(Duration::from_secs(1)),
            ..EnqueueOptions::default()
        };
        let err = NewJob::new(&serde_json::Value::Null, &options).unwrap_err();
        assert!(err.to_string().contains("run_at"), "{err}");
    }

    #[test]
    fn zero_attempts_zero_timeout_and_empty_key_are_refused() {
        let p = serde_json::Value::Null;
        let zero_attempts = EnqueueOptions {
            max_attempts: 0,
            ..EnqueueOptions::default()
        };
        assert!(
            NewJob::new(&p, &zero_attempts)
                .unwrap_err()
                .to_string()
                .contains("max_attempts")
        );
        let zero_timeout = EnqueueOptions {
            timeout: Some(Duration::ZERO),
            ..EnqueueOptions::default()
        };
        assert!(
            NewJob::new(&p, &zero_timeout)
                .unwrap_err()
                .to_string()
                .contains("timeout")
        );
        let empty_key = EnqueueOptions {
            idempotency_key: Some(String::new()),
            ..EnqueueOptions::default()
        };
        assert!(
            NewJob::new(&p, &empty_key)
                .unwrap_err()
                .to_string()
                .contains("idempotency_key")
        );
    }

    #[test]
    fn a_timeout_under_a_millisecond_is_refused_not_kept_as_zero() {
        let p = serde_json::Value::Null;
        for short in [Duration::from_nanos(1), Duration::from_micros(999)] {
            let options = EnqueueOptions { timeout: Some(short), ..EnqueueOptions::default() };
            let err = NewJob::new(&p, &options).unwrap_err();
            assert!(matches!(err, StoreError::InvalidOption { option: "timeout", .. }), "{short:?}: {err}");
            assert!(err.to_string().contains("at least 1ms"), "{err}");
        }
        let options = EnqueueOptions { timeout: Some(Duration::from_millis(1)), ..EnqueueOptions::default() };
        assert_eq!(NewJob::new(&p, &options).unwrap().timeout_ms, Some(1));
    }

    #[test]
    fn a_delay_past_the_latest_due_time_is_refused_naming_it() {
        let p = serde_json::Value::Null;
        let now = 1_800_000_000_000;
        let delayed = |ms: u64| NewJob::new(&p, &EnqueueOptions { delay: Some(Duration::from_millis(ms)), ..Default::default() }).unwrap();
        let latest = (i64::MAX - CLOCK_ROOM_MS - now) as u64;
        assert!(delays_fit(&[delayed(latest)], now).is_ok());
        let err = delays_fit(&[delayed(1), delayed(latest + 1)], now).unwrap_err();
        assert!(matches!(err, StoreError::InvalidOption { option: "delay", .. }), "{err}");
        assert!(err.to_string().contains("latest due time"), "{err}");
        // An absolute due time is not a delay.
        let at = NewJob::new(&p, &EnqueueOptions { run_at: Some(Millis(i64::MAX as u64)), ..Default::default() }).unwrap();
        assert!(delays_fit(&[at], now).is_ok());
    }

    #[test]
    fn due_time_is_run_at_or_now_plus_delay() {
        let p = serde_json::Value::Null;
        let at = NewJob::new(
            &p,
            &EnqueueOptions {
                run_at: Some(Millis(7)),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(at.due(100), 7);
        let later = NewJob::new(
            &p,
            &EnqueueOptions {
                delay: Some(Duration::from_millis(30)),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(later.due(100), 130);
        assert_eq!(
            NewJob::new(&p, &EnqueueOptions::default())
                .unwrap()
                .due(100),
            100
        );
    }
}
