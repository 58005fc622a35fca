//! DualPI2: the DualQ Coupled AQM of RFC 9332 with a PI2 base AQM, following Linux
//! `net/sched/sch_dualpi2.c` (merged in 2025).
//!
//! # Queues and scheduling
//!
//! Packets whose ECN field has a bit of `ecn_mask` set go to the L (low-latency) queue: by
//! default (`l4s_ect`) ECT(1) and CE. All others go to the C (classic) queue. A weighted round
//! robin with a byte credit protects the C queue from starvation (Linux's "C-protection"): the
//! credit starts at `mtu·(wc − wl)` (negative with the default `wc` = 10%, `wl` = 90%, so L goes
//! first); while both queues hold packets, L is served when the credit is ≤ 0 and raises it by
//! `wc·size`, C is served otherwise and lowers it by `wl·size`. When both are backlogged C thus
//! gets `wc`% of the bytes. An empty discipline resets the credit.
//!
//! # The PI controller and the coupling
//!
//! Every `tupdate` the base probability `p'` is updated from the queue delay `q` (the larger of
//! the two head-of-line sojourn times):
//! `p' += alpha·(q − target) + beta·(q − q_prev)`, clamped to [0, 1]. Then:
//!
//! - C packets are dropped (Not-ECT) or marked (ECT) with `p_C = p'²` (two draws, as Linux);
//! - L packets are marked with the coupled `p_CL = k·p'` (`k` = `coupling_factor`), so that
//!   `p_CL = k·√p_C` (RFC 9332 §2.4);
//! - L packets are also marked when their sojourn exceeds `step_thresh` (1 ms; or, with
//!   `step_packets`, when the L queue holds more than that many packets), once the L queue held
//!   at least `min_qlen_step` packets at their arrival;
//! - overload (`k·p' > 1`): with `drop_overload` (the default) L packets are dropped with
//!   `p'²` like classic ones and C packets are dropped even if ECN-capable; without it, `p'` is
//!   capped at `1/k` and L packets are marked.
//!
//! Nothing is dropped or marked by the PI while the total backlog (after the dequeue) is below
//! two MTUs. The decision is made at dequeue (Linux's default `drop_dequeue`), or at enqueue with
//! `drop_early`. Overflow (more than `limit` packets, or `memory_limit` bytes) drops the
//! arriving packet.
//!
//! Probabilities are `u32` fractions of `u32::MAX` as in Linux (a draw `u32 <= p` succeeds, so
//! `p = 0` still succeeds with probability 2⁻³²). The gains are applied in 2⁻³²-scaled
//! fixed point per picosecond of delay.
//!
//! # Differences from Linux
//!
//! - **Lazy PI updates.** There is no timer: each enqueue and dequeue first replays every
//!   update instant `n·tupdate` (n ≥ 1, from time zero) that has passed. The queues cannot
//!   change between two calls, so the head sojourn at each replayed instant, and hence `p'`, is
//!   what a timer would have computed, exactly; only the order of an update and a packet at the
//!   same picosecond is fixed (the update first). Linux re-arms its timer at fire time + tupdate,
//!   so its grid drifts by the timer latency. An idle discipline with `p' = 0` skips its
//!   updates in one step.
//! - Memory is counted in wire bytes (Linux: `skb->truesize`); the default `memory_limit` is
//!   Linux's `limit·2·mtu`, which then never binds before `limit` for MTU-sized packets.
//! - `alpha` and `beta` are the RFC's 0.16 Hz and 3.2 Hz; Linux stores them in 1/256 Hz
//!   (41/256 = 0.1602, 819/256 = 3.199).
//! - Only Linux's WRR scheduler is modelled (not RFC 9332's time-shifted FIFO); no GSO, no tc
//!   filters (so no "LLLL" class), and `p'` saturates instead of wrapping on delay jumps of
//!   seconds.

use std::collections::VecDeque;

use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, PluginSpec};
use rand::Rng;

use crate::{
    check, Bytes, Ctx, Dequeued, DropCause, Dropped, Duration, Ecn, Entry, QueueDisc, Time,
};

/// Which ECN codepoints go to the L queue.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum LQueueMask {
    /// ECT(1) and CE (RFC 9331; Linux `l4s_ect`).
    #[default]
    L4sEct,
    /// ECT(0) and CE (Linux `cla_ect`).
    ClaEct,
    /// Every ECN-capable packet (Linux `any_ect`).
    AnyEct,
}

