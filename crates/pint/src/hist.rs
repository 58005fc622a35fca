//! A fixed-size histogram over `b`-bit digest codes: a relative-error quantile sketch for
//! multiplicatively compressed values.
//!
//! PINT's latency digests are codes of a multiplicative codec (code `c` stands for
//! `min · β^c`), so a histogram that counts codes is a log-bucketed histogram with bucket ratio
//! `β` — the structure of DDSketch (Masson, Rim, Lee, VLDB 2019), with the codec's own buckets.
//! While the digests use at most [`CodeHist::max_buckets`] distinct codes it is **exact**: its
//! quantiles are those of all digests received.
//!
//! **Collapsing.** When a new bucket would exceed the budget, the resolution halves: codes
//! `2j` and `2j + 1` share a bucket from then on (after `s` such steps a bucket holds `2^s`
//! adjacent codes, and `β` effectively becomes `β^(2^s)`), as in UDDSketch (Epicoco et al.,
//! 2020). A quantile is answered with the bucket's code range; [`CodeRange::mid`] is its
//! log-domain middle, within a factor `β^(2^(s-1))` of every code in the range. So every
//! quantile keeps a relative-error guarantee, that of a codec with `s` fewer bits, and the
//! number of steps is bounded: `2^b` codes fit `m` buckets after `⌈log2(2^b / m)⌉` steps.
//! (DDSketch's own policy, merging the two lowest buckets, keeps the high quantiles exact but
//! answers the low ones with the merged bucket's top code; on simulated hop latencies it put
//! the median off by several times its value, so it is not used.)
//!
//! **Memory.** A bucket is a `b`-bit code and a 16-bit count, so a budget of `B` bytes holds
//! `⌊8B / (b + 16)⌋` buckets (33 for 100 bytes of 8-bit codes; 40 for 4-bit, of which 16
//! are used), and never more than `2^b`. When a count would overflow (65 535 digests in one bucket), every count is
//! halved, an odd one rounded up or down on a fair coin, and later insertions are counted with
//! probability `2^-h` after `h` halvings; each stored count stays an unbiased estimate of its
//! share, at the price of some rank error in streams that long (seeded coins: deterministic).
//!
//! ```
//! use dcsim_pint::hist::{CodeHist, CodeRange};
//!
//! let mut h = CodeHist::with_budget(100, 8, 1).unwrap();
//! assert_eq!(h.max_buckets(), 33);
//! for i in 0..1000u32 {
//!     h.update(if i % 100 == 0 { 200 } else { 40 }); // 1% of the digests are 200
//! }
//! assert_eq!(h.quantile(0.5), Some(CodeRange { lo: 40, hi: 40 }));
//! assert_eq!(h.quantile(0.995), Some(CodeRange { lo: 200, hi: 200 }));
//! for c in 0..40 {
//!     h.update(c); // 40 more distinct codes: pairs of codes share a bucket
//! }
//! assert_eq!(h.resolution_shift(), 1);
//! assert_eq!(h.quantile(0.5), Some(CodeRange { lo: 40, hi: 41 }));
//! ```

use crate::error::PintError;
use crate::hash::mix64;
use crate::stats::nearest_rank_index;

/// Bits of a bucket's count.
pub const COUNT_BITS: u32 = 16;

/// The smallest budget, in bytes, that holds two buckets of `bits`-bit codes.
pub fn min_bytes(bits: u32) -> usize {
    (2 * (bits as usize + COUNT_BITS as usize)).div_ceil(8)
}

/// The codes `lo..=hi` of one histogram bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeRange {
    /// Lowest code of the bucket.
    pub lo: u32,
    /// Highest code of the bucket.
    pub hi: u32,
}

impl CodeRange {
    /// The range of the single code `c`.
    pub fn one(c: u32) -> Self {
        CodeRange { lo: c, hi: c }
    }

