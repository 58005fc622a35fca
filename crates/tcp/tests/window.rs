//! Window dynamics against closed forms: NewReno sawtooth, Mathis throughput, slow start,
//! CUBIC's curve and Reno-friendly region, HyStart, DCTCP and Prague behind a step marker.

mod common;

use common::*;
use dcsim_tcp::cca::{
    CaState, Cca, CcaConfig, CubicConfig, DctcpConfig, HyStartMode, NewRenoConfig, PragueConfig,
};
use dcsim_tcp::{EcnMode, LossDetection, Pacing, Recovery, TcpConfig};
use dcsim_types::{BitsPerSec, Time};

fn newreno() -> CcaConfig {
    CcaConfig::NewReno(NewRenoConfig::default())
}

fn cubic(f: impl FnOnce(&mut CubicConfig)) -> CcaConfig {
    let mut c = CubicConfig::default();
    f(&mut c);
    CcaConfig::Cubic(c)
}

/// One NewReno flow (RFC 6582 recovery, ACK every segment) through a drop-tail buffer of one
/// BDP: cwnd saws between W/2 and W = BDP + buffer (in segments), one fast recovery per cycle,
/// no timeout, and the link stays busy because W/2 = BDP.
#[test]
fn newreno_sawtooth_with_a_bdp_buffer() {
    let cfg = TcpConfig { delack_segments: 1, quickack: 0, ..TcpConfig::dc_newreno() };
    let frame = u64::from(cfg.mss + cfg.header_bytes);
    let mut path = Path::new(BitsPerSec::mbps(200), ms(2), 0);
    path.buffer = path.bdp();
    let bdp_pkts = path.bdp() as f64 / frame as f64;
    let w = 2.0 * bdp_pkts; // BDP + buffer, in segments
    let mut o = Opts::new(cfg.clone(), newreno(), u64::MAX / 2, path);
    o.until = at_ms(2000);
    let r = run(o);
    let mss = u64::from(cfg.mss) as f64;

    // The slow-start overshoot may need a timeout (NewReno repairs one hole per RTT); the
    // sawtooth after it must not.
    assert!(r.acks.iter().all(|a| a.t < at_ms(600) || a.state != CaState::Loss), "no RTO");
    // The slow-start overshoot (10× faster access link) takes NewReno a few hundred ms to
    // repair; the sawtooth is measured after it.
    let recs: Vec<_> = r.recoveries().into_iter().filter(|&(s, _)| s > at_ms(600)).collect();
    assert!(recs.len() >= 5, "cycles: {}", recs.len());
    // cwnd just before each recovery (the peak) and ssthresh after it (the trough).
    for &(s, _) in &recs {
        let i = r.acks.partition_point(|a| a.t < s);
        let peak = r.acks[i - 1].cwnd as f64 / mss;
        let trough = r.acks[i].ssthresh as f64 / mss;
        assert!((peak - w).abs() <= 0.1 * w + 2.0, "peak {peak:.1} vs W {w:.1}");
        assert!(
            (trough - w / 2.0).abs() <= 0.1 * w / 2.0 + 2.0,
            "trough {trough:.1} vs W/2 {:.1}",
            w / 2.0
        );
    }
    // One recovery per cycle: the cycle is W/2 RTTs of one-segment growth; RTT grows with the
    // queue from 2 ms to 4 ms, so a cycle lasts W/2 · 3 ms on average.
    let span = (recs.last().unwrap().0 - recs[0].0).as_secs_f64();
    let cycle = span / (recs.len() - 1) as f64;
    let expect = w / 2.0 * 0.003;
    assert!((cycle / expect - 1.0).abs() < 0.25, "cycle {cycle:.4} s vs {expect:.4} s");
    let u = r.utilisation(at_ms(600), at_ms(2000));
    assert!(u >= 0.98, "utilisation {u:.4}");
}

