//! Applications that create traffic while the simulation runs: persistent connections and
//! request/response (RPC) clients and servers on them.
//!
//! A [`Connection`] joins a client host and a server host with two byte streams that live for
//! the whole run: requests (client → server) and responses (server → client), each carried by
//! the connection's transport (a RoCE queue pair driven by the run's congestion-control scheme,
//! or a TCP connection of a [`crate::config::TcpGroup`]). Streams are established before the
//! run starts (no handshake) and never close.
//!
//! An [`RpcApp`] is a client on one host that submits queries on some of its connections:
//! closed loop (a fixed number outstanding per connection, a new one as each completes) or
//! open loop (Poisson arrivals, each on a connection chosen uniformly). The server answers each
//! whole query with a response. A query completes when its response's last byte reaches the
//! client; its query completion time (QCT) runs from submission, so it includes waiting behind
//! earlier queries on the same connection.
//!
//! **Message boundaries.** A real RPC framework frames messages with a length header; here
//! both ends of a stream know each message's size because sizes are drawn from one random
//! stream per (connection, direction) that the receiving end replays in the same order. No
//! packet field carries them and the two ends share no state, so the parallel engine's
//! locality holds. A TCP receiver ACKs the last byte of every message at once: in a real
//! stack the application's reply (or next request) carries that ACK.

use std::fmt;
use std::sync::Arc;

use rand_chacha::ChaCha8Rng;

use crate::config::Transport;
use crate::ids::NodeId;
use crate::units::{Duration, Time};

/// Draws message sizes (bytes, at least 1) for an application.
///
/// Implemented outside the core (e.g. from a workload CDF by `dcsim-cli`); called once per
/// message, never per packet.
pub trait SizeSampler: Send + Sync + fmt::Debug {
    /// One size in bytes (at least 1).
    fn sample(&self, rng: &mut ChaCha8Rng) -> u64;
    /// The mean size in bytes (for load computations and summaries).
    fn mean(&self) -> f64;
    /// The mean of `f(size)` over the distribution (e.g. a message's bytes on the wire).
    fn mean_of(&self, f: &dyn Fn(u64) -> f64) -> f64;
}

/// A message-size distribution.
#[derive(Clone, Debug)]
pub enum SizeDist {
    /// Every message has this many bytes (at least 1).
    Fixed(u64),
    /// Sizes drawn by a sampler.
    Sampled(Arc<dyn SizeSampler>),
}

impl SizeDist {
    /// One size; a fixed size draws nothing from `rng`.
    #[inline]
    pub fn draw(&self, rng: &mut ChaCha8Rng) -> u64 {
        match self {
            SizeDist::Fixed(n) => *n,
            SizeDist::Sampled(s) => s.sample(rng).max(1),
        }
    }

    /// The mean size in bytes.
    pub fn mean(&self) -> f64 {
        match self {
            SizeDist::Fixed(n) => *n as f64,
            SizeDist::Sampled(s) => s.mean(),
        }
    }
}

impl PartialEq for SizeDist {
    fn eq(&self, other: &SizeDist) -> bool {
        match (self, other) {
            (SizeDist::Fixed(a), SizeDist::Fixed(b)) => a == b,
            (SizeDist::Sampled(a), SizeDist::Sampled(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// A persistent connection: two streams between a client and a server host.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Connection {
    /// The client host (sends requests).
    pub client: NodeId,
    /// The server host (sends responses).
    pub server: NodeId,
    /// The transport of both streams.
    pub transport: Transport,
    /// Priority class (1..=7) of both streams' packets.
    pub pg: u8,
    /// The application whose client uses it (index into [`Apps::apps`]).
    pub app: u32,
}

/// How a client submits queries.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Arrivals {
    /// Keep this many queries outstanding on each of the client's connections: all submitted
    /// at the start, a new one whenever one completes.
    Closed {
        /// Queries outstanding per connection (at least 1).
        outstanding: u32,
    },
    /// Poisson arrivals over all of the client's connections: each query goes to the server of
    /// a connection chosen uniformly at random, on a connection to that server chosen by
    /// `pick`.
    Open {
        /// Mean time between arrivals (> 0).
        mean_gap: Duration,
        /// Which of the client's connections to that server carries the query.
        pick: Pick,
    },
}

/// How an open-loop client chooses among its connections to one server.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Pick {
    /// The connection drawn (queries queue behind earlier ones on it).
    Random,
    /// The connection with the fewest queries pending, the first of equals (a connection pool
    /// that sends on an idle connection when it has one).
    #[default]
    LeastPending,
    /// The connection with the fewest query bytes pending, the first of equals (a pool that
    /// also keeps short queries away from connections busy with long ones).
    LeastBytes,
}

/// The most queries an open-loop client ([`RpcApp`]) holds submitted and unanswered: beyond it,
/// arrivals are refused and counted (`queries_refused` in
/// [`crate::results::Counters`]). A load the network cannot carry otherwise piles queries up
/// without bound: 1-byte queries at 99% of a NIC (whose ACKs of the answers do not fit beside
/// them) grew to 2^27 pending queries and aborted the run on a 5 GiB allocation. 2^22 of them
/// take about 160 MiB.
pub const MAX_PENDING_QUERIES: u64 = 1 << 22;

/// An RPC client on one host and the servers that answer it.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcApp {
    /// A label for outputs (several apps may share one, e.g. the NICs of one server).
    pub name: String,
    /// The client host.
    pub host: NodeId,
    /// The client's connections (indices into [`Apps::connections`]; all with `client ==
    /// host`), in a fixed order.
    pub connections: Vec<u32>,
    /// How queries are submitted.
    pub arrivals: Arrivals,
    /// Query (request) sizes.
    pub query: SizeDist,
    /// Response sizes.
    pub response: SizeDist,
    /// First submission.
    pub start: Time,
    /// No submission at or after this time (queries already submitted still complete).
    pub stop: Time,
    /// Queries submitted before this time are reported as warm-up
    /// ([`QueryRecord::measured`] is false).
    pub measure_from: Time,
}

/// Every application of a run and the connections they use.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Apps {
    /// The clients.
    pub apps: Vec<RpcApp>,
    /// The connections.
    pub connections: Vec<Connection>,
    /// Seed of the applications' random streams (arrivals, sizes, connection choice).
    pub seed: u64,
    /// The most unanswered queries an open-loop client holds before it refuses arrivals;
    /// `None`: [`MAX_PENDING_QUERIES`].
    pub max_pending: Option<u64>,
}

impl Apps {
    /// Whether the run has any application.
    pub fn is_empty(&self) -> bool {
        self.apps.is_empty()
    }
}

/// One completed query.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct QueryRecord {
    /// The application (index into [`Apps::apps`]).
    pub app: u32,
    /// The connection.
    pub conn: u32,
    /// The query's position on its connection (0, 1, …).
    pub seq: u64,
    /// Query bytes.
    pub size: u64,
    /// Response bytes.
    pub response: u64,
    /// Submission time.
    pub submit: Time,
    /// Query completion time: submission to the response's last byte at the client.
    pub qct: Duration,
    /// The QCT of the same query and response alone in an idle network, on the connection's
    /// paths, with the packets' own headers (see `Simulation::ideal_qct`).
    pub ideal: Duration,
    /// Submitted at or after the application's `measure_from`.
    pub measured: bool,
}

impl QueryRecord {
    /// `qct / ideal`.
    pub fn slowdown(&self) -> f64 {
        self.qct.as_ps() as f64 / self.ideal.as_ps().max(1) as f64
    }

    /// When the response's last byte arrived.
    pub fn completed(&self) -> Time {
        self.submit + self.qct
    }
}
