//! Hosts: flow starts, the NIC scheduler (control FIFO first, then round robin over the
//! flows' transports) and packet arrival.

use std::collections::VecDeque;

use super::transport::{nic_pos, nic_pos_mut, tx_finished, tx_state, FlowTx, TxState, NOT_LISTED};
use super::{at, at_mut, Event, Link, Shard, Shared, Slot};
use crate::cc::{CcFactory, FlowInit};
use crate::packet::PacketKind;
use crate::sim::mix64;
use crate::units::Time;

pub(crate) struct Host<C> {
    pub(crate) node: u32,
    pub(crate) link: Link,
    pub(crate) ack_fifo: VecDeque<u32>,
    /// Queue pairs in round-robin order (flow ids), including finished ones not yet compacted.
    pub(crate) active: Vec<u32>,
    /// By position in `active`: clear only while that sender is known to be idle
    /// ([`Candidates`]), so that the scheduler skips it without reading its state.
    pub(crate) candidates: Candidates,
    pub(crate) rr_last: usize,
    pub(crate) wake: Option<Time>,
    pub(crate) wake_version: u32,
    /// The `TxDone` of the frame on the wire, when it was not put in the event queue: (when,
    /// its reserved sequence number). See [`Shard::host_transmit`].
    pub(crate) lazy_txdone: Option<(Time, u64)>,
    pub(crate) _cc: std::marker::PhantomData<C>,
}

/// Up to this many senders, the NIC scheduler reads each in turn rather than its candidates
/// (the default of `Shard::dense_scan`).
pub(crate) const DENSE_SCAN: usize = 8;

/// The senders of a host's round robin that the NIC scheduler must look at: a bit per
/// position in [`Host::active`], set unless that sender is known to be *idle*.
///
/// An idle sender has nothing to send and nothing due: it is not finished, a RoCE queue pair
/// has no bytes left (`snd_nxt >= size`: a persistent connection's stream between messages,
/// or a flow whose last packet is out and unacknowledged), and a TCP sender's readiness is
/// `Blocked` (no data, segment or ACK to send, whatever the time). Such a sender is neither
/// ready nor finished, and has no pacing time, so a pass over the round robin that skips it
/// decides exactly what one that reads it would: which sender goes next, which finished ones
/// are compacted, when the NIC wakes up. Only an event of that sender can end its idleness
/// (an ACK or NACK, a timer, a message appended, a timeout's rewind), and every such event
/// sets its bit again ([`Shard::nic_touch`]); the scheduler clears a bit only when it has
/// just read the sender and found it idle. A bit set needlessly costs one look and is always
/// safe. So a host with hundreds of persistent connections, most of them between messages,
/// reads only the few with something to send (the buffer study's storage trace keeps 224 per
/// server), where the round robin once read every one on every pass.
#[derive(Clone, Debug, Default)]
pub(crate) struct Candidates {
    words: Vec<u64>,
}

impl Candidates {
    /// Sets position `i`'s bit (a position past the words is ignored: see [`Shard::nic_touch`]).
    #[inline]
    pub(crate) fn set(&mut self, i: usize) {
        if let Some(w) = self.words.get_mut(i >> 6) {
            *w |= 1 << (i & 63);
        }
    }

    #[inline]
    fn clear(&mut self, i: usize) {
        self.words[i >> 6] &= !(1 << (i & 63));
    }

    #[inline]
    fn get(&self, i: usize) -> bool {
        self.words[i >> 6] >> (i & 63) & 1 != 0
    }

    /// Makes room for position `i` (the next pushed) and sets its bit.
    fn push(&mut self, i: usize) {
        if i >> 6 >= self.words.len() {
            self.words.push(0);
        }
        self.set(i);
    }

    /// A walk over the set positions in `from..to`, in order ([`Walk::next`]).
    #[inline]
    fn walk(&self, from: usize, to: usize) -> Walk {
        if from >= to {
            return Walk::EMPTY;
        }
        let w = from >> 6;
        Walk { w, bits: self.words[w] & (!0u64 << (from & 63)), to }
    }

    /// Gives position `w` the bit of position `j` (compaction moves entries down: `w <= j`).
    #[inline]
    fn move_down(&mut self, j: usize, w: usize) {
        let b = self.get(j) as u64;
        let word = &mut self.words[w >> 6];
        *word = (*word & !(1 << (w & 63))) | b << (w & 63);
    }

    /// Keeps the bits of positions `..len` only.
    fn truncate(&mut self, len: usize) {
        self.words.truncate(len.div_ceil(64));
        if len & 63 != 0 {
            let last = self.words.len() - 1;
            self.words[last] &= (1u64 << (len & 63)) - 1;
        }
    }
}