/// Random loss p: throughput ≈ MSS/RTT · √(3/(2p)) (Mathis et al.), ACK every segment.
#[test]
fn random_loss_throughput_follows_the_square_root_law() {
    let cfg = TcpConfig { delack_segments: 1, quickack: 0, tlp: false, ..TcpConfig::linux() };
    let p = 0.002;
    let rtt = ms(10);
    let mut path = Path::new(BitsPerSec::gbps(1), rtt, 50_000_000);
    path.loss = p;
    path.seed = 7;
    let mut o = Opts::new(
        cfg.clone(),
        CcaConfig::NewReno(NewRenoConfig { halve_flight: false }),
        u64::MAX / 2,
        path,
    );
    o.until = at_ms(30_000);
    o.trace_acks = false;
    let r = run(o);
    let (t0, t1) = (at_ms(2_000), at_ms(30_000));
    let d = |t: Time| r.delivered_at[r.delivered_at.partition_point(|&(x, _)| x <= t) - 1].1;
    let thr = (d(t1) - d(t0)) as f64 / (t1 - t0).as_secs_f64();
    let mathis = f64::from(cfg.mss) / rtt.as_secs_f64() * (3.0 / (2.0 * p)).sqrt();
    assert!((thr / mathis - 1.0).abs() <= 0.2, "throughput {thr:.0} B/s vs Mathis {mathis:.0} B/s");
}

/// Slow start with an ACK per segment doubles cwnd every RTT: 10·2^k after k RTTs.
#[test]
fn slow_start_doubles_per_rtt() {
    let cfg = TcpConfig { delack_segments: 1, ..TcpConfig::linux() };
    let path = Path::new(BitsPerSec::gbps(100), ms(10), u64::MAX / 4);
    let r = run(Opts::new(cfg.clone(), newreno(), 10_000_000, path));
    let mss = u64::from(cfg.mss);
    for k in 0..6u64 {
        // Between the k-th and (k+1)-th ACK bursts.
        let t = at_ms(10 * k + 5);
        assert_eq!(r.cwnd_at(t) / mss, 10 << k, "after {k} RTTs");
    }
}

/// After a loss at W_max, CUBIC follows W(t) = C(t−K)³ + W_max: cwnd reaches W_max at t = K
/// (within one segment), concave before K and convex after.
#[test]
fn cubic_follows_the_cubic_curve_around_k() {
    let cfg = TcpConfig { delack_segments: 1, tlp: false, ..TcpConfig::linux() };
    let mss = u64::from(cfg.mss);
    let path = Path::new(BitsPerSec::gbps(1), ms(100), u64::MAX / 4);
    let mut o = Opts::new(cfg, cubic(|c| c.hystart = HyStartMode::Off), u64::MAX / 2, path);
    // Lose one segment once cwnd is about 300.
    let drop_seq = 400 * mss;
    o.drop = Some(Box::new(move |n, s| n == 0 && s.seq == drop_seq));
    o.until = at_ms(16_000);
    let r = run(o);
    let Cca::Cubic(c) = r.tx.cca() else { panic!() };
    let w_max = c.w_max_segments() as f64;
    let k = c.k_seconds();
    let epoch = c.epoch_start().expect("an epoch");
    assert_eq!(r.tx.stats().recoveries, 1);
    assert!(w_max > 250.0 && k > 4.0, "w_max {w_max} k {k}");
    let seg_at = |t: f64| {
        r.cwnd_at(epoch + dcsim_types::Duration::from_ps((t * 1e12) as u64)) as f64 / mss as f64
    };
    let at_k = seg_at(k);
    assert!((at_k - w_max).abs() <= 1.0, "cwnd at K {at_k} vs W_max {w_max}");
    // Second differences over quarters of K.
    let q = k / 4.0;
    let before: Vec<f64> = (0..4).map(|i| seg_at(q * f64::from(i))).collect();
    let after: Vec<f64> = (0..4).map(|i| seg_at(k + q * f64::from(i))).collect();
    for i in 0..2 {
        assert!(
            before[i + 1] - before[i] > before[i + 2] - before[i + 1],
            "concave before K: {before:?}"
        );
        assert!(after[i + 1] - after[i] < after[i + 2] - after[i + 1], "convex after K: {after:?}");
    }
}

