//! Link failures and the RoCE retransmission timeout: a spine link failing under an incast with
//! random loss (every flow completes exactly once with a timeout, some stay unfinished without
//! one; identical on 1–4 threads), traffic leaving a failed link and coming back when it is
//! restored, the timeout's back-off and give-up in closed form, and nothing changing when no
//! event is scheduled.

use dcsim::core::cc::{CcFactory, NoCcFactory};
use dcsim::core::config::{Faults, FlowSpec, LinkEvent, RoceRto, SimConfig, WindowMode};
use dcsim::core::ids::{FlowId, LinkId, NodeId, PortNo};
use dcsim::core::network::{LinkSpec, Network};
use dcsim::core::units::{BitsPerSec, Duration, Time};
use dcsim::core::{Partition, Simulation};
use dcsim::hpcc::{HpccFactory, HpccParams};
use dcsim::topology::{self, Topology};

/// 4 leaves × 2 spines × 8 hosts at 100 Gb/s, 1 µs links: hosts 0–31, leaves 32–35, spines
/// 36–37.
fn fabric(loss: f64) -> Topology {
    let mut t = topology::leaf_spine(
        4,
        2,
        8,
        BitsPerSec::gbps(100),
        BitsPerSec::gbps(100),
        Duration::from_us(1),
    )
    .unwrap();
    for l in &mut t.links {
        l.loss = loss;
    }
    t
}

fn link_between(net: &Network, a: u32, b: u32) -> LinkId {
    let i = net
        .links()
        .iter()
        .position(|l| (l.a.0, l.b.0) == (a, b) || (l.a.0, l.b.0) == (b, a))
        .expect("a link");
    LinkId(i as u32)
}

/// The port of `node` on the link to `peer`.
fn port_to(net: &Network, node: u32, peer: u32) -> PortNo {
    let p = net.ports(NodeId(node)).iter().position(|p| p.peer == NodeId(peer)).unwrap();
    PortNo(p as u16)
}

/// 16 senders on leaves 33–34 (hosts 8–23), 200 KB each to host 0, all at t = 0, plus 8
/// background flows between leaves 33 and 35.
fn incast() -> Vec<FlowSpec> {
    let mut v: Vec<FlowSpec> = (0..16)
        .map(|i| FlowSpec {
            id: FlowId(i),
            src: NodeId(8 + i),
            dst: NodeId(0),
            size: 200_000,
            start: Time::ZERO,
            pg: 3,
            dport: 200,
        })
        .collect();
    for i in 0..8 {
        v.push(FlowSpec {
            id: FlowId(16 + i),
            src: NodeId(8 + i),
            dst: NodeId(24 + i),
            size: 300_000,
            start: Time::from_ns(10_000 * u64::from(i)),
            pg: 3,
            dport: 100,
        });
    }
    v
}

fn run<F: CcFactory + Clone>(
    t: &Topology,
    cfg: &SimConfig,
    flows: &[FlowSpec],
    f: &F,
    threads: usize,
) -> Simulation<F> {
    let net = t.validate().unwrap();
    let routes = topology::compute_routes(&net);
    let part = if threads > 1 {
        Partition::by_rack(&net, threads)
    } else {
        Partition::single(net.node_count())
    };
    let mut sim =
        Simulation::with_partition(net, routes, cfg.clone(), flows.to_vec(), f.clone(), part)
            .unwrap();
    sim.set_threads(threads);
    sim.run();
    sim
}

/// The spine link of leaf 32 (the incast receiver's leaf) fails at 30 µs, mid-incast.
fn spine_failure(t: &Topology, rto: Option<RoceRto>) -> SimConfig {
    let net = t.validate().unwrap();
    let mut cfg = SimConfig::default();
    cfg.nic.window = WindowMode::Variable;
    cfg.stop_time = Time::from_ns(200_000_000);
    cfg.nic.rto = rto;
    cfg.faults = Faults {
        events: vec![LinkEvent {
            at: Time::from_ns(30_000),
            link: link_between(&net, 32, 36),
            up: false,
        }],
        convergence: Duration::ZERO,
    };
    cfg
}

const RTO_1MS: RoceRto =
    RoceRto { timeout: Duration::from_ps(1_000_000_000), retries: 7, backoff: 1 };

