//! Queue-length monitoring: an exact time-weighted histogram of a switch egress port's backlog.
//!
//! The engine tells a [`QueueHistogram`] the port's backlog (bytes queued over all priority
//! classes, the frame on the wire excluded) every time it changes. The histogram adds the time
//! spent at the previous level to that level's bin, in integer picoseconds, so the totals are
//! exact; nothing is allocated per packet (the bin array grows only when a new maximum level
//! is reached).
//!
//! Bins are log-spaced with [`SUB_BINS`] bins per power of two (levels below `SUB_BINS` bytes
//! have a bin each): bin widths are at most 1/32 of their lower edge. Each bin also keeps the
//! largest level seen in it, and a percentile is reported as that level for the bin where the
//! cumulative time reaches the fraction: exact for a backlog that takes one level per bin
//! (e.g. a step function), and otherwise never below the true percentile and less than 3.2%
//! above it. The mean, the maximum and the time above each threshold are exact.

use crate::units::{Duration, Time};

/// Bins per power of two (and the number of exact bins for the smallest levels).
pub const SUB_BINS: u64 = 32;
const SHIFT: u32 = SUB_BINS.trailing_zeros();

/// The bin of a backlog of `bytes`.
#[inline]
pub fn bin_of(bytes: u64) -> usize {
    if bytes < SUB_BINS {
        return bytes as usize;
    }
    let e = 63 - bytes.leading_zeros(); // >= SHIFT
    let shift = e - SHIFT;
    let mant = (bytes >> shift) - SUB_BINS;
    (SUB_BINS + u64::from(shift) * SUB_BINS + mant) as usize
}

/// The smallest backlog in bin `i` (saturating at `u64::MAX` past the last bin).
pub fn bin_lower(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB_BINS {
        return i;
    }
    let (k, m) = ((i - SUB_BINS) / SUB_BINS, (i - SUB_BINS) % SUB_BINS);
    u64::try_from(u128::from(SUB_BINS + m) << k).unwrap_or(u64::MAX)
}

/// The time-weighted backlog histogram of one port.
///
/// The fields a change touches sit in the first cache line (the bins are in their own
/// allocation, touched only at a busy level).
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct QueueHistogram {
    /// The level since `since`.
    level: u64,
    since: Time,
    /// Time at level 0, kept here rather than in `bins[0]` (merged at `finish`): an idle port
    /// is the common case.
    idle: u64,
    /// Per bin: the time spent in it and the largest level seen in it with positive time (one
    /// vector, so that an update touches one cache line).
    bins: Vec<(u64, u64)>,
    /// Integral of the backlog over time, in byte-picoseconds.
    area: u128,
    /// Time above each of [`THRESHOLDS`] (the first, the busy time, is only set by `finish`).
    above: [u64; THRESHOLDS.len()],
}

impl Default for QueueHistogram {
    fn default() -> QueueHistogram {
        QueueHistogram::new()
    }
}

/// The thresholds (bytes) whose time above is kept: any backlog, 10 KB, 100 KB, 1 MB.
pub const THRESHOLDS: [u64; 4] = [0, 10_000, 100_000, 1_000_000];
// `add_busy` nests the threshold tests: they must be ascending, from 0.
const _: () =
    assert!(THRESHOLDS[0] == 0 && THRESHOLDS[1] < THRESHOLDS[2] && THRESHOLDS[2] < THRESHOLDS[3]);

impl QueueHistogram {
    /// An empty histogram, level 0 from time 0.
    pub fn new() -> QueueHistogram {
        QueueHistogram {
            level: 0,
            since: Time::ZERO,
            idle: 0,
            bins: vec![(0, 0)],
            area: 0,
            above: [0; THRESHOLDS.len()],
        }
    }

    /// The backlog is `bytes` from `now` on (`now` never decreases).
    #[inline(always)]
    pub fn set(&mut self, now: Time, bytes: u64) {
        if bytes != self.level {
            self.change(now, bytes);
        }
    }

    /// The backlog changes to `bytes` at `now` (the engine's growth and shrinkage always
    /// change it; an unchanged level only splits an interval, which leaves every total as it
    /// was).
    #[inline(always)]
    fn change(&mut self, now: Time, bytes: u64) {
        self.advance(now);
        self.level = bytes;
    }

