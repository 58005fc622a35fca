//! Small summary statistics used by the experiment drivers.

/// Arithmetic mean (`NaN` for an empty slice).
pub fn mean(xs: &[u64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().map(|&x| x as f64).sum::<f64>() / xs.len() as f64
}

/// Nearest-rank quantile `q ∈ [0, 1]` of `xs`: the smallest element whose rank `r` (1-based,
/// in sorted order) satisfies `r >= ⌈q · n⌉` (the minimum for `q = 0`). `None` for an empty
/// slice. The slice need not be sorted.
pub fn percentile(xs: &[u64], q: f64) -> Option<u64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    let idx = nearest_rank_index(v.len(), q);
    let (_, x, _) = v.select_nth_unstable(idx);
    Some(*x)
}

/// 0-based index of the nearest-rank `q`-quantile among `n >= 1` sorted items.
pub(crate) fn nearest_rank_index(n: usize, q: f64) -> usize {
    let q = q.clamp(0.0, 1.0);
    let rank = (q * n as f64).ceil() as usize;
    rank.clamp(1, n) - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let xs: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(percentile(&xs, 0.99), Some(99));
        assert_eq!(percentile(&xs, 0.5), Some(50));
        assert_eq!(percentile(&xs, 0.0), Some(1));
        assert_eq!(percentile(&xs, 1.0), Some(100));
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(mean(&[1, 2, 3, 4]), 2.5);
    }
}
