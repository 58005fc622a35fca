//! The per-flow transport seam at hosts.
//!
//! Each flow has a sender state at its source host ([`FlowTx`]) and a receiver state at its
//! destination host ([`FlowRx`]), one enum variant per transport, so that dispatch is a `match`
//! (no `dyn` per packet). The host's NIC scheduler (`host.rs`) asks a flow's sender only four
//! things — is a packet ready now ([`Shard::tx_ready`]), has the flow finished
//! ([`tx_finished`]), when might it become ready ([`tx_wake`]), and send one packet
//! ([`Shard::tx_send`]) — and hands every arriving packet of a flow to the side it is for.
//! A new transport adds a variant here and a module beside `roce.rs` with those four answers,
//! its packet handlers and its timers.

use super::roce::{Qp, Rx};
use super::tcp::{tcp_ready, TcpRx, TcpTx};
use super::{Host, Shard, Shared};
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
/// A flow's states are only ever touched by events at its two hosts, so a shard keeps the
/// flows whose source or destination it runs: run-wide memory grows with the flows (at most
/// two entries each), not with flows × shards. Each flow id maps to its entry through `slot`;
/// with one shard `slot` is empty and the table is indexed directly. Indexing a flow the shard
/// does not hold panics.
pub(crate) struct FlowTable<T> {
    /// Each flow's index in `items`, or [`FlowTable::ABSENT`]; empty when every flow is held
    /// at its own index.
    slot: Vec<u32>,
    items: Vec<T>,
}

impl<T> FlowTable<T> {
    const ABSENT: u32 = u32::MAX;

    /// Splits the states of every flow (`items`, in flow order) among `shards` shards, given
    /// each flow's (source, destination) shard: the source's shard takes the state, the
    /// destination's, when another, `copy` of it.
    pub(crate) fn split(
        items: Vec<T>,
        ends: &[(usize, usize)],
        shards: usize,
        copy: impl Fn(&T) -> T,
    ) -> Vec<FlowTable<T>> {
        if shards == 1 {
            return vec![FlowTable { slot: Vec::new(), items }];
        }
        let n = items.len();
        let mut tables: Vec<FlowTable<T>> = (0..shards)
            .map(|_| FlowTable { slot: vec![Self::ABSENT; n], items: Vec::new() })
            .collect();
        for (f, (item, &(src, dst))) in items.into_iter().zip(ends).enumerate() {
            if dst != src {
                tables[dst].put(f, copy(&item));
            }
            tables[src].put(f, item);
        }
        tables
    }

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

impl<C> FlowTx<C> {
    /// A copy of a not-yet-started sender, for the flow tables of other shards.
    pub(crate) fn unstarted_copy(&self) -> FlowTx<C> {
        match self {
            FlowTx::Roce(q) => FlowTx::Roce(q.unstarted_copy()),
            FlowTx::Tcp(t) => {
                debug_assert!(t.ep.is_none());
                FlowTx::Tcp(t.clone())
            }
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

/// When the sender may next become ready by itself (pacing), if it has anything left to send.
/// RoCE answers with its next pacing time whenever bytes are left, blocked or not, as the
/// reference does (spec quirk 8).
#[inline]
pub(crate) fn tx_wake<C>(tx: &FlowTx<C>, now: Time) -> Option<Time> {
    match tx {
        FlowTx::Roce(q) => (q.snd_nxt < q.size).then_some(q.next_avail),
        FlowTx::Tcp(t) => t.wake(now),
    }
}

impl<F: CcFactory> Shard<F> {
    /// Whether flow `flow`'s sender at `host` may put a packet on the wire now.
    #[inline]
    pub(crate) fn tx_ready(&self, sh: &Shared<F>, host: &Host<F::Cc>, flow: u32) -> bool {
        match &self.tx[flow as usize] {
            FlowTx::Roce(q) => self.roce_ready(sh, host, q),
            FlowTx::Tcp(t) => tcp_ready(t, self.now, host),
        }
    }

    /// Builds flow `flow`'s next packet and transmits it from host slot `h`.
    #[inline]
    pub(crate) fn tx_send(&mut self, sh: &Shared<F>, h: usize, flow: usize) {
        match &self.tx[flow] {
            FlowTx::Roce(_) => self.roce_send(sh, h, flow),
            FlowTx::Tcp(_) => self.tcp_send(sh, h, flow),
        }
    }
}