    /// Accounts the time from the last change to `now` at the current level.
    #[inline(always)]
    fn advance(&mut self, now: Time) {
        let dt = now.0 - self.since.0;
        self.since = now;
        if self.level == 0 {
            // The common case (an idle port): nothing is above 0 B.
            self.idle += dt;
        } else if dt != 0 {
            self.add_busy(dt);
        }
    }

    /// Accounts `dt` at the current, non-zero level.
    #[inline(never)]
    fn add_busy(&mut self, dt: u64) {
        let level = self.level;
        self.area += u128::from(level) * u128::from(dt);
        let b = bin_of(level);
        match self.bins.get_mut(b) {
            Some(bin) => {
                bin.0 += dt;
                bin.1 = bin.1.max(level);
            }
            None => self.new_bin(b, dt),
        }
        // The time above 0 B is the busy time, summed at `finish`; the higher thresholds are
        // rarely passed, so their branches are predictable.
        if level > THRESHOLDS[1] {
            self.above[1] += dt;
            if level > THRESHOLDS[2] {
                self.above[2] += dt;
                if level > THRESHOLDS[3] {
                    self.above[3] += dt;
                }
            }
        }
    }

    /// Extends the bins to bin `b`, which gets `dt` at the current level: a new maximum
    /// level, rare, so kept out of `add_busy` (which then saves fewer registers).
    #[cold]
    #[inline(never)]
    fn new_bin(&mut self, b: usize, dt: u64) {
        self.bins.resize(b + 1, (0, 0));
        self.bins[b] = (dt, self.level);
    }

    /// Closes the histogram at `end` (the run's end time) and summarises it.
    pub fn finish(&mut self, end: Time) -> QueueStats {
        self.advance(end.max(self.since));
        self.bins[0].0 += std::mem::take(&mut self.idle);
        let total: u64 = self.bins.iter().map(|b| b.0).sum();
        // Every non-zero level has a bin above bin 0.
        self.above[0] = total - self.bins[0].0;
        let pct = |num: u128, den: u128| -> u64 {
            if total == 0 {
                return 0;
            }
            let target = u128::from(total) * num; // cum * den >= total * num
            let mut cum = 0u128;
            for &(t, top) in &self.bins {
                cum += u128::from(t);
                if t > 0 && cum * den >= target {
                    return top;
                }
            }
            self.bins.iter().rev().map(|b| b.1).find(|&x| x > 0).unwrap_or(0)
        };
        QueueStats {
            time: Duration(total),
            mean: if total == 0 { 0.0 } else { self.area as f64 / total as f64 },
            p50: pct(50, 100),
            p90: pct(90, 100),
            p99: pct(99, 100),
            p999: pct(999, 1000),
            max: self.bins.iter().map(|b| b.1).max().unwrap_or(0),
            above: self.above.map(Duration),
            bins: self
                .bins
                .iter()
                .enumerate()
                .filter(|(_, b)| b.0 > 0)
                .map(|(i, b)| (bin_lower(i), bin_lower(i + 1), Duration(b.0)))
                .collect(),
        }
    }
}

/// A port's backlog over a run, time-weighted.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueStats {
    /// The time covered (the run's length).
    pub time: Duration,
    /// Mean backlog, bytes.
    pub mean: f64,
    /// Percentiles of the backlog over time, bytes (see the module doc for the resolution).
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// The largest backlog held for a positive time.
    pub max: u64,
    /// Time with the backlog above each of [`THRESHOLDS`].
    pub above: [Duration; THRESHOLDS.len()],
    /// Non-empty bins: (lowest level, first level of the next bin, time).
    pub bins: Vec<(u64, u64, Duration)>,
}

/// The queue statistics of one switch egress port.
#[derive(Clone, Debug, PartialEq)]
pub struct PortQueue {
    /// The switch.
    pub node: crate::ids::NodeId,
    /// Its egress port.
    pub port: crate::ids::PortNo,
    /// The node at the far end.
    pub peer: crate::ids::NodeId,
    /// Link rate.
    pub rate: crate::units::BitsPerSec,
    /// Bytes the port put on the wire during the run (frames of every kind).
    pub tx_bytes: u64,
    /// The backlog over the run.
    pub stats: QueueStats,
}

impl PortQueue {
    /// The fraction of the run's time the port spent transmitting: `tx_bytes · 8 / (rate ·
    /// time)` (0 for an empty run).
    pub fn utilisation(&self) -> f64 {
        let t = self.stats.time.as_ps();
        if t == 0 || self.rate.0 == 0 {
            return 0.0;
        }
        self.tx_bytes as f64 * 8.0 / (self.rate.0 as f64 * t as f64 * 1e-12)
    }
}