/// A walk over the set positions of a range of [`Candidates`] that loads each word once: a
/// position taken is removed from its copy of the word, so clearing it in the candidates
/// meanwhile (the scheduler does, for an idle sender) does not disturb the walk.
struct Walk {
    /// The word now walked, and what is left of it.
    w: usize,
    bits: u64,
    /// The end of the range.
    to: usize,
}

impl Walk {
    /// A walk over nothing.
    const EMPTY: Walk = Walk { w: 0, bits: 0, to: 0 };

    /// The next set position of the range in `c`, or `None` at its end (and after).
    #[inline]
    fn next(&mut self, c: &Candidates) -> Option<usize> {
        loop {
            if self.bits != 0 {
                let i = (self.w << 6) + self.bits.trailing_zeros() as usize;
                self.bits &= self.bits - 1;
                if i >= self.to {
                    self.bits = 0;
                    self.to = 0; // every later position is past the end too
                    return None;
                }
                return Some(i);
            }
            self.w += 1;
            if self.w << 6 >= self.to {
                return None;
            }
            self.bits = c.words[self.w];
        }
    }
}

impl<C> Host<C> {
    /// Where the round robin over `active` starts: after the sender served last (`rr_last`
    /// may lie beyond a list that compaction shortened since). `None` without senders.
    #[inline]
    pub(crate) fn rr_start(&self) -> Option<usize> {
        let n = self.active.len();
        if n == 0 {
            return None;
        }
        let s = self.rr_last + 1;
        // Past the end by more than one only after a compaction (rare): a remainder.
        let s = if s > n { s % n } else { s };
        // At the end, back to the first, without a branch: with few senders the round robin
        // wraps in no order a predictor can learn.
        Some(std::hint::select_unpredictable(s < n, s, 0))
    }
}

impl<F: CcFactory> Shard<F> {
    pub(crate) fn flow_start(&mut self, sh: &Shared<F>, flow: usize) {
        if let FlowTx::Tcp(_) = self.tx[flow] {
            self.tcp_start(sh, flow);
            return;
        }
        let f = sh.flows[flow];
        let m = &sh.meta[flow];
        let init = FlowInit {
            line_rate: super::transport::qp(&self.tx, flow).max_rate,
            base_rtt: m.base_rtt,
            bdp: m.bdp,
            mtu: sh.cfg.nic.mtu,
            size: f.size,
            seed: mix64(sh.cfg.seed ^ mix64(0x5eed_0000_0000 | flow as u64)),
        };
        let qp = super::transport::qp_mut(&mut self.tx, flow);
        qp.cc = Some(sh.factory.new_flow(&init));
        qp.next_avail = self.now;
        let Slot::Host(h) = sh.place[f.src.idx()].slot else { unreachable!("validated") };
        self.nic_join(h as usize, flow);
        self.host_send(sh, h as usize);
    }

