//! Hosts: flow starts, the NIC scheduler (control FIFO first, then round robin over the
//! flows' transports) and packet arrival.

use std::collections::VecDeque;

use super::transport::{tx_finished, tx_wake, FlowTx};
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
    pub(crate) rr_last: usize,
    pub(crate) wake: Option<Time>,
    pub(crate) wake_version: u32,
    /// The `TxDone` of the frame on the wire, when it was not put in the event queue: (when,
    /// its reserved sequence number). See [`Shard::host_transmit`].
    pub(crate) lazy_txdone: Option<(Time, u64)>,
    pub(crate) _cc: std::marker::PhantomData<C>,
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
        self.hosts[h as usize].active.push(flow as u32);
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
        // `(start + k) % n` for `k < n`, without a division.
        let wrap = |k: usize| if start + k < n { start + k } else { start + k - n };
        // One pass over the senders finds the first ready one in round-robin order, the
        // lowest index of a finished one examined before it (every one, if none is ready):
        // those are compacted out of the list (quirk 9); and, for the wake-up armed when none
        // is ready and none is pending (quirk 8), the earliest pacing time of the unfinished
        // RoCE senders with bytes left, a comparison of fields the readiness test has just
        // read. A TCP sender's time takes its own readiness computation, so TCP senders are
        // asked only when the wake-up is armed, after the pass. (So a host whose senders are
        // all blocked, e.g. by a PFC pause, walks its thousands of queue pairs once per call,
        // not three times.)
        let want_wake = host.wake.is_none();
        let (mut chosen_idx, mut m, mut wake, mut tcp_wake) = (None, None, Time::MAX, false);
        for k in 0..n {
            let i = wrap(k);
            let f = host.active[i];
            if self.tx_ready(sh, host, f) {
                chosen_idx = Some(i);
                break;
            }
            let tx = &self.tx[f as usize];
            if tx_finished(tx) {
                m = Some(m.map_or(i, |x: usize| x.min(i)));
            } else if want_wake {
                match tx {
                    FlowTx::Roce(_) => {
                        if let Some(at) = tx_wake(tx, self.now) {
                            wake = wake.min(at);
                        }
                    }
                    FlowTx::Tcp(_) => tcp_wake = true,
                }
            }
        }
        let host = unsafe { at_mut(&mut self.hosts, h) };
        if let Some(m) = m {
            let tx = &self.tx;
            let mut removed_before = 0;
            let mut j = m;
            let mut w = m;
            while j < host.active.len() {
                let f = host.active[j];
                if tx_finished(&tx[f as usize]) {
                    if let Some(c) = chosen_idx {
                        if j < c {
                            removed_before += 1;
                        }
                    }
                } else {
                    host.active[w] = f;
                    w += 1;
                }
                j += 1;
            }
            host.active.truncate(w);
            chosen_idx = chosen_idx.map(|c| c - removed_before);
        }
        match chosen_idx {
            Some(c) => {
                host.rr_last = c;
                let flow = host.active[c];
                self.tx_send(sh, h, flow as usize);
            }
            None if want_wake => {
                // The unfinished TCP senders' times (the list holds only unfinished senders
                // now: with none ready, every finished one was compacted out).
                if tcp_wake {
                    for &f in &host.active {
                        let tx = &self.tx[f as usize];
                        if let (FlowTx::Tcp(_), Some(at)) = (tx, tx_wake(tx, self.now)) {
                            wake = wake.min(at);
                        }
                    }
                }
                if wake != Time::MAX && wake > self.now {
                    self.rearm_wake(h, wake);
                }
            }
            None => {}
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
