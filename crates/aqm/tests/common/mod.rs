//! Helpers shared by the integration tests: a context owner and a constant-rate driver.
#![allow(dead_code)]

use dcsim_aqm::{Ctx, Dequeued, Dropped, Duration, Ecn, Entry, QueueDisc, Time};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Owns what a [`Ctx`] borrows.
pub struct Harness {
    pub rng: ChaCha8Rng,
    pub dropped: Vec<Dropped>,
}

impl Harness {
    pub fn new(seed: u64) -> Harness {
        Harness { rng: ChaCha8Rng::seed_from_u64(seed), dropped: Vec::new() }
    }

    pub fn enq<Q: QueueDisc>(&mut self, q: &mut Q, now: Time, e: Entry) {
        let mut cx = Ctx { now, rng: &mut self.rng, dropped: &mut self.dropped };
        q.enqueue(Entry { enq: now, ..e }, &mut cx);
    }

    pub fn deq<Q: QueueDisc>(&mut self, q: &mut Q, now: Time) -> Option<Dequeued> {
        let mut cx = Ctx { now, rng: &mut self.rng, dropped: &mut self.dropped };
        q.dequeue(&mut cx)
    }

    /// Drops pushed since the last call.
    pub fn take_drops(&mut self) -> Vec<Dropped> {
        std::mem::take(&mut self.dropped)
    }
}

pub fn pkt(pkt: u32, wire: u32, ecn: Ecn, flow: u32) -> Entry {
    Entry { pkt, wire, ecn, flow, enq: Time::ZERO }
}

pub fn ms(x: u64) -> Duration {
    Duration::from_ms(x)
}

pub fn at_ms(x: u64) -> Time {
    Time(Duration::from_ms(x).as_ps())
}

/// What happened at one dequeue instant of [`overload`].
#[derive(Debug)]
pub struct Step<S> {
    pub t: Time,
    pub before: S,
    pub after: S,
    pub out: Option<Dequeued>,
    pub drops: Vec<Dropped>,
}

/// Constant overload: packets of `wire` bytes arrive every `t_in` from `start` (while before
/// `stop_arrivals`), the link takes one every `t_out` from `start + t_out`, until `end`. An
/// arrival and a dequeue at the same instant: the arrival first. The link asks only a
/// non-empty queue. `state` reads the discipline's state around each dequeue.
#[allow(clippy::too_many_arguments)]
pub fn overload<Q: QueueDisc, S>(
    h: &mut Harness,
    q: &mut Q,
    first_id: &mut u32,
    ecn: Ecn,
    wire: u32,
    t_in: Duration,
    t_out: Duration,
    start: Time,
    stop_arrivals: Time,
    end: Time,
    state: impl Fn(&Q) -> S,
) -> Vec<Step<S>> {
    let mut steps = Vec::new();
    let mut next_in = start;
    let mut next_out = start + t_out;
    loop {
        let t = next_in.min(next_out);
        if t > end {
            break;
        }
        if next_in <= next_out && next_in < stop_arrivals {
            h.enq(q, t, pkt(*first_id, wire, ecn, 0));
            *first_id += 1;
            next_in += t_in;
            assert!(h.dropped.is_empty(), "overflow in an overload test");
            continue;
        }
        if next_in <= next_out {
            next_in = Time::MAX;
            continue;
        }
        next_out += t_out;
        if q.is_empty() {
            continue;
        }
        let before = state(q);
        let out = h.deq(q, t);
        let after = state(q);
        steps.push(Step { t, before, after, out, drops: h.take_drops() });
    }
    steps
}
