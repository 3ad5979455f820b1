//! Keeps the test-only `mutations` feature out of real builds.
//!
//! The feature compiles in deliberately broken lease supervision for the
//! simulator's mutation check. Cargo lets any crate in a dependency graph turn
//! a feature on, so the feature alone is no guard: this script refuses it
//! unless `LEASEHOLD_CORE_MUTATIONS=allow` is in the build's environment, which
//! this repository's `.cargo/config.toml` sets for its own simulator and tests
//! and which no dependent crate gets by accident.

fn main() {
    println!("cargo:rerun-if-env-changed=LEASEHOLD_CORE_MUTATIONS");
    let wanted = std::env::var_os("CARGO_FEATURE_MUTATIONS").is_some();
    let allowed = std::env::var("LEASEHOLD_CORE_MUTATIONS").is_ok_and(|v| v == "allow");
    if wanted && !allowed {
        // `cargo::error` fails the build with this message alone (no backtrace).
        println!(
            "cargo::error=the `mutations` feature compiles in deliberately broken lease \
             supervision for leasehold's own simulator, and something in this build turned it \
             on. Remove `features = [\"mutations\"]` from the dependency that asks for it; \
             leasehold's repository allows it with LEASEHOLD_CORE_MUTATIONS=allow."
        );
    }
}
