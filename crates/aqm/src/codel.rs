//! CoDel (Nichols and Jacobson), following Linux `include/net/codel_impl.h` and
//! `net/sched/sch_codel.c`.
//!
//! # The control law
//!
//! Sojourn time is measured at dequeue, from [`Entry::enq`]. A dequeued packet is "above target"
//! when its sojourn is at least `target` **and** the discipline's backlog after the dequeue is
//! more than `mtu` bytes. The first such packet starts a clock (`first_above_time = now +
//! interval`); a packet dequeued strictly after that instant, with nothing below target in
//! between, makes CoDel enter the *dropping* state: that packet is dropped (or, if ECN is on and
//! it is ECN-capable, marked) and the next drop is scheduled at `now + interval/√count`.
//!
//! On entering, `count` is set to `count − lastcount` if that difference is more than 1 and
//! `now − drop_next < 16·interval` (the previous episode ended recently, so its rate is a good
//! start), else to 1; `lastcount` then remembers the new `count`. While dropping, every
//! dequeue at or after `drop_next` increments `count`, drops the packet and reschedules
//! `drop_next += interval/√count` (from the previous *scheduled* instant), repeating while the
//! next packet is still above target and `now ≥ drop_next`. A packet below target ends the
//! state. With ECN an ECN-capable packet is marked instead and the dequeue stops there: at most
//! one mark per dequeue, as in Linux.
//!
//! `1/√count` is kept as Linux keeps it: a 16-bit fixed-point `rec_inv_sqrt` advanced by one
//! Newton step per `count` change. Its relative error is about `3/(8(count−1)²)` (the lag of one
//! step) plus `√count/65536` (the 16-bit truncation): 29% at `count = 2`, under 0.1% for
//! `20 ≤ count ≤ 4000`. `exact_sqrt = true` uses `interval/√count` in `f64`, rounded to the
//! picosecond, instead (for tests of the schedule).
//!
//! `ce_threshold` (off by default) additionally marks an ECN-capable packet whose sojourn is
//! above it; with `ce_threshold_selector = "ect1"` only ECT(1) and CE packets are considered (Linux
//! `ce_threshold_selector 0x1/0x1`, used for L4S), with `"any"` every ECN-capable packet (Linux
//! without a selector).
//!
//! # Differences from Linux
//!
//! - Time is exact picoseconds; Linux uses a `u32` clock of 1024 ns units (`CODEL_SHIFT = 10`),
//!   so its target (4882 units = 4.999 ms) and all instants are truncated to 1.024 µs and wrap
//!   after 2199 s. Comparisons keep Linux's strictness (`sojourn < target` is below, drop when
//!   `now > first_above_time`, `now ≥ drop_next`).
//! - The control law scales the picosecond interval by the same 16-bit `rec_inv_sqrt`, so at
//!   `count = 1` the next drop is `interval·(1 − 2⁻¹⁶)` later, as in Linux.
//! - `ecn` defaults to off, as Linux `tc ... codel` (`noecn`); fq_codel turns it on, as Linux.
//! - Linux resets `dropping` when `dequeue` finds the queue empty; so does this model, but only if
//!   the engine calls `dequeue` on an empty queue (an engine that asks non-empty classes only, as
//!   HTB does in Linux, keeps the state across idle periods, as HTB + CoDel does).
//! - Recent kernels cap the drops of one dequeue call; this model does not.

use std::collections::VecDeque;

use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, PluginSpec};

use crate::{
    check, Bytes, Ctx, Dequeued, DropCause, Dropped, Duration, Ecn, Entry, QueueDisc, Time,
};

/// Which ECN-capable packets `ce_threshold` marks.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum CeSelector {
    /// Every ECN-capable packet (Linux without `ce_threshold_selector`).
    #[default]
    Any,
    /// ECT(1) and CE only (Linux `ce_threshold_selector 0x1/0x1`, for L4S traffic).
    Ect1,
}

impl CeSelector {
    const WORDS: &'static [&'static str] = &["any", "ect1"];

    fn from_word(w: &str) -> CeSelector {
        if w == "ect1" {
            CeSelector::Ect1
        } else {
            CeSelector::Any
        }
    }

    #[inline]
    fn matches(self, ecn: Ecn) -> bool {
        match self {
            CeSelector::Any => ecn.is_ect(),
            CeSelector::Ect1 => ecn.is_l4s(),
        }
    }
}

