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
//!
//! At a switch port the monitors are split by temperature. What every change reads — the
//! histogram's interval start, the sampler's next sample and level ([`SampleState`]) — the
//! engine keeps in its port, on cache lines that the change touches anyway (the queued bytes',
//! the link's). The run-wide choices and the sampler's window ([`Watch`]) are shared by every
//! port. The accumulated totals ([`PortMonitor`]) are boxed and touched only when there is
//! something to add: time at a busy level, samples above the first bin. Time at level 0 and
//! samples in the first bin, the common cases, are not counted as they happen but derived at
//! the end (the run's length minus the rest).

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

/// The time spent at busy (non-zero) backlog levels: per bin, the backlog's integral and the
/// time above each threshold. The time at level 0 is what remains of the run's length, so the
/// idle intervals (the common case) cost nothing here.
///
/// The fields a busy change touches share one cache line (the bins are in their own
/// allocation).
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct BusyTime {
    /// Integral of the backlog over time, in byte-picoseconds.
    area: u128,
    /// Time above each of [`THRESHOLDS`] but the first (the busy time, known at `finish`).
    above: [u64; THRESHOLDS.len() - 1],
    /// Per bin: the time spent in it and the largest level seen in it with positive time (one
    /// vector, so that an update touches one cache line). Bin 0 (level 0) is filled by
    /// `finish`.
    bins: Vec<(u64, u64)>,
}

/// The thresholds (bytes) whose time above is kept: any backlog, 10 KB, 100 KB, 1 MB.
pub const THRESHOLDS: [u64; 4] = [0, 10_000, 100_000, 1_000_000];
// `BusyTime::add` nests the threshold tests: they must be ascending, from 0.
const _: () =
    assert!(THRESHOLDS[0] == 0 && THRESHOLDS[1] < THRESHOLDS[2] && THRESHOLDS[2] < THRESHOLDS[3]);

impl Default for BusyTime {
    fn default() -> BusyTime {
        BusyTime::new()
    }
}

impl BusyTime {
    /// No busy time yet.
    pub fn new() -> BusyTime {
        BusyTime { area: 0, above: [0; THRESHOLDS.len() - 1], bins: vec![(0, 0)] }
    }

    /// Accounts `dt` (> 0) at the busy level `level` (> 0).
    #[inline(never)]
    pub fn add(&mut self, level: u64, dt: u64) {
        debug_assert!(level > 0 && dt > 0);
        self.area += u128::from(level) * u128::from(dt);
        let b = bin_of(level);
        match self.bins.get_mut(b) {
            Some(bin) => {
                bin.0 += dt;
                bin.1 = bin.1.max(level);
            }
            None => self.new_bin(b, level, dt),
        }
        // The higher thresholds are rarely passed, so their branches are predictable.
        if level > THRESHOLDS[1] {
            self.above[0] += dt;
            if level > THRESHOLDS[2] {
                self.above[1] += dt;
                if level > THRESHOLDS[3] {
                    self.above[2] += dt;
                }
            }
        }
    }

    /// Extends the bins to bin `b`, which gets `dt` at `level`: a new maximum level, rare, so
    /// kept out of `add` (which then saves fewer registers).
    #[cold]
    #[inline(never)]
    fn new_bin(&mut self, b: usize, level: u64, dt: u64) {
        self.bins.resize(b + 1, (0, 0));
        self.bins[b] = (dt, level);
    }

