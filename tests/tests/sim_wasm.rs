//! The simulator in wasm32 under Node (issue 8: "100 in wasm"): the
//! invariants hold, and the traces are bit-identical to the native ones (the
//! same golden hashes `sim_determinism` checks natively).
//!
//! Run: `cargo test -p leasehold-tests --target wasm32-unknown-unknown`
//! (needs `wasm-bindgen-test-runner`, from `wasm-bindgen-cli` at the
//! workspace's pinned wasm-bindgen version).
#![cfg(target_arch = "wasm32")]

use leasehold_tests::sim::{golden, run_seeds, SimConfig};
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn a_hundred_seeds_keep_every_invariant_in_wasm() {
    let summary = run_seeds(0, 100, &SimConfig::standard(4, 100), 1);
    assert_eq!(summary.seeds, 100);
    if let Some(failure) = summary.failures.first() {
        panic!("seed {}: {}", failure.seed, failure.violation.as_ref().expect("a violation"));
    }
}

#[wasm_bindgen_test]
fn traces_in_wasm_match_the_native_golden_hashes() {
    for ((name, cfg, start, count), (_, expected)) in golden::cases().into_iter().zip(golden::EXPECTED) {
        let hash = run_seeds(start, count, &cfg, 0).hash;
        assert_eq!(hash, expected, "{name}: wasm32 trace hash {hash:016x} differs from the native golden {expected:016x}");
    }
}
