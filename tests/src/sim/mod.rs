//! The deterministic simulator (issue 8): N workers, each a core
//! [`leasehold_core::runner::Runner`] supervising its items' leases, over a
//! simulated store with fencing tokens, in simulated time, with faults, from
//! a seed; every step is checked against the invariants in [`check`].
//!
//! - [`rng`]: the seeded, integer-only PRNG (same seed, same trace, on every
//!   target).
//! - [`config`]: parameters, workload, fault rates, mutations.
//! - [`probe`]: process tables and the pid-probe liveness decision.
//! - [`store`]: the fenced store, its claim and steal rules.
//! - [`world`]: the event loop and the hosts.
//! - [`check`]: the invariants and their predicates.
//! - [`trace`]: the trace and its hash.
//! - [`run`]: running seeds, shrinking a counterexample.
//!
//! Nothing here reads a clock, sleeps or spawns: it builds and runs the same
//! on wasm32-unknown-unknown.

pub mod check;
pub mod config;
pub mod golden;
pub mod probe;
pub mod rng;
pub mod run;
pub mod store;
pub mod trace;
pub mod world;

pub use check::{Invariant, Violation};
pub use config::{Faults, Mutation, Params, SimConfig, Workload};
pub use run::{run_seed, run_seeds, shrink, Summary};
pub use world::Outcome;
