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
pub(crate) fn qp<C>(tx: &[FlowTx<C>], f: usize) -> &Qp<C> {
    match &tx[f] {
        FlowTx::Roce(q) => q,
        FlowTx::Tcp(_) => unreachable!("flow {f} is a RoCE flow"),
    }
}

/// The RoCE queue pair of flow `f`, mutably.
#[inline]
pub(crate) fn qp_mut<C>(tx: &mut [FlowTx<C>], f: usize) -> &mut Qp<C> {
    match &mut tx[f] {
        FlowTx::Roce(q) => q,
        FlowTx::Tcp(_) => unreachable!("flow {f} is a RoCE flow"),
    }
}

/// The RoCE receiver of flow `f`, mutably.
#[inline]
pub(crate) fn rx_mut(rx: &mut [FlowRx], f: usize) -> &mut Rx {
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
