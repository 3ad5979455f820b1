//! The same seed reproduces the same trace (issue 8), here and on wasm32:
//! both compare against the golden hashes in `sim::golden`.
#![cfg(not(target_arch = "wasm32"))]

use leasehold_tests::sim::{golden, run_seed, run_seeds, SimConfig};

#[test]
fn the_same_seed_gives_the_same_trace_line_for_line() {
    let cfg = SimConfig::standard(4, 100);
    for seed in [0, 7, 4_242] {
        let first = run_seed(seed, &cfg, true);
        let second = run_seed(seed, &cfg, true);
        assert_eq!(first.hash, second.hash, "seed {seed}");
        assert_eq!(first.trace, second.trace, "seed {seed}");
        assert!(first.trace.len() > 500, "seed {seed} traced only {} steps", first.trace.len());
    }
}

#[test]
fn recording_the_trace_does_not_change_it() {
    let cfg = SimConfig::standard(4, 100);
    assert_eq!(run_seed(99, &cfg, true).hash, run_seed(99, &cfg, false).hash);
}

#[test]
fn different_seeds_give_different_traces() {
    let cfg = SimConfig::standard(4, 100);
    assert_ne!(run_seed(1, &cfg, false).hash, run_seed(2, &cfg, false).hash);
}

#[test]
fn golden_trace_hashes_match() {
    for ((name, cfg, start, count), (expected_name, expected)) in golden::cases().into_iter().zip(golden::EXPECTED) {
        assert_eq!(name, expected_name);
        let hash = run_seeds(start, count, &cfg, 0).hash;
        assert_eq!(
            hash, expected,
            "{name}: trace hash {hash:016x} differs from the golden {expected:016x}; if the core's behaviour \
             changed on purpose, regenerate with `cargo run -p leasehold-tests --release --bin sim -- --golden`"
        );
    }
}
