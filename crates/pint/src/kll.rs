//! A KLL quantile sketch (Karnin, Lang, Liberty, FOCS 2016), written for this crate.
//!
//! The sketch is a stack of *compactors*. Level `h` holds items of weight `2^h`. New items
//! enter level 0. When the sketch holds as many items as its total capacity, the lowest level
//! that is at or over its own capacity is *compacted*: its items are sorted, one is kept back if
//! their number is odd, and of the rest every other item (starting at a random offset 0 or 1) is
//! promoted to the next level with double weight; the others are dropped. Level capacities
//! shrink geometrically downwards: `cap(h) = max(2, ⌈k · c^(H-1-h)⌉)` with `c = 2/3` and `H`
//! levels, so the top level holds about `k` items and the whole sketch about `3k`.
//!
//! **Error bound.** For any fixed query `x`, one compaction at level `h` changes the estimated
//! rank of `x` by `+2^h`, `-2^h` (each with probability 1/2, when the number of compacted items
//! `<= x` is odd) or 0. The errors form a martingale with increments bounded by `w_i = 2^h_i`,
//! so by Azuma–Hoeffding `P(|rank_est(x) - rank(x)| >= t) <= 2 exp(-t² / (2 Σ w_i²))`.
//! The sketch tracks `Σ w_i²` over its compactions; [`Kll::rank_error_bound`] returns
//! `t(δ) = sqrt(2 Σ w_i² ln(2/δ))`. (The KLL analysis shows `Σ w_i² = O(n² / k²)`, i.e. an
//! additive rank error `O(n / k · sqrt(ln 1/δ))`.) The total weight always equals the number
//! of items inserted.
//!
//! **Memory budget.** [`Kll::with_budget`] caps the number of retained items: whenever a level
//! is added, `k` is lowered (to at least 2) until the capacities sum to at most the budget, so
//! the sketch never holds more than `budget` items (as long as `budget >= 2 · levels`, i.e.
//! streams shorter than about `2^(budget/2)` items).
//!
//! ```
//! use dcsim_pint::kll::Kll;
//!
//! let mut s = Kll::with_budget(100, 7).unwrap();
//! for x in 0..10_000u32 {
//!     s.update(x);
//! }
//! assert!(s.retained() <= 100);
//! assert_eq!(s.len(), 10_000);
//! let median = s.quantile(0.5).unwrap();
//! let err = (i64::from(median) - 4_999).unsigned_abs();
//! assert!(err as f64 <= s.rank_error_bound(1e-6));
//! ```

use crate::error::PintError;
use crate::hash::mix64;
use crate::stats::nearest_rank_index;

/// Capacity ratio between adjacent levels.
const C: f64 = 2.0 / 3.0;

/// A KLL sketch over totally ordered items.
#[derive(Debug, Clone)]
pub struct Kll<T> {
    /// Nominal capacity of the top level.
    k_max: usize,
    /// Current `k` (lowered under a budget).
    k: usize,
    budget: Option<usize>,
    levels: Vec<Vec<T>>,
    caps: Vec<usize>,
    max_size: usize,
    size: usize,
    n: u64,
    rng: u64,
    /// Σ over compactions of (2^h)².
    var: f64,
    compactions: u64,
}

impl<T: Ord + Copy> Kll<T> {
    /// A sketch with top-level capacity `k >= 2` (about `3k` items retained). `seed` drives the
    /// compaction coins.
    pub fn new(k: usize, seed: u64) -> Result<Self, PintError> {
        if k < 2 {
            return Err(PintError::InvalidSketch(k));
        }
        Ok(Self::build(k, None, seed))
    }

    /// A sketch that never retains more than `budget >= 8` items (see the module docs).
    pub fn with_budget(budget: usize, seed: u64) -> Result<Self, PintError> {
        if budget < 8 {
            return Err(PintError::InvalidSketch(budget));
        }
        Ok(Self::build(budget, Some(budget), seed))
    }

    fn build(k: usize, budget: Option<usize>, seed: u64) -> Self {
        let mut s = Kll {
            k_max: k,
            k,
            budget,
            levels: Vec::new(),
            caps: Vec::new(),
            max_size: 0,
            size: 0,
            n: 0,
            rng: seed,
            var: 0.0,
            compactions: 0,
        };
        s.grow();
        s
    }

    fn caps_for(k: usize, levels: usize) -> Vec<usize> {
        (0..levels)
            .map(|h| {
                let depth = (levels - 1 - h) as i32;
                ((k as f64 * C.powi(depth)).ceil() as usize).max(2)
            })
            .collect()
    }

    /// Add a level and recompute the capacities (lowering `k` under a budget).
    fn grow(&mut self) {
        self.levels.push(Vec::new());
        let h = self.levels.len();
        let mut k = self.k_max;
        let mut caps = Self::caps_for(k, h);
        if let Some(b) = self.budget {
            while k > 2 && caps.iter().sum::<usize>() > b {
                k -= 1;
                caps = Self::caps_for(k, h);
            }
        }
        self.k = k;
        self.max_size = caps.iter().sum();
        self.caps = caps;
    }

