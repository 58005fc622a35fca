//! # dcsim-aqm
//!
//! Queue disciplines for one priority class of a switch egress port. The engine (`dcsim-core`)
//! owns the packets, the shared-buffer MMU and the strict-priority / round-robin scheduler over
//! the eight classes of a port; a queue discipline decides, for one class, which packets wait,
//! in what order they leave, and which are dropped or CE-marked on the way.
//!
//! A discipline sees packets as [`Entry`]s (the engine's handle plus the header fields an AQM
//! reads) and talks back through a [`Ctx`]: every packet it drops, at enqueue (overflow) or at
//! dequeue (AQM), is pushed to [`Ctx::dropped`] so that the engine releases its buffer
//! accounting and counts it; a packet it marks comes out of [`QueueDisc::dequeue`] with
//! `ecn = Ce` and `marked = true`.
//!
//! Dispatch is static: [`Qdisc`] is an enum over every discipline, built from a [`QdiscConfig`].
//!
//! | Discipline | Module | Scenario name | Follows |
//! |---|---|---|---|
//! | drop-tail | [`fifo`] | `fifo` | byte and/or packet limit |
//! | RED/ECN | [`red`] | `red` | dcsim's existing switch marking, bit for bit |
//! | CoDel | [`codel`] | `codel` | Linux `codel_impl.h` / `sch_codel.c` |
//! | fq_codel | [`fq_codel`] | `fq_codel` | RFC 8290, Linux `sch_fq_codel.c` |
//! | DualPI2 | [`dualpi2`] | `dualpi2` | RFC 9332, Linux `sch_dualpi2.c` |
//!
//! Each module exports a `SPEC` (its parameters, for a front end) and a `from_params` that
//! validates them; [`SPECS`] and [`config_from_params`] find a discipline by name.
//!
//! ```
//! use dcsim_aqm::{Ctx, Ecn, Entry, Qdisc, QdiscConfig, QueueDisc, Time};
//! use dcsim_aqm::fifo::FifoParams;
//! use rand::SeedableRng;
//!
//! let mut q = Qdisc::new(&QdiscConfig::Fifo(FifoParams { limit_bytes: None, limit_packets: Some(1) }));
//! let (mut rng, mut dropped) = (rand_chacha::ChaCha8Rng::seed_from_u64(1), Vec::new());
//! let mut cx = Ctx { now: Time::ZERO, rng: &mut rng, dropped: &mut dropped };
//! let p = |pkt| Entry { pkt, wire: 1500, ecn: Ecn::NotEct, flow: 0, enq: Time::ZERO };
//! q.enqueue(p(1), &mut cx);
//! q.enqueue(p(2), &mut cx); // over the one-packet limit: dropped
//! assert_eq!(q.dequeue(&mut cx).map(|d| d.entry.pkt), Some(1));
//! assert_eq!(dropped.len(), 1);
//! ```
#![warn(missing_docs)]

pub mod codel;
pub mod dualpi2;
pub mod fifo;
pub mod fq_codel;
pub mod red;

pub use codel::{CoDel, CoDelParams};
pub use dcsim_types::{BitsPerSec, Bytes, Duration, Ecn, Time};
pub use dualpi2::{DualPi2, DualPi2Params};
pub use fifo::{Fifo, FifoParams};
pub use fq_codel::{FqCodel, FqCodelParams};
pub use red::{Red, RedParams};

use dcsim_types::params::{ParamError, Params, PluginSpec};
use rand_chacha::ChaCha8Rng;

