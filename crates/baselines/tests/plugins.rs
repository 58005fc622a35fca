//! The `CongestionControl` impls driven through `CcCtx` (what the core hands a scheme), and
//! whole simulations of a small incast with each scheme, checking that the core and the
//! schemes agree on the rate and that every flow finishes.

use std::sync::{Arc, Mutex};

use dcsim_baselines::{
    Dcqcn, DcqcnFactory, DcqcnParams, Dctcp, DctcpFactory, DctcpParams, Timely, TimelyFactory,
    TimelyParams,
};
use dcsim_core::cc::{CcCtx, CcFactory, CongestionControl, Feedback, FlowInit, TimerOp};
use dcsim_core::config::{EcnParams, FlowSpec, SimConfig, WindowMode};
use dcsim_core::ids::{FlowId, NodeId, PortNo};
use dcsim_core::network::{LinkSpec, Network, NodeKind, RoutingTable};
use dcsim_core::packet::{HeaderMode, IntStack};
use dcsim_core::units::{BitsPerSec, Bytes, Duration, Time};
use dcsim_core::Simulation;

const G100: BitsPerSec = BitsPerSec::gbps(100);

fn ctx(now: Time, snd_nxt: u64, snd_una: u64, size: u64, rate: BitsPerSec) -> CcCtx {
    CcCtx::new(now, snd_nxt, snd_una, size, G100, rate, 0)
}

fn ack(ack: u64, ecn: bool, int: &IntStack, ts_echo: Time) -> Feedback<'_> {
    Feedback { ack, nack: false, ecn, int, ts_echo, pint: 0 }
}

fn init(size: u64) -> FlowInit {
    FlowInit {
        line_rate: G100,
        base_rtt: Duration::from_us(8),
        bdp: 100_000,
        mtu: 1000,
        size,
        seed: 0,
    }
}

// ---------------------------------------------------------------------------------------------
// Through CcCtx

#[test]
fn dcqcn_ctx_first_cnp_arms_alpha_then_decrease_timer() {
    let f = DcqcnFactory::default();
    let mut cc = f.new_flow(&init(1_000_000));
    let int = IntStack::default();
    // Unmarked ACK: nothing.
    let mut c = ctx(Time::from_ns(5_000), 20_000, 1_000, 1_000_000, G100);
    cc.on_feedback(&mut c, &ack(1_000, false, &int, Time::ZERO));
    assert_eq!(c.requested_rate(), None);
    assert_eq!(c.timer_op(0), TimerOp::Keep);
    // Marked ACK: the two timers, no rate change.
    let mut c = ctx(Time::from_ns(10_000), 20_000, 2_000, 1_000_000, G100);
    cc.on_feedback(&mut c, &ack(2_000, true, &int, Time::ZERO));
    assert_eq!(c.requested_rate(), None);
    assert_eq!(c.timer_op(Dcqcn::ALPHA_TIMER), TimerOp::Set(Time::from_ns(11_000)));
    assert_eq!(c.timer_op(Dcqcn::DECREASE_TIMER), TimerOp::Set(Time::from_ns(14_001)));
    assert_eq!(c.timer_op(Dcqcn::INCREASE_TIMER), TimerOp::Keep);
    // The decrease timer: a plain overwrite of the rate (no re-timing), increase timer armed.
    let mut c = ctx(Time::from_ns(14_001), 20_000, 2_000, 1_000_000, G100);
    cc.on_timer(&mut c, Dcqcn::DECREASE_TIMER);
    assert_eq!(c.requested_rate(), Some((BitsPerSec::gbps(50), false)));
    assert_eq!(c.rate(), BitsPerSec::gbps(50));
    assert_eq!(c.timer_op(Dcqcn::DECREASE_TIMER), TimerOp::Set(Time::from_ns(18_001)));
    assert_eq!(c.timer_op(Dcqcn::INCREASE_TIMER), TimerOp::Set(Time::from_ns(314_001)));
    // An unknown slot is ignored.
    let mut c = ctx(Time::from_ns(15_000), 20_000, 2_000, 1_000_000, G100);
    cc.on_timer(&mut c, 3);
    assert_eq!(c.requested_rate(), None);
    assert!((0..4).all(|i| c.timer_op(i) == TimerOp::Keep));
}

#[test]
fn dcqcn_completing_ack_arms_no_timer() {
    // The reference's §2.4 quirk: a marked ACK that completes a flow that never saw a CNP
    // re-arms the timers after completion. Here it arms nothing.
    let mut cc = DcqcnFactory::default().new_flow(&init(3_000));
    let int = IntStack::default();
    let mut c = ctx(Time::from_ns(9_000), 3_000, 3_000, 3_000, G100);
    cc.on_feedback(&mut c, &ack(3_000, true, &int, Time::ZERO));
    assert!((0..4).all(|i| c.timer_op(i) == TimerOp::Keep));
    assert!(cc.cnp_seen(), "the state update itself still happens");
}

