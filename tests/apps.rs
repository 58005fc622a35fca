//! Applications through the engine: RPC queries on persistent connections over TCP and RoCE,
//! their ideal QCT, Little's law, HPCC over TCP's probes, and determinism across thread counts.

use std::sync::{Arc, Mutex};

use dcsim::baselines::{DcqcnFactory, DcqcnParams};
use dcsim::core::apps::{Apps, Arrivals, Connection, Pick, QueryRecord, RpcApp, SizeDist};
use dcsim::core::cc::{CcFactory, FlowInit, NoCcFactory, ProbeControl, ProbeLaw, ProbeLawFactory};
use dcsim::core::config::{EcnParams, SimConfig, TcpGroup, Transport};
use dcsim::core::ids::NodeId;
use dcsim::core::network::{Network, RoutingTable};
use dcsim::core::packet::IntStack;
use dcsim::core::units::{BitsPerSec, Bytes, Duration, Time};
use dcsim::core::{Partition, Simulation};
use dcsim::hpcc::{HpccFactory, HpccParams, HpccProbeFactory};
use dcsim::tcp::{CcaConfig, TcpConfig};
use dcsim::topology as topo;

/// A leaf-spine of 2 leaves x 2 spines, 4 hosts per leaf at 25G, 100G fabric, 1 us links.
fn fabric() -> (Network, RoutingTable) {
    let t = topo::leaf_spine(
        2,
        2,
        4,
        BitsPerSec::gbps(25),
        BitsPerSec::gbps(100),
        Duration::from_us(1),
    )
    .unwrap();
    let net = t.validate().unwrap();
    let routes = topo::compute_routes(&net);
    (net, routes)
}

/// One application per client host with `conns` connections each to `server`.
fn apps(
    clients: &[(u32, Arrivals, &str)],
    server: u32,
    conns: usize,
    transport: Transport,
    query: u64,
    stop: Time,
    measure_from: Time,
) -> Apps {
    let mut a = Apps { seed: 7, ..Apps::default() };
    for &(host, arrivals, name) in clients {
        let app = a.apps.len() as u32;
        let mut ids = Vec::new();
        for _ in 0..conns {
            ids.push(a.connections.len() as u32);
            a.connections.push(Connection {
                client: NodeId(host),
                server: NodeId(server),
                transport,
                pg: 3,
                app,
            });
        }
        a.apps.push(RpcApp {
            name: name.to_string(),
            host: NodeId(host),
            connections: ids,
            arrivals,
            query: SizeDist::Fixed(query),
            response: SizeDist::Fixed(64),
            start: Time::ZERO,
            stop,
            measure_from,
        });
    }
    a
}

fn tcp_cfg(cca: CcaConfig, probe: Option<ProbeControl>) -> SimConfig {
    let mut cfg = SimConfig::default();
    cfg.switch.ecn_enabled = false;
    cfg.switch.pfc_enabled = false;
    cfg.tcp_groups =
        vec![TcpGroup { name: "rpc".into(), tcp: TcpConfig::dc_newreno(), cca, probe }];
    cfg
}

fn run<F: CcFactory>(
    cfg: SimConfig,
    factory: F,
    threads: usize,
) -> (Vec<QueryRecord>, Simulation<F>) {
    let (net, routes) = fabric();
    let part = if threads > 1 {
        Partition::by_rack(&net, threads)
    } else {
        Partition::single(net.node_count())
    };
    let mut sim = Simulation::with_partition(net, routes, cfg, Vec::new(), factory, part).unwrap();
    sim.set_threads(threads);
    // Stepped as the CLI does, taking queries as they complete.
    let mut out = Vec::new();
    let mut t = Time::ZERO;
    let end = ms(4);
    while t < end {
        t = (t + Duration::from_us(500)).min(end);
        sim.run_until(t);
        out.extend(sim.take_queries());
    }
    (out, sim)
}

fn lone(transport: Transport, query: u64) -> Apps {
    // One query, then nothing: stop before the first completes.
    let closed = Arrivals::Closed { outstanding: 1 };
    apps(&[(0, closed, "one")], 7, 1, transport, query, Time::from_ns(1), Time::ZERO)
}

