//! Applications at hosts: RPC clients that submit queries on persistent connections, servers
//! that answer them, and the message streams underneath (see [`crate::apps`]).
//!
//! Connection `c` is carried by two engine flows after the run's listed flows: its request
//! stream `nlisted + 2c` (client → server) and its response stream `nlisted + 2c + 1`. A
//! stream's sender is a queue pair or TCP sender whose byte count grows as messages are
//! appended ([`Shard::stream_append`]); it never finishes. Its receiver reports in-order
//! progress to [`Shard::stream_delivered`], which completes messages at the boundaries it
//! replays from the sender's size stream.
//!
//! Every handler runs at one host and touches only that host's side of a connection: the
//! client side (pending queries, the response stream's boundaries) at the client, the server
//! side (the request stream's boundaries, the response size stream) at the server.

use std::collections::VecDeque;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::transport::FlowTx;
use super::{Event, Shard, Shared, Slot};
use crate::apps::{Arrivals, Pick, QueryRecord, SizeDist};
use crate::cc::{CcFactory, FlowInit};
use crate::sim::mix64;
use crate::units::{Duration, Time};

/// The ends of messages on one stream, as its receiver replays them.
#[derive(Clone, Debug)]
pub(crate) struct MsgRx {
    rng: ChaCha8Rng,
    /// Stream offset one past the current message's last byte.
    end: u64,
    /// The current message's size.
    size: u64,
}

impl MsgRx {
    fn new(mut rng: ChaCha8Rng, dist: &SizeDist) -> MsgRx {
        let size = dist.draw(&mut rng);
        MsgRx { rng, end: size, size }
    }

    /// Moves on to the next message; returns the size of the one that completed.
    fn advance(&mut self, dist: &SizeDist) -> u64 {
        let done = self.size;
        self.size = dist.draw(&mut self.rng);
        // Saturating, as the sender's byte count (`stream_append`): a sampler may return any
        // size, and a message past 2^64 bytes of stream never completes either way.
        self.end = self.end.saturating_add(self.size);
        done
    }
}

/// A query submitted and not yet answered (client side).
#[derive(Clone, Copy, Debug)]
struct Pending {
    submit: Time,
    size: u64,
    seq: u64,
    /// The request stream's offset one past the query's last byte.
    end: u64,
    measured: bool,
}

/// One connection's state. Each shard keeps a copy of every connection and uses only the side
/// of its own hosts.
#[derive(Clone, Debug)]
pub(crate) struct ConnState {
    // Client side.
    pending: VecDeque<Pending>,
    /// Bytes of the pending queries.
    pending_bytes: u64,
    submitted: u64,
    /// Bytes written to the request stream.
    requested: u64,
    /// Query sizes, drawn as queries are submitted.
    query_rng: ChaCha8Rng,
    /// Response boundaries.
    resp_rx: MsgRx,
    // Server side.
    /// Query boundaries (replaying `query_rng`).
    req_rx: MsgRx,
    /// Response sizes, drawn as queries complete.
    resp_rng: ChaCha8Rng,
}

/// A client's own state (at its host).
#[derive(Clone, Debug)]
pub(crate) struct AppState {
    rng: ChaCha8Rng,
    /// Its queries submitted and not yet answered, over all its connections.
    pending: u64,
}

/// The random stream `kind` of item `i` of a run's applications.
pub(crate) fn app_rng(seed: u64, kind: u64, i: usize) -> ChaCha8Rng {
    use rand::SeedableRng;
    ChaCha8Rng::seed_from_u64(mix64(seed ^ mix64((kind << 40) | i as u64 | 0xa99_0000_0000_0000)))
}