/// What a queue discipline keeps of a packet.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Entry {
    /// The engine's handle (opaque here).
    pub pkt: u32,
    /// Bytes on the wire.
    pub wire: u32,
    /// The ECN codepoint (a discipline that marks sets it to [`Ecn::Ce`]).
    pub ecn: Ecn,
    /// A hash of the packet's flow (5-tuple), for flow queueing.
    pub flow: u32,
    /// When the packet entered this discipline (set by the engine to the enqueue time).
    ///
    /// `flow` and `enq` are kept only by the disciplines that read them (fq_codel; CoDel,
    /// fq_codel and DualPI2): RED, the default of every switch class, stores 12 bytes per
    /// packet instead of 24 and hands a dequeued packet back with `flow = 0` and `enq` = the
    /// dequeue time. The engine reads neither on dequeue.
    pub enq: Time,
}

/// Why a discipline dropped a packet.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DropCause {
    /// A size limit (bytes, packets or memory) was exceeded.
    Overflow,
    /// The AQM's congestion signal, for a packet that could not be marked (Not-ECT) or when
    /// marking is off.
    Aqm,
}

/// A dropped packet.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Dropped {
    /// The packet.
    pub entry: Entry,
    /// Why.
    pub cause: DropCause,
}

/// A packet leaving the discipline.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Dequeued {
    /// The packet, with its ECN field as it leaves.
    pub entry: Entry,
    /// This dequeue set the CE mark.
    pub marked: bool,
}

/// What a discipline may use during a call.
pub struct Ctx<'a> {
    /// The current time.
    pub now: Time,
    /// The port's random stream (RED, PI² draws).
    pub rng: &'a mut ChaCha8Rng,
    /// Packets dropped during this call, in the order they were dropped. The engine drains it.
    pub dropped: &'a mut Vec<Dropped>,
}

/// One priority class's queue discipline.
pub trait QueueDisc {
    /// Offers a packet. The discipline either keeps it or pushes it (or other packets, e.g.
    /// fq_codel's fattest-flow drop) to [`Ctx::dropped`].
    fn enqueue(&mut self, e: Entry, cx: &mut Ctx<'_>);
    /// The next packet to send, if any. AQM drops made on the way are pushed to
    /// [`Ctx::dropped`] first.
    fn dequeue(&mut self, cx: &mut Ctx<'_>) -> Option<Dequeued>;
    /// Bytes held.
    fn backlog_bytes(&self) -> u64;
    /// Packets held.
    fn len(&self) -> usize;
    /// Whether nothing is held.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The handle of the packet most likely to leave next (a prefetch hint), if known cheaply.
    fn peek(&self) -> Option<u32> {
        None
    }
    /// Removes every packet held, appending their handles to `out` in no particular order (a
    /// failed link's queue is flushed; the engine then replaces the discipline with a fresh
    /// one, as Linux resets a device's qdisc when its carrier goes down).
    fn drain_handles(&mut self, out: &mut Vec<u32>);
}

/// Every discipline, for static dispatch. A switch port holds one per priority class, so the
/// enum is kept small: the default disciplines (FIFO, RED) inline, the larger AQMs boxed.
#[derive(Clone, Debug)]
pub enum Qdisc {
    /// Drop-tail.
    Fifo(Fifo),
    /// RED/ECN marking at dequeue.
    Red(Red),
    /// CoDel.
    CoDel(Box<CoDel>),
    /// fq_codel.
    FqCodel(Box<FqCodel>),
    /// DualPI2.
    DualPi2(Box<DualPi2>),
}

/// The parameters of one discipline: what a scenario chooses per port class.
#[derive(Clone, PartialEq, Debug)]
pub enum QdiscConfig {
    /// Drop-tail.
    Fifo(FifoParams),
    /// RED/ECN.
    Red(RedParams),
    /// CoDel.
    CoDel(CoDelParams),
    /// fq_codel.
    FqCodel(FqCodelParams),
    /// DualPI2.
    DualPi2(DualPi2Params),
}

impl QdiscConfig {
    /// The scenario name of the discipline (its `SPEC.name`).
    pub fn name(&self) -> &'static str {
        match self {
            QdiscConfig::Fifo(_) => fifo::SPEC.name,
            QdiscConfig::Red(_) => red::SPEC.name,
            QdiscConfig::CoDel(_) => codel::SPEC.name,
            QdiscConfig::FqCodel(_) => fq_codel::SPEC.name,
            QdiscConfig::DualPi2(_) => dualpi2::SPEC.name,
        }
    }

    /// The byte limit the configuration gives, if any: the parameter's name and its value
    /// (`fifo`'s `limit_bytes`, `fq_codel`'s and `dualpi2`'s `memory_limit` when given). A
    /// frame larger than it is always dropped.
    pub fn byte_limit(&self) -> Option<(&'static str, u64)> {
        match self {
            QdiscConfig::Fifo(p) => p.limit_bytes.map(|b| ("limit_bytes", b.get())),
            QdiscConfig::FqCodel(p) => Some(("memory_limit", p.memory_limit.get())),
            QdiscConfig::DualPi2(p) => p.memory_limit.map(|b| ("memory_limit", b.get())),
            QdiscConfig::Red(_) | QdiscConfig::CoDel(_) => None,
        }
    }

    /// Checks the parameters (what `from_params` checks), for configurations built in code.
    ///
    /// # Errors
    /// The first invalid parameter, by name.
    pub fn validate(&self) -> Result<(), ParamError> {
        match self {
            QdiscConfig::Fifo(p) => p.validate(),
            QdiscConfig::Red(p) => p.validate(),
            QdiscConfig::CoDel(p) => p.validate(),
            QdiscConfig::FqCodel(p) => p.validate(),
            QdiscConfig::DualPi2(p) => p.validate(),
        }
    }
}

impl Qdisc {
    /// An empty discipline.
    ///
    /// # Panics
    /// If the configuration is invalid ([`QdiscConfig::validate`]); configurations made by
    /// [`config_from_params`] never are.
    pub fn new(cfg: &QdiscConfig) -> Qdisc {
        match cfg {
            QdiscConfig::Fifo(p) => Qdisc::Fifo(Fifo::new(p)),
            QdiscConfig::Red(p) => Qdisc::Red(Red::new(p)),
            QdiscConfig::CoDel(p) => Qdisc::CoDel(Box::new(CoDel::new(p))),
            QdiscConfig::FqCodel(p) => Qdisc::FqCodel(Box::new(FqCodel::new(p))),
            QdiscConfig::DualPi2(p) => Qdisc::DualPi2(Box::new(DualPi2::new(p))),
        }
    }

