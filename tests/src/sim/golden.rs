//! Golden trace hashes: the same seeds must give these exact traces on every
//! target (the native and the wasm32 determinism tests both compare against
//! them). When the core's behaviour changes on purpose, regenerate them with
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

/// The combined trace hash of each case, in [`cases`] order.
pub const EXPECTED: [(&str, u64); 3] = [
    ("standard-4x100", 0xe00d_3ec2_c6c3_ad32),
    ("standard-2x30", 0xb5c4_eec5_7a42_1c3f),
    ("throttled-4x60", 0x2538_3e48_4cd9_7d31),
];
