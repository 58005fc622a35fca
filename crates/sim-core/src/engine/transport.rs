//! The per-flow transport seam at hosts.
//!
//! Each flow has a sender state at its source host ([`FlowTx`]) and a receiver state at its
//! destination host ([`FlowRx`]), one enum variant per transport, so that dispatch is a `match`
//! (no `dyn` per packet). The host's NIC scheduler (`host.rs`) asks a flow's sender only two
//! things — where it stands now ([`tx_state`]: ready to send, finished, idle, or
//! waiting, perhaps until a pacing time) and send one packet ([`Shard::tx_send`]) — and hands
//! every arriving packet of a flow to the side it is for. A new transport adds a variant here
//! and a module beside `roce.rs` with those two answers, its packet handlers and its timers;
//! every handler that may end its sender's idleness calls [`Shard::nic_touch`].

use super::link::Paused;
use super::roce::{roce_ready, Qp, Rx};
use super::tcp::{tcp_state, TcpRx, TcpTx};
use super::{Shard, Shared};
use crate::cc::CcFactory;
use crate::units::Time;

/// The sender side of one flow.
pub(crate) enum FlowTx<C> {
    /// A RoCE queue pair driven by congestion-control state `C`.
    Roce(Qp<C>),
    /// A TCP sender.
    Tcp(Box<TcpTx>),
}

/// The receiver side of one flow.
#[derive(Clone)]
pub(crate) enum FlowRx {
    /// A RoCE receiver.
    Roce(Rx),
    /// A TCP receiver.
    Tcp(Box<TcpRx>),
}

/// One shard's per-flow states (senders or receivers), indexed by flow id, holding only the
/// flows with an end in the shard.
///
/// A flow's states are only ever touched by events at its two hosts, so a shard keeps only
/// flows whose source or destination it runs: a RoCE flow's sender at its source and its
/// receiver at its destination (one entry each), a TCP flow's sender and receiver at both ends
/// (a connection's set-up reads both at the end that opens it). Run-wide memory grows with
/// the flows, not with flows × shards. Each flow id maps to its entry through `slot`; with
/// one shard `slot` is empty and the table is indexed directly. Indexing a flow the shard
/// does not hold panics.
pub(crate) struct FlowTable<T> {
    /// Each flow's index in `items`, or [`FlowTable::ABSENT`]; empty when every flow is held
    /// at its own index.
    slot: Vec<u32>,
    items: Vec<T>,
}

impl<T> FlowTable<T> {
    const ABSENT: u32 = u32::MAX;

    fn put(&mut self, flow: usize, item: T) {
        self.slot[flow] = u32::try_from(self.items.len()).expect("fewer than 2^32 flows");
        self.items.push(item);
    }

    /// The states held, in flow order.
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// How many flows are held.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.items.len()
    }

    #[inline]
    fn at(&self, flow: usize) -> usize {
        if self.slot.is_empty() {
            flow
        } else {
            self.slot[flow] as usize
        }
    }
}

impl<T> std::ops::Index<usize> for FlowTable<T> {
    type Output = T;
    #[inline]
    fn index(&self, flow: usize) -> &T {
        &self.items[self.at(flow)]
    }
}

impl<T> std::ops::IndexMut<usize> for FlowTable<T> {
    #[inline]
    fn index_mut(&mut self, flow: usize) -> &mut T {
        let i = self.at(flow);
        &mut self.items[i]
    }
}

/// Builds every shard's [`FlowTable`], flow by flow in flow-id order: each state goes straight
/// into the shard that holds it, so set-up never holds a run-wide list of the states beside
/// the shards' tables.
pub(crate) struct FlowTables<T> {
    tables: Vec<FlowTable<T>>,
    /// The id of the next flow pushed.
    next: usize,
}

impl<T> FlowTables<T> {
    /// Tables for `flows` flows on `shards` shards (one shard: one dense table).
    pub(crate) fn new(shards: usize, flows: usize) -> FlowTables<T> {
        let tables = if shards == 1 {
            vec![FlowTable { slot: Vec::new(), items: Vec::with_capacity(flows) }]
        } else {
            (0..shards)
                .map(|_| FlowTable { slot: vec![FlowTable::<T>::ABSENT; flows], items: Vec::new() })
                .collect()
        };
        FlowTables { tables, next: 0 }
    }