    /// Whether a packet of `wire` bytes offered to this discipline would come straight back
    /// from the next dequeue, unmarked, with no random draw and the discipline as it was:
    /// true for an empty RED queue (the depth left behind an only packet is 0, never above
    /// `kmin`) and an empty FIFO whose byte limit admits the packet; false for the
    /// disciplines that time or classify packets. A switch whose port is idle and holds
    /// nothing sends such a packet without queueing it.
    #[inline(always)]
    pub fn passes_through_when_empty(&self, wire: u32) -> bool {
        match self {
            Qdisc::Red(q) => q.is_empty(),
            Qdisc::Fifo(q) => q.is_empty() && q.admits_alone(wire),
            _ => false,
        }
    }
}

macro_rules! dispatch {
    ($self:expr, $q:ident => $e:expr) => {
        match $self {
            Qdisc::Fifo($q) => $e,
            Qdisc::Red($q) => $e,
            Qdisc::CoDel($q) => $e,
            Qdisc::FqCodel($q) => $e,
            Qdisc::DualPi2($q) => $e,
        }
    };
}

impl QueueDisc for Qdisc {
    #[inline(always)]
    fn enqueue(&mut self, e: Entry, cx: &mut Ctx<'_>) {
        dispatch!(self, q => q.enqueue(e, cx))
    }
    #[inline(always)]
    fn dequeue(&mut self, cx: &mut Ctx<'_>) -> Option<Dequeued> {
        dispatch!(self, q => q.dequeue(cx))
    }
    #[inline(always)]
    fn backlog_bytes(&self) -> u64 {
        dispatch!(self, q => q.backlog_bytes())
    }
    #[inline(always)]
    fn len(&self) -> usize {
        dispatch!(self, q => q.len())
    }
    #[inline(always)]
    fn is_empty(&self) -> bool {
        dispatch!(self, q => q.is_empty())
    }
    #[inline(always)]
    fn peek(&self) -> Option<u32> {
        dispatch!(self, q => q.peek())
    }
    fn drain_handles(&mut self, out: &mut Vec<u32>) {
        dispatch!(self, q => q.drain_handles(out))
    }
}

/// The specs of every discipline, for a front end that looks them up by name (and lists
/// them in "unknown queue discipline; known: ..." messages).
pub const SPECS: &[PluginSpec] =
    &[fifo::SPEC, red::SPEC, codel::SPEC, fq_codel::SPEC, dualpi2::SPEC];

/// The spec of discipline `name`, if there is one.
pub fn spec(name: &str) -> Option<&'static PluginSpec> {
    SPECS.iter().find(|s| s.name == name)
}

