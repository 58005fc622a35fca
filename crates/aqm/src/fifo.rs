//! Drop-tail FIFO with an optional byte limit and/or packet limit.
//!
//! With neither limit the discipline never drops: the engine's shared-buffer MMU alone decides
//! admission. With a limit, an arriving packet that would exceed it is dropped
//! ([`DropCause::Overflow`]); packets already queued are never dropped.

use std::collections::VecDeque;

use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, PluginSpec};

use crate::{check, Bytes, Ctx, Dequeued, DropCause, Dropped, Entry, QueueDisc};

/// The parameters of [`Fifo`]. `Default` is unlimited.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct FifoParams {
    /// Most bytes held (`None`: no byte limit).
    pub limit_bytes: Option<Bytes>,
    /// Most packets held (`None`: no packet limit).
    pub limit_packets: Option<u32>,
}

impl FifoParams {
    /// Checks the parameters.
    ///
    /// # Errors
    /// A zero limit (which would drop everything).
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.limit_bytes == Some(Bytes::ZERO) {
            return Err(ParamError::new(
                "limit_bytes",
                "must be positive (leave it out for no limit)",
            ));
        }
        if self.limit_packets == Some(0) {
            return Err(ParamError::new(
                "limit_packets",
                "must be at least 1 (leave it out for no limit)",
            ));
        }
        Ok(())
    }
}

/// The parameters of `fifo`.
pub const SPEC: PluginSpec = PluginSpec {
    name: "fifo",
    summary:
        "drop-tail FIFO; drops the arriving packet when a byte or packet limit would be exceeded",
    params: &[
        ParamSpec::new(
            "limit_bytes",
            Kind::Size,
            "none",
            "most bytes queued; none = only the MMU limits",
        ),
        ParamSpec::new(
            "limit_packets",
            Kind::Integer,
            "none",
            "most packets queued; none = no packet limit",
        ),
    ],
};

/// Reads and validates [`FifoParams`].
///
/// # Errors
/// A zero limit, or a packet limit over `u32::MAX`.
pub fn from_params(p: &Params) -> Result<FifoParams, ParamError> {
    let limit_bytes = check::opt_positive_size(p, "limit_bytes")?;
    let limit_packets = if p.has("limit_packets") {
        Some(check::u32_at_least(p, "limit_packets", 1, 1)?)
    } else {
        None
    };
    let fp = FifoParams { limit_bytes, limit_packets };
    fp.validate()?;
    Ok(fp)
}

/// Drop-tail FIFO.
#[derive(Clone, Debug)]
pub struct Fifo {
    q: VecDeque<Entry>,
    bytes: u64,
    limit_bytes: u64,
    limit_packets: usize,
}

impl Fifo {
    /// Whether an empty queue keeps a packet of `wire` bytes (every limit is at least one
    /// packet, so only the byte limit can refuse it).
    #[inline(always)]
    pub fn admits_alone(&self, wire: u32) -> bool {
        self.limit_packets >= 1 && u64::from(wire) <= self.limit_bytes
    }

    /// An empty queue.
    ///
    /// # Panics
    /// If `p` is invalid ([`FifoParams::validate`]).
    pub fn new(p: &FifoParams) -> Fifo {
        if let Err(e) = p.validate() {
            panic!("invalid fifo parameters: {e}");
        }
        Fifo {
            q: VecDeque::new(),
            bytes: 0,
            limit_bytes: p.limit_bytes.map_or(u64::MAX, Bytes::get),
            limit_packets: p.limit_packets.map_or(usize::MAX, |n| n as usize),
        }
    }
}

impl QueueDisc for Fifo {
    #[inline(always)]
    fn enqueue(&mut self, e: Entry, cx: &mut Ctx<'_>) {
        let wire = u64::from(e.wire);
        if self.q.len() >= self.limit_packets || self.bytes.saturating_add(wire) > self.limit_bytes
        {
            cx.dropped.push(Dropped { entry: e, cause: DropCause::Overflow });
            return;
        }
        self.bytes += wire;
        self.q.push_back(e);
    }

    #[inline(always)]
    fn dequeue(&mut self, _cx: &mut Ctx<'_>) -> Option<Dequeued> {
        let e = self.q.pop_front()?;
        self.bytes -= u64::from(e.wire);
        Some(Dequeued { entry: e, marked: false })
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
        out.extend(self.q.drain(..).map(|e| e.pkt));
        self.bytes = 0;
    }

    #[inline(always)]
    fn peek(&self) -> Option<u32> {
        self.q.front().map(|e| e.pkt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Ecn, Time};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn pkt(pkt: u32, wire: u32) -> Entry {
        Entry { pkt, wire, ecn: Ecn::NotEct, flow: 0, enq: Time::ZERO }
    }

    #[test]
    fn byte_limit_drops_the_arriving_packet_only() {
        let mut q = Fifo::new(&FifoParams { limit_bytes: Some(Bytes(3000)), limit_packets: None });
        let (mut rng, mut dropped) = (ChaCha8Rng::seed_from_u64(0), Vec::new());
        let mut cx = Ctx { now: Time::ZERO, rng: &mut rng, dropped: &mut dropped };
        q.enqueue(pkt(1, 1500), &mut cx);
        q.enqueue(pkt(2, 1500), &mut cx); // exactly at the limit: kept
        q.enqueue(pkt(3, 1), &mut cx); // one byte over: dropped
        assert_eq!(q.backlog_bytes(), 3000);
        assert_eq!(cx.dropped.len(), 1);
        assert_eq!(cx.dropped[0], Dropped { entry: pkt(3, 1), cause: DropCause::Overflow });
        assert_eq!(q.dequeue(&mut cx).unwrap().entry.pkt, 1);
        q.enqueue(pkt(4, 1500), &mut cx);
        assert_eq!((q.len(), q.peek()), (2, Some(2)));
    }

    #[test]
    fn packet_limit_and_unlimited() {
        let mut q = Fifo::new(&FifoParams { limit_bytes: None, limit_packets: Some(2) });
        let mut u = Fifo::new(&FifoParams::default());
        let (mut rng, mut dropped) = (ChaCha8Rng::seed_from_u64(0), Vec::new());
        let mut cx = Ctx { now: Time::ZERO, rng: &mut rng, dropped: &mut dropped };
        for i in 0..5 {
            q.enqueue(pkt(i, 9000), &mut cx);
        }
        assert_eq!((q.len(), cx.dropped.len()), (2, 3));
        for i in 0..10_000 {
            u.enqueue(pkt(i, 9000), &mut cx);
        }
        assert_eq!((u.len(), cx.dropped.len()), (10_000, 3));
    }

    #[test]
    fn params_reject_zero_limits() {
        use dcsim_types::params::Value;
        let p = Params::from_values(SPEC.params, vec![("limit_packets", Value::Integer(0))]);
        assert_eq!(from_params(&p).unwrap_err().field, "limit_packets");
        let p = Params::from_values(SPEC.params, vec![("limit_bytes", Value::Size(Bytes(0)))]);
        assert_eq!(from_params(&p).unwrap_err().field, "limit_bytes");
        assert_eq!(from_params(&Params::default()), Ok(FifoParams::default()));
    }
}