/// The parameters of [`CoDel`]. `Default` is Linux's (`ecn` off, as `tc ... codel`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct CoDelParams {
    /// Acceptable standing sojourn time (Linux 5 ms).
    pub target: Duration,
    /// Width of the moving window (Linux 100 ms).
    pub interval: Duration,
    /// Most packets held; an arriving packet beyond it is dropped (Linux 1000).
    pub limit: u32,
    /// Backlog at or below which nothing is "above target" (Linux: the device MTU, 1514).
    pub mtu: Bytes,
    /// Mark ECN-capable packets instead of dropping them (Linux `codel`: off unless `ecn` is
    /// given; `fq_codel` turns it on).
    pub ecn: bool,
    /// Mark ECN-capable packets whose sojourn exceeds this (`None`: off, Linux's default).
    pub ce_threshold: Option<Duration>,
    /// Which packets `ce_threshold` applies to.
    pub ce_threshold_selector: CeSelector,
    /// Use the exact `interval/√count` instead of Linux's Newton approximation.
    pub exact_sqrt: bool,
}

impl Default for CoDelParams {
    fn default() -> Self {
        CoDelParams {
            target: Duration::from_ms(5),
            interval: Duration::from_ms(100),
            limit: 1000,
            mtu: Bytes(1514),
            ecn: false,
            ce_threshold: None,
            ce_threshold_selector: CeSelector::Any,
            exact_sqrt: false,
        }
    }
}

impl CoDelParams {
    /// Checks the parameters.
    ///
    /// # Errors
    /// `target` zero or not below `interval`; `interval` zero; `limit` zero; `ce_threshold` zero.
    pub fn validate(&self) -> Result<(), ParamError> {
        validate_law(self.target, self.interval, self.ce_threshold)?;
        if self.limit == 0 {
            return Err(ParamError::new("limit", "must be at least 1"));
        }
        Ok(())
    }

    pub(crate) fn law(&self) -> Law {
        Law::new(
            self.target,
            self.interval,
            self.mtu,
            self.ecn,
            self.ce_threshold,
            self.ce_threshold_selector,
            self.exact_sqrt,
        )
    }
}

/// Checks the CoDel law parameters shared by `codel` and `fq_codel`.
pub(crate) fn validate_law(
    target: Duration,
    interval: Duration,
    ce_threshold: Option<Duration>,
) -> Result<(), ParamError> {
    if interval == Duration::ZERO {
        return Err(ParamError::new("interval", "must be positive"));
    }
    if target == Duration::ZERO || target >= interval {
        return Err(ParamError::new(
            "target",
            format!("must be positive and below interval ({interval}), got {target}"),
        ));
    }
    if ce_threshold == Some(Duration::ZERO) {
        return Err(ParamError::new(
            "ce_threshold",
            "must be positive (leave it out to turn it off)",
        ));
    }
    Ok(())
}

/// The CoDel law parameters as read from a scenario (shared by `codel` and `fq_codel`).
pub(crate) struct LawParams {
    pub target: Duration,
    pub interval: Duration,
    pub mtu: Bytes,
    pub ecn: bool,
    pub ce_threshold: Option<Duration>,
    pub ce_threshold_selector: CeSelector,
    pub exact_sqrt: bool,
}

/// Reads the shared CoDel law parameters, with CoDel's defaults but for `ecn`, whose default
/// differs between Linux's `codel` (off) and `fq_codel` (on).
pub(crate) fn read_law(p: &Params, ecn_default: bool) -> Result<LawParams, ParamError> {
    let d = CoDelParams { ecn: ecn_default, ..CoDelParams::default() };
    let lp = LawParams {
        target: p.duration("target", d.target),
        interval: check::positive(p, "interval", d.interval)?,
        mtu: p.size("mtu", d.mtu),
        ecn: p.bool("ecn", d.ecn),
        ce_threshold: if p.has("ce_threshold") {
            Some(p.duration("ce_threshold", Duration::ZERO))
        } else {
            None
        },
        ce_threshold_selector: CeSelector::from_word(p.choice("ce_threshold_selector", "any")),
        exact_sqrt: p.bool("exact_sqrt", false),
    };
    validate_law(lp.target, lp.interval, lp.ce_threshold)?;
    if p.has("ce_threshold_selector") && lp.ce_threshold.is_none() {
        return Err(ParamError::new(
            "ce_threshold_selector",
            "has no effect without ce_threshold (it selects the packets that threshold marks)",
        ));
    }
    Ok(lp)
}