    /// The middle of the range as a (fractional) code: in the log domain of a multiplicative
    /// codec, the value that is off by the least factor from every code of the range.
    pub fn mid(&self) -> f64 {
        (f64::from(self.lo) + f64::from(self.hi)) / 2.0
    }
}

/// A histogram of digest codes in a fixed number of bytes (see the module docs).
#[derive(Debug, Clone)]
pub struct CodeHist {
    max_buckets: usize,
    bits: u32,
    /// `(code >> res_shift, count)`, by increasing key.
    buckets: Vec<(u32, u16)>,
    /// Resolution halvings so far: a bucket holds `2^res_shift` adjacent codes.
    res_shift: u32,
    /// Count halvings so far.
    count_shift: u32,
    n: u64,
    rng: u64,
}

impl CodeHist {
    /// A histogram of `bits`-bit codes (`1..=31`) in `bytes` bytes; at least two buckets must
    /// fit. `seed` drives the counting coin after a count overflow.
    pub fn with_budget(bytes: usize, bits: u32, seed: u64) -> Result<Self, PintError> {
        if !(1..=31).contains(&bits) {
            return Err(PintError::InvalidHistogram { bytes, bits });
        }
        let max_buckets = bytes.saturating_mul(8) / (bits + COUNT_BITS) as usize;
        if max_buckets < 2 {
            return Err(PintError::InvalidHistogram { bytes, bits });
        }
        Ok(CodeHist {
            // More buckets than codes are never used.
            max_buckets: max_buckets.min(1 << bits),
            bits,
            buckets: Vec::new(),
            res_shift: 0,
            count_shift: 0,
            n: 0,
            rng: seed,
        })
    }

    /// Buckets the budget holds (at most one per code).
    pub fn max_buckets(&self) -> usize {
        self.max_buckets
    }

    /// Buckets in use.
    pub fn buckets(&self) -> usize {
        self.buckets.len()
    }

    /// Resolution halvings so far (0 while the histogram is exact).
    pub fn resolution_shift(&self) -> u32 {
        self.res_shift
    }