    /// Adds the next flow's state `item`, held by shard `home`; shard `other`, when another
    /// and `copy` gives one, holds a copy.
    pub(crate) fn push(
        &mut self,
        (home, other): (usize, usize),
        item: T,
        copy: impl FnOnce(&T) -> Option<T>,
    ) {
        let f = self.next;
        self.next += 1;
        if self.tables.len() == 1 {
            debug_assert_eq!(self.tables[0].items.len(), f);
            self.tables[0].items.push(item);
            return;
        }
        if other != home {
            if let Some(c) = copy(&item) {
                self.tables[other].put(f, c);
            }
        }
        self.tables[home].put(f, item);
    }

    /// The tables, each holding no more memory than its states need.
    pub(crate) fn finish(self) -> Vec<FlowTable<T>> {
        let mut tables = self.tables;
        for t in &mut tables {
            debug_assert!(t.slot.is_empty() || t.slot.len() == self.next, "every flow pushed");
            t.items.shrink_to_fit();
        }
        tables
    }
}

impl<C> FlowTx<C> {
    /// A copy of a not-yet-started sender for the flow's other end, where that end reads it:
    /// a TCP sender's (the end that opens the connection reads its kind and group); none for
    /// a RoCE queue pair, which only its source touches.
    pub(crate) fn copy_for_other_end(&self) -> Option<FlowTx<C>> {
        match self {
            FlowTx::Roce(_) => None,
            FlowTx::Tcp(t) => {
                debug_assert!(t.ep.is_none());
                Some(FlowTx::Tcp(t.clone()))
            }
        }
    }
}

impl FlowRx {
    /// A copy of a not-yet-started receiver for the flow's source, where that end reads it:
    /// a TCP receiver's (the sender's set-up reads its group); none for a RoCE receiver,
    /// which only its destination touches.
    pub(crate) fn copy_for_other_end(&self) -> Option<FlowRx> {
        match self {
            FlowRx::Roce(_) => None,
            FlowRx::Tcp(_) => Some(self.clone()),
        }
    }
}

/// The RoCE queue pair of flow `f`.
#[inline]
pub(crate) fn qp<C>(tx: &FlowTable<FlowTx<C>>, f: usize) -> &Qp<C> {
    match &tx[f] {
        FlowTx::Roce(q) => q,
        FlowTx::Tcp(_) => unreachable!("flow {f} is a RoCE flow"),
    }
}

/// The RoCE queue pair of flow `f`, mutably.
#[inline]
pub(crate) fn qp_mut<C>(tx: &mut FlowTable<FlowTx<C>>, f: usize) -> &mut Qp<C> {
    match &mut tx[f] {
        FlowTx::Roce(q) => q,
        FlowTx::Tcp(_) => unreachable!("flow {f} is a RoCE flow"),
    }
}

/// The RoCE receiver of flow `f`, mutably.
#[inline]
pub(crate) fn rx_mut(rx: &mut FlowTable<FlowRx>, f: usize) -> &mut Rx {
    match &mut rx[f] {
        FlowRx::Roce(r) => r,
        FlowRx::Tcp(_) => unreachable!("flow {f} is a RoCE flow"),
    }
}

/// Whether the flow's sender has finished (the NIC scheduler drops it from its list).
#[inline]
pub(crate) fn tx_finished<C>(tx: &FlowTx<C>) -> bool {
    match tx {
        FlowTx::Roce(q) => q.done,
        FlowTx::Tcp(t) => t.done,
    }
}

/// [`nic_pos`] of a sender in no host's round robin (not started, or finished and compacted).
pub(crate) const NOT_LISTED: u32 = u32::MAX;

/// The sender's position in its host's round robin ([`super::Host::active`]), or
/// [`NOT_LISTED`].
#[inline]
pub(crate) fn nic_pos<C>(tx: &FlowTx<C>) -> u32 {
    match tx {
        FlowTx::Roce(q) => q.nic_pos,
        FlowTx::Tcp(t) => t.nic_pos,
    }
}