impl LQueueMask {
    const WORDS: &'static [&'static str] = &["l4s_ect", "cla_ect", "any_ect"];

    fn from_word(w: &str) -> LQueueMask {
        match w {
            "cla_ect" => LQueueMask::ClaEct,
            "any_ect" => LQueueMask::AnyEct,
            _ => LQueueMask::L4sEct,
        }
    }

    /// The bits of the ECN field that select the L queue.
    const fn bits(self) -> u8 {
        match self {
            LQueueMask::L4sEct => 0b01,
            LQueueMask::ClaEct => 0b10,
            LQueueMask::AnyEct => 0b11,
        }
    }
}

/// The L queue's native (step) AQM threshold.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StepThresh {
    /// Mark L packets whose sojourn exceeds this (Linux default: 1 ms).
    Time(Duration),
    /// Mark L packets that leave more than this many packets in the L queue.
    Packets(u32),
}

/// The parameters of [`DualPi2`]. `Default` is Linux's (RFC 9332's alpha and beta).
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct DualPi2Params {
    /// Most packets in both queues (10000).
    pub limit: u32,
    /// Most bytes in both queues (`None`: `limit·2·mtu`, as Linux).
    pub memory_limit: Option<Bytes>,
    /// PI target queue delay (15 ms).
    pub target: Duration,
    /// PI update period (16 ms).
    pub tupdate: Duration,
    /// PI integral gain in Hz (0.16).
    pub alpha: f64,
    /// PI proportional gain in Hz (3.2).
    pub beta: f64,
    /// L-queue step threshold (1 ms).
    pub step: StepThresh,
    /// L-queue length (packets) from which the step applies (0: always).
    pub min_qlen_step: u32,
    /// Coupling factor `k` between `p'` and the L marking probability (2).
    pub coupling_factor: u8,
    /// On overload drop L packets too (true), or keep marking them and let the queue grow.
    pub drop_overload: bool,
    /// Decide drops and PI marks at enqueue instead of dequeue (false).
    pub drop_early: bool,
    /// The C queue's WRR weight in percent; L gets the rest (10).
    pub c_protection: u8,
    /// Which codepoints go to the L queue.
    pub ecn_mask: LQueueMask,
    /// MTU in bytes: the WRR credit unit, the 2-MTU no-drop backlog, the default memory limit.
    pub mtu: Bytes,
}

impl Default for DualPi2Params {
    fn default() -> Self {
        DualPi2Params {
            limit: 10_000,
            memory_limit: None,
            target: Duration::from_ms(15),
            tupdate: Duration::from_ms(16),
            alpha: 0.16,
            beta: 3.2,
            step: StepThresh::Time(Duration::from_ms(1)),
            min_qlen_step: 0,
            coupling_factor: 2,
            drop_overload: true,
            drop_early: false,
            c_protection: 10,
            ecn_mask: LQueueMask::L4sEct,
            mtu: Bytes(1514),
        }
    }
}

impl DualPi2Params {
    /// Checks the parameters.
    ///
    /// # Errors
    /// Zero `limit`, `memory_limit`, `mtu` or `coupling_factor`; `tupdate` below 1 µs; a
    /// default memory limit (`limit·2·mtu`) beyond 64 bits; `alpha` or `beta` not positive and
    /// finite; `c_protection` above 100.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.limit == 0 {
            return Err(ParamError::new("limit", "must be at least 1"));
        }
        if self.memory_limit == Some(Bytes::ZERO) {
            return Err(ParamError::new("memory_limit", "must be positive"));
        }
        if self.tupdate == Duration::ZERO {
            return Err(ParamError::new("tupdate", "must be positive"));
        }
        // Each update is a step of the PI controller, replayed one by one: a period below a
        // microsecond makes millions of them per simulated second (1 ps: days for 50 ms).
        if self.tupdate < dcsim_types::units::MIN_PERIOD {
            return Err(ParamError::new(
                "tupdate",
                format!("must be at least 1us, got {}", self.tupdate),
            ));
        }
        if self.mtu == Bytes::ZERO {
            return Err(ParamError::new("mtu", "must be positive"));
        }
        // Linux keeps the MTU in 32 bits; beyond, `2·mtu` and the scheduler's credit
        // (`mtu·(wc − wl)`) wrapped, and the PI's backlog guard silently changed.
        if self.mtu.0 > u64::from(u32::MAX) {
            return Err(ParamError::new(
                "mtu",
                format!("must be below 4GiB (2^32 bytes), got {}", self.mtu.0),
            ));
        }
        // The default byte limit, `limit·2·mtu`, must be representable (it wrapped to 0).
        if self.memory_limit.is_none()
            && u64::from(self.limit)
                .checked_mul(2)
                .and_then(|v| v.checked_mul(self.mtu.0))
                .is_none()
        {
            return Err(ParamError::new(
                "mtu",
                format!(
                    "makes the default memory_limit, limit·2·mtu = {}·2·{}, overflow 64 bits",
                    self.limit, self.mtu.0
                ),
            ));
        }
        for (name, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(v.is_finite() && v > 0.0 && v < 1e6) {
                return Err(ParamError::new(
                    name,
                    format!(
                        "must be positive and below 1e6 (Hz), got {}",
                        dcsim_types::params::Num(v)
                    ),
                ));
            }
        }
        if self.coupling_factor == 0 {
            return Err(ParamError::new("coupling_factor", "must be at least 1"));
        }
        if self.c_protection > 100 {
            return Err(ParamError::new(
                "c_protection",
                format!("is a percentage (0..=100), got {}", self.c_protection),
            ));
        }
        Ok(())
    }
}

