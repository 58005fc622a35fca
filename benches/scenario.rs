//! Whole-scenario benchmarks: the calibration fabric (64 hosts, 4 leaves x 2 spines, 100/400 Gb/s,
//! 1 us links) carrying web-search-sized flows with Poisson arrivals at 30% load, with schemes
//! `none`, HPCC and DCQCN, and HPCC on two threads (two shards by rack). Reports simulated
//! events per second of wall time.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dcsim::baselines::dcqcn::DcqcnFactory;
use dcsim::core::cc::{CcFactory, NoCcFactory};
use dcsim::core::config::{FlowSpec, SimConfig, WindowMode};
use dcsim::core::ids::{FlowId, NodeId};
use dcsim::core::units::{BitsPerSec, Duration, Time};
use dcsim::core::{Partition, Simulation};
use dcsim::hpcc::HpccFactory;
use dcsim::topology as topo;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Web-search flow-size CDF (bytes, cumulative %), as in the reference's data file.
const WEBSEARCH: [(f64, f64); 12] = [
    (0.0, 0.0),
    (10e3, 15.0),
    (20e3, 20.0),
    (30e3, 30.0),
    (50e3, 40.0),
    (80e3, 53.0),
    (200e3, 60.0),
    (1e6, 70.0),
    (2e6, 80.0),
    (5e6, 90.0),
    (10e6, 97.0),
    (30e6, 100.0),
];

fn sample(rng: &mut ChaCha8Rng) -> u64 {
    let r = rng.gen::<f64>() * 100.0;
    for w in WEBSEARCH.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        if r <= y1 {
            return ((x0 + (x1 - x0) * (r - y0) / (y1 - y0)) as u64).max(1);
        }
    }
    30_000_000
}

/// Poisson flows from every host at `load` of its 100 Gb/s link over `window`.
fn flows(hosts: u32, load: f64, window: Duration, seed: u64) -> Vec<FlowSpec> {
    let mean = 1_711_250.0; // mean of the CDF above
    let ia_ns = mean * 8.0 / (100e9 * load) * 1e9;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut v: Vec<(u64, u32, u32, u64)> = Vec::new();
    for s in 0..hosts {
        let mut t = 0.0;
        loop {
            t += -(1.0 - rng.gen::<f64>()).ln() * ia_ns;
            if t > window.as_ns_f64() {
                break;
            }
            let mut d = rng.gen_range(0..hosts - 1);
            if d >= s {
                d += 1;
            }
            v.push((t as u64, s, d, sample(&mut rng)));
        }
    }
    v.sort();
    v.into_iter()
        .enumerate()
        .map(|(i, (t, s, d, size))| FlowSpec {
            id: FlowId(i as u32),
            src: NodeId(s),
            dst: NodeId(d),
            size,
            start: Time::from_ns(t),
            pg: 3,
            dport: 100,
        })
        .collect()
}

fn simulate<F: CcFactory + Clone>(
    flows: &[FlowSpec],
    f: &F,
    cfg: &SimConfig,
    threads: usize,
) -> u64 {
    let t = topo::leaf_spine(
        4,
        2,
        16,
        BitsPerSec::gbps(100),
        BitsPerSec::gbps(400),
        Duration::from_us(1),
    )
    .expect("valid");
    let net = t.validate().expect("valid");
    let routes = topo::compute_routes(&net);
    let part = Partition::by_rack(&net, threads);
    let mut sim =
        Simulation::with_partition(net, routes, cfg.clone(), flows.to_vec(), f.clone(), part)
            .expect("valid");
    sim.set_threads(threads);
    sim.run().events
}

fn case<F: CcFactory + Clone>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    flows: &[FlowSpec],
    f: F,
    cfg: SimConfig,
    threads: usize,
) {
    let events = simulate(flows, &f, &cfg, threads);
    eprintln!("{name}: {} flows, {events} events per run", flows.len());
    g.throughput(Throughput::Elements(events));
    g.bench_function(name, |b| b.iter(|| simulate(flows, &f, &cfg, threads)));
}

fn bench(c: &mut Criterion) {
    let f = flows(64, 0.3, Duration::from_us(1_000), 1);
    let mut g = c.benchmark_group("scenario");
    g.sample_size(10);
    case(&mut g, "leafspine64_websearch30_none", &f, NoCcFactory, SimConfig::default(), 1);
    let mut hpcc_cfg = SimConfig::default();
    hpcc_cfg.nic.window = WindowMode::Variable;
    case(&mut g, "leafspine64_websearch30_hpcc", &f, HpccFactory::default(), hpcc_cfg.clone(), 1);
    case(&mut g, "leafspine64_websearch30_hpcc_2threads", &f, HpccFactory::default(), hpcc_cfg, 2);
    let mut dcqcn_cfg = SimConfig::default();
    dcqcn_cfg.nic.ack_high_prio = true;
    case(&mut g, "leafspine64_websearch30_dcqcn", &f, DcqcnFactory::default(), dcqcn_cfg, 1);
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