/// The reference's periodic queue-length sampler (`QLEN_MON_*`): every `interval` from
/// `start` up to and including the first sample time at or after `end`, each switch egress
/// port's backlog of classes 1–7 (class 0 — PFC frames and high-priority ACKs — not counted,
/// as the reference counts MMU egress bytes) goes into a bin `floor(backlog / bin)`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SamplerWindow {
    /// The first sample.
    pub start: Time,
    /// Sampling ends with the first sample at or after this time.
    pub end: Time,
    /// Between samples (> 0; the reference's is 100 ns).
    pub interval: Duration,
    /// Bin width in bytes (> 0; the reference's is 1000).
    pub bin: u64,
}

impl SamplerWindow {
    /// The last sample time: the first `start + k · interval` at or after `end`.
    pub fn last(&self) -> Time {
        if self.end <= self.start {
            return self.start;
        }
        let i = self.interval.as_ps().max(1);
        let k = (self.end.0 - self.start.0).div_ceil(i);
        Time(self.start.0.saturating_add(k.saturating_mul(i)))
    }

    /// How many samples the window takes.
    pub fn samples(&self) -> u64 {
        (self.last().0 - self.start.0) / self.interval.as_ps().max(1) + 1
    }
}

/// The sampled backlog of one port: counts per bin, filled exactly from the backlog's changes
/// (no event per sample): the samples between two changes all see the level between them, and
/// a sample at the time of a change sees the level after every change at that time.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct QueueSampler {
    // The fields every change reads first, then the window's constants, then the counts
    // (touched only when a sample falls outside bin 0 or several are due).
    /// The next sample time not yet counted.
    next: Time,
    /// The backlog of classes 1–7.
    level: u64,
    /// Samples in bin 0 (the common case, kept beside the other hot fields; merged into
    /// `counts` by `finish`).
    low: u64,
    /// The window's last sample time (`SamplerWindow::last`).
    last: Time,
    /// The window's interval in picoseconds (at least 1).
    step: u64,
    /// The window's bin width (at least 1).
    bin: u64,
    /// Samples per bin (bin 0's in `low` until `finish`).
    counts: Vec<u64>,
}

impl QueueSampler {
    /// A sampler over `w`, level 0.
    pub fn new(w: SamplerWindow) -> QueueSampler {
        QueueSampler {
            last: w.last(),
            step: w.interval.as_ps().max(1),
            bin: w.bin.max(1),
            next: w.start,
            level: 0,
            low: 0,
            counts: Vec::new(),
        }
    }

    /// Counts the samples before `now` at the current level. Runs at every backlog change,
    /// so it divides only when it must: one sample due (the common case at a 100 ns
    /// interval) and an empty queue need no division.
    #[inline(always)]
    fn advance(&mut self, now: Time) {
        if now > self.next && self.next <= self.last {
            // The common case inline: one sample due (now <= next + step, so `now - 1` is
            // the last time before now that could hold one) at a level in the first bin.
            if now.0 - self.next.0 <= self.step && self.level < self.bin {
                self.low += 1;
                self.next = Time(self.next.0.saturating_add(self.step));
            } else {
                self.count_due(now);
            }
        }
    }

    /// Counts the samples due before `now` (some are).
    #[inline(never)]
    fn count_due(&mut self, now: Time) {
        // Samples next, next + step, ... that are < now and <= last.
        let upto = (now.0 - 1).min(self.last.0);
        if upto < self.next.0 {
            return;
        }
        let d = upto - self.next.0;
        let n = if d < self.step { 1 } else { d / self.step + 1 };
        if self.level < self.bin {
            self.low += n;
        } else {
            let b = usize::try_from(self.level / self.bin).unwrap_or(usize::MAX);
            self.add(b, n);
        }
        self.next = Time(self.next.0.saturating_add(n.saturating_mul(self.step)));
    }

