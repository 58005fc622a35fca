//! fq_codel (RFC 8290), following Linux `net/sched/sch_fq_codel.c`.
//!
//! Packets are hashed into `flows` queues by [`Entry::flow`]: queue `((flow as u64 * flows) >>
//! 32)` (Linux's `reciprocal_scale` of the skb hash). Each queue is a FIFO with its own CoDel
//! state ([`crate::codel`]); all share the CoDel parameters, and CoDel's "backlog > mtu" test
//! uses the **qdisc-wide** backlog, as Linux passes `sch->qstats.backlog`.
//!
//! Scheduling is deficit round robin over two lists. A queue that becomes active joins the
//! tail of *new flows* with a deficit of one `quantum`; dequeue serves new flows before old
//! ones. A queue whose deficit is spent gets another quantum and moves to the tail of *old
//! flows*. A queue that turns out empty when served leaves the lists, except that a new flow
//! moves to old flows when old flows is not empty (so that a flow emptying itself repeatedly
//! cannot starve the old ones). Serving a packet subtracts its size from the deficit.
//!
//! On overflow — more than `limit` packets, or more than `memory_limit` bytes, after adding the
//! arriving packet — fq_codel drops from the head of the fattest queue (largest byte backlog;
//! the lowest index on ties): packets until half of that queue's bytes are gone, at most
//! `drop_batch_size`, at least one. That queue's CoDel `count` grows by the number dropped
//! ("tell codel to increase its signal strength"). The arriving packet is kept unless it was
//! itself at that head. One batch per enqueue, as in Linux.
//!
//! # Differences from Linux
//!
//! - Memory is counted in wire bytes; Linux counts `skb->truesize` (the buffer, typically
//!   0.5–2 KiB more per packet), so its 32 MiB limit binds earlier.
//! - The CoDel differences listed in [`crate::codel`] (time units) apply.
//! - `quantum` is used as given (Linux raises values below 256 to 256).
//! - Linux allocates all `flows` queues when the qdisc is created; here a queue's state is
//!   created when its first packet arrives (a queue never used is in its initial state, so the
//!   behaviour is the same), and memory grows with the queues a run uses: a 65 536-queue
//!   fq_codel on every class of every port of a fabric allocates nothing until traffic comes.
//! - With `flows = 1` fq_codel is the CoDel of [`crate::codel::CoDel`] exactly, except on overflow:
//!   `codel` drops the arriving packet (tail drop), fq_codel drops from the head (up to half the
//!   queue, 64 packets) and raises `count`. Their default limits also differ (1000 vs 10240).

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, PluginSpec};

use crate::codel::{self, CeSelector, CodelVars, Law, Source};
use crate::{check, Bytes, Ctx, Dequeued, DropCause, Dropped, Duration, Entry, QueueDisc};

/// The parameters of [`FqCodel`]. `Default` is Linux's (with a 1514-byte MTU).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct FqCodelParams {
    /// Number of flow queues, 1 to 65536 (Linux 1024).
    pub flows: u32,
    /// DRR quantum in bytes (Linux: the device MTU, 1514).
    pub quantum: Bytes,
    /// Most packets held in all queues (Linux 10240).
    pub limit: u32,
    /// Most bytes held in all queues (Linux 32 MiB, counted in truesize there).
    pub memory_limit: Bytes,
    /// Most packets one overflow drops (Linux 64).
    pub drop_batch_size: u32,
    /// CoDel target (5 ms).
    pub target: Duration,
    /// CoDel interval (100 ms).
    pub interval: Duration,
    /// CoDel's minimum backlog for "above target" (1514).
    pub mtu: Bytes,
    /// Mark ECN-capable packets instead of dropping them (Linux fq_codel: on).
    pub ecn: bool,
    /// Mark ECN-capable packets whose sojourn exceeds this (off).
    pub ce_threshold: Option<Duration>,
    /// Which packets `ce_threshold` applies to.
    pub ce_threshold_selector: CeSelector,
    /// Exact `interval/√count` instead of Linux's Newton approximation.
    pub exact_sqrt: bool,
}