#[test]
fn timely_ctx_rtt_is_now_minus_echoed_timestamp() {
    let f = TimelyFactory::default();
    assert_eq!(f.header_mode(), HeaderMode::Timestamp);
    let mut cc = f.new_flow(&init(1_000_000));
    let int = IntStack::default();
    // First sample: RTT 30 us, recorded only.
    let mut c = ctx(Time::from_ns(130_000), 10_000, 1_000, 1_000_000, G100);
    cc.on_feedback(&mut c, &ack(1_000, false, &int, Time::from_ns(100_000)));
    assert_eq!(c.requested_rate(), None);
    assert_eq!(cc.last_rtt(), Duration::from_us(30));
    // Next window: RTT 1000 us > T_high: c = 0.6.
    let mut c = ctx(Time::from_ns(1_200_000), 20_000, 11_000, 1_000_000, G100);
    cc.on_feedback(&mut c, &ack(11_000, false, &int, Time::from_ns(200_000)));
    assert_eq!(c.requested_rate(), Some((BitsPerSec::gbps(60), false)));
    assert_eq!(cc.last_rtt(), Duration::from_us(1000));
}

#[test]
fn dctcp_ctx_uses_snd_nxt_from_the_context() {
    let mut cc = DctcpFactory::default().new_flow(&init(1_000_000));
    let int = IntStack::default();
    let mut c = ctx(Time::from_ns(10_000), 10_000, 1_000, 1_000_000, G100);
    cc.on_feedback(&mut c, &ack(1_000, false, &int, Time::ZERO));
    assert_eq!(c.requested_rate(), Some((G100, false)), "additive increase, capped");
    let mut c = ctx(Time::from_ns(10_100), 11_000, 2_000, 1_000_000, G100);
    cc.on_feedback(&mut c, &ack(2_000, true, &int, Time::ZERO));
    assert_eq!(c.requested_rate(), Some((BitsPerSec::gbps(50), false)));
    assert_eq!(cc.high_seq(), 11_000);
    // No assignment: no request.
    let mut c = ctx(Time::from_ns(10_200), 12_000, 3_000, 1_000_000, BitsPerSec::gbps(50));
    cc.on_feedback(&mut c, &ack(3_000, true, &int, Time::ZERO));
    assert_eq!(c.requested_rate(), None);
}

// ---------------------------------------------------------------------------------------------
// Whole simulations

/// Read access to a scheme's own idea of its rate.
trait OwnRate {
    fn own_rate(&self) -> BitsPerSec;
}
impl OwnRate for Dcqcn {
    fn own_rate(&self) -> BitsPerSec {
        self.rate()
    }
}
impl OwnRate for Timely {
    fn own_rate(&self) -> BitsPerSec {
        self.rate()
    }
}
impl OwnRate for Dctcp {
    fn own_rate(&self) -> BitsPerSec {
        self.rate()
    }
}

#[derive(Default, Debug)]
struct Log {
    callbacks: u64,
    timer_callbacks: u64,
    min_rate: Option<BitsPerSec>,
    mismatches: u64,
    retimes: u64,
    after_completion: u64,
}

/// Wraps a scheme and checks, at every callback, that the rate the core hands over is the one
/// the scheme last set, and records what it sets.
struct Checked<C> {
    inner: C,
    log: Arc<Mutex<Log>>,
}

impl<C: CongestionControl + OwnRate> Checked<C> {
    fn around(&mut self, ctx: &mut CcCtx, timer: bool, call: impl FnOnce(&mut C, &mut CcCtx)) {
        let mut log = self.log.lock().unwrap();
        log.callbacks += 1;
        log.timer_callbacks += u64::from(timer);
        if ctx.rate() != self.inner.own_rate() {
            log.mismatches += 1;
        }
        if timer && ctx.snd_una >= ctx.size {
            log.after_completion += 1;
        }
        call(&mut self.inner, ctx);
        if let Some((r, retime)) = ctx.requested_rate() {
            log.retimes += u64::from(retime);
            log.min_rate = Some(log.min_rate.map_or(r, |m| m.min(r)));
            if r != self.inner.own_rate() {
                log.mismatches += 1;
            }
        }
    }
}

impl<C: CongestionControl + OwnRate> CongestionControl for Checked<C> {
    fn on_feedback(&mut self, ctx: &mut CcCtx, fb: &Feedback<'_>) {
        self.around(ctx, false, |c, ctx| c.on_feedback(ctx, fb));
    }
    fn on_timer(&mut self, ctx: &mut CcCtx, id: usize) {
        self.around(ctx, true, |c, ctx| c.on_timer(ctx, id));
    }
}

struct CheckedFactory<F> {
    inner: F,
    log: Arc<Mutex<Log>>,
}

impl<F: CcFactory> CcFactory for CheckedFactory<F>
where
    F::Cc: OwnRate,
{
    type Cc = Checked<F::Cc>;
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn header_mode(&self) -> HeaderMode {
        self.inner.header_mode()
    }
    fn new_flow(&self, init: &FlowInit) -> Self::Cc {
        Checked { inner: self.inner.new_flow(init), log: self.log.clone() }
    }
}