#[test]
fn a_spine_failure_under_loss_completes_every_flow_exactly_once_with_a_timeout() {
    let t = fabric(0.001);
    let flows = incast();
    let hpcc = HpccFactory::from(HpccParams::default());
    let cfg = spine_failure(&t, Some(RTO_1MS));
    let seq = run(&t, &cfg, &flows, &hpcc, 1);
    let s = seq.summary();
    assert_eq!((s.flows_done, s.flows_unfinished), (flows.len(), 0));
    let c = seq.counters();
    assert!(c.drops_link_down > 0, "frames died with the link: {c:?}");
    assert!(c.timeouts > 0, "tail losses were repaired by timeouts: {c:?}");
    assert!(c.link_losses > 0);
    assert_eq!(c.flows_failed, 0);
    for f in &flows {
        // In-order, exactly-once delivery of every byte.
        assert_eq!(seq.flow_received(f.id), f.size, "flow {}", f.id);
        assert_eq!(seq.flow_acked(f.id), f.size, "flow {}", f.id);
    }
    // Every payload byte sent was delivered (duplicates included) or dropped.
    assert_eq!(c.data_bytes_sent, c.data_bytes_delivered + c.data_bytes_dropped);
    assert_eq!(seq.packets_in_flight(), 0);
    for threads in 2..=4 {
        let par = run(&t, &cfg, &flows, &hpcc, threads);
        assert!(par.shards() > 1);
        assert_eq!(par.flow_results(), seq.flow_results(), "{threads} threads");
        assert_eq!(par.counters(), seq.counters(), "{threads} threads");
        assert_eq!(par.summary(), seq.summary(), "{threads} threads");
    }
}

#[test]
fn without_a_timeout_the_flows_hit_by_the_failure_stay_unfinished() {
    let t = fabric(0.001);
    let flows = incast();
    let hpcc = HpccFactory::from(HpccParams::default());
    let sim = run(&t, &spine_failure(&t, None), &flows, &hpcc, 1);
    let s = sim.summary();
    assert!(s.flows_unfinished > 0, "{s:?}");
    assert!(s.flows_done > 0, "{s:?}");
    let c = sim.counters();
    assert!(c.drops_link_down > 0);
    assert_eq!((c.timeouts, c.flows_failed), (0, 0));
    // The unfinished ones did not give up: they were still waiting when events ran out.
    assert!(sim.flow_results().iter().all(|r| r.gave_up.is_none()));
}

/// Two leaves (hosts 0–3 on leaf 8, hosts 4–7 on leaf 9) and two spines (10, 11).
fn two_spines() -> Topology {
    topology::leaf_spine(
        2,
        2,
        4,
        BitsPerSec::gbps(100),
        BitsPerSec::gbps(100),
        Duration::from_us(1),
    )
    .unwrap()
}

#[test]
fn traffic_leaves_a_failed_link_and_returns_when_it_is_restored() {
    let t = two_spines();
    let net = t.validate().unwrap();
    let l = link_between(&net, 8, 10);
    // Enough flows from leaf 8 to leaf 9 that ECMP puts some on each spine.
    let flows: Vec<FlowSpec> = (0..16)
        .map(|i| FlowSpec {
            id: FlowId(i),
            src: NodeId(i % 4),
            dst: NodeId(4 + (i / 4) % 4),
            size: 20_000_000,
            start: Time::ZERO,
            pg: 3,
            dport: 100,
        })
        .collect();
    let mut cfg = SimConfig::default();
    cfg.nic.rto = Some(RTO_1MS);
    cfg.faults = Faults {
        events: vec![
            LinkEvent { at: Time::from_ns(200_000), link: l, up: false },
            LinkEvent { at: Time::from_ns(600_000), link: l, up: true },
        ],
        convergence: Duration::from_ns(5_000),
    };
    let routes = topology::compute_routes(&net);
    let mut sim = Simulation::new(net.clone(), routes, cfg, flows.clone(), NoCcFactory).unwrap();
    let (up0, up1) = (port_to(&net, 8, 10), port_to(&net, 8, 11));
    let data = |sim: &Simulation<NoCcFactory>, p| sim.port_stats(NodeId(8), p).tx_data_frames;
    let mut marks = Vec::new();
    // Before, during (after convergence), after the repair (after convergence).
    for t_ns in [200_000, 210_000, 600_000, 610_000, 1_000_000] {
        sim.run_until(Time::from_ns(t_ns));
        marks.push((data(&sim, up0), data(&sim, up1)));
    }
    let before = (marks[0].0, marks[0].1);
    let during = (marks[2].0 - marks[1].0, marks[2].1 - marks[1].1);
    let after = (marks[4].0 - marks[3].0, marks[4].1 - marks[3].1);
    assert!(before.0 > 0 && before.1 > 0, "ECMP used both spines before: {before:?}");
    assert_eq!(during.0, 0, "nothing on the failed link: {during:?}");
    assert!(during.1 > before.1, "the other spine carried everything: {during:?} {before:?}");
    assert!(after.0 > 0 && after.1 > 0, "both spines again after the repair: {after:?}");
    sim.run();
    let s = sim.summary();
    assert_eq!(s.flows_done, flows.len());
    assert!(sim.counters().drops_link_down > 0);
}

