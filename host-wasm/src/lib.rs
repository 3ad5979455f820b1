//! leasehold-wasm: the core runner exposed to JavaScript (npm `leasehold`).