/// The parameters of `dualpi2`.
pub const SPEC: PluginSpec = PluginSpec {
    name: "dualpi2",
    summary: "DualQ Coupled PI2 AQM (RFC 9332, Linux sch_dualpi2): L4S queue with step marking, classic queue with PI2",
    params: &[
        ParamSpec::new("limit", Kind::Integer, "10000", "most packets in both queues; arriving packets beyond it are dropped"),
        ParamSpec::new("memory_limit", Kind::Size, "limit*2*mtu", "most bytes in both queues (wire bytes)"),
        ParamSpec::new("target", Kind::Duration, "15ms", "PI target queue delay"),
        ParamSpec::new("tupdate", Kind::Duration, "16ms", "PI update period"),
        ParamSpec::new("alpha", Kind::Number, "0.16", "PI integral gain (Hz)"),
        ParamSpec::new("beta", Kind::Number, "3.2", "PI proportional gain (Hz)"),
        ParamSpec::new("step_thresh", Kind::Duration, "1ms", "mark L packets whose sojourn exceeds this"),
        ParamSpec::new("step_packets", Kind::Integer, "none", "instead of step_thresh: mark while the L queue exceeds this many packets"),
        ParamSpec::new("min_qlen_step", Kind::Integer, "0", "L-queue length from which the step applies"),
        ParamSpec::new("coupling_factor", Kind::Integer, "2", "k: L marking probability is k*p', classic p'^2"),
        ParamSpec::new("drop_overload", Kind::Bool, "true", "on overload (k*p' > 1) drop L packets with p'^2 too"),
        ParamSpec::new("drop_early", Kind::Bool, "false", "decide PI drops/marks at enqueue instead of dequeue"),
        ParamSpec::new("c_protection", Kind::Integer, "10", "WRR weight of the classic queue, percent"),
        ParamSpec::new("ecn_mask", Kind::Choice(LQueueMask::WORDS), "l4s_ect", "codepoints of the L queue: l4s_ect (ECT(1), CE), cla_ect, any_ect"),
        ParamSpec::new("mtu", Kind::Size, "1514", "WRR credit unit and 2*mtu no-drop backlog"),
    ],
};

/// Reads and validates [`DualPi2Params`].
///
/// # Errors
/// See [`DualPi2Params::validate`]; also both `step_thresh` and `step_packets` given (on
/// `step_packets`), a zero `step_thresh`, and out-of-range integers.
pub fn from_params(p: &Params) -> Result<DualPi2Params, ParamError> {
    let d = DualPi2Params::default();
    let step = if p.has("step_packets") {
        if p.has("step_thresh") {
            return Err(ParamError::new(
                "step_packets",
                "give either step_thresh or step_packets, not both",
            ));
        }
        StepThresh::Packets(p.u32("step_packets", 0)?)
    } else {
        StepThresh::Time(check::positive(p, "step_thresh", Duration::from_ms(1))?)
    };
    let small = |name: &'static str, default: u8, max: u64| -> Result<u8, ParamError> {
        let v = p.u64(name, u64::from(default));
        if v > max {
            return Err(ParamError::new(name, format!("must be at most {max}, got {v}")));
        }
        Ok(v as u8)
    };
    let dp = DualPi2Params {
        limit: check::u32_at_least(p, "limit", d.limit, 1)?,
        memory_limit: check::opt_positive_size(p, "memory_limit")?,
        target: p.duration("target", d.target),
        tupdate: check::positive(p, "tupdate", d.tupdate)?,
        alpha: p.f64("alpha", d.alpha),
        beta: p.f64("beta", d.beta),
        step,
        min_qlen_step: p.u32("min_qlen_step", d.min_qlen_step)?,
        coupling_factor: small("coupling_factor", d.coupling_factor, 255)?,
        drop_overload: p.bool("drop_overload", d.drop_overload),
        drop_early: p.bool("drop_early", d.drop_early),
        c_protection: small("c_protection", d.c_protection, 100)?,
        ecn_mask: LQueueMask::from_word(p.choice("ecn_mask", "l4s_ect")),
        mtu: p.size("mtu", d.mtu),
    };
    dp.validate()?;
    Ok(dp)
}