    /// Adds `n` samples to bin `b`.
    fn add(&mut self, b: usize, n: u64) {
        if b >= self.counts.len() {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += n;
    }

    /// `bytes` more of classes 1–7 are queued from `now`.
    #[inline(always)]
    pub fn grow(&mut self, now: Time, bytes: u64) {
        self.advance(now);
        self.level += bytes;
    }

    /// `bytes` fewer of classes 1–7 are queued from `now`.
    #[inline(always)]
    pub fn shrink(&mut self, now: Time, bytes: u64) {
        self.advance(now);
        self.level -= bytes;
    }

    /// Takes the samples up to `until` (inclusive; the run's stop time: the backlog stays at
    /// its last level after the run's last event) and returns the counts per bin: `counts[b]`
    /// samples saw a backlog in `[b · bin, (b + 1) · bin)`.
    pub fn finish(&mut self, until: Time) -> Vec<u64> {
        self.advance(Time(until.0.saturating_add(1)));
        let low = std::mem::take(&mut self.low);
        if low > 0 {
            self.add(0, low);
        }
        self.counts.clone()
    }
}

/// The sampled backlog of one switch egress port (see [`SamplerWindow`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortSamples {
    /// The switch.
    pub node: crate::ids::NodeId,
    /// Its egress port.
    pub port: crate::ids::PortNo,
    /// The bin width, bytes.
    pub bin: u64,
    /// Samples per bin (`counts[b]`: a backlog in `[b · bin, (b + 1) · bin)`).
    pub counts: Vec<u64>,
}

/// The backlog of each priority class of one port, each in its own [`QueueHistogram`]: class
/// `q`'s level is the bytes of class `q` queued at the port (for a queue discipline, its
/// backlog; the frame on the wire excluded).
#[derive(Clone, Debug, Default)]
pub struct ClassHistograms {
    level: [u64; crate::mmu::QUEUES],
    hist: [QueueHistogram; crate::mmu::QUEUES],
}

impl ClassHistograms {
    /// `bytes` more are queued in class `q` from `now`.
    #[inline]
    pub fn grow(&mut self, now: Time, bytes: u64, q: usize) {
        self.level[q] += bytes;
        self.hist[q].set(now, self.level[q]);
    }

    /// `bytes` fewer are queued in class `q` from `now`.
    #[inline]
    pub fn shrink(&mut self, now: Time, bytes: u64, q: usize) {
        self.level[q] -= bytes;
        self.hist[q].set(now, self.level[q]);
    }

    /// Closes every class's histogram at `end` and summarises them, by class.
    pub fn finish(&mut self, end: Time) -> Vec<QueueStats> {
        self.hist.iter_mut().map(|h| h.finish(end)).collect()
    }
}

/// Everything monitored at one switch egress port: any of the port's backlog histogram, the
/// periodic sampler (classes 1–7) and the per-class histograms. The engine keeps one boxed
/// `PortMonitor` per monitored port, so an unmonitored port costs one branch per backlog
/// change.
///
/// Laid out so that a change touches two cache lines in the common case: the histogram's
/// first line, and a line holding the per-class pointer and the sampler's hot fields.
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct PortMonitor {
    /// The backlog over all classes.
    pub hist: Option<QueueHistogram>,
    /// One histogram per class (boxed: eight histograms would push the others' hot fields
    /// apart).
    pub classes: Option<Box<ClassHistograms>>,
    /// The periodic sampler of classes 1–7.
    pub sampler: Option<QueueSampler>,
}

// A change reads the histogram's first line (level, since, idle, area) and one more line
// holding the per-class pointer and the sampler's hot fields (next, level, low and the window's
// constants); the bins, the thresholds and the sampler's counts lie elsewhere.
const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(QueueHistogram, area) + 16 <= 64);
    assert!(offset_of!(QueueHistogram, level) < 64 && offset_of!(QueueHistogram, idle) < 64);
    assert!(offset_of!(QueueSampler, bin) + 8 == offset_of!(QueueSampler, counts));
    let hot = offset_of!(PortMonitor, classes);
    let end = offset_of!(PortMonitor, sampler) + offset_of!(QueueSampler, counts);
    assert!(hot % 64 == 0 && end <= hot + 64);
};

impl PortMonitor {
    /// The port's backlog over all classes became `total` from `now`, after `bytes` more were
    /// queued in class `q`.
    #[inline(always)]
    pub fn grow(&mut self, now: Time, total: u64, bytes: u64, q: usize) {
        if let Some(h) = &mut self.hist {
            h.change(now, total);
        }
        if let Some(s) = &mut self.sampler {
            if q != 0 {
                s.grow(now, bytes);
            }
        }
        if let Some(c) = &mut self.classes {
            c.grow(now, bytes, q);
        }
    }

