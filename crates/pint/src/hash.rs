//! The global hash functions that every switch and the sink agree on.
//!
//! PINT needs two kinds of shared randomness, both pure functions of header fields so that no
//! coordination is needed between switches:
//!
//! - the *global hash* `g(packet, hop)`, uniform in `[0, 2^64)`, which decides whether a hop acts
//!   on a packet (and which layer a packet belongs to);
//! - the *value hash* `h(value, packet)`, which maps a switch ID to a `q`-bit string that depends
//!   on the packet, so that two switch IDs that collide on one packet are independent on the next.
//!
//! Both are built from the SplitMix64 finaliser (a bijection of `u64` with full avalanche),
//! applied to inputs combined with distinct tags. They are deterministic: the same inputs give
//! the same bits on every platform.

/// The SplitMix64 output function: a bijective mixer of 64-bit words.
#[inline]
pub(crate) const fn mix64(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Hash of an ordered pair (two rounds of [`mix64`], so `(a, b)` and `(b, a)` differ and no
/// input is a fixed point of zero).
#[inline]
pub(crate) const fn hash2(a: u64, b: u64) -> u64 {
    mix64(mix64(a.wrapping_add(0x9e37_79b9_7f4a_7c15)) ^ b)
}

/// Multiplier spreading a 32-bit value over a 64-bit word before it is keyed (odd, so injective).
const VALUE_SPREAD: u64 = 0xd6e8_feb8_6659_fd93;

/// The `q`-bit value hash `h(value, key)` (top `q` bits of a keyed bijection), `1 <= q <= 32`.
#[inline]
pub(crate) const fn value_hash(value: u32, key: u64, q: u32) -> u32 {
    (mix64(key ^ (value as u64).wrapping_mul(VALUE_SPREAD)) >> (64 - q)) as u32
}

/// Threshold `t` such that `x <= t` for a uniform 64-bit `x` happens with probability `p`
/// (to within `2^-64`); `p >= 1` gives `u64::MAX` (always), `p <= 0` is handled by callers.
#[inline]
pub(crate) fn threshold(p: f64) -> u64 {
    if p >= 1.0 {
        u64::MAX
    } else {
        // 2^64 * p, saturating; p in (0, 1) so this is below 2^64.
        (p * 18_446_744_073_709_551_616.0) as u64
    }
}

/// The reservoir threshold for hop number `i >= 1`: act with probability `1 / i`.
#[inline]
pub(crate) const fn reservoir_threshold(i: u64) -> u64 {
    u64::MAX / i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix64_is_deterministic_and_spreads() {
        assert_eq!(mix64(0), 0);
        assert_ne!(mix64(1), mix64(2));
        assert_ne!(hash2(1, 2), hash2(2, 1));
        assert_ne!(hash2(0, 0), 0);
    }

    #[test]
    fn value_hash_is_in_range_and_balanced() {
        let q = 4;
        let mut counts = [0u32; 16];
        for v in 0..16_000u32 {
            let h = value_hash(v, 12345, q);
            assert!(h < 16);
            counts[h as usize] += 1;
        }
        // 1000 expected per bucket, standard deviation ~31.
        for c in counts {
            assert!((800..1200).contains(&c), "unbalanced bucket: {c}");
        }
    }

    #[test]
    fn reservoir_threshold_frequencies() {
        let mut hits = 0u32;
        let t = reservoir_threshold(4);
        for x in 0..40_000u64 {
            if hash2(7, x) <= t {
                hits += 1;
            }
        }
        assert!((9_400..10_600).contains(&hits), "{hits}");
        assert_eq!(reservoir_threshold(1), u64::MAX);
        assert_eq!(threshold(1.0), u64::MAX);
    }
}
