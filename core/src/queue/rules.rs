//! The queue's input limits and the stores' reclaim cadence: one home for
//! what every host checks or paces the same way (the Rust stores, and the
//! npm package's Node.js stores through the wasm module's `queueDefaults`),
//! since they share one database and its rows.

use core::fmt;

/// Longest queue (and schedule) name accepted, in bytes.
pub const MAX_QUEUE_NAME_LEN: usize = 128;

/// What a queue name may hold besides the ASCII letters and digits. The set
/// is narrow on purpose: names travel in NOTIFY payloads, log lines and CLI
/// arguments, where anything wider needs quoting.
pub const QUEUE_NAME_PUNCTUATION: &str = "_-.:";

/// Longest idempotency key accepted, in bytes.
pub const MAX_IDEMPOTENCY_KEY_LEN: usize = 512;

/// Longest text a cancel records for who cancelled and why, each, in bytes.
pub const MAX_CANCEL_TEXT_LEN: usize = 4096;

/// How often a store's claims look for stale leases by default, ms: a
/// claim looks when at least `min(this, its own lease)` passed since the
/// last look of its queue (and again right after a look that found some).
pub const RECLAIM_EVERY_MS: u64 = 1_000;

/// Whether `byte` may appear in a queue name (see [`QUEUE_NAME_PUNCTUATION`]).
#[must_use]
pub fn queue_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || QUEUE_NAME_PUNCTUATION.as_bytes().contains(&byte)
}

/// Which rule of queue (and schedule) names a name breaks: what
/// [`check_queue_name`] answers. Displayed as the rule in words (`empty`,
/// `longer than 128 bytes`, `only A-Z a-z 0-9 _ - . : are allowed`), the
/// reason every host's refusal gives after the name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueNameRule {
    /// The name is empty.
    Empty,
    /// The name is longer than [`MAX_QUEUE_NAME_LEN`] bytes.
    TooLong,
    /// A byte outside the ASCII letters, digits and [`QUEUE_NAME_PUNCTUATION`].
    Character,
}

impl fmt::Display for QueueNameRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueNameRule::Empty => f.write_str("empty"),
            QueueNameRule::TooLong => write!(f, "longer than {MAX_QUEUE_NAME_LEN} bytes"),
            QueueNameRule::Character => {
                f.write_str("only A-Z a-z 0-9")?;
                for mark in QUEUE_NAME_PUNCTUATION.chars() {
                    write!(f, " {mark}")?;
                }
                f.write_str(" are allowed")
            }
        }
    }
}

/// Checks a queue (or schedule) name: 1 to [`MAX_QUEUE_NAME_LEN`] bytes, each
/// an ASCII letter or digit or one of [`QUEUE_NAME_PUNCTUATION`].
///
/// # Errors
/// The first [`QueueNameRule`] `name` breaks, in the order empty, too long,
/// a character outside the set.
pub fn check_queue_name(name: &str) -> Result<(), QueueNameRule> {
    if name.is_empty() {
        return Err(QueueNameRule::Empty);
    }
    if name.len() > MAX_QUEUE_NAME_LEN {
        return Err(QueueNameRule::TooLong);
    }
    if !name.bytes().all(queue_name_byte) {
        return Err(QueueNameRule::Character);
    }
    Ok(())
}