#[test]
fn a_lone_query_takes_exactly_its_ideal_time_over_tcp_and_roce() {
    for size in [1, 4096, 14_600] {
        let mut cfg = tcp_cfg(CcaConfig::NewReno(Default::default()), None);
        cfg.apps = lone(Transport::Tcp(0), size);
        let (q, _) = run(cfg, NoCcFactory, 1);
        assert_eq!(q.len(), 1, "one query");
        assert_eq!(q[0].qct, q[0].ideal, "TCP {size} B: slowdown {}", q[0].slowdown());

        let mut cfg = SimConfig::default();
        cfg.switch.ecn.push((
            BitsPerSec::gbps(25),
            EcnParams { kmin: Bytes(100_000), kmax: Bytes(400_000), pmax: 0.2 },
        ));
        cfg.apps = lone(Transport::Roce, size);
        let dcqcn = DcqcnFactory::from(DcqcnParams::default());
        let (q, _) = run(cfg.clone(), dcqcn, 1);
        assert_eq!(q[0].qct, q[0].ideal, "DCQCN {size} B: slowdown {}", q[0].slowdown());
        // HPCC's packets carry INT: the ideal counts the same headers.
        let (q, sim) = run(cfg, HpccFactory::from(HpccParams::default()), 1);
        assert_eq!(q[0].qct, q[0].ideal, "HPCC {size} B: slowdown {}", q[0].slowdown());
        assert_eq!(sim.ideal_qct(0, size, 64), q[0].ideal);
    }
    // HPCC over TCP: the probe follows the burst, so a lone query is not delayed by it.
    let probe = ProbeControl(Arc::new(HpccProbeFactory { params: HpccParams::default() }));
    let mut cfg = tcp_cfg(CcaConfig::External, Some(probe));
    cfg.apps = lone(Transport::Tcp(0), 4096);
    let (q, sim) = run(cfg, NoCcFactory, 1);
    assert_eq!(q[0].qct, q[0].ideal, "HPCC-TCP: slowdown {}", q[0].slowdown());
    assert_eq!(sim.counters().tcp_probes, 2, "one probe after each burst: query and answer");
}

/// A query whose last packet is short: the server NIC's ACK of it waits behind the ACK of the
/// packet before (still on the wire when the short packet has arrived), and the answer behind
/// both; the ideal QCT counts that chain, so a lone query still takes exactly its ideal.
#[test]
fn a_lone_roce_query_whose_last_ack_queues_takes_its_ideal() {
    for size in [1001, 1010, 1060, 2001, 3001, 7001, 1000, 2500] {
        let mut cfg = SimConfig::default();
        cfg.switch.ecn_enabled = false;
        cfg.apps = lone(Transport::Roce, size);
        let (q, sim) = run(cfg, NoCcFactory, 1);
        assert_eq!(q.len(), 1, "one query");
        assert_eq!(q[0].qct, q[0].ideal, "{size} B: slowdown {}", q[0].slowdown());
        assert_eq!(sim.ideal_qct(0, size, 64), q[0].ideal);
    }
}

/// A RoCE receiver ACKs only at its ACK points (`ack_interval`, multiples of `chunk`), and the
/// server's answer waits behind that ACK only where there is one: one query at a time, each
/// takes exactly its ideal, below the first ACK point, at a chunk multiple and past
/// `ack_interval` alike (until the client's own ACKs of the answers start to go first).
#[test]
fn lone_roce_queries_take_their_ideal_whether_or_not_their_last_packet_is_acked() {
    let mut cfg = SimConfig::default();
    cfg.switch.ecn_enabled = false;
    cfg.nic.ack_interval = 1500;
    cfg.nic.chunk = 400;
    // 100 B queries: the stream's count reaches 400, 800 and 1200 (chunk multiples, ACKed),
    // then 1500 (ACKed from then on); the others are not ACKed.
    let closed = Arrivals::Closed { outstanding: 1 };
    let stop = Time::from_ns(200_000);
    cfg.apps = apps(&[(0, closed, "seq")], 7, 1, Transport::Roce, 100, stop, Time::ZERO);
    let (q, sim) = run(cfg, NoCcFactory, 1);
    assert!(q.len() > 20, "{} queries", q.len());
    let no_ack = sim.ideal_qct(0, 100, 64);
    let acks_at = |offset: u64| offset >= 1500 || offset.is_multiple_of(400);
    for r in &q {
        let end = 100 * (r.seq + 1);
        assert_eq!(r.ideal > no_ack, acks_at(end), "query {} (stream offset {end})", r.seq);
        // The client submits each query as the previous answer completes: where the client
        // ACKs that answer (the response stream's count at 64 B a query), the ACK leaves
        // first, so the query is not quite alone.
        if r.seq > 0 && acks_at(64 * r.seq) {
            assert!(r.qct > r.ideal, "query {}: behind the client's ACK", r.seq);
        } else {
            assert_eq!(r.qct, r.ideal, "query {}: slowdown {}", r.seq, r.slowdown());
        }
    }
    assert!(q.iter().filter(|r| r.qct == r.ideal).count() >= 20);
}

