//! Golden trace hashes: the same seeds must give these exact traces on every
//! target (the native and the wasm32 determinism tests both compare against
//! them). When the core's or the simulated world's behaviour changes on
//! purpose, regenerate them with
//! `cargo run -p leasehold-tests --release --bin sim -- --golden` and paste
//! the hashes into [`EXPECTED`].

use super::config::SimConfig;

/// The golden cases: name, setup, first seed, seed count.
pub fn cases() -> Vec<(&'static str, SimConfig, u64, u64)> {
    vec![
        ("standard-4x100", SimConfig::standard(4, 100), 0, 20),
        ("standard-2x30", SimConfig::standard(2, 30), 1_000, 20),
        ("throttled-4x60", SimConfig::throttled(4, 60), 2_000, 10),
    ]
}

/// The combined trace hash of each case, in [`cases`] order. The two
/// standard cases were re-recorded when the operator's cancels and retries
/// joined the standard profile ([`super::config::Operator::standard`]); the
/// throttled case, without the operator, kept its hash. All three were
/// re-recorded when the simulated store began taking leases over through
/// each claimant's lease watch, as the SQLite store does
/// ([`super::store`]): a takeover now comes when the claimant's watch lets
/// the lease go, not when its clock calls the lease stale, and every case
/// has takeovers.
pub const EXPECTED: [(&str, u64); 3] = [
    ("standard-4x100", 0x4c8b_ad59_e4a0_ab1a),
    ("standard-2x30", 0x3630_a4e8_4e06_771b),
    ("throttled-4x60", 0xfdaf_433d_d6f9_e334),
];
