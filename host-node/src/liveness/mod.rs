//! Liveness on a native host: who this process is
//! ([`current_owner`]) and whether a recorded owner's process still exists
//! ([`SameHostPidProbe`]).
//!
//! The rules that need no operating system — the lease-only check, evidence,
//! the lease policy — live in [`leasehold_core::lease`]; this module adds the
//! system calls and `/proc` reads, and keeps their decision in the pure
//! [`classify`].

pub(crate) mod owner;
mod pid;
mod procfs;

pub use owner::current_owner;
pub use pid::{KillAnswer, PidVerdict, SameHostPidProbe, classify};
pub use procfs::{ProcStat, ProcStatError};
