//! leasehold: durable job loops for tokio services.
//!
//! The state machines live in [`leasehold_core`]; this crate owns the clock,
//! the timers, the tasks and the user's callbacks, and feeds the core.
#![deny(unsafe_code)]

pub use leasehold_core as core;

pub mod lease;
pub mod liveness;

pub mod runner;

pub use runner::{AbortSignal, BoxError, Job, JobEvent, JobRunner, PassReport};

pub mod eventlog;
pub mod pump;
pub mod trace_ring;

#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub mod store;

#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub mod worker;
