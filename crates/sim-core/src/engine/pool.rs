//! Connection reuse at TCP clients ([`dcsim_tcp::Reuse::GoHttp`]): the flows of a group
//! between one client and one server share a pool of connections, run as Go's `net/http`
//! `Transport` runs its own for ccafct's client, which makes a request per flow and closes the
//! transport's idle connections after each response (`CloseIdleConnections`).
//!
//! - A flow that starts takes the most recently idle connection if there is one, and sends its
//!   request on it at once. Otherwise it dials a connection of its own (its SYN) and waits.
//! - A waiting flow takes the first connection that becomes free, whichever it is: its own
//!   dial's once established, another flow's dial no longer wanted by its dialer, or a
//!   connection whose response just completed. Waiters are served in the order they started
//!   (Go's `idleConnWait` queue); a dial goes to its own dialer first if that one still waits.
//! - When a response completes, its connection goes to the first waiter, else to the idle list
//!   (at most two idle, Go's `DefaultMaxIdleConnsPerHost`; a third is closed). Then every idle
//!   connection is closed (the finished request's `CloseIdleConnections`): a connection is
//!   reused only by a flow that was already waiting, and a dial nobody wanted goes unused.
//!
//! A connection is named by the flow that dialed it: its endpoints are that flow's, and its
//! packets carry that flow's id. A request names the flow it asks for in its TCP fields
//! ([`crate::packet::TcpFields::app`]), so that the server answers with that flow's size from
//! the run's flow list; the pool itself is the client's alone. Every handler runs at the client
//! host, so the parallel engine's locality holds. A closed connection is left as it is (no FIN
//! is sent).

use std::collections::VecDeque;

use dcsim_tcp::Receiver;

use super::tcp::rx_mut;
use super::Shard;
use super::Shared;
use crate::cc::CcFactory;

/// [`Shared::pool_of`] of a flow in no pool.
pub(crate) const NO_POOL: u32 = u32::MAX;

/// Go's `DefaultMaxIdleConnsPerHost`.
const MAX_IDLE: usize = 2;

/// A connection serving a flow's request.
#[derive(Clone, Copy, Debug)]
struct Busy {
    /// The connection (the flow that dialed it).
    conn: u32,
    /// The flow whose response it carries.
    flow: u32,
    /// One past the response's last byte in the connection's stream.
    end: u64,
}

/// One client's pool of connections to one server (used by the shard of the client's host).
#[derive(Clone, Debug, Default)]
pub(crate) struct PoolState {
    /// Connections with no request, the most recently idle last.
    idle: Vec<u32>,
    /// Flows waiting for a connection, in the order they started.
    waiting: VecDeque<u32>,
    /// Connections carrying a response.
    busy: Vec<Busy>,
}

impl<F: CcFactory> Shard<F> {
    /// Flow `flow`, of pool `sh.pool_of[flow]`, starts at its client (host slot `h`).
    #[cold]
    #[inline(never)]
    pub(crate) fn pool_start(&mut self, sh: &Shared<F>, h: usize, flow: usize) {
        let p = sh.pool_of[flow] as usize;
        if let Some(conn) = self.pools[p].idle.pop() {
            self.pool_assign(sh, h, conn as usize, flow);
            return;
        }
        let r = rx_mut(&mut self.rx, flow);
        let mut ep = Receiver::new(&Self::tcp_group(sh, r.group).tcp, 0);
        ep.connect(self.now);
        r.ep = Some(ep);
        self.pools[p].waiting.push_back(flow as u32);
        self.tcp_rx_flush(sh, h, flow);
    }

    /// Connection `conn`'s handshake completed at its client (host slot `h`).
    #[cold]
    #[inline(never)]
    pub(crate) fn pool_established(&mut self, sh: &Shared<F>, h: usize, conn: usize) {
        let p = sh.pool_of[conn] as usize;
        let q = &mut self.pools[p].waiting;
        let taker = match q.iter().position(|&w| w as usize == conn) {
            Some(i) => q.remove(i),
            None => q.pop_front(),
        };
        match taker {
            Some(w) => self.pool_assign(sh, h, conn, w as usize),
            None => self.pool_idle(p, conn),
        }
    }

    /// A segment arrived on connection `conn` at its client (host slot `h`): the response it
    /// carries may be complete, and then the connection moves on.
    #[cold]
    #[inline(never)]
    pub(crate) fn pool_progress(&mut self, sh: &Shared<F>, h: usize, conn: usize) {
        let p = sh.pool_of[conn] as usize;
        let Some(i) = self.pools[p].busy.iter().position(|b| b.conn as usize == conn) else {
            return;
        };
        let delivered = rx_mut(&mut self.rx, conn).ep.as_ref().map_or(0, Receiver::delivered);
        if delivered < self.pools[p].busy[i].end {
            return;
        }
        let done = self.pools[p].busy.swap_remove(i);
        let flow = done.flow as usize;
        self.fct.push((done.flow, self.now - sh.flows[flow].start));
        self.done += 1;
        match self.pools[p].waiting.pop_front() {
            Some(w) => self.pool_assign(sh, h, conn, w as usize),
            None => self.pool_idle(p, conn),
        }
        // The finished request's `CloseIdleConnections`.
        self.pools[p].idle.clear();
    }

    /// The flow whose request connection `conn` carries now ([`crate::packet::TcpFields::NO_APP`]
    /// if none).
    #[cold]
    #[inline(never)]
    pub(crate) fn pool_serving(&self, sh: &Shared<F>, conn: usize) -> u32 {
        let p = sh.pool_of[conn] as usize;
        self.pools[p]
            .busy
            .iter()
            .find(|b| b.conn as usize == conn)
            .map_or(crate::packet::TcpFields::NO_APP, |b| b.flow)
    }

    /// Puts connection `conn` in pool `p`'s idle list, or closes it when two are there.
    fn pool_idle(&mut self, p: usize, conn: usize) {
        if self.pools[p].idle.len() < MAX_IDLE {
            self.pools[p].idle.push(conn as u32);
        }
    }

    /// Flow `flow` takes connection `conn` and sends its request on it.
    fn pool_assign(&mut self, sh: &Shared<F>, h: usize, conn: usize, flow: usize) {
        let p = sh.pool_of[conn] as usize;
        self.pools[p].waiting.retain(|&w| w as usize != flow);
        if conn != flow {
            self.counters.tcp_reused_connections += 1;
        }
        let now = self.now;
        let ep = rx_mut(&mut self.rx, conn).ep.as_mut().expect("a connection that was dialed");
        ep.request(now, sh.flows[flow].size);
        let end = ep.total_bytes();
        self.pools[p].busy.push(Busy { conn: conn as u32, flow: flow as u32, end });
        self.tcp_rx_flush(sh, h, conn);
    }
}