    /// The NIC scheduler (spec §2.2).
    pub(crate) fn host_send(&mut self, sh: &Shared<F>, h: usize) {
        self.materialize_txdone(h);
        // SAFETY (this function's unchecked lookups): `h` is a host of this shard (the slots
        // invariant of `super::at`).
        let host = unsafe { at(&self.hosts, h) };
        if host.link.busy_until > self.now {
            return;
        }
        let ack_q = if sh.cfg.nic.ack_high_prio { 0 } else { 3 };
        if !host.ack_fifo.is_empty() && !host.link.paused.get(ack_q) {
            let host = unsafe { at_mut(&mut self.hosts, h) };
            let pkt = host.ack_fifo.pop_front().expect("non-empty");
            self.host_transmit(sh, h, pkt);
            return;
        }
        let n = host.active.len();
        if n == 0 {
            return;
        }
        let start = host.rr_start().expect("senders");
        // One pass over the senders, in round-robin order from `start`, finds the first ready
        // one; the lowest index of a finished one examined before it (every one, if none is
        // ready): those are compacted out of the list (quirk 9); and, for the wake-up armed
        // when none is ready and none is pending (quirk 8), the earliest pacing time of the
        // unfinished senders with something left to send (a RoCE queue pair's next pacing
        // time whenever bytes are left, blocked or not; a paced TCP sender's release time).
        // It reads only the senders whose candidate bit is set, and clears the bit of each
        // one it finds idle ([`Candidates`]): skipping idle senders changes none of the three.
        // (So a host whose senders are all blocked, e.g. by a PFC pause, walks its queue pairs
        // once per call; one whose connections are mostly between messages, only the busy.)
        let want_wake = host.wake.is_none();
        #[cfg(debug_assertions)]
        self.check_candidates(sh, h);
        // A few senders are read one after another (cheaper than the bits, and their bits,
        // left set, stay a safe superset); more, only the candidates.
        let dense = n <= self.dense_scan;
        let now = self.now;
        let tx = &self.tx;
        let host = unsafe { at_mut(&mut self.hosts, h) };
        let (paused, active, cand) = (host.link.paused, &host.active, &mut host.candidates);
        let (mut chosen_idx, mut m, mut wake) = (None, None, Time::MAX);
        // Reads sender `i`, clearing its bit if it is idle and the bits are used (`$bits`, a
        // constant); true when it is the one chosen. (A macro: a closure was not inlined.)
        macro_rules! visit {
            ($i:expr, $bits:expr) => {{
                let i = $i;
                match tx_state(sh, &tx[active[i] as usize], now, paused) {
                    TxState::Ready => {
                        chosen_idx = Some(i);
                        true
                    }
                    TxState::Finished => {
                        m = Some(m.map_or(i, |x: usize| x.min(i)));
                        false
                    }
                    TxState::Idle => {
                        if $bits {
                            cand.clear(i);
                        }
                        false
                    }
                    TxState::Waiting(Some(at)) if want_wake => {
                        wake = wake.min(at);
                        false
                    }
                    TxState::Waiting(_) => false,
                }
            }};
        }
        if dense {
            for k in 0..n {
                // `(start + k) % n` without a division.
                if visit!(if start + k < n { start + k } else { start + k - n }, false) {
                    break;
                }
            }
        } else {
            'walks: for (from, to) in [(start, n), (0, start)] {
                let mut walk = cand.walk(from, to);
                while let Some(i) = walk.next(cand) {
                    if visit!(i, true) {
                        break 'walks;
                    }
                }
            }
        }
        #[cfg(debug_assertions)]
        let chosen_flow = chosen_idx.map(|c| host.active[c]);
        if let Some(m) = m {
            let tx = &mut self.tx;
            let mut removed_before = 0;
            let mut w = m;
            for j in m..host.active.len() {
                let f = host.active[j];
                // The chosen sender stays even if finished (a TCP sender whose every byte is
                // acknowledged may still owe an ACK): it sends now, and goes at a later pass.
                if tx_finished(&tx[f as usize]) && chosen_idx != Some(j) {
                    *nic_pos_mut(&mut tx[f as usize]) = NOT_LISTED;
                    if chosen_idx.is_some_and(|c| j < c) {
                        removed_before += 1;
                    }
                } else {
                    host.active[w] = f;
                    host.candidates.move_down(j, w);
                    *nic_pos_mut(&mut tx[f as usize]) = w as u32;
                    w += 1;
                }
            }
            host.active.truncate(w);
            host.candidates.truncate(w);
            chosen_idx = chosen_idx.map(|c| c - removed_before);
        }
        #[cfg(debug_assertions)]
        assert_eq!(chosen_idx.map(|c| host.active[c]), chosen_flow, "compaction kept the chosen");
        match chosen_idx {
            Some(c) => {
                host.rr_last = c;
                let flow = host.active[c];
                self.tx_send(sh, h, flow as usize);
            }
            None if want_wake && wake != Time::MAX && wake > self.now => self.rearm_wake(h, wake),
            None => {}
        }
    }

    /// Puts flow `flow`'s sender at the end of host slot `h`'s round robin.
    pub(crate) fn nic_join(&mut self, h: usize, flow: usize) {
        let host = &mut self.hosts[h];
        let i = host.active.len();
        host.active.push(flow as u32);
        host.candidates.push(i);
        *nic_pos_mut(&mut self.tx[flow]) = u32::try_from(i).expect("fewer than 2^32 senders");
    }

    /// Something happened to flow `flow`'s sender at host slot `h` that may have ended its
    /// idleness: the NIC scheduler looks at it again ([`Candidates`]).
    #[inline]
    pub(crate) fn nic_touch(&mut self, h: usize, flow: usize) {
        let i = nic_pos(&self.tx[flow]);
        // SAFETY: `h` is a host of this shard (the slots invariant of `super::at`).
        unsafe { at_mut(&mut self.hosts, h) }.candidates.set(i as usize);
    }

    /// Debug builds: every sender whose candidate bit is clear at host slot `h` is idle, and
    /// every listed sender knows its position.
    #[cfg(debug_assertions)]
    fn check_candidates(&self, sh: &Shared<F>, h: usize) {
        let host = &self.hosts[h];
        for (i, &f) in host.active.iter().enumerate() {
            let tx = &self.tx[f as usize];
            assert_eq!(nic_pos(tx) as usize, i, "flow {f}'s position in the round robin");
            if host.candidates.get(i) {
                continue;
            }
            assert!(
                tx_state(sh, tx, self.now, host.link.paused) == TxState::Idle,
                "flow {f} was skipped by the NIC scheduler but is not idle"
            );
        }
    }

    /// Arms host slot `h`'s NIC wake-up for `at` (a new version: a pending one lapses).
    #[inline]
    pub(crate) fn rearm_wake(&mut self, h: usize, at: Time) {
        let host = &mut self.hosts[h];
        host.wake = Some(at);
        host.wake_version = host.wake_version.wrapping_add(1);
        let (node, version) = (host.node, host.wake_version);
        self.schedule(node, at, Event::NicWake { host: h as u32, version });
    }

    /// Moves host slot `h`'s pending NIC wake-up earlier, to `at`, when a sender becomes due
    /// at `at` (after now, before the pending one): the scheduler re-arms it only when it finds
    /// nothing to send.
    #[inline]
    pub(crate) fn pull_wake(&mut self, h: usize, at: Time) {
        if self.hosts[h].wake.is_some_and(|w| at > self.now && at < w) {
            self.rearm_wake(h, at);
        }
    }

    /// Puts `pkt` on host slot `h`'s wire, and arranges for the NIC scheduler to run when the
    /// frame's last bit is out (its `TxDone`).
    ///
    /// A host with no sender of its own and nothing queued (a receiver that just sent an ACK,
    /// which is most host frames of most runs) would find nothing to send then: its `TxDone`
    /// would change nothing. So it is not put in the event queue; its time and sequence number
    /// are kept (the number is reserved now, as before, so that every later event keeps its
    /// number), and [`Shard::host_send`] puts it in the queue, with the same key, if it is
    /// called before that time — which every change that could give the host something to
    /// send (an ACK or probe queued, a sender added, a pause lifted) does. The order of every
    /// event that changes anything, and so every output, is the same as with the event always
    /// queued; only the count of events is smaller. Debug builds check it: they queue a
    /// marker event at that key, which asserts that the scheduler would indeed send nothing.
    pub(crate) fn host_transmit(&mut self, sh: &Shared<F>, h: usize, pkt: u32) {
        // SAFETY (this function's unchecked lookups): `h` is a host of this shard and `pkt` a
        // pooled packet (the invariants of `super::at`).
        let host = unsafe { at_mut(&mut self.hosts, h) };
        let p = unsafe { at(&self.pool, pkt as usize) };
        host.link.tx_bytes += p.wire as u64;
        host.link.tx_frames += 1;
        host.link.tx_data_frames += p.is_data() as u64;
        let node = host.node;
        let done = self.transmit(sh, node, 0, pkt);
        let seq = self.next_seq(node);
        let host = unsafe { at_mut(&mut self.hosts, h) };
        debug_assert!(host.lazy_txdone.is_none(), "host_send took it");
        if host.active.is_empty() && host.ack_fifo.is_empty() {
            host.lazy_txdone = Some((done, seq));
            #[cfg(debug_assertions)]
            self.queue.push(done, seq, Event::HostTxDone { host: h as u32, check: true });
        } else {
            host.link.txdone_pending = true;
            self.queue.push(done, seq, Event::HostTxDone { host: h as u32, check: false });
        }
    }

    /// Puts host slot `h`'s deferred `TxDone` ([`Shard::host_transmit`]) in the event queue if
    /// it is still to come (after the event now running).
    #[inline]
    fn materialize_txdone(&mut self, h: usize) {
        // SAFETY: `h` is a host of this shard (the slots invariant of `super::at`).
        let host = unsafe { at_mut(&mut self.hosts, h) };
        if let Some((at, seq)) = host.lazy_txdone.take() {
            // Comparing keys is exact here (unlike "is a frame still on the wire", which
            // `transmit` decides by time): the deferred event would have been queued when its
            // frame started, before the running event was popped (or by the running event
            // itself, and then `at > now`), so it would already have run exactly if its key is
            // the smaller — even at `at == now` with a sequence number below the running
            // event's, which another node's counter may have given.
            if (at, seq) > (self.now, self.cur_seq) {
                host.link.txdone_pending = true;
                self.queue.push(at, seq, Event::HostTxDone { host: h as u32, check: false });
            }
        }
    }

    /// Debug builds: the marker of a deferred `TxDone` is due. Unless the `TxDone` was put in
    /// the queue (or a later frame's replaced it), check that it would have changed nothing:
    /// the NIC scheduler, run now, neither sends nor schedules anything.
    #[cfg(debug_assertions)]
    pub(crate) fn check_lazy_txdone(&mut self, sh: &Shared<F>, h: usize) {
        let host = &mut self.hosts[h];
        if host.lazy_txdone != Some((self.now, self.cur_seq)) {
            return;
        }
        host.lazy_txdone = None;
        let node = host.node as usize;
        let before = self.node_seq[node];
        self.host_send(sh, h);
        assert_eq!(
            self.node_seq[node], before,
            "a deferred TxDone at host {node} would have sent or scheduled something"
        );
    }

    /// A packet has been fully received at host slot `h` (kept out of line, as
    /// `switch_arrive`).
    #[inline(never)]
    pub(crate) fn host_arrive(&mut self, sh: &Shared<F>, h: usize, pkt: u32) {
        // SAFETY (this function's unchecked lookups): `h` is a host of this shard and `pkt` a
        // pooled packet (the invariants of `super::at`).
        if Self::lost(&mut unsafe { at_mut(&mut self.hosts, h) }.link) {
            self.counters.link_losses += 1;
            self.drop_packet(pkt);
            return;
        }
        match unsafe { at(&self.pool, pkt as usize) }.kind {
            PacketKind::Pfc { pause, queue } => {
                self.release(pkt);
                self.hosts[h].link.paused.set(queue as usize, pause);
                if !pause {
                    self.host_send(sh, h);
                }
            }
            PacketKind::Data => {
                let flow = unsafe { at(&self.pool, pkt as usize) }.flow.idx();
                self.receive_data(sh, h, pkt);
                if flow >= sh.nlisted {
                    let delivered = super::transport::rx_mut(&mut self.rx, flow).expected;
                    self.stream_delivered(sh, flow, delivered);
                }
            }
            PacketKind::Tcp => self.tcp_arrive(sh, h, pkt),
            PacketKind::Ack | PacketKind::Nack => {
                self.receive_ack(sh, h, pkt);
                self.release(pkt);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Candidates;
    use proptest::prelude::*;

    /// The set positions of `c` in `from..to`, by a [`super::Walk`].
    fn walk(c: &Candidates, from: usize, to: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut w = c.walk(from, to);
        while let Some(i) = w.next(c) {
            out.push(i);
        }
        // The end is sticky.
        assert_eq!(w.next(c), None);
        out
    }

    proptest! {
        /// Against a list of flags: pushes, sets and clears, then the set positions of any
        /// range; then a compaction that keeps a subset from `m` on, in order, and the bits
        /// that moved with it.
        #[test]
        fn candidates_follow_a_list_of_flags(
            n in 0usize..300,
            ops in proptest::collection::vec((any::<bool>(), 0usize..320), 0..200),
            range in (0usize..310, 0usize..310),
            m in 0usize..300,
            keep in proptest::collection::vec(any::<bool>(), 300),
        ) {
            let mut c = Candidates::default();
            let mut flags = Vec::new();
            for i in 0..n {
                c.push(i);
                flags.push(true);
            }
            for (set, i) in ops {
                if set {
                    c.set(i); // a position past the list is ignored below
                    if i < n {
                        flags[i] = true;
                    }
                } else if i < n {
                    c.clear(i);
                    flags[i] = false;
                }
            }
            // Bits set past the list in its last word are never reported within it.
            let (from, to) = (range.0.min(n), range.1.min(n));
            let want: Vec<usize> = (from..to).filter(|&i| flags[i]).collect();
            prop_assert_eq!(walk(&c, from, to), want);

            let m = m.min(n);
            let mut w = m;
            let mut kept_flags = flags[..m].to_vec();
            for j in m..n {
                if keep[j] {
                    c.move_down(j, w);
                    kept_flags.push(flags[j]);
                    w += 1;
                }
            }
            c.truncate(w);
            prop_assert_eq!(c.words.len(), w.div_ceil(64));
            let want: Vec<usize> = (0..w).filter(|&i| kept_flags[i]).collect();
            prop_assert_eq!(walk(&c, 0, w), want);
            // Nothing is left set past the end (a later push starts from a clear bit).
            if w & 63 != 0 {
                prop_assert_eq!(c.words[w >> 6] >> (w & 63), 0);
            }
        }
    }
}