impl Default for FqCodelParams {
    fn default() -> Self {
        let c = codel::CoDelParams::default();
        FqCodelParams {
            flows: 1024,
            quantum: Bytes(1514),
            limit: 10 * 1024,
            memory_limit: Bytes(32 << 20),
            drop_batch_size: 64,
            target: c.target,
            interval: c.interval,
            mtu: c.mtu,
            ecn: true,
            ce_threshold: None,
            ce_threshold_selector: CeSelector::Any,
            exact_sqrt: false,
        }
    }
}

impl FqCodelParams {
    /// The largest `flows` Linux accepts.
    pub const MAX_FLOWS: u32 = 65536;
    /// The largest `quantum`, bytes: Linux's `FQ_CODEL_QUANTUM_MAX`, 1 MiB.
    pub const MAX_QUANTUM: u64 = 1 << 20;

    /// Checks the parameters.
    ///
    /// # Errors
    /// `flows` 0 or above 65536, `quantum` zero or above 1 MiB, `limit`, `memory_limit` or
    /// `drop_batch_size` zero, and the CoDel checks.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.flows == 0 || self.flows > Self::MAX_FLOWS {
            return Err(ParamError::new(
                "flows",
                format!("must be in 1..=65536, got {}", self.flows),
            ));
        }
        if self.quantum == Bytes::ZERO {
            return Err(ParamError::new("quantum", "must be positive"));
        }
        // Linux refuses quanta above 1 MiB too (`FQ_CODEL_QUANTUM_MAX`); a quantum of 2^63 or
        // more had wrapped negative in the deficit arithmetic, and the scheduler never ended.
        if self.quantum.0 > Self::MAX_QUANTUM {
            return Err(ParamError::new(
                "quantum",
                format!(
                    "must be at most 1MiB (1048576 bytes, as in Linux), got {}",
                    self.quantum.0
                ),
            ));
        }
        if self.limit == 0 {
            return Err(ParamError::new("limit", "must be at least 1"));
        }
        if self.memory_limit == Bytes::ZERO {
            return Err(ParamError::new("memory_limit", "must be positive"));
        }
        if self.drop_batch_size == 0 {
            return Err(ParamError::new("drop_batch_size", "must be at least 1"));
        }
        codel::validate_law(self.target, self.interval, self.ce_threshold)
    }

    fn law(&self) -> Law {
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

/// The parameters of `fq_codel`.
pub const SPEC: PluginSpec = PluginSpec {
    name: "fq_codel",
    summary: "fq_codel (RFC 8290, Linux): DRR over hashed flow queues, CoDel in each",
    params: &[
        ParamSpec::new("flows", Kind::Integer, "1024", "number of flow queues, 1..=65536"),
        ParamSpec::new("quantum", Kind::Size, "1514", "DRR quantum in bytes"),
        ParamSpec::new(
            "limit",
            Kind::Integer,
            "10240",
            "most packets held; overflow drops from the fattest flow",
        ),
        ParamSpec::new(
            "memory_limit",
            Kind::Size,
            "32MiB",
            "most bytes held (wire bytes here; truesize in Linux)",
        ),
        ParamSpec::new(
            "drop_batch_size",
            Kind::Integer,
            "64",
            "most packets dropped from the fattest flow per overflow",
        ),
        ParamSpec::new("target", Kind::Duration, "5ms", "CoDel target; positive, below interval"),
        ParamSpec::new("interval", Kind::Duration, "100ms", "CoDel interval"),
        ParamSpec::new(
            "mtu",
            Kind::Size,
            "1514",
            "no CoDel drop while the qdisc backlog is at most this",
        ),
        ParamSpec::new("ecn", Kind::Bool, "true", "mark ECN-capable packets instead of dropping"),
        ParamSpec::new(
            "ce_threshold",
            Kind::Duration,
            "off",
            "also mark ECN-capable packets whose sojourn exceeds this",
        ),
        ParamSpec::new(
            "ce_threshold_selector",
            Kind::Choice(&["any", "ect1"]),
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

/// Reads and validates [`FqCodelParams`].
///
/// # Errors
/// See [`FqCodelParams::validate`]; each error names its parameter.
pub fn from_params(p: &Params) -> Result<FqCodelParams, ParamError> {
    let lp = codel::read_law(p, FqCodelParams::default().ecn)?;
    let d = FqCodelParams::default();
    let fp = FqCodelParams {
        flows: check::u32_at_least(p, "flows", d.flows, 1)?,
        quantum: p.size("quantum", d.quantum),
        limit: check::u32_at_least(p, "limit", d.limit, 1)?,
        memory_limit: p.size("memory_limit", d.memory_limit),
        drop_batch_size: check::u32_at_least(p, "drop_batch_size", d.drop_batch_size, 1)?,
        target: lp.target,
        interval: lp.interval,
        mtu: lp.mtu,
        ecn: lp.ecn,
        ce_threshold: lp.ce_threshold,
        ce_threshold_selector: lp.ce_threshold_selector,
        exact_sqrt: lp.exact_sqrt,
    };
    fp.validate()?;
    Ok(fp)
}

/// One flow queue.
#[derive(Clone, Debug, Default)]
struct Flow {
    /// Its queue index (`flow_index`).
    idx: u32,
    q: VecDeque<Entry>,
    backlog: u64,
    deficit: i64,
    on_list: bool,
    vars: CodelVars,
}

/// One flow's queue as CoDel sees it: pops update the flow's and the qdisc's counts; the
/// backlog is the qdisc's.
struct FlowSource<'a> {
    q: &'a mut VecDeque<Entry>,
    flow_backlog: &'a mut u64,
    backlog: &'a mut u64,
    len: &'a mut usize,
}

impl Source for FlowSource<'_> {
    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        let e = self.q.pop_front()?;
        let w = u64::from(e.wire);
        *self.flow_backlog -= w;
        *self.backlog -= w;
        *self.len -= 1;
        Some(e)
    }
    #[inline]
    fn backlog(&self) -> u64 {
        *self.backlog
    }
}

/// Hashes a queue index (a `u32`) by one multiplication: keys are small distinct integers, and
/// the table takes its bucket from the low bits and its tag from the high ones.
#[derive(Clone, Copy, Debug, Default)]
struct IndexHasher(u64);

impl Hasher for IndexHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.0 = (u64::from(i) ^ self.0).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// fq_codel.
#[derive(Clone, Debug)]
pub struct FqCodel {
    /// The queues used so far, in the order of their first packet.
    flows: Vec<Flow>,
    /// The slot in `flows` of each queue index used so far.
    slots: HashMap<u32, u32, BuildHasherDefault<IndexHasher>>,
    /// Slots in `flows`.
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    backlog: u64,
    len: usize,
    n_flows: u64,
    quantum: i64,
    limit: usize,
    memory_limit: u64,
    drop_batch_size: u32,
    law: Law,
}

impl FqCodel {
    /// An empty discipline.
    ///
    /// # Panics
    /// If `p` is invalid ([`FqCodelParams::validate`]).
    pub fn new(p: &FqCodelParams) -> FqCodel {
        if let Err(e) = p.validate() {
            panic!("invalid fq_codel parameters: {e}");
        }
        FqCodel {
            flows: Vec::new(),
            slots: HashMap::default(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            backlog: 0,
            len: 0,
            n_flows: u64::from(p.flows),
            quantum: p.quantum.get() as i64,
            limit: p.limit as usize,
            memory_limit: p.memory_limit.get(),
            drop_batch_size: p.drop_batch_size,
            law: p.law(),
        }
    }

    /// The queue index of a flow hash (Linux `reciprocal_scale(hash, flows)`).
    #[inline]
    pub fn flow_index(&self, flow: u32) -> usize {
        ((u64::from(flow) * self.n_flows) >> 32) as usize
    }

    /// The queue `idx`, if it has had a packet.
    fn flow(&self, idx: usize) -> Option<&Flow> {
        let slot = *self.slots.get(&u32::try_from(idx).ok()?)?;
        Some(&self.flows[slot as usize])
    }

    /// The CoDel state of queue `idx`.
    pub fn flow_vars(&self, idx: usize) -> CodelVars {
        self.flow(idx).map_or_else(CodelVars::default, |f| f.vars)
    }

    /// Bytes held in queue `idx`.
    pub fn flow_backlog(&self, idx: usize) -> u64 {
        self.flow(idx).map_or(0, |f| f.backlog)
    }

    /// How many queues have had a packet (the queues that take memory).
    pub fn flows_used(&self) -> usize {
        self.flows.len()
    }

    /// Linux `fq_codel_drop`: drops from the head of the fattest queue (the lowest index on
    /// ties); `fallback` is the arriving packet's slot, used if every queue has zero bytes
    /// (zero-size packets).
    fn drop_from_fattest(&mut self, fallback: usize, cx: &mut Ctx<'_>) {
        let (mut slot, mut max) = (fallback, 0);
        for (i, f) in self.flows.iter().enumerate() {
            if f.backlog > max || (f.backlog == max && max > 0 && f.idx < self.flows[slot].idx) {
                max = f.backlog;
                slot = i;
            }
        }
        let threshold = max >> 1;
        let flow = &mut self.flows[slot];
        let (mut len, mut n) = (0u64, 0u32);
        while let Some(e) = flow.q.pop_front() {
            len += u64::from(e.wire);
            n += 1;
            cx.dropped.push(Dropped { entry: e, cause: DropCause::Overflow });
            if n >= self.drop_batch_size || len >= threshold {
                break;
            }
        }
        flow.vars.count = flow.vars.count.wrapping_add(n);
        flow.backlog -= len;
        self.backlog -= len;
        self.len -= n as usize;
    }
}

impl QueueDisc for FqCodel {
    fn enqueue(&mut self, e: Entry, cx: &mut Ctx<'_>) {
        let idx = self.flow_index(e.flow) as u32;
        let flows = &mut self.flows;
        let slot = *self.slots.entry(idx).or_insert_with(|| {
            flows.push(Flow { idx, ..Flow::default() });
            (flows.len() - 1) as u32
        }) as usize;
        let flow = &mut self.flows[slot];
        let w = u64::from(e.wire);
        flow.q.push_back(e);
        flow.backlog += w;
        self.backlog += w;
        self.len += 1;
        if !flow.on_list {
            flow.on_list = true;
            flow.deficit = self.quantum;
            self.new_flows.push_back(slot as u32);
        }
        if self.len <= self.limit && self.backlog <= self.memory_limit {
            return;
        }
        self.drop_from_fattest(slot, cx);
    }

    fn dequeue(&mut self, cx: &mut Ctx<'_>) -> Option<Dequeued> {
        loop {
            let (from_new, slot) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (true, i as usize),
                (None, Some(&i)) => (false, i as usize),
                (None, None) => return None,
            };
            let flow = &mut self.flows[slot];
            if flow.deficit <= 0 {
                flow.deficit += self.quantum;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(slot as u32);
                continue;
            }
            let mut src = FlowSource {
                q: &mut flow.q,
                flow_backlog: &mut flow.backlog,
                backlog: &mut self.backlog,
                len: &mut self.len,
            };
            match self.law.dequeue(&mut flow.vars, &mut src, cx) {
                Some(d) => {
                    flow.deficit -= i64::from(d.entry.wire);
                    return Some(d);
                }
                None => {
                    if from_new {
                        self.new_flows.pop_front();
                    } else {
                        self.old_flows.pop_front();
                    }
                    if from_new && !self.old_flows.is_empty() {
                        self.old_flows.push_back(slot as u32);
                    } else {
                        flow.on_list = false;
                    }
                }
            }
        }
    }

    fn backlog_bytes(&self) -> u64 {
        self.backlog
    }

    fn len(&self) -> usize {
        self.len
    }

    fn drain_handles(&mut self, out: &mut Vec<u32>) {
        // In queue-index order, as when every queue had its place.
        let mut order: Vec<(u32, usize)> =
            self.flows.iter().enumerate().map(|(slot, f)| (f.idx, slot)).collect();
        order.sort_unstable();
        for (_, slot) in order {
            let f = &mut self.flows[slot];
            out.extend(f.q.drain(..).map(|e| e.pkt));
            f.backlog = 0;
            f.on_list = false;
        }
        self.new_flows.clear();
        self.old_flows.clear();
        self.backlog = 0;
        self.len = 0;
    }

    fn peek(&self) -> Option<u32> {
        let i = *self.new_flows.front().or(self.old_flows.front())?;
        self.flows[i as usize].q.front().map(|e| e.pkt)
    }
}