/// `u32::MAX` stands for probability 1, as Linux's `MAX_PROB`.
const MAX_PROB: u32 = u32::MAX;

/// A queued packet and what was decided about it at enqueue.
#[derive(Clone, Copy, Debug)]
struct Slot {
    e: Entry,
    /// Marked at enqueue (`drop_early`).
    marked: bool,
    /// The step threshold applies (the L queue held `min_qlen_step` packets at arrival).
    apply_step: bool,
}

/// DualPI2.
#[derive(Clone, Debug)]
pub struct DualPi2 {
    l: VecDeque<Slot>,
    c: VecDeque<Slot>,
    backlog: u64,
    // PI state
    prob: u32,
    last_qdelay: u64,
    next_update: Time,
    // WRR state
    credit: i64,
    credit_init: i64,
    wc: i64,
    wl: i64,
    // parameters, in picoseconds and fixed point
    limit: usize,
    memory_limit: u64,
    target: u64,
    tupdate: u64,
    alpha: i128,
    beta: i128,
    step: StepThresh,
    min_qlen_step: usize,
    k: u64,
    drop_overload: bool,
    drop_early: bool,
    mask: u8,
    two_mtu: u64,
}

/// A gain in Hz as probability units (of `MAX_PROB`) per picosecond, scaled by 2³².
fn gain(hz: f64) -> i128 {
    (hz * f64::from(MAX_PROB) * 4_294_967_296.0 / 1e12).round() as i128
}

impl DualPi2 {
    /// An empty discipline; its first PI update is at `tupdate`.
    ///
    /// # Panics
    /// If `p` is invalid ([`DualPi2Params::validate`]).
    pub fn new(p: &DualPi2Params) -> DualPi2 {
        if let Err(e) = p.validate() {
            panic!("invalid dualpi2 parameters: {e}");
        }
        let mtu = p.mtu.get();
        let wc = i64::from(p.c_protection);
        let wl = 100 - wc;
        let credit_init = mtu as i64 * (wc - wl);
        DualPi2 {
            l: VecDeque::new(),
            c: VecDeque::new(),
            backlog: 0,
            prob: 0,
            last_qdelay: 0,
            next_update: Time(p.tupdate.as_ps()),
            credit: credit_init,
            credit_init,
            wc,
            wl,
            limit: p.limit as usize,
            memory_limit: p.memory_limit.map_or(u64::from(p.limit) * 2 * mtu, Bytes::get),
            target: p.target.as_ps(),
            tupdate: p.tupdate.as_ps(),
            alpha: gain(p.alpha),
            beta: gain(p.beta),
            step: p.step,
            min_qlen_step: p.min_qlen_step as usize,
            k: u64::from(p.coupling_factor),
            drop_overload: p.drop_overload,
            drop_early: p.drop_early,
            mask: p.ecn_mask.bits(),
            two_mtu: 2 * mtu,
        }
    }

    /// The base probability `p'` in [0, 1] (as of the last PI update).
    pub fn base_prob(&self) -> f64 {
        f64::from(self.prob) / f64::from(MAX_PROB)
    }

    /// Packets in the L queue.
    pub fn l_len(&self) -> usize {
        self.l.len()
    }

    /// Packets in the C queue.
    pub fn c_len(&self) -> usize {
        self.c.len()
    }

    /// Replays the PI updates due at or before `now`.
    fn catch_up(&mut self, now: Time) {
        while self.next_update <= now {
            if self.prob == 0 && self.last_qdelay == 0 && self.l.is_empty() && self.c.is_empty() {
                // Idle fixed point: the remaining updates leave p' at 0.
                let missed = (now.as_ps() - self.next_update.as_ps()) / self.tupdate + 1;
                self.next_update = Time(self.next_update.as_ps() + missed * self.tupdate);
                return;
            }
            let t = self.next_update;
            self.update(t);
            self.next_update = Time(t.as_ps() + self.tupdate);
        }
    }