    /// The port's backlog over all classes became `total` from `now`, after `bytes` fewer
    /// were queued in class `q`.
    #[inline(always)]
    pub fn shrink(&mut self, now: Time, total: u64, bytes: u64, q: usize) {
        if let Some(h) = &mut self.hist {
            h.change(now, total);
        }
        if let Some(s) = &mut self.sampler {
            if q != 0 {
                s.shrink(now, bytes);
            }
        }
        if let Some(c) = &mut self.classes {
            c.shrink(now, bytes, q);
        }
    }
}

/// The backlog of one priority class of one switch egress port over a run.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassQueue {
    /// The switch.
    pub node: crate::ids::NodeId,
    /// Its egress port.
    pub port: crate::ids::PortNo,
    /// The node at the far end.
    pub peer: crate::ids::NodeId,
    /// Link rate.
    pub rate: crate::units::BitsPerSec,
    /// The priority class (0–7).
    pub class: u8,
    /// The class's backlog over the run.
    pub stats: QueueStats,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(start_ns: u64, end_ns: u64) -> SamplerWindow {
        SamplerWindow {
            start: Time::from_ns(start_ns),
            end: Time::from_ns(end_ns),
            interval: Duration::from_ns(100),
            bin: 1000,
        }
    }

    #[test]
    fn samples_of_a_step_function_are_counted_exactly() {
        // 0 B until 250 ns, 5000 B (class 1-7 bytes) until 1000 ns, 1500 B after.
        let w = window(0, 1000);
        assert_eq!((w.last(), w.samples()), (Time::from_ns(1000), 11));
        let mut s = QueueSampler::new(w);
        s.grow(Time::from_ns(250), 5000);
        s.shrink(Time::from_ns(1000), 3500);
        // Samples 0, 100, 200 see 0 B; 300 .. 900 see 5000 B; 1000 sees the level after the
        // change at 1000 ns (1500 B).
        let c = s.finish(Time::from_ns(5000));
        assert_eq!(c, vec![3, 1, 0, 0, 0, 7]);
        assert_eq!(c.iter().sum::<u64>(), w.samples());
    }

    #[test]
    fn the_window_ends_with_the_first_sample_at_or_after_its_end_and_at_the_stop() {
        let w = window(50, 1020);
        assert_eq!(w.last(), Time::from_ns(1050));
        let mut s = QueueSampler::new(w);
        // The run stops at 600 ns: samples 50 .. 550 only.
        let c = s.finish(Time::from_ns(600));
        assert_eq!(c, vec![6]);
        // A window that ends before it starts takes one sample.
        assert_eq!(window(500, 100).samples(), 1);
    }

    #[test]
    fn bins_partition_the_levels() {
        let mut prev = None;
        for v in (0..5000u64).chain([1 << 20, (1 << 20) + 1, u64::MAX / 2, u64::MAX]) {
            let b = bin_of(v);
            let next = bin_lower(b + 1);
            assert!(bin_lower(b) <= v && (v < next || next == u64::MAX), "{v} in {b}");
            if let Some((pv, pb)) = prev {
                if v == pv + 1 {
                    assert!(b == pb || b == pb + 1, "bins are consecutive");
                }
            }
            prev = Some((v, b));
            if v >= SUB_BINS && next < u64::MAX {
                // Width at most 1/32 of the lower edge.
                let lo = bin_lower(b);
                assert!((next - lo) * SUB_BINS <= lo, "{v}");
            }
        }
    }

    #[test]
    fn step_function_percentiles_mean_and_thresholds_are_exact() {
        // 0 B for 50 µs, 12 000 B for 40 µs, 150 000 B for 9 µs, 2 MB for 1 µs.
        let t = Time::from_ns;
        let mut h = QueueHistogram::new();
        h.set(t(50_000), 12_000);
        h.set(t(90_000), 150_000);
        h.set(t(99_000), 2_000_000);
        h.set(t(100_000), 0);
        let s = h.finish(t(100_000));
        assert_eq!(s.time, Duration::from_ns(100_000));
        assert_eq!(
            (s.p50, s.p90, s.p99, s.p999, s.max),
            (0, 12_000, 150_000, 2_000_000, 2_000_000)
        );
        let mean = (12_000.0 * 40.0 + 150_000.0 * 9.0 + 2_000_000.0 * 1.0) / 100.0;
        assert!((s.mean - mean).abs() < 1e-9, "{} vs {mean}", s.mean);
        let ns = Duration::from_ns;
        assert_eq!(s.above, [ns(50_000), ns(50_000), ns(10_000), ns(1_000)]);
        let total: u64 = s.bins.iter().map(|b| b.2.as_ps()).sum();
        assert_eq!(total, s.time.as_ps());
    }

    #[test]
    fn a_linear_ramp_has_percentiles_within_a_bin() {
        // The backlog grows by 1 byte per ns from 0 to 100 000 B: the p-th percentile is
        // p * 100 000 B, reported within the bin's width above.
        let mut h = QueueHistogram::new();
        for b in 1..=100_000u64 {
            h.set(Time::from_ns(b), b);
        }
        let s = h.finish(Time::from_ns(100_001));
        for (p, got) in [(0.5, s.p50), (0.9, s.p90), (0.99, s.p99)] {
            let want = p * 100_000.0;
            assert!(got as f64 >= want - 1.0 && (got as f64) < want * 1.032 + 1.0, "{p}: {got}");
        }
    }

    mod prop {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            /// The histogram equals a direct summation of a random step function: each interval's
            /// time added to its level's bin, the bin's top level, the area and the time above each
            /// threshold, level by level.
            #[test]
            fn histogram_equals_direct_summation(
                steps in prop::collection::vec(
                    (0u64..3_000, prop_oneof![
                        Just(0u64),
                        1u64..64,
                        64u64..5_000,
                        5_000u64..2_000_000,
                    ]),
                    0..300,
                ),
                tail in 0u64..10_000,
            ) {
                let mut h = QueueHistogram::new();
                let (mut now, mut level) = (0u64, 0u64);
                let mut bins = std::collections::BTreeMap::<usize, (u64, u64)>::new();
                let (mut area, mut above) = (0u128, [0u64; THRESHOLDS.len()]);
                let mut account = |level: u64, dt: u64| {
                    let bin = bins.entry(bin_of(level)).or_insert((0, 0));
                    bin.0 += dt;
                    if dt > 0 {
                        bin.1 = bin.1.max(level);
                    }
                    area += u128::from(level) * u128::from(dt);
                    for (a, &t) in above.iter_mut().zip(&THRESHOLDS) {
                        if level > t {
                            *a += dt;
                        }
                    }
                };
                for (dt_ns, to) in steps {
                    account(level, dt_ns * 1000);
                    now += dt_ns * 1000;
                    h.set(Time(now), to);
                    level = to;
                }
                account(level, tail);
                let s = h.finish(Time(now + tail));
                let want: Vec<(u64, u64, Duration)> = bins
                    .iter()
                    .filter(|(_, b)| b.0 > 0)
                    .map(|(&i, b)| (bin_lower(i), bin_lower(i + 1), Duration(b.0)))
                    .collect();
                prop_assert_eq!(&s.bins, &want);
                prop_assert_eq!(s.time, Duration(now + tail));
                prop_assert_eq!(s.above, above.map(Duration));
                let max = bins.values().filter(|b| b.0 > 0).map(|b| b.1).max().unwrap_or(0);
                prop_assert_eq!(s.max, max);
                let mean = if now + tail == 0 { 0.0 } else { area as f64 / (now + tail) as f64 };
                prop_assert_eq!(s.mean, mean);
            }
        }
    }

    #[test]
    fn class_histograms_split_the_port_backlog_by_class() {
        // Class 3 holds 1000 B from 10 to 30 ns; class 1 holds 500 B from 20 to 40 ns.
        let t = Time::from_ns;
        let mut m = PortMonitor {
            hist: Some(QueueHistogram::new()),
            sampler: None,
            classes: Some(Box::default()),
        };
        m.grow(t(10), 1000, 1000, 3);
        m.grow(t(20), 1500, 500, 1);
        m.shrink(t(30), 500, 1000, 3);
        m.shrink(t(40), 0, 500, 1);
        let port = m.hist.as_mut().unwrap().finish(t(100));
        let classes = m.classes.as_mut().unwrap().finish(t(100));
        assert_eq!(classes.len(), crate::mmu::QUEUES);
        assert_eq!((classes[3].max, classes[3].above[0]), (1000, Duration::from_ns(20)));
        assert_eq!((classes[1].max, classes[1].above[0]), (500, Duration::from_ns(20)));
        assert_eq!(classes[0].max, 0);
        // The classes' areas add up to the port's.
        let area = |s: &QueueStats| s.mean * s.time.as_ps() as f64;
        let sum: f64 = classes.iter().map(area).sum();
        assert!((sum - area(&port)).abs() < 1e-6, "{sum} vs {}", area(&port));
        assert_eq!((port.max, port.above[0]), (1500, Duration::from_ns(30)));
    }
}
