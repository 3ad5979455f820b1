//! The sans-IO heart of [leasehold](https://github.com/leasehold-rs/leasehold):
//! durable job loops that claim work from a store, perform each item under a
//! lease that heartbeats renew, and stop the work when the lease is lost, so an
//! item another process has taken over is never worked on twice.
//!
//! This crate holds every policy of those loops as a state machine and nothing
//! else: it reads no clock, sleeps, spawns or does I/O, and builds without
//! `std` (`#![no_std]` + `alloc`, feature `std` off). A host feeds it:
//!
//! - time comes in as [`Millis`] arguments (milliseconds since an epoch the
//!   host picks);
//! - inputs are method calls that record what happened (a claim answered, an
//!   item settled, a renewal answered, a timer fired);
//! - outputs are polled: [`Runner::poll_action`] (claim now, perform this
//!   item, renew it, abort it, log, emit an event, a pass ended) and
//!   [`Runner::poll_timeout`] (the single next instant to be woken at).
//!
//! The same inputs in the same order give the same outputs, which is what
//! makes deterministic simulation and virtual-time tests possible. The crate
//! `leasehold` is the tokio host (SQLite and PostgreSQL stores, a command-line
//! tool); the npm package `leasehold` is the WebAssembly host for Node.js and
//! browsers.
//!
//! # Example: one pass, driven by hand
//!
//! A host keeps the items (here `&str`s) in slots the runner names, and
//! answers each action:
//!
//! ```
//! use leasehold_core::{Action, Millis, OptionsInput, Runner, Ticket};
//!
//! let options = OptionsInput { interval_ms: 1_000.0, stale_after_ms: 30_000.0, ..OptionsInput::default() };
//! let config = options.validate().expect("valid options");
//! // No trace sink: the runner builds no events. `String` is the host's error type.
//! let mut runner: Runner<String> = Runner::new(config, false);
//! let mut queue = vec!["second", "first"]; // the host's store, taken from the end
//! let mut slots: Vec<Option<&str>> = vec![None; runner.config().pool_size() as usize];
//! let mut done = Vec::new();
//!
//! let now = Millis(0);
//! let Ticket::Pass(pass) = runner.tick(now) else { unreachable!("not disposed") };
//! let report = loop {
//!     match runner.poll_action().expect("the pass ends before the actions run out") {
//!         Action::Claim { .. } => match queue.pop() {
//!             Some(item) => {
//!                 let key = runner.claim_found(now).expect("a claim was in flight");
//!                 slots[key.slot as usize] = Some(item);
//!             }
//!             None => runner.claim_empty(now),
//!         },
//!         Action::Perform { key } => {
//!             done.push(slots[key.slot as usize].take().expect("claimed"));
//!             runner.item_settled(now, key, Ok(()));
//!         }
//!         Action::PassEnded { pass: ended, report } if ended == pass => break report,
//!         _ => {}
//!     }
//! };
//! assert_eq!(done, ["first", "second"]);
//! assert_eq!((report.claimed, report.performed, report.failed), (2, 2, 0));
//! ```
//!
//! # Modules
//!
//! - [`time`]: the `Millis` instant type and spans.
//! - [`backoff`]: `job_backoff` and the delay after failing passes.
//! - [`options`]: runner options, their defaults and validation.
//! - [`event`]: the trace events and the pass report.
//! - [`supervision`]: heartbeat supervision with write tolerance, reconfirm and
//!   lapse, shared by the runner and the run leases.
//! - [`runner`]: the job runner state machine.
//! - [`lease`]: owner identity, lease policy, liveness evidence and the steal
//!   rules of run ownership.
//! - [`pump`]: the event pump's planning and the event log's framing.
//! - [`schedule`]: which slots of a periodic job to enqueue: catch-up and overlap
//!   policies over the slot instants of a cadence.
//! - [`trace_ring`]: the bounded ring of pass spans behind the trace sinks.
//! - [`queue`]: the durable queue's SQL statements, one per file, for each
//!   dialect the stores speak (PostgreSQL, SQLite).
//!
//! # Features
//!
//! - `std` (default): `std::error::Error` for the error types, and runtime CPU
//!   detection for the event log's checksum.
//! - `serde`: `Serialize`/`Deserialize` for the trace ring (saved and resumed
//!   by the hosts).
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
pub mod schedule;
pub mod queue;
pub mod supervision;

pub use backoff::{job_backoff, recovery_backoff, Backoff};
pub use event::{Event, PassReport};
pub use options::{AbortGrace, Config, OptionError, OptionNames, OptionsInput, Scheduling};
pub use runner::{Action, ItemKey, LogKind, PassId, Runner, Ticket};
