//! The queue's input limits and the stores' reclaim cadence: one home for
//! what every host checks or paces the same way (the Rust stores, and the
//! npm package's Node.js stores through the wasm module's `queueDefaults`),
//! since they share one database and its rows.

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