/// At a small BDP the Reno-friendly estimate outgrows the cubic curve and sets cwnd; without
/// the friendly region cwnd stays near the cubic curve, far lower.
#[test]
fn cubic_reno_friendly_region_dominates_at_small_bdp() {
    let mut ends = Vec::new();
    for friendly in [true, false] {
        let cfg = TcpConfig { delack_segments: 1, tlp: false, ..TcpConfig::linux() };
        let mss = u64::from(cfg.mss);
        let path = Path::new(BitsPerSec::gbps(10), ms(1), u64::MAX / 4);
        let mut o = Opts::new(
            cfg,
            cubic(|c| {
                c.hystart = HyStartMode::Off;
                c.tcp_friendliness = friendly;
            }),
            u64::MAX / 2,
            path,
        );
        let drop_seq = 150 * mss;
        o.drop = Some(Box::new(move |n, s| n == 0 && s.seq == drop_seq));
        o.until = at_ms(300);
        let r = run(o);
        let Cca::Cubic(c) = r.tx.cca() else { panic!() };
        let cwnd = r.tx.cwnd() / mss;
        if friendly {
            // cwnd tracks the Reno estimate (it may lead it by the one-RTT lookahead).
            let est = c.reno_estimate_segments();
            assert!(cwnd + 2 >= est && cwnd <= est + 4, "cwnd {cwnd} vs Reno estimate {est}");
        }
        ends.push(cwnd);
    }
    assert!(ends[0] > ends[1] + 50, "friendly {} vs cubic-only {}", ends[0], ends[1]);
}

/// Linux HyStart ends slow start before a 4·BDP buffer overflows; plain slow start overflows
/// an 8·BDP one. HyStart++ (RFC 9406) detects later: its rounds begin with a window's first
/// segment, which finds the queue drained until cwnd is well above the BDP, and the round's
/// minimum RTT must then rise by 4 ms (here at cwnd 640, about 4·BDP); then it spends 5 rounds
/// in conservative slow start, growing a quarter as fast, so it gets a 16·BDP buffer.
#[test]
fn hystart_exits_slow_start_before_loss_on_a_deep_buffer() {
    let mut first_drop = Vec::new();
    for mode in [HyStartMode::Classic, HyStartMode::Plus, HyStartMode::Off] {
        let cfg = TcpConfig::linux();
        let mut path = Path::new(BitsPerSec::mbps(100), ms(20), 0);
        path.buffer = match mode {
            HyStartMode::Classic => 4,
            HyStartMode::Plus => 16,
            HyStartMode::Off => 8,
        } * path.bdp();
        let mut o = Opts::new(cfg, cubic(|c| c.hystart = mode), u64::MAX / 2, path);
        o.until = at_ms(1000);
        let r = run(o);
        let Cca::Cubic(c) = r.tx.cca() else { panic!() };
        // When slow start ended: the first ACK that left ssthresh finite.
        let exit =
            r.acks.iter().find(|a| a.ssthresh < u64::MAX).map(|a| a.t).expect("slow start ended");
        let drop = r.first_drop_at.unwrap_or(Time::MAX);
        if mode != HyStartMode::Off {
            assert!(c.hystart_found(), "{mode:?} found");
            assert!(exit < drop, "{mode:?}: exit at {exit:?} before the first loss at {drop:?}");
        } else {
            assert!(drop < exit, "plain slow start ends by loss");
        }
        first_drop.push(drop);
    }
}

/// The controller's α averaged over the ACKs after `from`.
fn mean_alpha(r: &Run, from: Time) -> f64 {
    let a: Vec<f64> = r.acks.iter().filter(|a| a.t > from).filter_map(|a| a.alpha).collect();
    assert!(!a.is_empty(), "α traced");
    a.iter().sum::<f64>() / a.len() as f64
}

fn step_marking(cca: CcaConfig, pacing: Pacing) -> (Run, f64) {
    let cfg = TcpConfig { ecn: EcnMode::Accurate, pacing, ..TcpConfig::linux() };
    let frame = u64::from(cfg.mss + cfg.header_bytes);
    let mut path = Path::new(BitsPerSec::gbps(10), us(200), 0);
    path.buffer = 20 * path.bdp();
    let k = 30 * frame;
    path.mark_threshold = Some(k);
    // W* = (C·RTT + K) / frame, in segments.
    let w_star = (path.bdp() + k) as f64 / frame as f64;
    let mut o = Opts::new(cfg, cca, u64::MAX / 2, path);
    o.until = at_ms(150);
    (run(o), w_star)
}