/// A 100 Gb/s, 1 µs, lossless link between nodes `a` and `b`.
fn link(a: u32, b: u32) -> LinkSpec {
    LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate: BitsPerSec::gbps(100),
        delay: Duration::from_us(1),
        loss: 0.0,
    }
}

/// Host 0 — switch 1 — host 2, 100 Gb/s, 1 µs.
fn line() -> (Network, dcsim::core::network::RoutingTable) {
    let net = Network::new(
        vec![
            dcsim::core::network::NodeKind::Host,
            dcsim::core::network::NodeKind::Switch,
            dcsim::core::network::NodeKind::Host,
        ],
        vec![link(0, 1), link(1, 2)],
    )
    .unwrap();
    let routes = topology::compute_routes(&net);
    (net, routes)
}

/// One flow of `size` bytes from host 0 to host 2 of [`line`], at time 0.
fn host0_to_host2(size: u64) -> FlowSpec {
    FlowSpec {
        id: FlowId(0),
        src: NodeId(0),
        dst: NodeId(2),
        size,
        start: Time::ZERO,
        pg: 3,
        dport: 100,
    }
}

#[test]
fn a_flow_behind_a_dead_link_backs_off_then_gives_up_at_the_closed_form_time() {
    let (net, routes) = line();
    let mut cfg = SimConfig::default();
    let rto = RoceRto { timeout: Duration::from_us(100), retries: 3, backoff: 2 };
    cfg.nic.rto = Some(rto);
    // The sender's own link dies as the flow starts and never comes back.
    cfg.faults.events = vec![LinkEvent { at: Time::ZERO, link: LinkId(0), up: false }];
    let flow = host0_to_host2(10_000);
    let mut sim = Simulation::new(net, routes, cfg, vec![flow], NoCcFactory).unwrap();
    sim.run();
    let r = sim.flow_results()[0];
    assert_eq!(r.fct, None);
    // Expiries at 100, 100+200, 300+400 µs (three retransmissions), then the fourth, 800 µs
    // after the third, gives up: 1.5 ms.
    assert_eq!(r.gave_up, Some(Time::from_ns(1_500_000)));
    let c = sim.counters();
    assert_eq!((c.timeouts, c.flows_failed), (4, 1));
    assert_eq!(c.drops_link_down, 1, "the first packet, sent as the link died");
    assert_eq!(rto.after(3), Duration::from_us(800));
}

/// A sender that gives up while it has nothing left to send (its last retransmission is out)
/// leaves its host's round robin with the others still served: debug builds check, at every
/// pass of the NIC scheduler, that each sender it skips is idle, so a finished sender that the
/// scheduler was not told about fails here. Host 0 — switch 1 — hosts 2 and 3; the link to
/// host 2 is down for good; a 10 KB flow to it gives up at the closed-form time while ten
/// long flows to host 3 (more senders than the scheduler reads one by one) keep the NIC busy
/// past it and complete.
#[test]
fn a_sender_that_gives_up_while_idle_leaves_the_round_robin() {
    use dcsim::core::network::NodeKind::{Host, Switch};
    let net =
        Network::new(vec![Host, Switch, Host, Host], vec![link(0, 1), link(1, 2), link(1, 3)])
            .unwrap();
    let routes = topology::compute_routes(&net);
    let mut cfg = SimConfig::default();
    cfg.nic.rto = Some(RoceRto { timeout: Duration::from_us(100), retries: 3, backoff: 2 });
    cfg.faults.events = vec![LinkEvent { at: Time::ZERO, link: LinkId(1), up: false }];
    let doomed = host0_to_host2(10_000);
    let mut flows = vec![doomed];
    flows.extend((1..=10).map(|i| FlowSpec {
        id: FlowId(i),
        dst: NodeId(3),
        size: 2_500_000,
        ..doomed
    }));
    let mut sim = Simulation::new(net, routes, cfg, flows, NoCcFactory).unwrap();
    sim.run();
    let a = sim.flow_results()[0];
    assert_eq!(a.fct, None);
    // Its first packet leaves within a frame of the start (the NIC takes the flows in turn):
    // expiries 100, 200 and 400 µs apart, then the fourth, 800 µs after the third, gives up.
    let gave_up = a.gave_up.expect("gave up");
    assert!(
        gave_up >= Time::from_ns(1_500_000) && gave_up < Time::from_ns(1_500_100),
        "{gave_up:?}"
    );
    // 25 MB at 100 Gb/s take 2 ms: the long flows were still sending when the first gave up.
    for i in 1..=10 {
        let fct = sim.flow_results()[i].fct.expect("the long flows complete");
        assert!(fct > Duration::from_us(1_900), "{fct:?}");
        assert_eq!(sim.flow_received(FlowId(i as u32)), 2_500_000);
    }
    let c = sim.counters();
    assert_eq!((c.timeouts, c.flows_failed), (4, 1));
}

