//! The deterministic simulator (issue 8): N workers, each a core
//! [`leasehold_core::runner::Runner`] supervising its items' leases, over a
//! simulated store with fencing tokens, in simulated time, with faults, from
//! a seed; every step is checked against the invariants in [`check`].
//!
//! - [`rng`]: the seeded, integer-only PRNG (same seed, same trace, on every
//!   target).
//! - [`config`]: parameters, workload, fault rates, mutations.
//! - [`probe`]: process tables and the pid-probe liveness decision.
//! - [`store`]: the fenced store and its claims; a takeover asks the core's
//!   `leasehold_core::lease::steal::check_steal`, as the real stores do.
//! - [`exit`]: the work apart from its worker (executions, exit latency,
//!   the guard's exit deadline).
//! - [`world`]: the event loop, the hosts, the network, the faults and the
//!   beliefs checked (one file each under `world/`).
//! - [`check`]: the invariants and their predicates.
//! - [`trace`]: the trace and its hash.
//! - [`run`]: running seeds, shrinking a counterexample.
//!
//! Nothing here reads a clock, sleeps or spawns: it builds and runs the same
//! on wasm32-unknown-unknown, and a seed gives the bit-identical trace there
//! (the golden hashes in [`golden`] are checked on both).
//!
//! # Where the mutations live
//!
//! `tolerance-from-reply` and `no-lapse-deadline` are switches inside the
//! core's supervision (core feature `mutations`, test-only); `eperm-as-dead`
//! and `start-time-ignored` are the pid probe's decision
//! ([`probe::owner_alive`]); `fence-ignored` and `confirmation-dropped` are
//! the simulated host; `unfenced-store` is the simulated store.
//!
//! # Defects found
//!
//! Three defects this simulator found are fixed: two in the core, one in
//! the stores. The standard profile runs the faults that exposed the first
//! two (claims answered or applied late, clocks stepping across the whole
//! skew allowance `K`), and `tests/sim_found_defects.rs` turns each fault
//! up as a regression:
//!
//! 1. **A claim answered late was performed past its lease**: the runner
//!    now declines a claim heard `W` or more after its `at` (`claimLost`,
//!    `claim-lost { lapsed: true }`); the world checks
//!    `late-claim-not-performed`.
//! 2. **The reconfirm bound was `now + R`, not `deadline + R`**: a deadline
//!    handled late (a clock that stepped forward, a late timer) lapsed up to
//!    `K` past the stale cutoff once the clock stepped back. The runner's
//!    bound is now `deadline + R`, and a deadline handled after it lapses at
//!    once.
//!
//! 3. **Pid liveness stranded an item whose claim answer was lost**
//!    ([`SimConfig::hosts`] = 1): the claim landed, the claimant saw an
//!    error; same-host peers' pid probe found the owner alive and refused,
//!    and the steal rules refused the owner itself (`ClaimantIsOwner`), so
//!    only a worker on another host could ever take the item. The store
//!    rule that closes it — an owner may re-claim its own stale item on the
//!    lease alone — is in the real stores and on in the simulated one
//!    ([`SimConfig::reclaim_own_stale`]); `tests/sim_one_host.rs` checks
//!    both sides, and `sim --replay 0 --hosts 1 --no-reclaim-own-stale`
//!    shows the defect again.

pub mod check;
pub mod config;
pub mod exit;
pub mod golden;
pub mod probe;
pub mod rng;
pub mod run;
pub mod store;
pub mod trace;
pub mod world;

pub use check::{Invariant, Violation};
pub use config::{Faults, Mutation, Operator, Params, SimConfig, Workload};
pub use run::{run_seed, run_seeds, shrink, Summary};
pub use world::Outcome;