/// DCTCP behind a step-marking queue keeps the link busy and settles α near √(2/W*), the
/// DCTCP paper's fixed point (Alizadeh et al. 2010, §3.3), with W* = (C·RTT + K)/MSS. The
/// approximation assumes a fluid window and one full window of marks per cycle; here W* ≈ 195
/// segments, cwnd moves in whole segments, the queue only just exceeds K when marking starts
/// (so less than a window is marked) and, as in Linux, the ACK that ends CWR may start a second
/// reduction: we accept a factor of 2. α moves once per window, so it is taken as its mean over
/// the ACKs of the last 50 ms, not its last value.
#[test]
fn dctcp_step_marking_utilisation_and_alpha() {
    let (r, w) = step_marking(CcaConfig::Dctcp(DctcpConfig::default()), Pacing::Auto);
    assert!(matches!(r.tx.cca(), Cca::Dctcp(_)));
    let expect = (2.0 / w).sqrt();
    let alpha = mean_alpha(&r, at_ms(100));
    assert!(alpha > expect / 2.0 && alpha < expect * 2.0, "α {alpha:.3} vs √(2/W*) {expect:.3}");
    let u = r.utilisation(at_ms(100), at_ms(150));
    assert!(u >= 0.95, "utilisation {u:.3}");
    assert_eq!(r.drops, 0);
    assert!(r.tx.stats().ecn_reductions > 10);
}

/// Prague (RTT scaling off, since RTT independence needs 500 rounds) behind the same step
/// marker: paced, ECT(1), same α law and utilisation.
#[test]
fn prague_step_marking_utilisation_and_alpha() {
    let cca = CcaConfig::Prague(PragueConfig { rtt_scaling: false, ..PragueConfig::default() });
    let (r, w) = step_marking(cca, Pacing::Auto);
    assert!(r.tx.is_paced());
    assert!(matches!(r.tx.cca(), Cca::Prague(_)));
    let expect = (2.0 / w).sqrt();
    let alpha = mean_alpha(&r, at_ms(100));
    assert!(alpha > expect / 2.0 && alpha < expect * 2.0, "α {alpha:.3} vs √(2/W*) {expect:.3}");
    let u = r.utilisation(at_ms(100), at_ms(150));
    assert!(u >= 0.95, "utilisation {u:.3}");
    assert_eq!(r.drops, 0);
}

/// Classic ECN with CUBIC: one ×0.7 reduction per window of marks, CWR echoed, no loss.
#[test]
fn classic_ecn_reduces_once_per_window() {
    let cfg = TcpConfig { ecn: EcnMode::Classic, ..TcpConfig::linux() };
    let frame = u64::from(cfg.mss + cfg.header_bytes);
    let mut path = Path::new(BitsPerSec::mbps(100), ms(4), 0);
    path.buffer = 10 * path.bdp();
    path.mark_threshold = Some(10 * frame);
    let mut o = Opts::new(cfg, cubic(|_| {}), 20_000_000, path);
    o.until = at_ms(3000);
    let r = run(o);
    assert!(r.rx.is_complete());
    assert_eq!(r.drops, 0);
    let red = r.tx.stats().ecn_reductions;
    // A reduction needs a window of data: at most one per RTT (RTT ≥ 4 ms) over the transfer.
    let rtts = r.complete_at.unwrap().as_secs_f64() / 0.004;
    assert!(red > 3 && (red as f64) < rtts, "reductions {red} over {rtts:.0} RTTs");
    // ssthresh after each CWR entry is 0.7·cwnd before it.
    for pair in r.acks.windows(2) {
        if pair[1].state == CaState::Cwr && pair[0].state != CaState::Cwr {
            let before = pair[0].cwnd / 1448;
            assert_eq!(pair[1].ssthresh / 1448, (before * 717 / 1024).max(2));
        }
    }
    let _ = (LossDetection::Rack, Recovery::Sack);
}
