//! HPCC's defining behaviour on a shared bottleneck: after the initial burst the queue drains
//! to near zero and stays there, the link runs close to the target utilisation eta, and
//! competing flows share it fairly. DCQCN, in the same setting, holds a far larger queue.

use dcsim::baselines::dcqcn::DcqcnFactory;
use dcsim::core::cc::CcFactory;
use dcsim::core::config::{FlowSpec, SimConfig, WindowMode};
use dcsim::core::ids::{FlowId, NodeId, PortNo};
use dcsim::core::units::{BitsPerSec, Duration, Time};
use dcsim::core::Simulation;
use dcsim::hpcc::HpccFactory;
use dcsim::topology;

/// Base RTT of the star: 2 hops of 1 us each way plus 1000 B serialization per hop.
const BASE_RTT_NS: u64 = 4160;
const ETA: f64 = 0.95;

/// Bottleneck queue, bottleneck tx bytes and per-flow acknowledged bytes, sampled every 1 us,
/// for an N-to-1 incast of `size` bytes per flow on a 100 Gb/s, 1 us star.
struct Trace {
    queue: Vec<u64>,
    tx: Vec<u64>,
    acked: Vec<Vec<u64>>,
}

fn incast<F: CcFactory>(
    n: usize,
    size: u64,
    factory: F,
    window: WindowMode,
    ack_hi: bool,
) -> Trace {
    let net =
        topology::star(n, BitsPerSec::gbps(100), Duration::from_us(1)).unwrap().validate().unwrap();
    let routes = topology::compute_routes(&net);
    let flows: Vec<FlowSpec> = (0..n)
        .map(|i| FlowSpec {
            id: FlowId(i as u32),
            src: NodeId(i as u32),
            dst: NodeId(n as u32),
            size,
            start: Time::ZERO,
            pg: 3,
            dport: 100,
        })
        .collect();
    let mut cfg = SimConfig::default();
    cfg.nic.window = window;
    cfg.nic.ack_high_prio = ack_hi;
    let mut sim = Simulation::new(net, routes, cfg, flows, factory).unwrap();
    // The switch is node n+1; its port towards the receiver is the last one (port n).
    let (switch, port) = (NodeId(n as u32 + 1), PortNo(n as u16));
    let mut tr = Trace { queue: vec![], tx: vec![], acked: vec![vec![]; n] };
    let mut t = Time::ZERO;
    while sim.summary().flows_unfinished > 0 {
        t += Duration::from_us(1);
        sim.run_until(t);
        tr.queue.push(sim.queue_bytes(switch, port));
        tr.tx.push(sim.port_stats(switch, port).tx_bytes);
        for (f, a) in tr.acked.iter_mut().enumerate() {
            a.push(sim.flow_acked(FlowId(f as u32)));
        }
    }
    assert_eq!(sim.counters().mmu_drops, 0);
    tr
}

impl Trace {
    /// The sample at which the first flow has finished.
    fn first_finish(&self, size: u64) -> usize {
        (0..self.queue.len()).find(|&i| self.acked.iter().any(|a| a[i] >= size)).unwrap()
    }
}

fn p99(v: &[u64]) -> u64 {
    let mut v = v.to_vec();
    v.sort_unstable();
    v[(v.len() as f64 * 0.99) as usize]
}

fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    s * s / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>())
}

/// The steady phase: from convergence until the first flow finishes. All n flows start at line
/// rate with a BDP window, so the first RTT puts n windows into the bottleneck queue; that
/// burst alone takes n base RTTs to serialize, and the senders' reaction to it reaches the
/// queue up to n base RTTs later. We allow 2n + 10 base RTTs (175 us for n = 16).
fn steady(n: usize, tr: &Trace, size: u64) -> (usize, usize) {
    let conv = ((2 * n as u64 + 10) * BASE_RTT_NS).div_ceil(1000) as usize;
    let end = tr.first_finish(size);
    assert!(end > 3 * conv, "the experiment must run well past convergence ({end} us)");
    (conv, end)
}

/// HPCC with the additive step the HPCC paper prescribes for N flows sharing a link,
/// W_AI = W_init (1 - eta) / N: a rate step of BDP (1 - eta) / N per base RTT.
fn hpcc_for(n: usize) -> HpccFactory {
    let ai = 100e9 * (1.0 - ETA) / n as f64;
    let mut f = HpccFactory::default();
    f.params.eta = ETA;
    f.params.rate_ai = Some(BitsPerSec(ai as u64));
    f
}

fn check_hpcc(n: usize, size: u64) -> u64 {
    let tr = incast(n, size, hpcc_for(n), WindowMode::Variable, false);
    let (conv, end) = steady(n, &tr, size);
    // Near-zero queue: HPCC holds u at eta < 1, so only the AI overshoot, BDP (1 - eta) per RTT
    // over all flows, plus packets that arrive together (one MTU of window overshoot and one
    // packet in service per sender, 2n x 1090 B) can be queued.
    let bound = (BASE_RTT_NS as f64 * 100e9 / 8e9 * (1.0 - ETA)) as u64 + 2 * n as u64 * 1090;
    let q = p99(&tr.queue[conv..end]);
    assert!(q <= bound, "{n}-to-1: steady p99 queue {q} B > {bound} B");
    // Utilisation over the steady phase, on the wire (INT headers included, as HPCC counts).
    let secs = (end - conv) as f64 * 1e-6;
    let util = (tr.tx[end] - tr.tx[conv]) as f64 * 8.0 / secs / 100e9;
    assert!(util >= ETA - 0.03, "{n}-to-1: utilisation {util:.3}");
    // Jain fairness of per-flow goodput over the second half of the steady phase.
    let mid = (conv + end) / 2;
    let shares: Vec<f64> = tr.acked.iter().map(|a| (a[end] - a[mid]) as f64).collect();
    let j = jain(&shares);
    assert!(j >= 0.98, "{n}-to-1: Jain fairness {j:.4}");
    eprintln!(
        "hpcc {n}-to-1: steady p99 queue {q} B (bound {bound}), utilisation {util:.3}, Jain {j:.4}"
    );
    q
}

#[test]
fn hpcc_two_to_one_converges_with_near_zero_queue() {
    check_hpcc(2, 10_000_000);
}

#[test]
fn hpcc_sixteen_to_one_holds_a_queue_far_below_dcqcn() {
    let size = 2_000_000;
    let hpcc = check_hpcc(16, size);
    let tr = incast(16, size, DcqcnFactory::default(), WindowMode::None, true);
    let (conv, end) = steady(16, &tr, size);
    let dcqcn = p99(&tr.queue[conv..end]);
    eprintln!("dcqcn 16-to-1: steady p99 queue {dcqcn} B");
    assert!(hpcc.max(1) * 5 <= dcqcn, "HPCC p99 {hpcc} B vs DCQCN p99 {dcqcn} B");
}
