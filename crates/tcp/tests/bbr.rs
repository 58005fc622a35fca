//! BBR v1 on the toy path (a bottleneck with a drop-tail buffer), against what its design fixes:
//! the bandwidth it measures, the queue its cwnd allows, and its ten-second PROBE_RTT.

mod common;

use common::*;
use dcsim_tcp::cca::{BbrConfig, BbrMode, CcaConfig};
use dcsim_tcp::TcpConfig;
use dcsim_types::{BitsPerSec, Time};

fn bbr() -> CcaConfig {
    CcaConfig::Bbr(BbrConfig)
}

fn mode_at(r: &Run, t: Time) -> Option<BbrMode> {
    let i = r.acks.partition_point(|a| a.t <= t);
    r.acks[..i].last().and_then(|a| a.bbr).map(|b| b.0)
}

/// Alone on a 20 Mb/s, 20 ms path with a buffer of ten BDPs (so nothing is lost): STARTUP
/// finds the rate within a few rounds, DRAIN empties the queue it built, and PROBE_BW then
/// keeps the link busy with the bandwidth estimate at the link's payload rate and cwnd at twice
/// the BDP plus its allowances: three 2-segment TSO bursts, rounding up to even, 2 more in the
/// 5/4 phase, and the ACK aggregation the delayed ACKs show (a few segments). So about one BDP
/// stays queued, where a loss-based flow would fill the buffer.
#[test]
fn alone_it_fills_the_link_with_about_one_bdp_queued() {
    let cfg = TcpConfig::linux();
    let mss = u64::from(cfg.mss);
    let frame = mss + u64::from(cfg.header_bytes);
    let mut path = Path::new(BitsPerSec::mbps(20), ms(20), 0);
    path.buffer = 10 * path.bdp();
    let mut o = Opts::new(cfg.clone(), bbr(), u64::MAX / 2, path.clone());
    o.until = at_ms(4000);
    let r = run(o);
    assert_eq!(r.drops, 0);

    let probe_bw = r
        .acks
        .iter()
        .find(|a| a.bbr.is_some_and(|b| b.0 == BbrMode::ProbeBw))
        .expect("reaches PROBE_BW")
        .t;
    assert!(probe_bw < at_ms(600), "PROBE_BW from {probe_bw:?}");
    assert!(r.acks.iter().any(|a| a.bbr.is_some_and(|b| b.0 == BbrMode::Drain)), "drains");
    assert_eq!(mode_at(&r, at_ms(4000)), Some(BbrMode::ProbeBw));

    // The delivery rate of payload at the bottleneck.
    let payload_rate = 20e6 / 8.0 * mss as f64 / frame as f64;
    let bw = r.acks.last().unwrap().bbr.unwrap().1 as f64;
    assert!((bw / payload_rate - 1.0).abs() < 0.03, "bw {bw:.0} B/s vs {payload_rate:.0}");
    let u = r.utilisation(at_ms(1000), at_ms(4000));
    assert!(u >= 0.97, "utilisation {u:.4}");

    // BDP in segments over the minimum RTT: propagation plus one frame's serialisation at the
    // bottleneck and at the access link.
    let min_rtt = 0.020 + frame as f64 * 8.0 / 20e6 * 1.1;
    let bdp = payload_rate / mss as f64 * min_rtt;
    for a in r.acks.iter().filter(|a| a.t > at_ms(1000)) {
        let cwnd = (a.cwnd / mss) as f64;
        assert!(
            cwnd >= 2.0 * bdp - 2.0 && cwnd <= 2.0 * bdp + 3.0 * 2.0 + 2.0 + 2.0 + 4.0,
            "cwnd {cwnd} segments at {:?}, BDP {bdp:.1}",
            a.t
        );
    }
}

/// After ten seconds without an RTT sample below the minimum, PROBE_RTT holds cwnd at 4
/// packets for at least 200 ms and one round trip; cwnd then returns to at least what it was
/// before (Linux restores the cwnd saved on entry).
#[test]
fn every_ten_seconds_it_probes_the_rtt_with_four_packets() {
    let cfg = TcpConfig::linux();
    let mss = u64::from(cfg.mss);
    let mut path = Path::new(BitsPerSec::mbps(10), ms(10), 0);
    path.buffer = 10 * path.bdp();
    let mut o = Opts::new(cfg, bbr(), u64::MAX / 2, path);
    o.until = at_ms(11_500);
    let r = run(o);
    let probing: Vec<_> =
        r.acks.iter().filter(|a| a.bbr.is_some_and(|b| b.0 == BbrMode::ProbeRtt)).collect();
    let (first, last) = (probing.first().expect("PROBE_RTT").t, probing.last().unwrap().t);
    assert!(first > at_ms(10_000) && first < at_ms(11_000), "PROBE_RTT at {first:?}");
    assert!(probing.iter().all(|a| a.cwnd <= 4 * mss), "cwnd capped at 4 packets");
    let before = r.acks.iter().rev().find(|a| a.t < first).unwrap().cwnd;
    let after = r.acks.iter().find(|a| a.t > last).expect("exits PROBE_RTT");
    assert!(after.t - first >= ms(200), "held {:?}", after.t - first);
    assert_eq!(after.bbr.unwrap().0, BbrMode::ProbeBw);
    assert!(after.cwnd >= before, "cwnd {} after, {} before", after.cwnd, before);
}
