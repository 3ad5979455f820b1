//! leasehold-tests: cross-crate tests and the simulator.
