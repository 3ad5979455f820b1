//! leasehold-core: the sans-IO state machines behind leasehold.
//!
//! Nothing here reads a clock, sleeps, spawns or does I/O. Time comes in as
//! [`Millis`] arguments; inputs are method calls that record what happened;
//! outputs are polled. The same inputs in the same order give the same outputs,
//! which is what makes the simulator and the virtual-time tests possible.
//!
//! Modules:
//! - [`time`]: the `Millis` instant type and spans.
//! - [`backoff`]: `job_backoff` and the delay after failing passes (seed 000).
//! - [`options`]: runner options, their defaults and validation (seed 000 + our checks).
//! - [`event`]: the trace events and pass report (seed 000 `JobEvent`, `JobPassReport`).
//! - [`supervision`]: heartbeat supervision with write tolerance, reconfirm and
//!   lapse (seed 003 `heartbeatLoop`), shared by the runner and the lease hosts.
//! - [`runner`]: the job runner state machine (seed 000 `createJobRunner`).
//! - [`lease`]: owner identity, lease policy, liveness evidence (seed 003).
//! - [`pump`]: the event pump's planning and the event log's framing (seed 004).
//! - [`trace_ring`]: the bounded ring of pass spans behind the trace sink (seed 000
//!   `createJobTraceSink`, `resumeJobTrace`).
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod time;
pub mod event;
pub mod lease;
pub mod pump;
pub mod trace_ring;

pub use time::Millis;
pub mod backoff;
pub mod options;
pub mod runner;
pub mod supervision;

pub use backoff::{job_backoff, Backoff};
pub use event::{Event, PassReport};
pub use options::{Config, OptionError, OptionsInput};
pub use runner::{Action, ItemKey, LogKind, PassId, Runner, Ticket};