/// Hosts 0..senders send `size` bytes each to host `senders` through one switch (100 Gb/s,
/// 1 µs links).
fn incast<F: CcFactory>(
    factory: F,
    senders: u32,
    size: u64,
    window: WindowMode,
    ecn: EcnParams,
) -> (Simulation<CheckedFactory<F>>, Arc<Mutex<Log>>)
where
    F::Cc: OwnRate,
{
    let hosts = senders + 1;
    let sw = NodeId(hosts);
    let mut kinds = vec![NodeKind::Host; hosts as usize];
    kinds.push(NodeKind::Switch);
    let links = (0..hosts)
        .map(|h| LinkSpec {
            a: NodeId(h),
            b: sw,
            rate: G100,
            delay: Duration::from_us(1),
            loss: 0.0,
        })
        .collect();
    let net = Network::new(kinds, links).expect("valid star");
    let routes = RoutingTable::from_fn(hosts as usize + 1, hosts as usize, |node, host| {
        if node == sw {
            vec![PortNo(host as u16)]
        } else if node.idx() == host {
            vec![]
        } else {
            vec![PortNo(0)]
        }
    });
    let mut cfg = SimConfig::default();
    cfg.nic.window = window;
    cfg.switch.ecn = vec![(G100, ecn)];
    let flows = (0..senders)
        .map(|s| FlowSpec {
            id: FlowId(s),
            src: NodeId(s),
            dst: NodeId(senders),
            size,
            start: Time::ZERO,
            pg: 3,
            dport: 200,
        })
        .collect();
    let log = Arc::new(Mutex::new(Log::default()));
    let f = CheckedFactory { inner: factory, log: log.clone() };
    let mut sim = Simulation::new(net, routes, cfg, flows, f).expect("valid inputs");
    sim.run();
    (sim, log)
}

fn red() -> EcnParams {
    EcnParams { kmin: Bytes(100_000), kmax: Bytes(400_000), pmax: 0.2 }
}

fn assert_sound<F: CcFactory>(sim: &Simulation<CheckedFactory<F>>, log: &Log)
where
    F::Cc: OwnRate,
{
    for r in sim.flow_results() {
        let fct = r.fct.unwrap_or_else(|| panic!("flow {:?} finished", r.id));
        assert!(fct >= r.ideal_fct);
    }
    let c = sim.counters();
    assert_eq!(c.data_bytes_dropped, 0);
    assert!(sim.is_quiescent());
    assert_eq!(log.mismatches, 0, "core and scheme agree on the rate: {log:?}");
    assert_eq!(log.retimes, 0, "baselines never re-time the next send: {log:?}");
    assert_eq!(log.after_completion, 0, "no timer fires after completion: {log:?}");
}

#[test]
fn dcqcn_incast_reacts_and_finishes() {
    let (sim, log) = incast(DcqcnFactory::default(), 4, 2_000_000, WindowMode::None, red());
    let log = log.lock().unwrap();
    assert_sound(&sim, &log);
    assert!(sim.counters().ecn_marks > 0);
    assert!(log.timer_callbacks > 0, "{log:?}");
    let min = log.min_rate.expect("DCQCN changed the rate");
    assert!(min < BitsPerSec::gbps(50), "4:1 incast cuts the rate: {min}");
    assert!(min >= DcqcnParams::default().min_rate);
}

#[test]
fn dcqcn_paper_with_window_finishes() {
    let f = DcqcnFactory { params: DcqcnParams::paper() };
    let (sim, log) = incast(f, 3, 1_000_000, WindowMode::Variable, red());
    assert_sound(&sim, &log.lock().unwrap());
}

#[test]
fn timely_incast_reacts_and_finishes() {
    for window in [WindowMode::None, WindowMode::Variable] {
        let (sim, log) = incast(TimelyFactory::default(), 4, 2_000_000, window, red());
        let log = log.lock().unwrap();
        assert_sound(&sim, &log);
        let min = log.min_rate.expect("TIMELY set the rate");
        assert!(min >= TimelyParams::default().min_rate);
        if window == WindowMode::None {
            // Without a window the queue (and the RTT) exceeds T_low; with a BDP window the
            // queue stays below 4 BDP (about 17 us here) and TIMELY only ever increases.
            assert!(min < G100, "queueing delay slows TIMELY down: {min}");
        } else {
            assert_eq!(min, G100);
        }
    }
}

#[test]
fn dctcp_incast_reacts_and_finishes() {
    // The reference's DCTCP marking (kmin = kmax, pmax = 1) with a threshold below the queue
    // that four BDP windows (about 52 KB each here) build up.
    let ecn = EcnParams { kmin: Bytes(50_000), kmax: Bytes(50_000), pmax: 1.0 };
    let (sim, log) = incast(DctcpFactory::default(), 4, 2_000_000, WindowMode::Variable, ecn);
    let log = log.lock().unwrap();
    assert_sound(&sim, &log);
    assert!(sim.counters().ecn_marks > 0);
    let min = log.min_rate.expect("DCTCP changed the rate");
    assert!(min < G100, "{min}");
    assert!(min >= DctcpParams::default().min_rate);
    assert_eq!(log.timer_callbacks, 0, "DCTCP uses no timers");
}