/// The parameters of `codel`.
pub const SPEC: PluginSpec = PluginSpec {
    name: "codel",
    summary:
        "CoDel AQM (Linux codel_impl.h): drops or marks at dequeue when sojourn stays above target",
    params: &[
        ParamSpec::new(
            "target",
            Kind::Duration,
            "5ms",
            "acceptable standing sojourn time; positive, below interval",
        ),
        ParamSpec::new(
            "interval",
            Kind::Duration,
            "100ms",
            "sliding window over which sojourn must stay above target",
        ),
        ParamSpec::new(
            "limit",
            Kind::Integer,
            "1000",
            "most packets held; arriving packets beyond it are dropped",
        ),
        ParamSpec::new(
            "mtu",
            Kind::Size,
            "1514",
            "no drop while the backlog after the dequeue is at most this",
        ),
        ParamSpec::new(
            "ecn",
            Kind::Bool,
            "false",
            "mark ECN-capable packets instead of dropping them (Linux codel's default: off)",
        ),
        ParamSpec::new(
            "ce_threshold",
            Kind::Duration,
            "off",
            "also mark ECN-capable packets whose sojourn exceeds this",
        ),
        ParamSpec::new(
            "ce_threshold_selector",
            Kind::Choice(CeSelector::WORDS),
            "any",
            "packets ce_threshold applies to: any ECN-capable, or ect1 (ECT(1) and CE)",
        ),
        ParamSpec::new(
            "exact_sqrt",
            Kind::Bool,
            "false",
            "exact interval/sqrt(count) instead of Linux's Newton step",
        ),
    ],
};

/// Reads and validates [`CoDelParams`].
///
/// # Errors
/// `target` zero or not below `interval` (on `target`), `interval` zero, `limit` zero,
/// `ce_threshold` zero.
pub fn from_params(p: &Params) -> Result<CoDelParams, ParamError> {
    let lp = read_law(p, CoDelParams::default().ecn)?;
    let cp = CoDelParams {
        target: lp.target,
        interval: lp.interval,
        limit: check::u32_at_least(p, "limit", CoDelParams::default().limit, 1)?,
        mtu: lp.mtu,
        ecn: lp.ecn,
        ce_threshold: lp.ce_threshold,
        ce_threshold_selector: lp.ce_threshold_selector,
        exact_sqrt: lp.exact_sqrt,
    };
    cp.validate()?;
    Ok(cp)
}

/// The state of one CoDel instance (Linux `struct codel_vars`), readable for tests and traces.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct CodelVars {
    /// Drops (or marks) since entering the dropping state, plus the carried-over count.
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    /// Whether CoDel is in the dropping state.
    pub dropping: bool,
    /// `1/√count` in Q0.16 fixed point (Linux's `rec_inv_sqrt`).
    pub rec_inv_sqrt: u16,
    /// When sojourn will have been above target for a whole interval (`None`: below target).
    pub first_above_time: Option<Time>,
    /// The next scheduled drop (or, after leaving the dropping state, the last one).
    pub drop_next: Time,
    /// Sojourn time of the last packet examined.
    pub ldelay: Duration,
}

/// One Newton step of `rec_inv_sqrt` towards `1/√count`, in Linux's integer arithmetic:
/// `y' = y/2 · (3 − count·y²)` with `y` in Q0.32 built from the 16-bit cache. Overflow wraps
/// as in C.
pub(crate) fn newton_step(v: &mut CodelVars) {
    let y = u64::from(v.rec_inv_sqrt) << 16; // Q0.32 (< 2^32)
    let y2 = (y * y) >> 32;
    let mut val = (3u64 << 32).wrapping_sub(u64::from(v.count).wrapping_mul(y2));
    val >>= 2; // keeps the product below in 64 bits
    val = val.wrapping_mul(y) >> (32 - 2 + 1);
    v.rec_inv_sqrt = (val >> 16) as u16;
}

/// The CoDel control law and its parameters, in picoseconds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Law {
    target: u64,
    interval: u64,
    mtu: u64,
    ecn: bool,
    ce_threshold: Option<u64>,
    ce_selector: CeSelector,
    exact_sqrt: bool,
}

/// The queue a [`Law`] dequeues from: a FIFO, or one flow of fq_codel.
pub(crate) trait Source {
    /// Removes the head packet, updating the backlog.
    fn pop(&mut self) -> Option<Entry>;
    /// The backlog (bytes) CoDel compares with `mtu`: after the pop, qdisc-wide in fq_codel.
    fn backlog(&self) -> u64;
}