    /// Number of codes inserted.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Whether nothing was inserted.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Whether this insertion is counted (always, until a count has overflowed).
    fn counted(&mut self) -> bool {
        if self.count_shift == 0 {
            return true;
        }
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.rng) >> (64 - self.count_shift.min(63)) == 0
    }

    /// Insert one code (`< 2^bits`).
    pub fn update(&mut self, code: u32) {
        debug_assert!(
            u64::from(code) < 1u64 << self.bits,
            "code {code} has more than {} bits",
            self.bits
        );
        self.n += 1;
        if !self.counted() {
            return;
        }
        loop {
            let key = code >> self.res_shift;
            match self.buckets.binary_search_by_key(&key, |b| b.0) {
                Ok(i) => return self.add_one(i),
                Err(i) if self.buckets.len() < self.max_buckets => {
                    self.buckets.insert(i, (key, 0));
                    return self.add_one(i);
                }
                Err(_) => self.halve_resolution(),
            }
        }
    }

    /// Merge buckets `2j` and `2j + 1` of the current resolution.
    fn halve_resolution(&mut self) {
        self.res_shift += 1;
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(self.buckets.len());
        for &(key, count) in &self.buckets {
            match merged.last_mut() {
                Some(last) if last.0 == key >> 1 => last.1 += u32::from(count),
                _ => merged.push((key >> 1, u32::from(count))),
            }
        }
        if merged.iter().any(|m| m.1 > u32::from(u16::MAX)) {
            self.halve(&mut merged);
        }
        self.buckets.clear();
        self.buckets.extend(merged.into_iter().map(|(k, c)| (k, c as u16)));
    }

    fn add_one(&mut self, i: usize) {
        if self.buckets[i].1 < u16::MAX {
            self.buckets[i].1 += 1;
            return;
        }
        let mut counts: Vec<(u32, u32)> = self
            .buckets
            .iter()
            .map(|&(k, c)| (k, u32::from(c) + u32::from(k == self.buckets[i].0)))
            .collect();
        self.halve(&mut counts);
        self.buckets.clear();
        self.buckets.extend(counts.into_iter().map(|(k, c)| (k, c as u16)));
    }

    /// Halves every count, rounding an odd one up or down on a fair coin (so each count stays
    /// unbiased), and drops buckets left empty.
    fn halve(&mut self, counts: &mut Vec<(u32, u32)>) {
        for c in counts.iter_mut() {
            c.1 = c.1 / 2 + (c.1 % 2 == 1 && self.coin()) as u32;
        }
        counts.retain(|c| c.1 > 0);
        self.count_shift += 1;
    }

    fn coin(&mut self) -> bool {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.rng) >> 63 == 1
    }

    /// Nearest-rank `q`-quantile over the stored counts, as the codes of its bucket (`None` if
    /// empty).
    pub fn quantile(&self, q: f64) -> Option<CodeRange> {
        let total: u64 = self.buckets.iter().map(|b| u64::from(b.1)).sum();
        if total == 0 {
            return None;
        }
        let idx = nearest_rank_index(total as usize, q) as u64;
        let mut seen = 0u64;
        let key = self
            .buckets
            .iter()
            .find(|b| {
                seen += u64::from(b.1);
                seen > idx
            })
            .map_or(self.buckets[self.buckets.len() - 1].0, |b| b.0);
        let lo = key << self.res_shift;
        Some(CodeRange { lo, hi: lo + ((1u32 << self.res_shift) - 1) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn exact(codes: &[u32], q: f64) -> u32 {
        let mut v = codes.to_vec();
        v.sort_unstable();
        v[nearest_rank_index(v.len(), q)]
    }

    fn one(c: u32) -> Option<CodeRange> {
        Some(CodeRange { lo: c, hi: c })
    }

    #[test]
    fn budget_arithmetic() {
        assert_eq!(CodeHist::with_budget(100, 8, 0).unwrap().max_buckets(), 33);
        assert_eq!(CodeHist::with_budget(100, 4, 0).unwrap().max_buckets(), 16); // 40 > 2^4
        assert_eq!(CodeHist::with_budget(usize::MAX, 8, 0).unwrap().max_buckets(), 256);
        assert!(CodeHist::with_budget(100, u32::MAX - 15, 0).is_err());
        assert!(CodeHist::with_budget(100, 32, 0).is_err());
        assert_eq!(CodeHist::with_budget(6, 8, 0).unwrap().max_buckets(), 2);
        assert!(CodeHist::with_budget(5, 8, 0).is_err());
        assert_eq!((min_bytes(8), min_bytes(4)), (6, 5));
        assert!(CodeHist::with_budget(100, 0, 0).is_err());
        assert!(CodeHist::with_budget(100, 8, 0).unwrap().quantile(0.5).is_none());
        assert_eq!(CodeRange { lo: 4, hi: 7 }.mid(), 5.5);
    }

    /// A full histogram halves its resolution, as often as needed for the new code.
    #[test]
    fn collapse_merges_pairs() {
        let mut h = CodeHist::with_budget(6, 8, 0).unwrap(); // 2 buckets
        for c in [5, 1, 5] {
            h.update(c);
        }
        assert_eq!((h.resolution_shift(), h.quantile(0.0), h.quantile(1.0)), (0, one(1), one(5)));
        h.update(2); // keys 0, 1, 2 at shift 1 and 0, 0, 1 at shift 2: two halvings
        assert_eq!(h.resolution_shift(), 2);
        assert_eq!(h.buckets(), 2);
        assert_eq!(h.quantile(0.5), Some(CodeRange { lo: 0, hi: 3 }));
        assert_eq!(h.quantile(0.75), Some(CodeRange { lo: 4, hi: 7 }));
        h.update(3);
        assert_eq!(h.buckets(), 2);
        assert_eq!(h.quantile(0.6), Some(CodeRange { lo: 0, hi: 3 }));
    }

    /// Counts past 16 bits halve; proportions and quantiles survive.
    #[test]
    fn count_overflow_halves() {
        let mut h = CodeHist::with_budget(100, 8, 3).unwrap();
        for i in 0..300_000u32 {
            h.update(match i % 10 {
                0 => 50,
                1..=3 => 20,
                _ => 10,
            });
        }
        assert_eq!(h.len(), 300_000);
        assert!(h.count_shift >= 2, "{}", h.count_shift);
        assert_eq!(h.quantile(0.5), one(10));
        assert_eq!(h.quantile(0.75), one(20));
        assert_eq!(h.quantile(0.95), one(50));
        let total: u64 = h.buckets.iter().map(|b| u64::from(b.1)).sum();
        let share = f64::from(h.buckets[2].1) / total as f64;
        assert!((share - 0.1).abs() < 0.01, "{share}");
    }

    /// One heavy code and rare tail codes over a stream long enough for several halvings: the
    /// tail's share stays near its true 0.1% (the bias of a rounding rule is checked by
    /// `halving_rounds_a_singleton_without_bias`).
    #[test]
    fn halving_keeps_rare_codes_unbiased() {
        let mut tail_share = 0.0;
        for seed in 0..20 {
            let mut h = CodeHist::with_budget(100, 8, seed).unwrap();
            for i in 0..400_000u32 {
                h.update(if i % 1000 == 999 { 100 + (i / 1000) % 30 } else { 10 });
            }
            assert!(h.count_shift >= 2);
            let total: u64 = h.buckets.iter().map(|b| u64::from(b.1)).sum();
            let tail: u64 = h.buckets.iter().filter(|b| b.0 >= 100).map(|b| u64::from(b.1)).sum();
            tail_share += tail as f64 / total as f64 / 20.0;
        }
        assert!((tail_share - 0.001).abs() < 0.0003, "{tail_share}");
    }

    /// The first halving with a singleton beside a full bucket: the singleton's expected
    /// count must halve too (0.5), not stay at 1 as rounding up would keep it.
    #[test]
    fn halving_rounds_a_singleton_without_bias() {
        let runs = 400;
        let mut kept = 0;
        for seed in 0..runs {
            let mut h = CodeHist::with_budget(100, 8, seed).unwrap();
            h.update(3);
            for _ in 0..=u32::from(u16::MAX) {
                h.update(10);
            }
            assert_eq!(h.count_shift, 1);
            assert_eq!(h.buckets.last(), Some(&(10, 32_768)));
            kept += h.buckets.iter().filter(|b| b.0 == 3).map(|b| u32::from(b.1)).sum::<u32>();
        }
        let mean = f64::from(kept) / f64::from(runs as u32);
        assert!((mean - 0.5).abs() < 0.1, "{mean}");
    }

    proptest! {
        /// Every answer is the bucket of the exact quantile at the current resolution (no rank
        /// error), and the resolution is the finest at which the distinct codes fit.
        #[test]
        fn quantiles_are_the_exact_ones_coarsened(codes in prop::collection::vec(0u32..256, 1..400)) {
            let mut h = CodeHist::with_budget(30, 8, 1).unwrap(); // 10 buckets
            for &c in &codes {
                h.update(c);
            }
            let s = h.resolution_shift();
            for q in [0.0, 0.1, 0.5, 0.9, 0.99, 1.0] {
                let want = exact(&codes, q);
                let got = h.quantile(q).unwrap();
                prop_assert!(got.lo <= want && want <= got.hi);
                prop_assert_eq!(got.lo, (want >> s) << s);
            }
            let distinct = |s: u32| {
                let mut k: Vec<u32> = codes.iter().map(|c| c >> s).collect();
                k.sort_unstable();
                k.dedup();
                k.len()
            };
            prop_assert!(distinct(s) <= 10);
            prop_assert!(s == 0 || distinct(s - 1) > 10);
        }
    }
}