    fn coin(&mut self) -> usize {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        (mix64(self.rng) >> 63) as usize
    }

    /// Insert one item.
    pub fn update(&mut self, item: T) {
        self.levels[0].push(item);
        self.size += 1;
        self.n += 1;
        while self.size >= self.max_size {
            self.compress();
        }
    }

    /// Compact the lowest level at or over capacity (one exists when `size >= max_size`).
    fn compress(&mut self) {
        let h = (0..self.levels.len())
            .find(|&h| self.levels[h].len() >= self.caps[h])
            .expect("a level is at capacity when the sketch is full");
        if h + 1 == self.levels.len() {
            self.grow();
        }
        let mut items = std::mem::take(&mut self.levels[h]);
        items.sort_unstable();
        let keep = if items.len() % 2 == 1 { items.pop() } else { None };
        let offset = self.coin();
        let before = items.len();
        let promoted: Vec<T> = items.iter().copied().skip(offset).step_by(2).collect();
        self.levels[h + 1].extend(promoted);
        items.clear();
        items.extend(keep);
        self.levels[h] = items;
        self.size -= before / 2;
        let w = (h as f64).exp2();
        self.var += w * w;
        self.compactions += 1;
    }

    /// Number of items inserted (the total weight).
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Whether nothing was inserted.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Number of items currently stored.
    pub fn retained(&self) -> usize {
        self.size
    }

    /// Current top-level capacity `k`.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Number of levels.
    pub fn levels(&self) -> usize {
        self.levels.len()
    }

    /// Number of compactions so far.
    pub fn compactions(&self) -> u64 {
        self.compactions
    }

    /// `Σ w_i²` over all compactions (the variance proxy of the rank error).
    pub fn variance_proxy(&self) -> f64 {
        self.var
    }

    /// Azuma–Hoeffding bound `sqrt(2 Σ w_i² ln(2/δ))`: for any fixed query, the rank error
    /// exceeds it with probability at most `δ`.
    pub fn rank_error_bound(&self, delta: f64) -> f64 {
        (2.0 * self.var * (2.0 / delta).ln()).sqrt()
    }

    /// Estimated number of inserted items `<= x`.
    pub fn rank(&self, x: T) -> u64 {
        self.levels
            .iter()
            .enumerate()
            .map(|(h, l)| (l.iter().filter(|&&y| y <= x).count() as u64) << h)
            .sum()
    }

    /// The stored items with their weights, sorted by item.
    pub fn weighted_items(&self) -> Vec<(T, u64)> {
        let mut v: Vec<(T, u64)> = self
            .levels
            .iter()
            .enumerate()
            .flat_map(|(h, l)| l.iter().map(move |&y| (y, 1u64 << h)))
            .collect();
        v.sort_unstable_by_key(|p| p.0);
        v
    }

    /// Estimated nearest-rank `q`-quantile: the smallest stored item whose cumulative weight
    /// reaches `⌈q · n⌉` (at least 1). `None` when empty or `q ∉ [0, 1]`.
    pub fn quantile(&self, q: f64) -> Option<T> {
        if self.n == 0 || !(0.0..=1.0).contains(&q) {
            return None;
        }
        let target = nearest_rank_index(self.n as usize, q) as u64 + 1;
        let mut acc = 0;
        let items = self.weighted_items();
        for &(y, w) in &items {
            acc += w;
            if acc >= target {
                return Some(y);
            }
        }
        items.last().map(|p| p.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_streams_are_exact() {
        let mut s = Kll::new(200, 1).unwrap();
        for x in (0..100u32).rev() {
            s.update(x);
        }
        assert_eq!(s.compactions(), 0);
        assert_eq!(s.quantile(0.5), Some(49));
        assert_eq!(s.quantile(0.0), Some(0));
        assert_eq!(s.quantile(1.0), Some(99));
        assert_eq!(s.rank(10), 11);
        assert_eq!(s.quantile(1.5), None);
    }

    #[test]
    fn weight_is_conserved_and_budget_respected() {
        let mut s = Kll::with_budget(100, 3).unwrap();
        for x in 0..50_000u64 {
            s.update(mix64(x));
            assert!(s.retained() <= 100);
        }
        let total: u64 = s.weighted_items().iter().map(|p| p.1).sum();
        assert_eq!(total, 50_000);
        assert_eq!(s.rank(u64::MAX), 50_000);
        assert!(s.k() >= 20, "k = {}", s.k());
    }

    #[test]
    fn invalid() {
        assert!(Kll::<u32>::new(1, 0).is_err());
        assert!(Kll::<u32>::with_budget(7, 0).is_err());
        assert!(Kll::<u32>::new(2, 0).unwrap().quantile(0.5).is_none());
    }
}