/// Initial per-connection and per-application state.
pub(crate) fn initial_state(apps: &crate::apps::Apps) -> (Vec<ConnState>, Vec<AppState>) {
    let conns = apps
        .connections
        .iter()
        .enumerate()
        .map(|(c, conn)| {
            let app = &apps.apps[conn.app as usize];
            ConnState {
                pending: VecDeque::new(),
                pending_bytes: 0,
                submitted: 0,
                requested: 0,
                query_rng: app_rng(apps.seed, 0, c),
                resp_rx: MsgRx::new(app_rng(apps.seed, 1, c), &app.response),
                req_rx: MsgRx::new(app_rng(apps.seed, 0, c), &app.query),
                resp_rng: app_rng(apps.seed, 1, c),
            }
        })
        .collect();
    let states = (0..apps.apps.len())
        .map(|a| AppState { rng: app_rng(apps.seed, 2, a), pending: 0 })
        .collect();
    (conns, states)
}

/// A draw from the exponential distribution of mean `mean` (at least 1 ps).
fn exp_gap(rng: &mut ChaCha8Rng, mean: Duration) -> Duration {
    let u: f64 = rng.gen::<f64>();
    let ps = -(1.0 - u).ln() * mean.as_ps() as f64;
    Duration::from_ps((ps as u64).max(1))
}

impl<F: CcFactory> Shard<F> {
    /// The connection and direction of stream flow `flow` (`true` for requests).
    #[inline]
    fn stream_of(sh: &Shared<F>, flow: usize) -> (usize, bool) {
        let k = flow - sh.nlisted;
        (k / 2, k.is_multiple_of(2))
    }

    /// Application `app`'s timer: the start of a closed-loop client, or an open-loop arrival.
    pub(crate) fn app_timer(&mut self, sh: &Shared<F>, app: usize) {
        let a = &sh.cfg.apps.apps[app];
        if self.now >= a.stop {
            return;
        }
        match a.arrivals {
            Arrivals::Closed { outstanding } => {
                for &c in &a.connections {
                    for _ in 0..outstanding {
                        self.submit(sh, c as usize);
                    }
                }
            }
            Arrivals::Open { mean_gap, pick } => {
                let st = &mut self.app_state[app];
                let mut c = a.connections[st.rng.gen_range(0..a.connections.len())];
                let gap = exp_gap(&mut st.rng, mean_gap);
                let next = Time(self.now.0.saturating_add(gap.as_ps()));
                if pick != Pick::Random {
                    let server = sh.cfg.apps.connections[c as usize].server;
                    let load = |x: u32| {
                        let st = &self.conns[x as usize];
                        match pick {
                            Pick::LeastBytes => st.pending_bytes,
                            _ => st.pending.len() as u64,
                        }
                    };
                    c = a
                        .connections
                        .iter()
                        .copied()
                        .filter(|&x| sh.cfg.apps.connections[x as usize].server == server)
                        .min_by_key(|&x| load(x))
                        .expect("the drawn connection qualifies");
                }
                let cap = sh.cfg.apps.max_pending.unwrap_or(crate::apps::MAX_PENDING_QUERIES);
                if self.app_state[app].pending >= cap {
                    self.counters.queries_refused += 1;
                } else {
                    self.submit(sh, c as usize);
                }
                if next < a.stop {
                    let node = a.host.0;
                    self.schedule(node, next, Event::AppTimer { app: app as u32 });
                }
            }
        }
    }

    /// Submits a query on connection `conn` (at its client).
    fn submit(&mut self, sh: &Shared<F>, conn: usize) {
        let app = &sh.cfg.apps.apps[sh.cfg.apps.connections[conn].app as usize];
        let st = &mut self.conns[conn];
        let size = app.query.draw(&mut st.query_rng);
        // Saturating, as the sender's byte count (`stream_append`).
        st.requested = st.requested.saturating_add(size);
        st.pending.push_back(Pending {
            submit: self.now,
            size,
            seq: st.submitted,
            end: st.requested,
            measured: self.now >= app.measure_from,
        });
        st.submitted += 1;
        st.pending_bytes = st.pending_bytes.saturating_add(size);
        self.app_state[sh.cfg.apps.connections[conn].app as usize].pending += 1;
        self.counters.queries_submitted += 1;
        self.stream_append(sh, sh.nlisted + 2 * conn, size);
    }

