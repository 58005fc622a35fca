//! Simulated time, byte counts and link rates as integer newtypes.
//!
//! # Time resolution and the rounding rule
//!
//! Time is an integer count of **picoseconds** ([`Time`], [`Duration`]). At the link speeds of
//! interest (25/50/100/200/400 Gb/s) one byte takes an integer number of picoseconds (320, 160,
//! 80, 40, 20 ps), so serialization times are exact. For any other rate,
//! [`BitsPerSec::tx_time`] rounds **up** to the next picosecond, so a link is never faster than
//! its nominal rate.
//!
//! The reference ns-3 simulator works in nanoseconds and converts a floating-point number of
//! seconds by truncation, which makes e.g. a 1048-byte frame at 100 Gb/s take 83 ns instead of
//! 83.84 ns (its links run up to ~1% faster than nominal). dcsim does **not** replicate that
//! truncation: serialization is exact, and the ideal FCT it reports is exact for the same model.
//! Times read from reference files (flow start times in seconds) are converted with
//! [`Time::from_secs_f64_ns_trunc`], which does replicate ns-3's truncation of the *input*, so
//! that flows start at the same nanosecond as in the reference.

use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub, SubAssign};

/// Picoseconds per nanosecond.
pub const PS_PER_NS: u64 = 1_000;
/// Picoseconds per microsecond.
pub const PS_PER_US: u64 = 1_000_000;
/// Picoseconds per millisecond.
pub const PS_PER_MS: u64 = 1_000_000_000;
/// Picoseconds per second.
pub const PS_PER_SEC: u64 = 1_000_000_000_000;

/// The longest time a front end should accept as any single input — a stop time, a start
/// time, a window, a delay, a timer: 2^62 ps, about 4 611 686 s or 53.4 days.
///
/// The full `u64` range of picoseconds is about 213 days. Keeping every input below a quarter
/// of it means that an instant plus any offset the simulator adds to it (a delay, a timer, a
/// serialization time, each also below the limit) still fits, so no time arithmetic of the
/// simulator can overflow on validated inputs. The `dcsim` command line rejects larger values
/// with a located error.
pub const TIME_LIMIT: Duration = Duration(1 << 62);

/// The shortest period a periodic timer may have (TCP's retransmission timers, the NIC's
/// RoCE timeout, DCQCN's three timers, DualPI2's update): 1 µs. A timer fires once per period
/// for as long as its cause lasts, so a period of 1 ps means 10^12 events per simulated
/// second (a 50 ms run took days); every real timer is microseconds or more.
pub const MIN_PERIOD: Duration = Duration::from_us(1);

/// [`TIME_LIMIT`] in words, for error messages.
pub const TIME_LIMIT_TEXT: &str = "2^62 ps (4611686.018427387904 s, about 53 days)";

/// The fastest link or rate a front end should accept: 100 Tbps, at which a 43-byte PFC frame
/// still takes 3.44 ps on the wire. Much faster, a minimum-size frame takes under 1 ps (at
/// some rates none at all, in whole picoseconds), and a NIC could send a whole flow in zero
/// simulated time, queueing its frames without bound. The `dcsim` command line rejects larger
/// rates, in a scenario or in a topology file, with a located error, and the simulator's
/// network refuses a faster link (`NetworkError::RateTooHigh`).
pub const MAX_RATE: BitsPerSec = BitsPerSec(100_000_000_000_000);

/// [`MAX_RATE`] in words, for error messages.
pub const MAX_RATE_TEXT: &str = "100 Tbps";

/// An instant of simulated time, in picoseconds since the start of the simulation.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(pub u64);

/// A span of simulated time, in picoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(pub u64);

impl Time {
    /// The start of the simulation.
    pub const ZERO: Time = Time(0);
    /// A time later than any event (used as "never").
    pub const MAX: Time = Time(u64::MAX);

