//! The trainer's seeded generator: ssnail-synthetic's SplitMix64 (the project's one seeded
//! stream), so a seed gives the same initial weights and batches on every machine (candle's CPU
//! generator cannot be seeded), with the trainer's own seed offset and a shuffle.

/// A seeded generator; the stream is ssnail-synthetic's for `seed ^ 0x5EED_5A11_0000_0000`.
pub struct Rng(ssnail_synthetic::rng::Rng);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(ssnail_synthetic::rng::Rng::new(
            seed ^ 0x5EED_5A11_0000_0000,
        ))
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0.uniform()
    }
    /// N(0, 1) by Box-Muller.
    pub fn normal(&mut self) -> f64 {
        self.0.normal()
    }
    /// Fisher-Yates.
    pub fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            xs.swap(i, j);
        }
    }
}
