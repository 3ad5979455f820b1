//! A seeded PRNG for the simulator: SplitMix64, integers only.
//!
//! No floats anywhere in the simulator, so a seed gives the bit-identical
//! trace on every target (native and wasm32): floating-point `ln`/`exp` come
//! from different libm ports on different targets.

/// SplitMix64 (Steele, Lea, Flood 2014): one `u64` of state, passes BigCrush,
/// and every seed (zero included) is a valid state.
#[derive(Clone, Debug)]
pub struct Rng(u64);

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// An independent stream for one purpose of one actor: turning one fault
    /// kind off or adding a worker leaves the other streams' draws unchanged,
    /// which keeps a shrunk counterexample close to the original.
    pub fn stream(seed: u64, purpose: u64, index: u64) -> Rng {
        Rng(mix(seed ^ mix(purpose.wrapping_mul(GOLDEN) ^ mix(index.wrapping_add(0x5851_f42d_4c95_7f2d)))))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix(self.0)
    }

    /// Uniform in `0..n` (`n > 0`; 0 answers 0), by Lemire's multiply-shift.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi` (`hi < lo` answers `lo`).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `per_mille / 1000`.
    pub fn chance(&mut self, per_mille: u32) -> bool {
        per_mille > 0 && self.below(1000) < u64::from(per_mille)
    }

    /// A gap until the next occurrence of a fault whose mean gap is `mean`
    /// ms: uniform in `1..=2·mean` (mean `mean`, integers only). `None` when
    /// the fault is off (`mean == 0`).
    pub fn gap(&mut self, mean: u64) -> Option<u64> {
        (mean > 0).then(|| self.range(1, 2 * mean))
    }

    /// One of `items`, uniformly.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn same_seed_gives_the_same_stream_and_streams_differ() {
        let a: Vec<u64> = (0..8).map({ let mut r = Rng::stream(7, 1, 2); move |_| r.next_u64() }).collect();
        let b: Vec<u64> = (0..8).map({ let mut r = Rng::stream(7, 1, 2); move |_| r.next_u64() }).collect();
        let c: Vec<u64> = (0..8).map({ let mut r = Rng::stream(7, 1, 3); move |_| r.next_u64() }).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn splitmix64_matches_the_reference_output() {
        // Reference values of SplitMix64 seeded with 0 (Vigna's splitmix64.c).
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn range_stays_inside_its_bounds_and_reaches_both_ends() {
        let mut r = Rng::new(42);
        let draws: Vec<u64> = (0..2000).map(|_| r.range(3, 6)).collect();
        assert!(draws.iter().all(|d| (3..=6).contains(d)));
        assert!(draws.contains(&3) && draws.contains(&6));
    }
}