    /// From whole nanoseconds.
    pub const fn from_ns(ns: u64) -> Time {
        Time(ns * PS_PER_NS)
    }
    /// From whole picoseconds.
    pub const fn from_ps(ps: u64) -> Time {
        Time(ps)
    }
    /// Picoseconds since the start.
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Whole nanoseconds since the start (truncated).
    pub const fn as_ns(self) -> u64 {
        self.0 / PS_PER_NS
    }
    /// Seconds as a float, for display only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_SEC as f64
    }
    /// Converts seconds given as a float the way ns-3 does (spec §0): the fractional part is
    /// taken as a 64.64 fixed-point fraction and both steps truncate, giving whole nanoseconds.
    /// `2.000001234` becomes 2 000 001 233 ns. Returns `None` for negative or non-finite input.
    pub fn from_secs_f64_ns_trunc(secs: f64) -> Option<Time> {
        if !secs.is_finite() || secs < 0.0 || secs >= (u64::MAX / PS_PER_SEC) as f64 {
            return None;
        }
        let whole = secs.trunc();
        let frac = secs - whole;
        // L = trunc(frac * 2^64), computed exactly: frac is a double in [0, 1) so frac * 2^64 is
        // exact in f64 (only the exponent changes) and below 2^64 (at most 2^64 - 2^11), so it
        // truncates into a u64. (A conversion to u128 was a library call, `__fixunsdfti`,
        // once per frame of a run in `ns3` serialization.) The product with 10^9 is one
        // 64 × 64 → 128-bit multiplication.
        let l = (frac * 18_446_744_073_709_551_616.0) as u64;
        let frac_ns = (l as u128 * 1_000_000_000u128) >> 64;
        Some(Time::from_ns(whole as u64 * 1_000_000_000 + frac_ns as u64))
    }
    /// The duration since an earlier instant; zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    /// No time.
    pub const ZERO: Duration = Duration(0);
    /// From whole picoseconds.
    pub const fn from_ps(ps: u64) -> Duration {
        Duration(ps)
    }
    /// From whole nanoseconds.
    pub const fn from_ns(ns: u64) -> Duration {
        Duration(ns * PS_PER_NS)
    }
    /// From whole microseconds.
    pub const fn from_us(us: u64) -> Duration {
        Duration(us * PS_PER_US)
    }
    /// From whole milliseconds.
    pub const fn from_ms(ms: u64) -> Duration {
        Duration(ms * PS_PER_MS)
    }
    /// Picoseconds.
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Whole nanoseconds (truncated).
    pub const fn as_ns(self) -> u64 {
        self.0 / PS_PER_NS
    }
    /// Nanoseconds as a float (exact to the picosecond).
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / PS_PER_NS as f64
    }
    /// Seconds as a float.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_SEC as f64
    }
    /// The sum, or `None` if it does not fit in 64 bits of picoseconds.
    pub const fn checked_add(self, d: Duration) -> Option<Duration> {
        match self.0.checked_add(d.0) {
            Some(v) => Some(Duration(v)),
            None => None,
        }
    }
    /// The sum, saturating at `u64::MAX` picoseconds (for set-up arithmetic whose inputs a
    /// front end has bounded; never wraps).
    pub const fn saturating_add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
    /// The product, saturating at `u64::MAX` picoseconds.
    pub const fn saturating_mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    #[inline]
    fn add(self, d: Duration) -> Time {
        Time(self.0 + d.0)
    }
}
impl AddAssign<Duration> for Time {
    #[inline]
    fn add_assign(&mut self, d: Duration) {
        self.0 += d.0;
    }
}
impl Sub<Duration> for Time {
    type Output = Time;
    #[inline]
    fn sub(self, d: Duration) -> Time {
        Time(self.0 - d.0)
    }
}
impl Sub for Time {
    type Output = Duration;
    #[inline]
    fn sub(self, t: Time) -> Duration {
        Duration(self.0 - t.0)
    }
}
impl Add for Duration {
    type Output = Duration;
    #[inline]
    fn add(self, d: Duration) -> Duration {
        Duration(self.0 + d.0)
    }
}
impl AddAssign for Duration {
    #[inline]
    fn add_assign(&mut self, d: Duration) {
        self.0 += d.0;
    }
}
impl Sub for Duration {
    type Output = Duration;
    #[inline]
    fn sub(self, d: Duration) -> Duration {
        Duration(self.0 - d.0)
    }
}
impl SubAssign for Duration {
    #[inline]
    fn sub_assign(&mut self, d: Duration) {
        self.0 -= d.0;
    }
}
impl Mul<u64> for Duration {
    type Output = Duration;
    #[inline]
    fn mul(self, k: u64) -> Duration {
        Duration(self.0 * k)
    }
}