    /// Summarises a run of `total` picoseconds, of which the time not added at a busy level
    /// was spent at level 0 (`total` is at least the busy time).
    pub fn finish(&mut self, total: u64) -> QueueStats {
        let busy: u64 = self.bins[1..].iter().map(|b| b.0).sum();
        debug_assert!(total >= busy, "the run is at least as long as its busy time");
        self.bins[0].0 = total - busy;
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
        let [a1, a2, a3] = self.above;
        QueueStats {
            time: Duration(total),
            mean: if total == 0 { 0.0 } else { self.area as f64 / total as f64 },
            p50: pct(50, 100),
            p90: pct(90, 100),
            p99: pct(99, 100),
            p999: pct(999, 1000),
            max: self.bins.iter().map(|b| b.1).max().unwrap_or(0),
            above: [busy, a1, a2, a3].map(Duration),
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

/// The time-weighted backlog histogram of one backlog, told its level at each change.
#[derive(Clone, Debug, Default)]
pub struct QueueHistogram {
    /// The level since `since`.
    level: u64,
    since: Time,
    busy: BusyTime,
}

impl QueueHistogram {
    /// An empty histogram, level 0 from time 0.
    pub fn new() -> QueueHistogram {
        QueueHistogram::default()
    }

    /// The backlog is `bytes` from `now` on (`now` never decreases).
    #[inline]
    pub fn set(&mut self, now: Time, bytes: u64) {
        if bytes != self.level {
            self.advance(now);
            self.level = bytes;
        }
    }

    /// Accounts the time from the last change to `now` at the current level.
    #[inline]
    fn advance(&mut self, now: Time) {
        let dt = now.0 - self.since.0;
        self.since = now;
        if self.level != 0 && dt != 0 {
            self.busy.add(self.level, dt);
        }
    }

    /// Closes the histogram at `end` (the run's end time) and summarises it.
    pub fn finish(&mut self, end: Time) -> QueueStats {
        self.advance(end.max(self.since));
        self.busy.finish(self.since.0)
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
    /// Bytes the port put on the wire during the run (frames of every kind), a frame still
    /// being sent at the run's end counted by the bits it had sent (whole bytes).
    pub tx_bytes: u64,
    /// The backlog over the run.
    pub stats: QueueStats,
}

impl PortQueue {
    /// The bits sent over what the nominal rate could send in the run: `tx_bytes · 8 / (rate ·
    /// time)` (0 for an empty run). With exact serialization, the fraction of the run the port
    /// spent transmitting; with [`crate::config::Serialization::Ns3`], whose frame times are
    /// truncated to whole nanoseconds as the reference's are, a saturated port sends up to
    /// about 1% more and reads above 1 (1.0048 measured at 100 Gb/s).
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

/// A sampler window as the hot path reads it: the sample times `start + k · step` up to
/// `last`, and the bin width. Shared by every port of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleClock {
    start: Time,
    /// The window's last sample time ([`SamplerWindow::last`]).
    last: Time,
    /// The interval in picoseconds (at least 1).
    step: u64,
    /// The bin width in bytes (at least 1; `u64::MAX` for no sampler: no level reaches it).
    bin: u64,
}

impl SampleClock {
    /// No sampler: every level is in the first bin, and nothing is ever counted.
    pub const OFF: SampleClock =
        SampleClock { start: Time::ZERO, last: Time::ZERO, step: 1, bin: u64::MAX };

    /// The clock of window `w`.
    pub fn new(w: SamplerWindow) -> SampleClock {
        SampleClock {
            start: w.start,
            last: w.last(),
            step: w.interval.as_ps().max(1),
            bin: w.bin.max(1),
        }
    }

    /// How many samples fall before `t`.
    fn samples_before(&self, t: Time) -> u64 {
        if t <= self.start {
            return 0;
        }
        (Time(t.0 - 1).min(self.last).0 - self.start.0) / self.step + 1
    }
}

/// The per-port state of a sampler: the level and the next sample time. Filled exactly from
/// the backlog's changes, with no event per sample: the samples between two changes all see
/// the level between them, and a sample at the time of a change sees the level after every
/// change at that time.
///
/// Only samples above the first bin are counted as they pass (the first bin's count is the
/// window's samples minus the others, at `finish`), so `next` is kept only while the level is
/// at or above the bin width; below it, it may lag, and catches up when the level rises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleState {
    /// The next sample time not yet counted (while `level >= bin`).
    next: Time,
    /// The sampled backlog (a port's classes 1–7).
    level: u64,
}

impl SampleState {
    /// Level 0, before the first sample of `c`.
    pub fn new(c: &SampleClock) -> SampleState {
        SampleState { next: c.start, level: 0 }
    }

    /// The level becomes `level` at `now` (`now` never decreases); `counts` takes the samples
    /// that saw the previous level, if it was above the first bin.
    #[inline(always)]
    pub fn set(&mut self, c: &SampleClock, counts: &mut Vec<u64>, now: Time, level: u64) {
        let old = self.level;
        self.level = level;
        if now > self.next && self.next <= c.last {
            if old >= c.bin {
                self.count(c, counts, now, old);
            } else if level >= c.bin {
                self.catch_up(c, now);
            }
        }
    }

    /// Moves `next` past the samples before `now` and returns how many they were (some are:
    /// `next < now`, `next <= last`).
    #[inline(always)]
    fn pass(&mut self, c: &SampleClock, now: Time) -> u64 {
        // Samples next, next + step, ... that are < now and <= last.
        let d = (now.0 - 1).min(c.last.0) - self.next.0;
        // One sample is the common case at a 100 ns interval: no division.
        let n = if d < c.step { 1 } else { d / c.step + 1 };
        self.next = Time(self.next.0.saturating_add(n.saturating_mul(c.step)));
        n
    }

    /// Counts the samples before `now`, at `old` (above the first bin).
    #[inline(never)]
    fn count(&mut self, c: &SampleClock, counts: &mut Vec<u64>, now: Time, old: u64) {
        let n = self.pass(c, now);
        let b = usize::try_from(old / c.bin).unwrap_or(usize::MAX);
        if b >= counts.len() {
            counts.resize(b + 1, 0);
        }
        counts[b] += n;
    }

    /// Skips the samples before `now`: they saw a level in the first bin.
    #[inline(never)]
    fn catch_up(&mut self, c: &SampleClock, now: Time) {
        self.pass(c, now);
    }

    /// Takes the samples up to `until` (inclusive; the run's stop time: the backlog stays at
    /// its last level after the run's last event) into `counts`, which then holds the counts
    /// per bin: `counts[b]` samples saw a backlog in `[b · bin, (b + 1) · bin)`.
    pub fn finish(&mut self, c: &SampleClock, counts: &mut Vec<u64>, until: Time) {
        let after = Time(until.0.saturating_add(1));
        let level = self.level;
        self.set(c, counts, after, level);
        let low = c.samples_before(after) - counts.iter().sum::<u64>();
        if low > 0 {
            if counts.is_empty() {
                counts.push(0);
            }
            counts[0] += low;
        }
    }
}

/// The sampled backlog of one port, on its own: a [`SampleState`] with its clock and counts
/// (the engine keeps the three apart, by how often each is read).
#[derive(Clone, Debug)]
pub struct QueueSampler {
    clock: SampleClock,
    state: SampleState,
    counts: Vec<u64>,
}

impl QueueSampler {
    /// A sampler over `w`, level 0.
    pub fn new(w: SamplerWindow) -> QueueSampler {
        let clock = SampleClock::new(w);
        QueueSampler { clock, state: SampleState::new(&clock), counts: Vec::new() }
    }

    /// `bytes` more are queued from `now`.
    pub fn grow(&mut self, now: Time, bytes: u64) {
        let level = self.state.level + bytes;
        self.state.set(&self.clock, &mut self.counts, now, level);
    }

    /// `bytes` fewer are queued from `now`.
    pub fn shrink(&mut self, now: Time, bytes: u64) {
        let level = self.state.level - bytes;
        self.state.set(&self.clock, &mut self.counts, now, level);
    }

    /// Takes the samples up to `until` (inclusive) and returns the counts per bin (see
    /// [`SampleState::finish`]).
    pub fn finish(&mut self, until: Time) -> Vec<u64> {
        self.state.finish(&self.clock, &mut self.counts, until);
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
    hist: [QueueHistogram; crate::mmu::QUEUES],
}

impl ClassHistograms {
    /// `bytes` more are queued in class `q` from `now`.
    #[inline]
    pub fn grow(&mut self, now: Time, bytes: u64, q: usize) {
        let level = self.hist[q].level + bytes;
        self.hist[q].set(now, level);
    }

    /// `bytes` fewer are queued in class `q` from `now`.
    #[inline]
    pub fn shrink(&mut self, now: Time, bytes: u64, q: usize) {
        let level = self.hist[q].level - bytes;
        self.hist[q].set(now, level);
    }

    /// Class `q` holds `bytes` from `now` (an unchanged level is not a change).
    #[inline]
    pub fn set(&mut self, now: Time, bytes: u64, q: usize) {
        self.hist[q].set(now, bytes);
    }

    /// Closes every class's histogram at `end` and summarises them, by class.
    pub fn finish(&mut self, end: Time) -> Vec<QueueStats> {
        self.hist.iter_mut().map(|h| h.finish(end)).collect()
    }
}

/// What a run monitors at each monitored switch egress port, shared by every port: the
/// choices are made once, so that a change tests none of them through a port's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watch {
    /// The backlog histogram over all classes.
    pub hist: bool,
    /// One histogram per class.
    pub classes: bool,
    /// The periodic sampler of classes 1–7 ([`SampleClock::OFF`] for none).
    pub clock: SampleClock,
}

impl Watch {
    /// Tells a port's monitors that its backlog over all classes went from `before` to
    /// `after` at `now` (`now` never decreases). Every byte of the difference is in classes
    /// 1–7: the engine tells the changes of class 0 (control frames) one by one, right after
    /// telling those before them, and moves its `before` past them without a tell (the
    /// histogram needs none at a change's instant, the sampler does not see class 0, and the
    /// per-class histograms are told with [`PortMonitor::class_change`] and
    /// [`PortMonitor::set_classes`]).
    ///
    /// The port's per-change state is `since` (the time of its last tell: the histogram's
    /// interval start, the backlog being `before` since then) and `sample` (the sampler's);
    /// the engine keeps both on cache lines that the change touches anyway, and the totals
    /// `m` in a box. Telling the level after the last change of an instant is enough: a
    /// level held for no time is seen by no monitor.
    #[inline(always)]
    pub fn tell(
        &self,
        m: &mut PortMonitor,
        since: &mut Time,
        sample: &mut SampleState,
        now: Time,
        before: u64,
        after: u64,
    ) {
        // Classes 1-7 changed by as much as the port did (and hold no more than it).
        let level = sample.level.wrapping_add(after.wrapping_sub(before));
        debug_assert!(level <= after, "classes 1-7 hold {level} B of the port's {after} B");
        sample.set(&self.clock, &mut m.counts, now, level);
        // Last, so that the call out is the tell's last act.
        if self.hist {
            let dt = now.0 - since.0;
            *since = now;
            if before != 0 && dt != 0 {
                m.busy.add(before, dt);
            }
        }
    }

    /// The histogram of a port's backlog (`level` since `since`, its last change), closed at
    /// `end`.
    pub fn finish_hist(
        &self,
        m: &mut PortMonitor,
        since: &mut Time,
        level: u64,
        end: Time,
    ) -> QueueStats {
        let end = end.max(*since);
        if level != 0 && end > *since {
            m.busy.add(level, end.0 - since.0);
        }
        *since = end;
        m.busy.finish(end.0)
    }

    /// A port's sampler counts per bin (see [`SampleState::finish`]), taken up to `until`.
    pub fn finish_samples(
        &self,
        m: &mut PortMonitor,
        sample: &mut SampleState,
        until: Time,
    ) -> Vec<u64> {
        sample.finish(&self.clock, &mut m.counts, until);
        m.counts.clone()
    }
}

/// The totals the monitors of one switch egress port accumulate (boxed by the engine; the
/// per-change state is passed to [`Watch::tell`]): the histogram's busy time, the sampler's
/// counts above the first bin, the per-class histograms.
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct PortMonitor {
    /// The busy time of the backlog over all classes (one cache line).
    busy: BusyTime,
    /// The sampler's counts per bin.
    counts: Vec<u64>,
    /// One histogram per class, when asked for (boxed: eight histograms are large).
    classes: Option<Box<ClassHistograms>>,
}

impl PortMonitor {
    /// Empty totals for the monitors of `w`.
    pub fn new(w: &Watch) -> PortMonitor {
        PortMonitor {
            busy: BusyTime::new(),
            counts: Vec::new(),
            classes: w.classes.then(Box::default),
        }
    }

    /// Tells the per-class histograms (if asked for) of a change by `bytes` in class `q`.
    pub fn class_change(&mut self, now: Time, grew: bool, bytes: u64, q: usize) {
        if let Some(c) = &mut self.classes {
            if grew {
                c.grow(now, bytes, q);
            } else {
                c.shrink(now, bytes, q);
            }
        }
    }

    /// Tells the per-class histograms (if asked for) the backlog of classes 1–7 at `now`,
    /// `bytes(q)` for class `q`.
    #[inline(never)]
    pub fn set_classes(&mut self, now: Time, bytes: impl Fn(usize) -> u64) {
        if let Some(c) = &mut self.classes {
            for q in 1..crate::mmu::QUEUES {
                c.set(now, bytes(q), q);
            }
        }
    }

    /// Closes the per-class histograms (if asked for) at `end` and summarises them, by class.
    pub fn finish_classes(&mut self, end: Time) -> Option<Vec<QueueStats>> {
        self.classes.as_mut().map(|c| c.finish(end))
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
        let w = Watch { hist: true, classes: true, clock: SampleClock::OFF };
        let mut m = PortMonitor::new(&w);
        let (mut since, mut sample) = (Time::ZERO, SampleState::new(&w.clock));
        let mut tell = |at, before, after, grew, bytes, q| {
            w.tell(&mut m, &mut since, &mut sample, t(at), before, after);
            m.class_change(t(at), grew, bytes, q);
        };
        tell(10, 0, 1000, true, 1000, 3);
        tell(20, 1000, 1500, true, 500, 1);
        tell(30, 1500, 500, false, 1000, 3);
        tell(40, 500, 0, false, 500, 1);
        let port = w.finish_hist(&mut m, &mut since, 0, t(100));
        let classes = m.finish_classes(t(100)).unwrap();
        assert_eq!(classes.len(), crate::mmu::QUEUES);
        assert_eq!((classes[3].max, classes[3].above[0]), (1000, Duration::from_ns(20)));
        assert_eq!((classes[1].max, classes[1].above[0]), (500, Duration::from_ns(20)));
        assert_eq!(classes[0].max, 0);
        // The classes' areas add up to the port's.
        let area = |s: &QueueStats| s.mean * s.time.as_ps() as f64;
        let sum: f64 = classes.iter().map(area).sum();
        assert!((sum - area(&port)).abs() < 1e-6, "{sum} vs {}", area(&port));
        assert_eq!((port.max, port.above[0]), (1500, Duration::from_ns(30)));
        assert_eq!(port.time, Duration::from_ns(100));
    }

    #[test]
    fn a_told_port_keeps_the_histogram_and_samples_of_its_backlog() {
        // The split monitor (per-change state, shared choices, boxed totals) against a
        // histogram told the port's levels and a sampler told those of classes 1-7 (class 0
        // is not sampled); the run ends with the backlog still at 464 B. The changes, by
        // instant and class: at 5 ns +300 B (class 2) then +400 B (class 0); at 9 ns -300 B
        // (class 2); at 13 ns +64 B and +250 B (class 5); at 20 ns -250 B (class 5).
        let t = Time::from_ns;
        let window =
            SamplerWindow { start: t(0), end: t(40), interval: Duration::from_ns(2), bin: 100 };
        let w = Watch { hist: true, classes: false, clock: SampleClock::new(window) };
        let (mut m, mut h, mut s) =
            (PortMonitor::new(&w), QueueHistogram::new(), QueueSampler::new(window));
        let (mut since, mut sample) = (Time::ZERO, SampleState::new(&w.clock));
        // As the engine tells them: the changes of classes 1-7 before a class-0 change, then
        // the class-0 change moves the told level without a tell; the net change at the end
        // of each instant.
        for (at, before, after) in [(5, 0, 300), (9, 700, 400), (13, 400, 714), (20, 714, 464)] {
            w.tell(&mut m, &mut since, &mut sample, t(at), before, after);
        }
        for (at, level) in [(5, 300), (5, 700), (9, 400), (13, 464), (13, 714), (20, 464)] {
            h.set(t(at), level);
        }
        s.grow(t(5), 300);
        s.shrink(t(9), 300);
        s.grow(t(13), 64);
        s.grow(t(13), 250);
        s.shrink(t(20), 250);
        assert!(m.finish_classes(t(50)).is_none());
        let samples = w.finish_samples(&mut m, &mut sample, t(50));
        // Samples at 0, 2, 4 ns see 0 B; 6, 8 see 300 B of classes 1-7; 10, 12 see 0 B;
        // 14 .. 18 see 314 B; 20 .. 40 see 64 B.
        assert_eq!(samples, vec![5 + 11, 0, 0, 2 + 3]);
        assert_eq!(samples, s.finish(t(50)));
        assert_eq!(w.finish_hist(&mut m, &mut since, 464, t(50)), h.finish(t(50)));
    }

    mod sampler {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            /// The sampler equals reading a random step function at every sample time of its
            /// window: the level after every change at or before that time.
            #[test]
            fn sampler_equals_reading_every_sample(
                steps in prop::collection::vec(
                    (0u64..400, 0u64..5_000),
                    0..200,
                ),
                start_ns in 0u64..3_000,
                len_ns in 0u64..30_000,
                interval_ns in 1u64..300,
                bin in prop_oneof![Just(1000u64), 1u64..4_000],
                stop_ns in 0u64..40_000,
            ) {
                let w = SamplerWindow {
                    start: Time::from_ns(start_ns),
                    end: Time::from_ns(start_ns + len_ns),
                    interval: Duration::from_ns(interval_ns),
                    bin,
                };
                let mut s = QueueSampler::new(w);
                let (mut now, mut level) = (0u64, 0u64);
                let mut changes = vec![];
                for (dt_ns, to) in steps {
                    now += dt_ns;
                    if to >= level {
                        s.grow(Time::from_ns(now), to - level);
                    } else {
                        s.shrink(Time::from_ns(now), level - to);
                    }
                    level = to;
                    changes.push((now, to));
                }
                let stop = now.max(stop_ns);
                let got = s.finish(Time::from_ns(stop));
                let mut want: Vec<u64> = vec![];
                let mut at = start_ns;
                while at <= stop && Time::from_ns(at) <= w.last() {
                    let l = changes.iter().rev().find(|c| c.0 <= at).map_or(0, |c| c.1);
                    let b = (l / bin) as usize;
                    if want.len() <= b {
                        want.resize(b + 1, 0);
                    }
                    want[b] += 1;
                    at += interval_ns;
                }
                prop_assert_eq!(got, want);
            }
        }
    }
}