/// Little's law for a closed loop: throughput x mean QCT = queries in the system.
#[test]
fn closed_loop_clients_obey_littles_law() {
    for transport in [Transport::Tcp(0), Transport::Roce] {
        let closed = |n| Arrivals::Closed { outstanding: n };
        let from = ms(1);
        let mut cfg = tcp_cfg(CcaConfig::NewReno(Default::default()), None);
        cfg.stop_time = ms(4);
        cfg.apps = apps(
            &[(4, closed(16), "flood"), (5, closed(2), "victim")],
            0,
            8,
            transport,
            4096,
            ms(4),
            from,
        );
        let (q, sim) = run(cfg, NoCcFactory, 1);
        let c = sim.counters();
        assert!(c.queries_completed > 1000, "{c:?}");
        for (app, outstanding) in [(0u32, 16 * 8), (1, 2 * 8)] {
            // Queries submitted in [1 ms, 3 ms) and completed: their QCTs, and the rate.
            let w: Vec<&QueryRecord> =
                q.iter().filter(|r| r.app == app && r.submit >= from && r.submit < ms(3)).collect();
            let mean_s =
                w.iter().map(|r| r.qct.as_ps() as f64).sum::<f64>() / w.len() as f64 * 1e-12;
            let rate = w.len() as f64 / 2e-3;
            let l = rate * mean_s;
            let err = (l - outstanding as f64).abs() / outstanding as f64;
            assert!(
                err < 0.02,
                "{transport:?} app {app}: {rate:.0}/s x {mean_s:e} s = {l:.2}, not {outstanding}"
            );
        }
    }
}

/// Records every probe echo the law sees.
#[derive(Debug, Clone)]
struct Recorder {
    seen: Arc<Mutex<Vec<(Time, u16)>>>,
}

impl ProbeLaw for Recorder {
    fn on_probe(&mut self, now: Time, int: &IntStack) -> Option<u64> {
        self.seen.lock().unwrap().push((now, int.nhop));
        None
    }
    fn clone_box(&self) -> Box<dyn ProbeLaw> {
        Box::new(self.clone())
    }
}

#[derive(Debug)]
struct RecorderFactory {
    seen: Arc<Mutex<Vec<(Time, u16)>>>,
    /// The receiver holds the laws were given.
    holds: Arc<Mutex<Vec<u64>>>,
}

impl ProbeLawFactory for RecorderFactory {
    fn name(&self) -> &str {
        "recorder"
    }
    fn new_law(&self, init: &FlowInit, ack_hold: u64) -> (Box<dyn ProbeLaw>, u64) {
        self.holds.lock().unwrap().push(ack_hold);
        (Box::new(Recorder { seen: self.seen.clone() }), init.bdp)
    }
}

/// A probe per RTT per connection (not more), each with a record from every switch on the
/// path (host 0 to host 7 crosses leaf, spine, leaf).
#[test]
fn hpcc_tcp_probes_once_per_rtt_and_collect_every_hop() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let holds = Arc::new(Mutex::new(Vec::new()));
    let factory = RecorderFactory { seen: seen.clone(), holds: holds.clone() };
    let probe = ProbeControl(Arc::new(factory));
    let mut cfg = tcp_cfg(CcaConfig::External, Some(probe));
    cfg.stop_time = ms(2);
    let closed = Arrivals::Closed { outstanding: 8 };
    cfg.apps = apps(&[(0, closed, "c")], 7, 1, Transport::Tcp(0), 65_536, ms(2), Time::ZERO);
    let (q, sim) = run(cfg, NoCcFactory, 1);
    assert!(!q.is_empty());
    let seen = seen.lock().unwrap();
    let probes = sim.counters().tcp_probes;
    // The request stream probes; the response stream (64 B answers) too, after each answer.
    assert!(
        seen.len() as u64 <= probes && probes - seen.len() as u64 <= 2,
        "{probes} sent, {} echoed",
        seen.len()
    );
    assert!(seen.iter().all(|&(_, n)| n == 3), "every probe has 3 hop records");
    // dc-newreno's receiver ACKs every fourth segment: it may hold three.
    let tcp = TcpConfig::dc_newreno();
    let hold = u64::from(tcp.delack_segments - 1) * u64::from(tcp.mss);
    let holds = holds.lock().unwrap();
    assert!(!holds.is_empty() && holds.iter().all(|&h| h == hold), "{holds:?}, not {hold}");
    // The busy request stream: echoes at least one base RTT apart (about 9 us here) and, over
    // 2 ms, about one per RTT.
    let srtt_floor = Duration::from_us(8);
    let mut last: Option<Time> = None;
    let mut close = 0;
    for &(t, _) in seen.iter() {
        if let Some(l) = last {
            if t - l < srtt_floor {
                close += 1;
            }
        }
        last = Some(t);
    }
    // Two streams probe independently; their echoes may interleave closely, not one stream's.
    assert!(close * 2 <= seen.len(), "{close} of {} echoes closer than an RTT", seen.len());
    assert!(seen.len() > 50, "about one probe per RTT over 2 ms: {}", seen.len());
}