fn fmt_ps(ps: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if ps.is_multiple_of(PS_PER_NS) {
        write!(f, "{}ns", ps / PS_PER_NS)
    } else {
        write!(f, "{}ps", ps)
    }
}
impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("t=")?;
        fmt_ps(self.0, f)
    }
}
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ps(self.0, f)
    }
}
impl fmt::Debug for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ps(self.0, f)
    }
}
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ps(self.0, f)
    }
}

/// A byte count.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct Bytes(pub u64);

impl Bytes {
    /// Zero bytes.
    pub const ZERO: Bytes = Bytes(0);
    /// The count as `u64`.
    pub const fn get(self) -> u64 {
        self.0
    }
}
impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}B", self.0)
    }
}
impl Add for Bytes {
    type Output = Bytes;
    fn add(self, b: Bytes) -> Bytes {
        Bytes(self.0 + b.0)
    }
}
impl Sub for Bytes {
    type Output = Bytes;
    fn sub(self, b: Bytes) -> Bytes {
        Bytes(self.0 - b.0)
    }
}

/// A data rate in bits per second.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct BitsPerSec(pub u64);

impl BitsPerSec {
    /// From gigabits per second.
    pub const fn gbps(g: u64) -> BitsPerSec {
        BitsPerSec(g * 1_000_000_000)
    }
    /// From megabits per second.
    pub const fn mbps(m: u64) -> BitsPerSec {
        BitsPerSec(m * 1_000_000)
    }
    /// The rate as `u64` bits per second.
    pub const fn get(self) -> u64 {
        self.0
    }
    /// The picoseconds one byte takes at this rate, where that is a whole number no larger
    /// than 8 000 000 (rates from 1 Mb/s that divide 8 Tb/s: every standard speed). Then
    /// [`BitsPerSec::tx_time`] of `b` bytes is exactly `b` times it, and a frame's time is a
    /// multiplication (a `u32` frame size times it fits `u64`) rather than a division.
    pub const fn exact_ps_per_byte(self) -> Option<u64> {
        if self.0 >= 1_000_000 && (8 * PS_PER_SEC).is_multiple_of(self.0) {
            Some(8 * PS_PER_SEC / self.0)
        } else {
            None
        }
    }
    /// Serialization time of `bytes` at this rate, rounded **up** to the picosecond
    /// (exact for every multiple of 25 Gb/s up to 400 Gb/s). A time beyond the `u64` range
    /// (about 213 days: e.g. 3 GB at 1 bit/s) saturates at `u64::MAX` picoseconds instead of
    /// wrapping; front ends bound their inputs so that validated runs never get there.
    ///
    /// # Panics
    /// Panics if the rate is zero (validated rates never are).
    #[inline]
    pub fn tx_time(self, bytes: u64) -> Duration {
        debug_assert!(self.0 > 0, "tx_time at zero rate");
        // Frame-sized inputs fit u64 arithmetic (8e12 * 2e6 < 2^64), which is much cheaper
        // than the 128-bit division needed in general.
        if bytes <= 2_000_000 {
            return Duration((bytes * 8 * PS_PER_SEC).div_ceil(self.0));
        }
        let num = bytes as u128 * 8 * PS_PER_SEC as u128;
        Duration(u64::try_from(num.div_ceil(self.0 as u128)).unwrap_or(u64::MAX))
    }
    /// Serialization time of `bytes` at this rate as the reference ns-3 simulator computes
    /// it (spec §0): seconds as the IEEE double `bytes * 8 / rate`, converted to whole
    /// nanoseconds by ns-3's truncating 64.64 fixed-point rule — so often one nanosecond short
    /// of the exact value (1000 B at 100 Gb/s: 79 ns; 1048 B at 400 Gb/s: 20 ns, not 20.96).
    ///
    /// # Panics
    /// Panics if the rate is zero (validated rates never are).
    pub fn tx_time_ns3(self, bytes: u64) -> Duration {
        assert!(self.0 > 0, "tx_time_ns3 at zero rate");
        let secs = (bytes as f64 * 8.0) / self.0 as f64;
        match Time::from_secs_f64_ns_trunc(secs) {
            Some(t) => Duration(t.0),
            // Beyond ~213 days of serialization: saturate like the exact path's callers bound it.
            None => Duration(u64::MAX),
        }
    }
    /// Bytes that this rate carries in `d`, rounded down; saturates at `u64::MAX` (which
    /// takes more than 1.6 · 10^13 bit/s for the longest time a `u64` holds).
    pub fn bytes_in(self, d: Duration) -> u64 {
        u64::try_from(self.0 as u128 * d.0 as u128 / (8 * PS_PER_SEC as u128)).unwrap_or(u64::MAX)
    }
}
impl fmt::Display for BitsPerSec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        if r.is_multiple_of(1_000_000_000) {
            write!(f, "{}Gbps", r / 1_000_000_000)
        } else if r.is_multiple_of(1_000_000) {
            write!(f, "{}Mbps", r / 1_000_000)
        } else {
            write!(f, "{}bps", r)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_picoseconds_per_byte_agree_with_tx_time() {
        for gbps in [1, 10, 25, 40, 50, 100, 200, 400, 800] {
            let r = BitsPerSec::gbps(gbps);
            let ps = r.exact_ps_per_byte().expect("a standard speed");
            for b in [1, 64, 1000, 1048, 9000, 2_000_000, 3_000_000] {
                assert_eq!(r.tx_time(b), Duration::from_ps(b * ps), "{gbps} Gb/s, {b} B");
            }
        }
        assert_eq!(BitsPerSec::gbps(100).exact_ps_per_byte(), Some(80));
        // 3 Gb/s: 2666.67 ps per byte; 1 kb/s: a whole number, but too large to take.
        assert_eq!(BitsPerSec::gbps(3).exact_ps_per_byte(), None);
        assert_eq!(BitsPerSec(1000).exact_ps_per_byte(), None);
        assert_eq!(BitsPerSec(1_000_000).exact_ps_per_byte(), Some(8_000_000));
    }

    #[test]
    fn tx_time_is_exact_at_standard_speeds() {
        assert_eq!(BitsPerSec::gbps(100).tx_time(1000), Duration::from_ns(80));
        assert_eq!(BitsPerSec::gbps(400).tx_time(1), Duration::from_ps(20));
        assert_eq!(BitsPerSec::gbps(25).tx_time(1), Duration::from_ps(320));
        assert_eq!(BitsPerSec::gbps(100).tx_time(1048), Duration::from_ps(83_840));
    }

    #[test]
    fn ns3_serialization_truncates_like_the_reference() {
        // Spec §0's worked examples (derived by its rule with IEEE doubles).
        let ns = |gbps, b| BitsPerSec::gbps(gbps).tx_time_ns3(b).as_ps() / 1000;
        assert_eq!(ns(100, 1000), 79);
        assert_eq!(ns(100, 1048), 83);
        assert_eq!(ns(100, 1090), 87);
        assert_eq!(ns(400, 1000), 19);
        assert_eq!(ns(100, 60), 4);
        assert_eq!(ns(400, 43), 0);
        assert_eq!(ns(100, 88), 7);
        // The fidelity issue's case: 20.96 ns exact, 20 ns as the reference computes it.
        assert_eq!(BitsPerSec::gbps(400).tx_time(1048), Duration::from_ps(20_960));
        assert_eq!(BitsPerSec::gbps(400).tx_time_ns3(1048), Duration::from_ns(20));
        // Always whole nanoseconds, never more than the exact time.
        for (r, b) in [(25u64, 1u64), (40, 1500), (100, 9000), (200, 64), (400, 4096)] {
            let (e, t) = (BitsPerSec::gbps(r).tx_time(b), BitsPerSec::gbps(r).tx_time_ns3(b));
            assert_eq!(t.as_ps() % 1000, 0);
            assert!(t <= e && e.as_ps() - t.as_ps() < 2000, "{r} Gb/s {b} B: {e:?} vs {t:?}");
        }
    }

    #[test]
    fn tx_time_large_and_small_inputs_agree() {
        let r = BitsPerSec(123_456_789);
        for b in [1u64, 999, 2_000_000, 2_000_001, 10_000_000_000] {
            let exact = (b as u128 * 8 * PS_PER_SEC as u128).div_ceil(r.0 as u128) as u64;
            assert_eq!(r.tx_time(b).as_ps(), exact, "{b}");
        }
    }

    #[test]
    fn tx_time_rounds_up() {
        // 1 byte at 3 bps = 8/3 s
        assert_eq!(BitsPerSec(3).tx_time(1), Duration::from_ps(2_666_666_666_667));
    }

    #[test]
    fn ns3_truncation_of_start_times() {
        assert_eq!(
            Time::from_secs_f64_ns_trunc(2.000001234).unwrap(),
            Time::from_ns(2_000_001_233)
        );
        assert_eq!(Time::from_secs_f64_ns_trunc(2.0).unwrap(), Time::from_ns(2_000_000_000));
        assert_eq!(
            Time::from_secs_f64_ns_trunc(2.000000962).unwrap(),
            Time::from_ns(2_000_000_962)
        );
        assert!(Time::from_secs_f64_ns_trunc(-1.0).is_none());
        assert!(Time::from_secs_f64_ns_trunc(f64::NAN).is_none());
    }

    /// ns-3's rule computed the long way: the fraction's 64.64 fixed-point value through a
    /// 128-bit integer, as the conversion was first written.
    fn ns3_trunc_wide(secs: f64) -> u64 {
        let whole = secs.trunc();
        let frac = secs - whole;
        let l = (frac * 18_446_744_073_709_551_616.0) as u128;
        whole as u64 * 1_000_000_000 + ((l * 1_000_000_000u128) >> 64) as u64
    }

    #[test]
    fn ns3_truncation_at_the_fractions_edges() {
        // The largest fraction below 1 (its 64.64 value is 2^64 - 2^11, which must not
        // saturate or wrap), tiny ones, and the values either side of whole seconds.
        let below_one = 1.0 - f64::EPSILON / 2.0;
        for secs in [0.0, below_one, 5e-324, 1e-12, 79e-9, 1.0, 3.0 - 4.0 * f64::EPSILON, 1e6] {
            let t = Time::from_secs_f64_ns_trunc(secs).unwrap();
            assert_eq!(t.as_ns(), ns3_trunc_wide(secs), "{secs:e}");
        }
        assert_eq!(Time::from_secs_f64_ns_trunc(below_one).unwrap().as_ns(), 999_999_999);
    }

    proptest::proptest! {
        #[test]
        fn ns3_truncation_matches_the_wide_formula(secs in 0.0f64..1.0e7) {
            let t = Time::from_secs_f64_ns_trunc(secs).unwrap();
            proptest::prop_assert_eq!(t.as_ns(), ns3_trunc_wide(secs));
        }

        #[test]
        fn ns3_frame_times_match_the_wide_formula(bytes in 1u64..100_000, bps in 1_000u64..1_000_000_000_000_000) {
            let secs = (bytes as f64 * 8.0) / bps as f64;
            let d = BitsPerSec(bps).tx_time_ns3(bytes);
            if secs < (u64::MAX / PS_PER_SEC) as f64 {
                proptest::prop_assert_eq!(d.as_ps() / 1000, ns3_trunc_wide(secs));
            }
        }
    }

    #[test]
    fn bytes_in_inverts_tx_time() {
        let r = BitsPerSec::gbps(100);
        assert_eq!(r.bytes_in(Duration::from_us(1)), 12_500);
    }

    /// Results beyond 64 bits saturate instead of wrapping (release builds would otherwise
    /// give a small, wrong value).
    #[test]
    fn out_of_range_results_saturate() {
        // u64::MAX bytes at 1 bit/s: ~1.5e32 ps.
        assert_eq!(BitsPerSec(1).tx_time(u64::MAX), Duration(u64::MAX));
        // 3 GB at 1 bit/s: 2.4e22 ps, beyond the range; 2 GB at 1 Gb/s is not.
        assert_eq!(BitsPerSec(1).tx_time(3_000_000_000), Duration(u64::MAX));
        assert_eq!(BitsPerSec::gbps(1).tx_time(2_000_000_000), Duration::from_ms(16_000));
        assert_eq!(BitsPerSec(u64::MAX).bytes_in(Duration(u64::MAX)), u64::MAX);
        assert_eq!(Duration(u64::MAX).saturating_add(Duration(1)), Duration(u64::MAX));
        assert_eq!(Duration(1 << 63).saturating_mul(2), Duration(u64::MAX));
        assert_eq!(Duration(u64::MAX).checked_add(Duration(1)), None);
        assert_eq!(TIME_LIMIT.checked_add(TIME_LIMIT), Some(Duration(1 << 63)));
    }
}