impl Law {
    pub(crate) fn new(
        target: Duration,
        interval: Duration,
        mtu: Bytes,
        ecn: bool,
        ce_threshold: Option<Duration>,
        ce_selector: CeSelector,
        exact_sqrt: bool,
    ) -> Law {
        Law {
            target: target.as_ps(),
            interval: interval.as_ps(),
            mtu: mtu.get(),
            ecn,
            ce_threshold: ce_threshold.map(Duration::as_ps),
            ce_selector,
            exact_sqrt,
        }
    }

    /// `t + interval/√count`.
    #[inline]
    fn control_law(&self, t: Time, v: &CodelVars) -> Time {
        let step = if self.exact_sqrt {
            (self.interval as f64 / f64::from(v.count.max(1)).sqrt()).round() as u64
        } else {
            ((u128::from(self.interval) * (u128::from(v.rec_inv_sqrt) << 16)) >> 32) as u64
        };
        Time(t.as_ps() + step)
    }

    /// Linux `codel_should_drop`: updates `ldelay` and `first_above_time` for the packet in
    /// hand (`None`: the queue ran empty) and says whether it has been above target for an
    /// interval.
    #[inline]
    fn should_drop(&self, v: &mut CodelVars, e: Option<&Entry>, backlog: u64, now: Time) -> bool {
        let Some(e) = e else {
            v.first_above_time = None;
            return false;
        };
        v.ldelay = now.saturating_since(e.enq);
        if v.ldelay.as_ps() < self.target || backlog <= self.mtu {
            v.first_above_time = None;
            return false;
        }
        match v.first_above_time {
            None => {
                v.first_above_time = Some(Time(now.as_ps() + self.interval));
                false
            }
            Some(t) => now > t,
        }
    }

    /// Whether CoDel may mark this packet instead of dropping it.
    #[inline]
    fn can_mark(&self, e: &Entry) -> bool {
        self.ecn && e.ecn.is_ect()
    }

    /// Linux `codel_dequeue`: the next packet from `src`, dropping (into `cx.dropped`) or
    /// marking on the way.
    pub(crate) fn dequeue<S: Source>(
        &self,
        v: &mut CodelVars,
        src: &mut S,
        cx: &mut Ctx<'_>,
    ) -> Option<Dequeued> {
        let now = cx.now;
        let Some(first) = src.pop() else {
            v.dropping = false;
            return None;
        };
        let mut cur = Some(first);
        let mut marked = false;
        let drop = self.should_drop(v, cur.as_ref(), src.backlog(), now);
        if v.dropping {
            if !drop {
                v.dropping = false; // sojourn below target: leave the dropping state
            } else {
                while v.dropping && now >= v.drop_next {
                    v.count = v.count.wrapping_add(1);
                    newton_step(v);
                    let e = cur.as_mut().expect("the dropping state holds a packet");
                    if self.can_mark(e) {
                        e.ecn = Ecn::Ce;
                        marked = true;
                        v.drop_next = self.control_law(v.drop_next, v);
                        break; // at most one mark per dequeue
                    }
                    cx.dropped.push(Dropped { entry: *e, cause: DropCause::Aqm });
                    cur = src.pop();
                    if self.should_drop(v, cur.as_ref(), src.backlog(), now) {
                        v.drop_next = self.control_law(v.drop_next, v);
                    } else {
                        v.dropping = false;
                    }
                }
            }
        } else if drop {
            let e = cur.as_mut().expect("should_drop is false without a packet");
            if self.can_mark(e) {
                e.ecn = Ecn::Ce;
                marked = true;
            } else {
                cx.dropped.push(Dropped { entry: *e, cause: DropCause::Aqm });
                cur = src.pop();
                // Called for its effect on ldelay and first_above_time, as in Linux.
                self.should_drop(v, cur.as_ref(), src.backlog(), now);
            }
            v.dropping = true;
            let delta = v.count.wrapping_sub(v.lastcount);
            let since = i128::from(now.as_ps()) - i128::from(v.drop_next.as_ps());
            if delta > 1 && since < 16 * i128::from(self.interval) {
                v.count = delta;
                newton_step(v);
            } else {
                v.count = 1;
                v.rec_inv_sqrt = u16::MAX;
            }
            v.lastcount = v.count;
            v.drop_next = self.control_law(now, v);
        }
        let mut e = cur?;
        if let Some(th) = self.ce_threshold {
            if v.ldelay.as_ps() > th && self.ce_selector.matches(e.ecn) {
                e.ecn = Ecn::Ce;
                marked = true;
            }
        }
        Some(Dequeued { entry: e, marked })
    }
}

