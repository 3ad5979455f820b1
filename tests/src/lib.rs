//! leasehold-tests: cross-crate tests and the deterministic simulator
//! ([`sim`]), which runs clusters of core runners over a simulated fenced
//! store, with faults, from a seed, and checks the lease and runner
//! invariants on every step.

pub mod sim;
