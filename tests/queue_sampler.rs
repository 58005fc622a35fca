//! The periodic queue-length sampler (the reference's `QLEN_MON_*`) against the exact
//! time-weighted histogram on a long incast: the sampled mean backlog is the time-weighted mean
//! within a bin; every port takes every sample of the window; the samples do not depend on the
//! thread count.

use dcsim::core::cc::NoCcFactory;
use dcsim::core::config::{FlowSpec, SimConfig};
use dcsim::core::ids::{FlowId, NodeId, PortNo};
use dcsim::core::qmon::SamplerWindow;
use dcsim::core::units::{BitsPerSec, Duration, Time};
use dcsim::core::{Partition, Simulation};
use dcsim::topology;

/// 4 leaves x 2 spines x 8 hosts (hosts 0..32, leaves 32..36, spines 36 and 37), 100 Gb/s
/// host links and 400 Gb/s fabric links, and its routes.
fn fabric() -> (dcsim::core::network::Network, dcsim::core::network::RoutingTable) {
    let t = topology::leaf_spine(
        4,
        2,
        8,
        BitsPerSec::gbps(100),
        BitsPerSec::gbps(400),
        Duration::from_us(1),
    )
    .unwrap();
    let net = t.validate().unwrap();
    let routes = topology::compute_routes(&net);
    (net, routes)
}

fn run(threads: usize, window: SamplerWindow) -> Simulation<NoCcFactory> {
    run_with(threads, window, |_| {})
}

/// [`run`] with the monitor settings changed by `tweak`.
fn run_with(
    threads: usize,
    window: SamplerWindow,
    tweak: impl FnOnce(&mut dcsim::core::config::Monitor),
) -> Simulation<NoCcFactory> {
    // A 16-to-1 incast of 500 KB to host 0.
    let (net, routes) = fabric();
    let flows: Vec<FlowSpec> = (0..16)
        .map(|i| FlowSpec {
            id: FlowId(i),
            src: NodeId(8 + i),
            dst: NodeId(0),
            size: 500_000,
            start: Time::from_ns(1_000 * u64::from(i % 4)),
            pg: 3,
            dport: 200,
        })
        .collect();
    let mut cfg = SimConfig::default();
    cfg.monitor.queue_lengths = true;
    cfg.monitor.qlen_sampler = Some(window);
    tweak(&mut cfg.monitor);
    cfg.stop_time = Time::from_ns(2_000_000);
    let part = if threads > 1 {
        Partition::by_rack(&net, threads)
    } else {
        Partition::single(net.node_count())
    };
    let mut sim = Simulation::with_partition(net, routes, cfg, flows, NoCcFactory, part).unwrap();
    sim.set_threads(threads);
    sim.run();
    sim
}

#[test]
fn the_sampled_mean_is_the_time_weighted_mean_within_a_bin() {
    let w = SamplerWindow {
        start: Time::ZERO,
        end: Time::from_ns(2_000_000),
        interval: Duration::from_ns(100),
        bin: 1000,
    };
    let mut sim = run(1, w);
    let end = sim.summary().end_time;
    assert!(end < w.end, "the incast drains before the window ends: {end:?}");
    let stats = sim.queue_stats(w.end);
    let samples = sim.queue_samples();
    assert_eq!(stats.len(), samples.len());
    let mut busy = 0;
    for (q, s) in stats.iter().zip(&samples) {
        assert_eq!((q.node, q.port), (s.node, s.port));
        let n: u64 = s.counts.iter().sum();
        assert_eq!(n, w.samples(), "every port takes every sample");
        // A sample in bin b saw a backlog in [b, b + 1) KB: the sampled mean brackets the
        // time-weighted one within a bin (plus the sampling error, small at 100 ns).
        let lo: f64 =
            s.counts.iter().enumerate().map(|(b, &c)| b as f64 * 1000.0 * c as f64).sum::<f64>()
                / n as f64;
        let mean = q.stats.mean;
        assert!(
            mean >= lo - 50.0 && mean < lo + 1000.0 + 50.0,
            "switch {} port {}: histogram mean {mean:.0} B, samples in [{lo:.0}, {:.0})",
            q.node,
            q.port,
            lo + 1000.0
        );
        if mean > 100_000.0 {
            busy += 1;
        }
    }
    assert!(busy >= 1, "the incast built a queue somewhere");
}

#[test]
fn samples_do_not_depend_on_the_thread_count() {
    let w = SamplerWindow {
        start: Time::from_ns(5_000),
        end: Time::from_ns(300_000),
        interval: Duration::from_ns(250),
        bin: 4096,
    };
    let one = run(1, w).queue_samples();
    for threads in 2..=3 {
        assert_eq!(run(threads, w).queue_samples(), one, "{threads} threads");
    }
}

#[test]
fn monitoring_some_ports_gives_their_figures_unchanged_and_nothing_else() {
    let w = SamplerWindow {
        start: Time::ZERO,
        end: Time::from_ns(1_000_000),
        interval: Duration::from_ns(100),
        bin: 1000,
    };
    let mut all = run(1, w);
    let all_stats = all.queue_stats(all.summary().end_time);
    let all_samples = all.queue_samples();
    // Leaf 32 (the receiver's ToR) port 0 (towards host 0) and a spine port; listed twice and
    // out of order.
    let (tor, spine) = (NodeId(32), NodeId(36));
    let chosen = vec![(spine, PortNo(0)), (tor, PortNo(0)), (spine, PortNo(0))];
    let mut some = run_with(2, w, |m| {
        m.ports = Some(chosen.clone());
        m.per_class = true;
    });
    let stats = some.queue_stats(some.summary().end_time);
    let samples = some.queue_samples();
    let classes = some.class_queue_stats(some.summary().end_time);
    let keys: Vec<(NodeId, PortNo)> = stats.iter().map(|q| (q.node, q.port)).collect();
    assert_eq!(keys, vec![(tor, PortNo(0)), (spine, PortNo(0))]);
    for (q, s) in stats.iter().zip(&samples) {
        let a = all_stats.iter().find(|a| (a.node, a.port) == (q.node, q.port)).unwrap();
        assert_eq!(a, q, "the same figures as when every port is monitored");
        let b = all_samples.iter().find(|b| (b.node, b.port) == (s.node, s.port)).unwrap();
        assert_eq!(b, s);
    }
    assert!(stats[0].stats.max > 1_000_000, "the incast fills the receiver's port");
    // All the data is in class 3 (the flows' priority group): its histogram is the port's.
    let c3 = classes.iter().find(|c| (c.node, c.port, c.class) == (tor, PortNo(0), 3)).unwrap();
    assert_eq!(c3.stats, stats[0].stats);
    assert!(classes.iter().all(|c| keys.contains(&(c.node, c.port))));

    // A port that is not a switch egress port is refused.
    for bad in [(NodeId(0), PortNo(0)), (tor, PortNo(99))] {
        let (net, routes) = fabric();
        let mut cfg = SimConfig::default();
        cfg.monitor.queue_lengths = true;
        cfg.monitor.ports = Some(vec![bad]);
        let e = Simulation::new(net, routes, cfg, Vec::new(), NoCcFactory).err().unwrap();
        assert!(matches!(e, dcsim::core::SimError::MonitorPort { .. }), "{e}");
    }
}