#[test]
fn packets_lost_on_a_failed_link_are_repaired_by_one_timeout() {
    let (net, routes) = line();
    let mut cfg = SimConfig::default();
    cfg.nic.rto = Some(RoceRto { timeout: Duration::from_us(50), retries: 7, backoff: 1 });
    // The switch's link to the receiver is down from 5 µs to 20 µs: the tail of a 10-packet
    // flow dies on it, and nothing is left to NACK the gap.
    cfg.faults.events = vec![
        LinkEvent { at: Time::from_ns(1_500), link: LinkId(1), up: false },
        LinkEvent { at: Time::from_ns(20_000), link: LinkId(1), up: true },
    ];
    let flow = host0_to_host2(10_000);
    let mut sim = Simulation::new(net, routes, cfg.clone(), vec![flow], NoCcFactory).unwrap();
    sim.run();
    let r = sim.flow_results()[0];
    let c = *sim.counters();
    assert!(c.drops_link_down > 0);
    assert_eq!(c.timeouts, 1, "{c:?}");
    let fct = r.fct.expect("repaired");
    assert!(fct > Duration::from_us(50) && fct < Duration::from_us(70), "{fct:?}");
    assert_eq!(sim.flow_received(FlowId(0)), 10_000);

    // Without the timeout the flow never completes.
    cfg.nic.rto = None;
    let (net, routes) = line();
    let mut sim = Simulation::new(net, routes, cfg, vec![flow], NoCcFactory).unwrap();
    sim.run();
    assert_eq!(sim.flow_results()[0].fct, None);
}

#[test]
fn events_naming_no_link_are_refused() {
    let (net, routes) = line();
    let mut cfg = SimConfig::default();
    cfg.faults.events = vec![LinkEvent { at: Time::ZERO, link: LinkId(7), up: false }];
    let err = Simulation::new(net, routes, cfg, vec![], NoCcFactory).err().unwrap();
    assert!(err.to_string().contains("link 7 does not exist"), "{err}");
}

#[test]
fn progress_after_back_offs_restarts_the_timer_from_its_first_timeout() {
    let (net, routes) = line();
    let mut cfg = SimConfig::default();
    cfg.nic.rto = Some(RoceRto { timeout: Duration::from_us(100), retries: 10, backoff: 2 });
    // Everything sent before 650 µs dies on the switch's link to the receiver; the flow
    // recovers at its third timeout (700 µs), then a second outage from 705 µs to 2 ms cuts its
    // tail. Progress at ~705 µs resets the timeout to 100 µs: expiries at ~805, ~1005, ~1405
    // and ~2205 µs (not at the 1.5 ms the third back-off had armed).
    cfg.faults.events = vec![
        LinkEvent { at: Time::from_ns(1_500), link: LinkId(1), up: false },
        LinkEvent { at: Time::from_ns(650_000), link: LinkId(1), up: true },
        LinkEvent { at: Time::from_ns(705_000), link: LinkId(1), up: false },
        LinkEvent { at: Time::from_ns(2_000_000), link: LinkId(1), up: true },
    ];
    let flow = host0_to_host2(100_000);
    let mut sim = Simulation::new(net, routes, cfg, vec![flow], NoCcFactory).unwrap();
    sim.run();
    let c = sim.counters();
    assert_eq!(c.timeouts, 7, "{c:?}");
    let fct = sim.flow_results()[0].fct.expect("completes");
    assert!(fct > Duration::from_us(2_205) && fct < Duration::from_us(2_220), "{fct:?}");
}

#[test]
fn timeouts_are_checked_and_computed_without_looping() {
    let fixed = RoceRto { timeout: Duration::from_us(5), retries: u32::MAX, backoff: 1 };
    assert_eq!(fixed.after(u32::MAX), Duration::from_us(5));
    let doubling = RoceRto { backoff: 2, ..fixed };
    assert_eq!(doubling.after(3), Duration::from_us(40));
    assert_eq!(doubling.after(u32::MAX), RoceRto::MAX);
    let (net, routes) = line();
    let mut cfg = SimConfig::default();
    cfg.nic.rto = Some(RoceRto { timeout: Duration::ZERO, ..fixed });
    let err = Simulation::new(net, routes, cfg, vec![], NoCcFactory).err().unwrap();
    assert!(err.to_string().contains("nic.rto"), "{err}");
}