#[test]
fn queries_are_identical_on_one_and_several_threads() {
    let go = |threads: usize, transport: Transport| {
        let closed = |n| Arrivals::Closed { outstanding: n };
        let open = Arrivals::Open { mean_gap: Duration::from_us(3), pick: Pick::Random };
        let mut cfg = tcp_cfg(CcaConfig::Cubic(Default::default()), None);
        cfg.apps = apps(
            &[(4, closed(8), "a"), (1, open, "b"), (6, closed(1), "c")],
            0,
            4,
            transport,
            20_000,
            ms(3),
            Time::ZERO,
        );
        let (q, sim) = run(cfg, NoCcFactory, threads);
        assert!(threads == 1 || sim.shards() > 1, "{threads} threads: {} shards", sim.shards());
        (q, *sim.counters())
    };
    for transport in [Transport::Tcp(0), Transport::Roce] {
        let (a, ca) = go(1, transport);
        assert!(a.len() > 500, "{}", a.len());
        for threads in [2, 3] {
            let (b, cb) = go(threads, transport);
            assert_eq!(a, b, "{transport:?}: {threads} threads");
            assert_eq!(ca, cb);
        }
    }
}

/// The NIC scheduler skips the senders it has found idle (connections between messages):
/// reading every sender on every pass (as it did before it kept candidates), or only its
/// candidates even on hosts with a few senders, gives the same run, on one thread or two.
/// Sixty-four connections into one server, sixteen from each client, through a small lossy
/// buffer: TCP's timers and fast retransmits, and RoCE's NACKs, rewinds and timeouts, all end
/// a sender's idleness.
#[test]
fn skipping_idle_senders_changes_nothing() {
    use dcsim::core::config::RoceRto;
    for transport in [Transport::Tcp(0), Transport::Roce] {
        let go = |dense: usize, threads: usize| {
            // One query at a time per RoCE client, so that a NACK often finds its queue pair
            // with every byte sent (idle) and its rewind has to end that.
            let outstanding = if transport == Transport::Roce { 1 } else { 4 };
            let closed = Arrivals::Closed { outstanding };
            let mut cfg = tcp_cfg(CcaConfig::NewReno(Default::default()), None);
            cfg.switch.egress_cap = Some(Bytes(48 << 10));
            cfg.nic.rto =
                Some(RoceRto { timeout: Duration::from_us(200), retries: 1000, backoff: 1 });
            cfg.stop_time = ms(6);
            let clients = [(4, closed, "a"), (5, closed, "b"), (6, closed, "c"), (7, closed, "d")];
            cfg.apps = apps(&clients, 0, 16, transport, 30_000, ms(6), Time::ZERO);
            let (net, routes) = fabric();
            let part = if threads > 1 {
                Partition::by_rack(&net, threads)
            } else {
                Partition::single(net.node_count())
            };
            let mut sim =
                Simulation::with_partition(net, routes, cfg, Vec::new(), NoCcFactory, part)
                    .unwrap();
            sim.set_threads(threads);
            sim.set_nic_dense_scan(dense);
            sim.run();
            (sim.take_queries(), *sim.counters())
        };
        let (q, c) = go(8, 1); // the default
        assert!(c.queries_completed > 100 && c.mmu_drops > 0, "{transport:?}: {c:?}");
        match transport {
            Transport::Tcp(_) => assert!(c.tcp_retransmits > 0 && c.timeouts > 0, "{c:?}"),
            Transport::Roce => assert!(c.nacks_sent > 0, "{c:?}"),
        }
        for (dense, threads) in [(0, 1), (usize::MAX, 1), (8, 2), (0, 2)] {
            let (q2, c2) = go(dense, threads);
            assert_eq!(q, q2, "{transport:?}, dense scan up to {dense}, {threads} threads");
            assert_eq!(c, c2, "{transport:?}, dense scan up to {dense}, {threads} threads");
        }
    }
}

