//! What can go wrong with the pump.

use leasehold_core::pump::ConfigError;

use crate::eventlog::LogError;

/// A pump operation that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PumpError {
    /// An option can not work.
    #[error("pump option: {0}")]
    Config(#[from] ConfigError),
    /// The log failed: what was to be logged is not durable (a pass keeps its
    /// sources dirty and retries in the background).
    #[error(transparent)]
    Log(#[from] LogError),
    /// A source's `derive` panicked on an entry: its events from that entry
    /// on are not logged (it stays dirty and is asked again at the next
    /// retry); the other sources of the
    /// pass were logged. `index` is the entry's 0-based position.
    #[error("event source {source_name} panicked deriving entry {index}: {message}")]
    SourcePanicked {
        /// The source's name.
        source_name: String,
        /// The entry being derived.
        index: u64,
        /// The panic's message.
        message: String,
    },
    /// `close` ran: nothing more is derived or logged.
    #[error("event pump closed")]
    Closed,
    /// The pump's task is gone (it panicked, or the runtime shut down).
    #[error("event pump task ended")]
    Gone,
}
