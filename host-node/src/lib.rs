//! Durable job loops for tokio services: claim work from a store, perform each
//! item under a lease that heartbeats renew, and stop the work when the lease
//! is lost, so an item another process has taken over is never worked on at
//! the same time, and finished work is never thrown away. Project home:
//! <https://github.com/leasehold-rs/leasehold>.
//!
//! # Architecture
//!
//! Every policy (passes, backoff, concurrency, wakes, lease arithmetic and
//! heartbeat supervision, liveness evidence, event-log framing) is a sans-IO
//! state machine in [`leasehold_core`] (re-exported as [`core`]). This crate is
//! the tokio host: it owns the clock, the timers, the tasks and your callbacks,
//! feeds the core and carries out what it asks. On top of that:
//!
//! - [`runner`]: [`JobRunner`] runs a [`Job`] (claim, perform with an
//!   [`AbortSignal`], optional heartbeat) in passes; one task per runner.
//! - [`store`] (features `sqlite`, `postgres`): durable queues on SQL with
//!   fenced claims, renewals and settles; [`worker`] joins a store to a runner.
//! - [`lease`] and [`liveness`]: keeping a run's lease while owned work runs,
//!   and the checks a peer makes before taking a run over.
//! - [`eventlog`] and [`pump`]: an append-only event log and the pump that
//!   derives events from durable journals into it.
//! - [`trace_ring`]: a bounded history of recent passes, to hand a runner as
//!   its event sink.
//!
//! # Example: a job over an in-memory queue
//!
//! ```
//! use leasehold::core::Millis;
//! use leasehold::{AbortSignal, BoxError, Job, JobRunner};
//! use std::sync::{Arc, Mutex};
//!
//! struct Shout {
//!     queue: Mutex<Vec<&'static str>>,
//!     done: Arc<Mutex<Vec<String>>>,
//! }
//!
//! impl Job for Shout {
//!     type Item = &'static str;
//!
//!     // One claim attempt; `None` ends the pass.
//!     async fn claim(&self, _at: Millis) -> Result<Option<&'static str>, BoxError> {
//!         Ok(self.queue.lock().unwrap().pop())
//!     }
//!
//!     // The work; `signal` fires if the claim is lost meanwhile.
//!     async fn perform(&self, word: &'static str, signal: AbortSignal) -> Result<(), BoxError> {
//!         signal.check()?;
//!         self.done.lock().unwrap().push(word.to_uppercase());
//!         Ok(())
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let done = Arc::new(Mutex::new(Vec::new()));
//! let job = Shout { queue: Mutex::new(vec!["b", "a"]), done: done.clone() };
//! let runner = JobRunner::builder("shout").spawn(job)?; // on the current tokio runtime
//! let report = runner.tick().await; // one pass: claim until the queue is empty
//! assert_eq!((report.claimed, report.performed), (2, 2));
//! assert_eq!(*done.lock().unwrap(), ["A", "B"]);
//! runner.dispose().await;
//! # Ok(())
//! # }
//! ```
//!
//! A durable queue is a [`store::Store`] (`Store::connect("sqlite:///var/lib/app/queue.db")`),
//! a [`worker::Handler`], and a [`worker::Worker`] under a runner, started with
//! [`JobRunner::start`]; [`schedule::drive`] queues the due slots of a queue's
//! schedules. The crate's README has a whole worker service (the `service`
//! example in the repository).
//!
//! # Features
//!
//! - `sqlite` (default): the embedded store, a SQLite file and no server.
//! - `postgres`: the scale-out store (many workers on many machines over one
//!   database: `FOR UPDATE SKIP LOCKED` claims, `LISTEN/NOTIFY` wake-ups).
//! - `metrics`: Prometheus metrics of a queue and of a worker process
//!   (the `metrics` module, with a store).
//! - `otel`: OpenTelemetry spans of enqueues, claims, performs and settles
//!   through `tracing` (read them with `tracing-opentelemetry`), following
//!   the messaging semantic conventions; each job keeps its enqueue's trace
//!   context and the spans of its attempts link to it.
//! - `cli`: the `leasehold` command-line tool (`cargo install leasehold
//!   --features cli`); turns on both stores and the tool's own dependencies.
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

#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub mod schedule;

#[cfg(all(feature = "metrics", any(feature = "sqlite", feature = "postgres")))]
pub mod metrics;

#[cfg(all(feature = "otel", any(feature = "sqlite", feature = "postgres")))]
mod otel;