    /// One PI update at time `t` (Linux `calculate_probability`).
    fn update(&mut self, t: Time) {
        let head =
            |q: &VecDeque<Slot>| q.front().map_or(0, |s| t.saturating_since(s.e.enq).as_ps());
        let qdelay = head(&self.c).max(head(&self.l));
        let delta = (i128::from(qdelay) - i128::from(self.target)) * self.alpha
            + (i128::from(qdelay) - i128::from(self.last_qdelay)) * self.beta;
        self.last_qdelay = qdelay;
        let p = i128::from(self.prob) + (delta.signum() * (delta.abs() >> 32));
        let mut p = p.clamp(0, i128::from(MAX_PROB)) as u32;
        if !self.drop_overload {
            p = p.min(MAX_PROB / self.k as u32);
        }
        self.prob = p;
    }

    #[inline]
    fn roll(p: u32, cx: &mut Ctx<'_>) -> bool {
        cx.rng.gen::<u32>() <= p
    }

    /// Linux `must_drop`: the PI decision for `s`, given the backlog without it. Marks `s`
    /// when it is to be marked; returns whether it is to be dropped.
    fn must_drop(&self, s: &mut Slot, in_l: bool, backlog: u64, cx: &mut Ctx<'_>) -> bool {
        if backlog < self.two_mtu {
            return false;
        }
        let prob = self.prob;
        let l_prob = u64::from(prob) * self.k;
        let overload = l_prob > u64::from(MAX_PROB);
        let ect = s.e.ecn.is_ect();
        if !in_l {
            if Self::roll(prob, cx) && Self::roll(prob, cx) {
                if overload || !ect {
                    return true;
                }
                mark(s);
            }
            return false;
        }
        if overload {
            if self.drop_overload && Self::roll(prob, cx) && Self::roll(prob, cx) {
                return true;
            }
            mark(s);
            return false;
        }
        if Self::roll(l_prob as u32, cx) {
            if !ect {
                return true;
            }
            mark(s);
        }
        false
    }

    /// Linux `do_step_aqm` for an L packet leaving now; returns whether it is to be dropped.
    fn step_aqm(&self, s: &mut Slot, now: Time) -> bool {
        let over = match self.step {
            StepThresh::Time(d) => now.saturating_since(s.e.enq) > d,
            StepThresh::Packets(n) => self.l.len() > n as usize,
        };
        if s.apply_step && over {
            if !s.e.ecn.is_ect() {
                return true;
            }
            mark(s);
        }
        false
    }

    fn len_total(&self) -> usize {
        self.l.len() + self.c.len()
    }
}

#[inline]
fn mark(s: &mut Slot) {
    s.e.ecn = Ecn::Ce;
    s.marked = true;
}

impl QueueDisc for DualPi2 {
    fn enqueue(&mut self, e: Entry, cx: &mut Ctx<'_>) {
        self.catch_up(cx.now);
        let w = u64::from(e.wire);
        if self.len_total() >= self.limit || self.backlog + w > self.memory_limit {
            cx.dropped.push(Dropped { entry: e, cause: DropCause::Overflow });
            return;
        }
        let in_l = (e.ecn as u8) & self.mask != 0;
        let mut s = Slot { e, marked: false, apply_step: false };
        if self.drop_early && self.must_drop(&mut s, in_l, self.backlog, cx) {
            cx.dropped.push(Dropped { entry: s.e, cause: DropCause::Aqm });
            return;
        }
        self.backlog += w;
        if in_l {
            s.apply_step = self.l.len() >= self.min_qlen_step;
            self.l.push_back(s);
        } else {
            self.c.push_back(s);
        }
    }

    fn dequeue(&mut self, cx: &mut Ctx<'_>) -> Option<Dequeued> {
        self.catch_up(cx.now);
        loop {
            let c_len = self.c.len();
            let (mut s, in_l, change) = if !self.l.is_empty() && (c_len == 0 || self.credit <= 0) {
                let s = self.l.pop_front().expect("L queue is not empty");
                (s, true, if c_len > 0 { self.wc } else { 0 })
            } else if c_len > 0 {
                let s = self.c.pop_front().expect("C queue is not empty");
                (s, false, if self.l.is_empty() { 0 } else { -self.wl })
            } else {
                self.credit = self.credit_init;
                return None;
            };
            let w = u64::from(s.e.wire);
            self.backlog -= w;
            if !self.drop_early && self.must_drop(&mut s, in_l, self.backlog, cx) {
                cx.dropped.push(Dropped { entry: s.e, cause: DropCause::Aqm });
                continue;
            }
            if in_l && self.step_aqm(&mut s, cx.now) {
                cx.dropped.push(Dropped { entry: s.e, cause: DropCause::Aqm });
                continue;
            }
            self.credit += change * w as i64;
            return Some(Dequeued { entry: s.e, marked: s.marked });
        }
    }