/// A FIFO with its byte count, as a [`Source`].
struct FifoSource<'a> {
    q: &'a mut VecDeque<Entry>,
    bytes: &'a mut u64,
}

impl Source for FifoSource<'_> {
    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        let e = self.q.pop_front()?;
        *self.bytes -= u64::from(e.wire);
        Some(e)
    }
    #[inline]
    fn backlog(&self) -> u64 {
        *self.bytes
    }
}

/// CoDel over one FIFO with a packet limit (Linux `sch_codel`).
#[derive(Clone, Debug)]
pub struct CoDel {
    q: VecDeque<Entry>,
    bytes: u64,
    limit: usize,
    law: Law,
    vars: CodelVars,
}

impl CoDel {
    /// An empty queue.
    ///
    /// # Panics
    /// If `p` is invalid ([`CoDelParams::validate`]).
    pub fn new(p: &CoDelParams) -> CoDel {
        if let Err(e) = p.validate() {
            panic!("invalid codel parameters: {e}");
        }
        CoDel {
            q: VecDeque::new(),
            bytes: 0,
            limit: p.limit as usize,
            law: p.law(),
            vars: CodelVars::default(),
        }
    }

    /// The CoDel state (count, dropping, next drop, ...).
    pub fn vars(&self) -> CodelVars {
        self.vars
    }
}

impl QueueDisc for CoDel {
    fn enqueue(&mut self, e: Entry, cx: &mut Ctx<'_>) {
        if self.q.len() >= self.limit {
            cx.dropped.push(Dropped { entry: e, cause: DropCause::Overflow });
            return;
        }
        self.bytes += u64::from(e.wire);
        self.q.push_back(e);
    }

    fn dequeue(&mut self, cx: &mut Ctx<'_>) -> Option<Dequeued> {
        let mut src = FifoSource { q: &mut self.q, bytes: &mut self.bytes };
        self.law.dequeue(&mut self.vars, &mut src, cx)
    }

    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }

    fn len(&self) -> usize {
        self.q.len()
    }

    fn drain_handles(&mut self, out: &mut Vec<u32>) {
        out.extend(self.q.drain(..).map(|e| e.pkt));
        self.bytes = 0;
    }

    fn peek(&self) -> Option<u32> {
        self.q.front().map(|e| e.pkt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linux's Newton iteration, followed from `count = 1` one step per increment (as in a
    /// dropping episode), stays within the closed-form bound `3/(8(n−1)²) + √n/65536`
    /// (one step's lag plus 16-bit truncation) of `1/√n`, and within 0.1% for 20 ≤ n ≤ 4000.
    #[test]
    fn newton_iteration_tracks_inverse_sqrt_within_its_closed_form_bound() {
        let mut v = CodelVars { count: 1, rec_inv_sqrt: u16::MAX, ..CodelVars::default() };
        for n in 2u32..=200_000 {
            v.count = n;
            newton_step(&mut v);
            let exact = 1.0 / f64::from(n).sqrt();
            let rel = (f64::from(v.rec_inv_sqrt) / 65536.0 - exact).abs() / exact;
            let nf = f64::from(n);
            let bound = 3.0 / (8.0 * (nf - 1.0) * (nf - 1.0)) + nf.sqrt() / 65536.0;
            assert!(rel <= bound, "count {n}: relative error {rel} above {bound}");
            if (20..=4000).contains(&n) {
                assert!(rel < 1e-3, "count {n}: relative error {rel}");
            }
        }
        // The first step is far off, as in Linux: 1/√2 becomes 0.5.
        let mut v = CodelVars { count: 2, rec_inv_sqrt: u16::MAX, ..CodelVars::default() };
        newton_step(&mut v);
        assert_eq!(v.rec_inv_sqrt, 32769);
    }

    #[test]
    fn control_law_at_count_one_is_interval_less_one_part_in_65536() {
        let law = CoDelParams::default().law();
        let v = CodelVars { count: 1, rec_inv_sqrt: u16::MAX, ..CodelVars::default() };
        let i = Duration::from_ms(100).as_ps();
        assert_eq!(law.control_law(Time::ZERO, &v).as_ps(), i - i / 65536 - 1);
        let exact = CoDelParams { exact_sqrt: true, ..CoDelParams::default() }.law();
        let v4 = CodelVars { count: 4, ..v };
        assert_eq!(exact.control_law(Time::ZERO, &v4).as_ps(), i / 2);
    }
}