    /// Appends `bytes` to stream flow `flow` at its sender, starting the sender on first use.
    pub(crate) fn stream_append(&mut self, sh: &Shared<F>, flow: usize, bytes: u64) {
        let src = sh.flows[flow].src;
        let Slot::Host(h) = sh.place[src.idx()].slot else { unreachable!("a host") };
        let h = h as usize;
        match &mut self.tx[flow] {
            FlowTx::Roce(qp) => {
                if qp.cc.is_none() {
                    let m = &sh.meta[flow];
                    let init = FlowInit {
                        line_rate: qp.max_rate,
                        base_rtt: m.base_rtt,
                        bdp: m.bdp,
                        mtu: sh.cfg.nic.mtu,
                        size: u64::MAX,
                        seed: mix64(sh.cfg.seed ^ mix64(0x5eed_0000_0000 | flow as u64)),
                    };
                    qp.cc = Some(sh.factory.new_flow(&init));
                    qp.next_avail = self.now;
                    self.nic_join(h, flow);
                }
                let qp = super::transport::qp_mut(&mut self.tx, flow);
                qp.size = qp.size.saturating_add(bytes);
                // A paced stream that was idle may now be due before the NIC's pending wake-up
                // (armed for another queue pair): pull the wake-up earlier.
                let at = qp.next_avail;
                self.nic_touch(h, flow); // bytes are left again
                self.pull_wake(h, at);
                self.host_send(sh, h);
            }
            FlowTx::Tcp(_) => self.tcp_stream_append(sh, h, flow, bytes),
        }
    }

    /// Stream flow `flow`'s receiver holds `delivered` bytes in order: completes the messages
    /// that ended. Returns whether one did (a TCP receiver then ACKs at once).
    pub(crate) fn stream_delivered(&mut self, sh: &Shared<F>, flow: usize, delivered: u64) -> bool {
        let (conn, request) = Self::stream_of(sh, flow);
        let apps = &sh.cfg.apps;
        let app_idx = apps.connections[conn].app as usize;
        let app = &apps.apps[app_idx];
        let mut any = false;
        if request {
            // At the server: answer every complete query.
            while delivered >= self.conns[conn].req_rx.end {
                any = true;
                let st = &mut self.conns[conn];
                st.req_rx.advance(&app.query);
                let r = app.response.draw(&mut st.resp_rng);
                self.stream_append(sh, flow + 1, r);
            }
        } else {
            // At the client: every complete response completes the oldest pending query.
            while delivered >= self.conns[conn].resp_rx.end {
                any = true;
                let st = &mut self.conns[conn];
                let response = st.resp_rx.advance(&app.response);
                let Some(q) = st.pending.pop_front() else {
                    debug_assert!(false, "a response answers a pending query");
                    break;
                };
                st.pending_bytes -= q.size;
                self.app_state[app_idx].pending -= 1;
                // A RoCE server's NIC sends its ACKs of the query's packets that bring its
                // count to an ACK point before the answer.
                let ideal = sh.conn_paths[conn].ideal(
                    q.end - q.size,
                    q.size,
                    response,
                    &sh.cfg.nic,
                    sh.cfg.serialization,
                );
                self.queries.push(QueryRecord {
                    app: app_idx as u32,
                    conn: conn as u32,
                    seq: q.seq,
                    size: q.size,
                    response,
                    submit: q.submit,
                    qct: self.now - q.submit,
                    ideal,
                    measured: q.measured,
                });
                self.counters.queries_completed += 1;
                if matches!(app.arrivals, Arrivals::Closed { .. }) && self.now < app.stop {
                    self.submit(sh, conn);
                }
            }
        }
        any
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    /// Message ends saturate at the end of the stream's 64-bit offsets rather than wrap to a
    /// small offset that in-order delivery would then pass at once.
    #[test]
    fn message_ends_saturate_rather_than_wrap() {
        let dist = SizeDist::Fixed(u64::MAX / 2 + 1);
        let mut rx = MsgRx::new(ChaCha8Rng::seed_from_u64(1), &dist);
        assert_eq!(rx.end, u64::MAX / 2 + 1);
        assert_eq!(rx.advance(&dist), u64::MAX / 2 + 1);
        assert_eq!(rx.end, u64::MAX);
        rx.advance(&dist);
        assert_eq!(rx.end, u64::MAX);
    }
}