    fn backlog_bytes(&self) -> u64 {
        self.backlog
    }

    fn len(&self) -> usize {
        self.len_total()
    }

    fn drain_handles(&mut self, out: &mut Vec<u32>) {
        out.extend(self.l.drain(..).chain(self.c.drain(..)).map(|s| s.e.pkt));
        self.backlog = 0;
    }

    fn peek(&self) -> Option<u32> {
        let l = self.l.front();
        let c = self.c.front();
        match (l, c) {
            (Some(l), None) => Some(l.e.pkt),
            (None, Some(c)) => Some(c.e.pkt),
            (Some(l), Some(c)) => Some(if self.credit <= 0 { l.e.pkt } else { c.e.pkt }),
            (None, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    struct H {
        rng: ChaCha8Rng,
        dropped: Vec<Dropped>,
    }

    impl H {
        fn new(seed: u64) -> H {
            H { rng: ChaCha8Rng::seed_from_u64(seed), dropped: Vec::new() }
        }
        fn enq(&mut self, q: &mut DualPi2, now: Time, pkt: u32, wire: u32, ecn: Ecn, enq: Time) {
            let mut cx = Ctx { now, rng: &mut self.rng, dropped: &mut self.dropped };
            q.enqueue(Entry { pkt, wire, ecn, flow: 0, enq }, &mut cx);
        }
        fn deq(&mut self, q: &mut DualPi2, now: Time) -> Option<Dequeued> {
            let mut cx = Ctx { now, rng: &mut self.rng, dropped: &mut self.dropped };
            q.dequeue(&mut cx)
        }
    }

    fn ms(x: u64) -> Time {
        Time(Duration::from_ms(x).as_ps())
    }

    /// A discipline whose PI never updates during the test (first update at 1000 s).
    fn frozen(prob: f64) -> DualPi2 {
        let mut q = DualPi2::new(&DualPi2Params {
            tupdate: Duration::from_ms(1_000_000),
            limit: 1_000_000,
            ..DualPi2Params::default()
        });
        q.prob = (prob * f64::from(MAX_PROB)).round() as u32;
        q
    }

    /// L packets whose sojourn exceeds 1 ms are marked, others not; classic packets never get
    /// the step, whatever their sojourn.
    #[test]
    fn l_packets_get_a_step_mark_above_one_ms() {
        let mut q = frozen(0.0);
        let mut h = H::new(0);
        let now = ms(10);
        let sojourns_us = [3000u64, 1001, 1000, 999, 0];
        for (i, s) in sojourns_us.iter().enumerate() {
            h.enq(
                &mut q,
                Time(ms(10).as_ps() - s * 1_000_000),
                i as u32,
                1500,
                Ecn::Ect1,
                Time(ms(10).as_ps() - s * 1_000_000),
            );
        }
        h.enq(&mut q, ms(5), 9, 1500, Ecn::Ect0, ms(5)); // classic, 5 ms
        let mut out = Vec::new();
        while let Some(d) = h.deq(&mut q, now) {
            out.push((d.entry.pkt, d.marked, d.entry.ecn));
        }
        assert_eq!(
            out,
            [
                (0, true, Ecn::Ce),
                (1, true, Ecn::Ce),
                (2, false, Ecn::Ect1),
                (3, false, Ecn::Ect1),
                (4, false, Ecn::Ect1),
                (9, false, Ecn::Ect0), // the WRR credit (-80 MTU) is still negative
            ]
        );
        assert!(h.dropped.is_empty());
    }

    /// Fractions signalled over `n` dequeues at a frozen `p'`, from a queue of one class.
    fn signal_fractions(prob: f64, ecn: Ecn, n: u32) -> (f64, f64) {
        let mut q = frozen(prob);
        let mut h = H::new(42);
        for i in 0..n + 10 {
            h.enq(&mut q, ms(1), i, 1500, ecn, ms(1)); // sojourn 0: no step marks
        }
        let mut marks = 0u32;
        let mut got = 0u32;
        while got + (h.dropped.len() as u32) < n {
            let d = h.deq(&mut q, ms(1)).expect("backlogged");
            marks += u32::from(d.marked);
            got += 1;
        }
        let drops = h.dropped.len() as u32;
        assert!(h.dropped.iter().all(|d| d.cause == DropCause::Aqm));
        (f64::from(marks) / f64::from(n), f64::from(drops) / f64::from(n))
    }

    fn within(x: f64, p: f64, n: u32) -> bool {
        (x - p).abs() <= 5.0 * (p * (1.0 - p) / f64::from(n)).sqrt()
    }

    /// RFC 9332 coupling: classic packets are signalled with p_C = p'², L packets with
    /// p_CL = k·p' = k·√p_C (k = 2); Not-ECT classic packets are dropped instead.
    #[test]
    fn coupled_probabilities() {
        let n = 200_000;
        let (l_mark, l_drop) = signal_fractions(0.2, Ecn::Ect1, n);
        let (c_mark, c_drop) = signal_fractions(0.2, Ecn::Ect0, n);
        let (n_mark, n_drop) = signal_fractions(0.2, Ecn::NotEct, n);
        assert!(within(l_mark, 0.4, n) && l_drop == 0.0, "L {l_mark} {l_drop}");
        assert!(within(c_mark, 0.04, n) && c_drop == 0.0, "C {c_mark} {c_drop}");
        assert!(within(n_drop, 0.04, n) && n_mark == 0.0, "Not-ECT {n_mark} {n_drop}");
        assert!(
            (l_mark - 2.0 * c_mark.sqrt()).abs() < 0.01,
            "p_L {l_mark} vs k*sqrt(p_C) {}",
            2.0 * c_mark.sqrt()
        );
    }

    /// Overload (k·p' > 1): L and classic ECN packets are dropped with p'², the surviving L
    /// packets are all marked; without drop_overload p' is capped at 1/k.
    #[test]
    fn overload_drops_with_p_squared() {
        let n = 100_000;
        let (l_mark, l_drop) = signal_fractions(0.6, Ecn::Ect1, n);
        assert!(within(l_drop, 0.36, n), "L drops {l_drop}");
        assert!((l_mark + l_drop - 1.0).abs() < 1e-9, "every surviving L packet is marked");
        let (c_mark, c_drop) = signal_fractions(0.6, Ecn::Ect0, n);
        assert!(within(c_drop, 0.36, n) && c_mark == 0.0, "C {c_mark} {c_drop}");

        let mut q =
            DualPi2::new(&DualPi2Params { drop_overload: false, ..DualPi2Params::default() });
        let mut h = H::new(0);
        for i in 0..2_000 {
            h.enq(&mut q, Time::ZERO, i, 1500, Ecn::NotEct, Time::ZERO);
        }
        h.deq(&mut q, ms(10_000)); // 625 updates with a growing queue delay
        assert_eq!(q.prob, MAX_PROB / 2);
    }

    /// Both queues backlogged with equal packets: the classic queue gets wc = 10% of them.
    #[test]
    fn wrr_gives_the_classic_queue_its_weight() {
        let mut q = frozen(0.0);
        let mut h = H::new(0);
        for i in 0..2_000 {
            h.enq(&mut q, ms(1), i, 1000, Ecn::Ect1, ms(1));
            h.enq(&mut q, ms(1), 10_000 + i, 1000, Ecn::Ect0, ms(1));
        }
        let c = (0..1_000).filter(|_| h.deq(&mut q, ms(1)).unwrap().entry.pkt >= 10_000).count();
        assert!((99..=101).contains(&c), "{c} classic packets of 1000");
    }

    /// Closed loop with a model classic (Not-ECT) source whose rate answers the classic drop
    /// probability like a Reno flow, r = K/√p_C = K/p', capped at twice the link rate, on a
    /// 10 Mb/s link. At equilibrium r(1 − p'²) = C, so with K = C/10 the PI must settle at
    /// p'² + 10p' − 1 = 0, p' = 0.0990, and the integral term drives the queue delay to the
    /// 15 ms target.
    #[test]
    fn pi_converges_to_target_delay_under_classic_overload() {
        let mut q = DualPi2::new(&DualPi2Params::default());
        let mut h = H::new(9);
        let ps_per_byte = 800_000u64; // 10 Mb/s
        let wire = 1500u32;
        let tx = Duration(u64::from(wire) * ps_per_byte);
        let (mut t_arr, mut t_link) = (Time::ZERO, Time::ZERO);
        let (mut id, mut sum_delay, mut sum_prob, mut n) = (0u32, 0f64, 0f64, 0u32);
        let end = ms(200_000);
        while t_arr < end || t_link < end {
            if t_arr <= t_link {
                h.enq(&mut q, t_arr, id, wire, Ecn::NotEct, t_arr);
                id += 1;
                // r = (C/10)/p', at most 2C: the gap is tx·10·p', at least tx/2.
                let gap = (tx.as_ps() as f64 * 10.0 * q.base_prob()).max(tx.as_ps() as f64 / 2.0);
                t_arr += Duration(gap as u64);
            } else {
                match h.deq(&mut q, t_link) {
                    Some(d) => {
                        if t_link > ms(100_000) {
                            sum_delay += t_link.saturating_since(d.entry.enq).as_secs_f64();
                            sum_prob += q.base_prob();
                            n += 1;
                        }
                        t_link += tx;
                    }
                    None => t_link = t_arr,
                }
            }
        }
        let (delay, prob) = (sum_delay / f64::from(n), sum_prob / f64::from(n));
        let p_eq = (-10.0 + 104f64.sqrt()) / 2.0;
        assert!((delay - 0.015).abs() < 0.0015, "mean sojourn {delay}");
        assert!((prob - p_eq).abs() < 0.02 * p_eq, "mean p' {prob}, equilibrium {p_eq}");
        assert!(!h.dropped.is_empty());
    }

    #[test]
    fn lazy_updates_equal_a_timer() {
        // Two disciplines with the same packets: one is poked at every update instant (as a
        // timer would), the other only at the end. p' must agree.
        let mut a = DualPi2::new(&DualPi2Params::default());
        let mut b = DualPi2::new(&DualPi2Params::default());
        let mut h = H::new(0);
        for i in 0..100 {
            h.enq(&mut a, ms(i), i as u32, 1500, Ecn::NotEct, ms(i));
            h.enq(&mut b, ms(i), i as u32, 1500, Ecn::NotEct, ms(i));
        }
        for k in 7..40u64 {
            a.catch_up(ms(16 * k));
        }
        a.catch_up(ms(650));
        b.catch_up(ms(650));
        assert!(a.prob > 0);
        assert_eq!((a.prob, a.last_qdelay, a.next_update), (b.prob, b.last_qdelay, b.next_update));
    }

    #[test]
    fn params_are_validated_by_name() {
        use dcsim_types::params::Value;
        let with =
            |v: Vec<(&'static str, Value)>| from_params(&Params::from_values(SPEC.params, v));
        assert_eq!(with(vec![]), Ok(DualPi2Params::default()));
        assert_eq!(
            with(vec![("c_protection", Value::Integer(101))]).unwrap_err().field,
            "c_protection"
        );
        assert_eq!(
            with(vec![("coupling_factor", Value::Integer(0))]).unwrap_err().field,
            "coupling_factor"
        );
        assert_eq!(with(vec![("alpha", Value::Number(0.0))]).unwrap_err().field, "alpha");
        assert_eq!(
            with(vec![("tupdate", Value::Duration(Duration::ZERO))]).unwrap_err().field,
            "tupdate"
        );
        let both = vec![
            ("step_thresh", Value::Duration(Duration::from_ms(2))),
            ("step_packets", Value::Integer(5)),
        ];
        assert_eq!(with(both).unwrap_err().field, "step_packets");
        assert_eq!(
            with(vec![("step_packets", Value::Integer(5))]).unwrap().step,
            StepThresh::Packets(5)
        );
        // The MTU is 32-bit, as Linux's: beyond, `2·mtu` and the credit wrapped, also with
        // a `memory_limit` given (which skips the default limit's own overflow check).
        let limited = |mtu| {
            with(vec![
                ("mtu", Value::Size(Bytes(mtu))),
                ("memory_limit", Value::Size(Bytes(1 << 30))),
            ])
        };
        assert!(limited(u64::from(u32::MAX)).is_ok());
        for mtu in [u64::from(u32::MAX) + 1, 1 << 62, 1 << 63] {
            assert_eq!(limited(mtu).unwrap_err().field, "mtu");
        }
        let q = DualPi2::new(&DualPi2Params::default());
        assert_eq!(q.memory_limit, 10_000 * 2 * 1514);
        assert_eq!(q.credit, 1514 * (10 - 90));
    }
}
