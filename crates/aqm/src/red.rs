//! RED/ECN marking at dequeue: dcsim's switch marking, reproduced exactly.
//!
//! The decision is made at **dequeue**, after the packet is removed, on `e`, the bytes still in
//! this class queue:
//!
//! - `e > kmax`: congestion signal;
//! - `kmin < e <= kmax`: one draw `u = rng.gen::<f64>()`; signal iff
//!   `u < pmax * (e - kmin) as f64 / (kmax - kmin) as f64` (this exact expression, so that the
//!   floating-point result, and hence the run, is bit-identical to dcsim before the refactor);
//! - `e <= kmin`: no signal and **no draw** (the port's random stream is not advanced).
//!
//! A signal on an ECN-capable packet (ECT(0), ECT(1) or already CE) sets CE and reports
//! `marked = true` (counted even if the packet was CE already). On a Not-ECT packet it is a drop
//! ([`DropCause::Aqm`]), as is every signal when `ecn = false`; the dequeue then goes on with the
//! next packet. RED has no size limit of its own: the MMU limits the queue.
//!
//! `kmin == kmax` gives a step: every packet that leaves more than `kmax` bytes behind is marked.

use std::collections::VecDeque;

use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, PluginSpec};
use rand::Rng;

use crate::{Bytes, Ctx, Dequeued, DropCause, Dropped, Ecn, Entry, QueueDisc};

/// The parameters of [`Red`].
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct RedParams {
    /// At or below this depth (bytes left after the dequeue) nothing is signalled.
    pub kmin: Bytes,
    /// Above this depth every packet is signalled.
    pub kmax: Bytes,
    /// Signal probability as the depth approaches `kmax` (in `[0, 1]`).
    pub pmax: f64,
    /// Mark ECN-capable packets instead of dropping them (`false`: drop every selected packet).
    pub ecn: bool,
}

impl Default for RedParams {
    /// dcsim's defaults for 100 Gb/s ports: 400 kB, 1600 kB, 0.2, ECN on.
    fn default() -> Self {
        RedParams { kmin: Bytes(400_000), kmax: Bytes(1_600_000), pmax: 0.2, ecn: true }
    }
}

impl RedParams {
    /// Checks the parameters.
    ///
    /// # Errors
    /// `kmin > kmax` (on `kmin`), or `pmax` outside `[0, 1]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.kmin > self.kmax {
            return Err(ParamError::new(
                "kmin",
                format!("must not exceed kmax ({} > {})", self.kmin, self.kmax),
            ));
        }
        if !(0.0..=1.0).contains(&self.pmax) {
            return Err(ParamError::new(
                "pmax",
                format!("must be in [0, 1], got {}", dcsim_types::params::Num(self.pmax)),
            ));
        }
        Ok(())
    }
}

/// The parameters of `red`.
pub const SPEC: PluginSpec = PluginSpec {
    name: "red",
    summary: "RED/ECN at dequeue on the bytes left in the class queue (dcsim's switch marking)",
    params: &[
        ParamSpec::new(
            "kmin",
            Kind::Size,
            "400000",
            "no signal while the depth left behind is at most kmin bytes",
        ),
        ParamSpec::new("kmax", Kind::Size, "1600000", "every packet is signalled above kmax bytes"),
        ParamSpec::new(
            "pmax",
            Kind::Number,
            "0.2",
            "signal probability as the depth approaches kmax, in [0, 1]",
        ),
        ParamSpec::new(
            "ecn",
            Kind::Bool,
            "true",
            "mark ECN-capable packets (false: drop every selected packet)",
        ),
    ],
};

/// Reads and validates [`RedParams`].
///
/// # Errors
/// `kmin > kmax` (reported on `kmin`), `pmax` outside `[0, 1]`.
pub fn from_params(p: &Params) -> Result<RedParams, ParamError> {
    let d = RedParams::default();
    let rp = RedParams {
        kmin: p.size("kmin", d.kmin),
        kmax: p.size("kmax", d.kmax),
        pmax: p.f64("pmax", d.pmax),
        ecn: p.bool("ecn", d.ecn),
    };
    rp.validate()?;
    Ok(rp)
}

/// What RED keeps of a queued packet: its handle, size and ECN codepoint (12 bytes instead of
/// an [`Entry`]'s 24: RED reads neither the flow hash nor the enqueue time, and this is the
/// default discipline of every switch class). A dequeued packet's [`Entry`] has `flow = 0` and
/// `enq` = the dequeue time.
#[derive(Clone, Copy, Debug)]
struct Held {
    pkt: u32,
    wire: u32,
    ecn: Ecn,
}

/// RED/ECN at dequeue.
#[derive(Clone, Debug)]
pub struct Red {
    q: VecDeque<Held>,
    bytes: u64,
    kmin: u64,
    kmax: u64,
    pmax: f64,
    ecn: bool,
}

impl Red {
    /// An empty queue.
    ///
    /// # Panics
    /// If `p` is invalid ([`RedParams::validate`]).
    pub fn new(p: &RedParams) -> Red {
        if let Err(e) = p.validate() {
            panic!("invalid red parameters: {e}");
        }
        Red {
            q: VecDeque::new(),
            bytes: 0,
            kmin: p.kmin.get(),
            kmax: p.kmax.get(),
            pmax: p.pmax,
            ecn: p.ecn,
        }
    }

    /// Whether a packet leaving `e` bytes behind is signalled (draws only for
    /// `kmin < e <= kmax`).
    #[inline]
    fn signal(&self, e: u64, cx: &mut Ctx<'_>) -> bool {
        let (kmin, kmax, pmax) = (self.kmin, self.kmax, self.pmax);
        if e > kmax {
            true
        } else if e > kmin {
            let p = pmax * (e - kmin) as f64 / (kmax - kmin) as f64;
            cx.rng.gen::<f64>() < p
        } else {
            false
        }
    }
}

impl Red {
    /// Queues a packet. RED never refuses one at enqueue (it signals at dequeue; the buffer
    /// limit is the engine's), so this is [`QueueDisc::enqueue`] without a context.
    #[inline(always)]
    pub fn push(&mut self, e: Entry) {
        self.bytes += u64::from(e.wire);
        self.q.push_back(Held { pkt: e.pkt, wire: e.wire, ecn: e.ecn });
    }
}

impl QueueDisc for Red {
    #[inline(always)]
    fn enqueue(&mut self, e: Entry, _cx: &mut Ctx<'_>) {
        self.push(e);
    }

    #[inline(always)]
    fn dequeue(&mut self, cx: &mut Ctx<'_>) -> Option<Dequeued> {
        loop {
            let h = self.q.pop_front()?;
            let mut e = Entry { pkt: h.pkt, wire: h.wire, ecn: h.ecn, flow: 0, enq: cx.now };
            self.bytes -= u64::from(e.wire);
            if !self.signal(self.bytes, cx) {
                return Some(Dequeued { entry: e, marked: false });
            }
            if self.ecn && e.ecn.is_ect() {
                e.ecn = Ecn::Ce;
                return Some(Dequeued { entry: e, marked: true });
            }
            cx.dropped.push(Dropped { entry: e, cause: DropCause::Aqm });
        }
    }

    #[inline(always)]
    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.q.len()
    }

    fn drain_handles(&mut self, out: &mut Vec<u32>) {
        out.extend(self.q.drain(..).map(|h| h.pkt));
        self.bytes = 0;
    }

    #[inline(always)]
    fn peek(&self) -> Option<u32> {
        self.q.front().map(|e| e.pkt)
    }
}