/// [`nic_pos`], to be moved.
#[inline]
pub(crate) fn nic_pos_mut<C>(tx: &mut FlowTx<C>) -> &mut u32 {
    match tx {
        FlowTx::Roce(q) => &mut q.nic_pos,
        FlowTx::Tcp(t) => &mut t.nic_pos,
    }
}

/// Where a sender stands, for its host's NIC scheduler ([`tx_state`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TxState {
    /// It may put a packet on the wire now.
    Ready,
    /// It has finished (the scheduler drops it from its list).
    Finished,
    /// Nothing to send and nothing due, whatever the time, until an event of its own (an
    /// ACK, a timer, more data): the scheduler may skip it until then (`host::Candidates`).
    Idle,
    /// Something to send, held back: by pacing until the time given (it then becomes ready
    /// by itself, and the NIC's wake-up is armed for it), or by a window or a pause (none).
    /// A RoCE queue pair gives its pacing time whenever bytes are left, blocked or not, as
    /// the reference does (spec quirk 8).
    Waiting(Option<Time>),
}

/// Where sender `tx` stands at `now`, on a host link that has `paused` these classes.
/// Always inlined: the inliner once left it out of line, and the calibration's cut counted
/// 0.7% more instructions (docs/performance.md, "Thirtieth session").
#[inline(always)]
pub(crate) fn tx_state<F: CcFactory>(
    sh: &Shared<F>,
    tx: &FlowTx<F::Cc>,
    now: Time,
    paused: Paused,
) -> TxState {
    match tx {
        FlowTx::Roce(q) => {
            if roce_ready(sh, now, paused, q) {
                TxState::Ready
            } else if q.done {
                TxState::Finished
            } else if q.snd_nxt >= q.size {
                TxState::Idle
            } else {
                TxState::Waiting(Some(q.next_avail))
            }
        }
        FlowTx::Tcp(t) => tcp_state(t, now, paused),
    }
}

impl<F: CcFactory> Shard<F> {
    /// Builds flow `flow`'s next packet and transmits it from host slot `h`.
    #[inline]
    pub(crate) fn tx_send(&mut self, sh: &Shared<F>, h: usize, flow: usize) {
        match &self.tx[flow] {
            FlowTx::Roce(_) => self.roce_send(sh, h, flow),
            FlowTx::Tcp(_) => self.tcp_send(sh, h, flow),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FlowTables;

    /// Each flow's state is held by its home shard, and a copy by its other end when the
    /// copy function gives one (odd states here); flows are found by id, in every shard, and
    /// a shard's states stay in flow order. One shard is a dense table.
    #[test]
    fn states_go_to_their_home_and_copies_to_the_other_end() {
        let ends = [(0, 2), (2, 0), (1, 1), (0, 1), (2, 2)];
        let copy = |v: &u32| (v % 2 == 1).then_some(v + 100);
        let mut b = FlowTables::new(3, ends.len());
        for (f, &e) in ends.iter().enumerate() {
            b.push(e, f as u32 * 10 + 1 - (f as u32 % 2), copy);
        }
        let t = b.finish();
        // States: flow 0 → 1, 1 → 10, 2 → 21, 3 → 30, 4 → 41; odd ones are copied.
        assert_eq!(t[0].iter().copied().collect::<Vec<_>>(), [1, 30]);
        assert_eq!(t[1].iter().copied().collect::<Vec<_>>(), [21]);
        assert_eq!(t[2].iter().copied().collect::<Vec<_>>(), [101, 10, 41]);
        assert_eq!((t[0][0], t[2][0], t[2][1], t[0][3], t[2][4]), (1, 101, 10, 30, 41));
        assert_eq!(t[1][2], 21);

        let mut one = FlowTables::new(1, 3);
        for v in [7u32, 8, 9] {
            one.push((0, 0), v, copy);
        }
        let one = one.finish();
        assert!(one[0].slot.is_empty());
        assert_eq!((one[0][0], one[0][1], one[0][2]), (7, 8, 9));
    }

    #[test]
    #[should_panic(expected = "index out of bounds")]
    fn a_flow_a_shard_does_not_hold_panics() {
        let mut b = FlowTables::new(2, 1);
        b.push((0, 1), 4u32, |_| None);
        let t = b.finish();
        let _ = t[1][0];
    }
}