/// Builds and validates the configuration of discipline `name` from its parameters.
///
/// # Errors
/// An invalid parameter, by name; or, for a name that is not in [`SPECS`], an error on the
/// field `qdisc` listing the known names (a front end normally checks the name with [`spec`]
/// first, to report it at the right place).
pub fn config_from_params(name: &str, p: &Params) -> Result<QdiscConfig, ParamError> {
    match name {
        "fifo" => fifo::from_params(p).map(QdiscConfig::Fifo),
        "red" => red::from_params(p).map(QdiscConfig::Red),
        "codel" => codel::from_params(p).map(QdiscConfig::CoDel),
        "fq_codel" => fq_codel::from_params(p).map(QdiscConfig::FqCodel),
        "dualpi2" => dualpi2::from_params(p).map(QdiscConfig::DualPi2),
        _ => {
            let known: Vec<&str> = SPECS.iter().map(|s| s.name).collect();
            Err(ParamError::new(
                "qdisc",
                format!("unknown queue discipline \"{name}\"; known: {}", known.join(", ")),
            ))
        }
    }
}

/// Parameter helpers shared by the discipline modules.
pub(crate) mod check {
    use dcsim_types::params::{ParamError, Params};
    use dcsim_types::{Bytes, Duration};

    /// An integer parameter that must be at least `min` and fit in `u32`.
    pub fn u32_at_least(
        p: &Params,
        name: &'static str,
        default: u32,
        min: u32,
    ) -> Result<u32, ParamError> {
        let v = p.u32(name, default)?;
        if v < min {
            return Err(ParamError::new(name, format!("must be at least {min}, got {v}")));
        }
        Ok(v)
    }

    /// A duration parameter that must be positive.
    pub fn positive(
        p: &Params,
        name: &'static str,
        default: Duration,
    ) -> Result<Duration, ParamError> {
        let d = p.duration(name, default);
        if d == Duration::ZERO {
            return Err(ParamError::new(name, "must be positive"));
        }
        Ok(d)
    }

    /// An optional size parameter that must be positive when given.
    pub fn opt_positive_size(p: &Params, name: &'static str) -> Result<Option<Bytes>, ParamError> {
        if !p.has(name) {
            return Ok(None);
        }
        let b = p.size(name, Bytes::ZERO);
        if b == Bytes::ZERO {
            return Err(ParamError::new(name, "must be positive (leave it out for no limit)"));
        }
        Ok(Some(b))
    }
}

#[cfg(test)]
mod tests {
    /// A port holds eight of these: the enum stays within two cache lines.
    #[test]
    fn the_dispatch_enum_is_small() {
        assert!(
            std::mem::size_of::<super::Qdisc>() <= 80,
            "{}",
            std::mem::size_of::<super::Qdisc>()
        );
    }
}