fn ms(n: u64) -> Time {
    Time::from_ns(n * 1_000_000)
}

/// Inputs the library used to take and then overflow or exhaust memory on are refused by
/// `Simulation::new`, naming what is wrong (the CLI has the same bounds, with file and line).
#[test]
fn absurd_magnitudes_are_refused_before_the_run() {
    use dcsim::core::config::RoceRto;
    use dcsim::core::qmon::SamplerWindow;
    use dcsim::core::SimError;
    let build = |cfg: SimConfig| {
        let (net, routes) = fabric();
        Simulation::new(net, routes, cfg, Vec::new(), NoCcFactory).map(|_| ())
    };
    // 8 connections x 1,250,001 outstanding queries: one over the run's limit; one under, fine.
    for (outstanding, ok) in [(1_250_001u32, false), (1_250_000, true)] {
        let mut cfg = tcp_cfg(CcaConfig::NewReno(Default::default()), None);
        let closed = Arrivals::Closed { outstanding };
        cfg.apps = apps(&[(4, closed, "flood")], 0, 8, Transport::Roce, 4096, ms(4), ms(0));
        match build(cfg) {
            Ok(()) => assert!(ok, "{outstanding} outstanding queries were taken"),
            Err(e) => {
                assert!(!ok, "{outstanding}: {e}");
                assert!(e.to_string().contains("10000000"), "{e}");
            }
        }
    }
    let too_large = |cfg: SimConfig, field: &str| match build(cfg) {
        Err(SimError::TooLarge { field: f, .. }) => assert_eq!(f, field),
        other => panic!("{field}: {other:?}"),
    };
    let mut cfg = SimConfig::default();
    cfg.nic.nack_interval = Duration::from_ps(u64::MAX);
    too_large(cfg, "nic.nack_interval");
    let mut cfg = SimConfig::default();
    cfg.nic.rto = Some(RoceRto { timeout: Duration::from_ps(u64::MAX), retries: 3, backoff: 2 });
    too_large(cfg, "nic.rto");
    // 1-byte bins of a 32 MiB buffer: 32 Mi counters per monitored port.
    let mut cfg = SimConfig::default();
    cfg.switch.buffer = Bytes(32 << 20);
    cfg.monitor.qlen_sampler = Some(SamplerWindow {
        start: Time::ZERO,
        end: ms(1),
        interval: Duration::from_ns(100),
        bin: 1,
    });
    too_large(cfg, "monitor.qlen_sampler bins (switch.buffer / bin)");
}

/// An open-loop load the network cannot carry (1-byte queries every 10 ns from one 25 Gb/s
/// client, the answers' ACKs beside them) piles queries up at the client without bound: it
/// grew to 2^27 of them and aborted a run on a 5 GiB allocation. Beyond `max_pending`
/// unanswered queries the client refuses arrivals and counts them, and the pile stops there.
#[test]
fn an_overloaded_open_loop_client_refuses_arrivals_beyond_its_pending_bound() {
    let run = |cap: Option<u64>| {
        let mut cfg = SimConfig::default();
        cfg.switch.ecn_enabled = false;
        let open = Arrivals::Open { mean_gap: Duration::from_ns(10), pick: Pick::Random };
        cfg.apps = apps(&[(4, open, "flood")], 0, 2, Transport::Roce, 1, ms(1), ms(0));
        cfg.apps.max_pending = cap;
        cfg.stop_time = ms(1);
        let (net, routes) = fabric();
        let mut sim = Simulation::new(net, routes, cfg, Vec::new(), NoCcFactory).unwrap();
        sim.run();
        *sim.counters()
    };
    let free = run(None);
    assert_eq!(free.queries_refused, 0);
    let piled = free.queries_submitted - free.queries_completed;
    assert!(piled > 10_000, "the load is more than the network carries: {piled} unanswered");
    let capped = run(Some(1000));
    assert!(capped.queries_refused > 10_000, "{capped:?}");
    assert!(capped.queries_submitted - capped.queries_completed <= 1000, "{capped:?}");
    // Every arrival is either submitted or refused.
    assert_eq!(capped.queries_submitted + capped.queries_refused, free.queries_submitted);
}
