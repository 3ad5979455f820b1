//! The event pump's planning logic, for events derived from any durable
//! source.
//!
//! The pump derives events from durable journals the caller owns after their
//! appends, and appends them to an event log together with the watermarks of
//! the sources they complete, in one write and one fsync, so a restart derives
//! again only past them (at least once). The host owns the I/O (journals, the
//! log file, timers); this module owns the decisions:
//!
//! - [`frame`]: the log's byte layout and what an open does with a torn tail
//!   or a corrupt log.
//! - [`watermarks`]: one watermark per source, and which moves are unsaved.
//! - `chunk` (inside the crate): at most N drafts per append, each append
//!   with the watermarks it completes.
//! - [`failure`]: keep dirty, report once, retry after a second.
//! - [`compaction`]: compaction at open and at most hourly; retention.
//! - [`rewrite`]: the bytes a compaction writes (the same from every host).
//! - [`recovery`]: what an open does with the file it finds (take it over,
//!   cut a torn tail, or set it aside and start a new epoch).
//! - [`machine`]: the order of every pump operation, as the host's run loop
//!   drives it (`handle_*` in, `poll_output` out).
//! - [`state`]: the dirty set, the timer and the pump's phase, tying the
//!   above together; only the machine steps it, hosts read it through
//!   [`PumpMachine::state`].

mod chunk;
pub mod compaction;
pub mod failure;
pub mod frame;
pub mod machine;
mod pass;
pub mod recovery;
pub mod rewrite;
pub mod state;
pub mod watermarks;

pub use compaction::{COMPACT_EVERY_MS, DEFAULT_RETENTION_MS, Retention};
pub use machine::{LogFailure, Op, OpError, Output, PumpMachine};
pub use failure::RETRY_AFTER_MS;
pub use state::{
    ConfigError, DEFAULT_CHUNK_SIZE, DEFAULT_KICK_DELAY_MS, MAX_CHUNK_SIZE, Phase, PumpConfig, PumpState,
};
pub use watermarks::Watermarks;
