//! The receive window (Linux flow control and autotuning) against closed forms: a buffer that
//! cannot grow bounds the flight to its window and the throughput to a window per RTT; one that
//! autotunes keeps ahead of slow start, and ACKs each segment that grows it at once.

mod common;

use common::*;
use dcsim_tcp::cca::{CcaConfig, CubicConfig, NewRenoConfig};
use dcsim_tcp::TcpConfig;
use dcsim_types::BitsPerSec;

fn newreno() -> CcaConfig {
    CcaConfig::NewReno(NewRenoConfig::default())
}

/// With `tcp_rmem[2]` equal to `tcp_rmem[1]` (128 KiB), the window never grows past its first
/// offer: 65 536 B of space less one 1 448 B segment in reserve, 64 088 B (a multiple of the
/// window scale's 4 B unit: scale 2 covers `net.core.rmem_max`, 212 992 B). No segment is ever
/// sent beyond `snd_una` plus the SYN's edge (64 240 B); on a 1 Gb/s path of 20 ms the flow gets
/// one window per round trip, within 5% of `bytes / 64 088 × RTT`, where without flow control it
/// needs under a fifth of that.
#[test]
fn a_buffer_that_cannot_grow_bounds_the_flight_to_its_window() {
    let cfg = TcpConfig { rmem_max: 131_072, ..TcpConfig::linux() };
    let bytes = 8_000_000u64;
    let path = Path::new(BitsPerSec::gbps(1), ms(20), 100_000_000);
    let r = run(Opts::new(cfg.clone(), newreno(), bytes, path.clone()));
    assert!(r.rx.is_complete());
    assert_eq!(r.rx.window_state(), Some((64_088, 64_088, 131_072)));
    // Every new segment fits the window: at most 64 240 B above the latest snd_una.
    for s in r.sent.iter().filter(|s| s.nth == 0) {
        let una = r.acks.iter().take_while(|a| a.t <= s.t).last().map_or(0, |a| a.snd_una);
        assert!(s.seq + u64::from(s.len) <= una + 64_240, "{} sent above {una} + window", s.seq);
    }
    let fct = r.complete_at.unwrap().as_secs_f64();
    let expect = bytes as f64 / 64_088.0 * 0.020;
    assert!((fct / expect - 1.0).abs() < 0.05, "FCT {fct:.3} s vs {expect:.3} s");
    let free = run(Opts::new(TcpConfig { rwnd: false, ..cfg }, newreno(), bytes, path));
    let fct_free = free.complete_at.unwrap().as_secs_f64();
    assert!(fct_free < fct / 5.0, "unlimited {fct_free:.3} s vs {fct:.3} s");
}

/// The worked example of a Linux 6.1 receiver with default buffers: a 1 MB response over
/// 160 ms at 50 Mb/s. Autotuning raises the clamp once per receiver RTT, after a period that
/// read more than the last, and the window grows two segments per segment: slow start is
/// never held back (the completion time is that of an unlimited window, within a millisecond),
/// the window grew past the whole response (below the clamp, whose last step came late), the
/// receiver's RTT estimate is the path's plus its queue, and the segments that grew it
/// were ACKed at once, so the receiver sent more ACKs than one per two segments.
#[test]
fn autotuning_keeps_ahead_of_slow_start() {
    let cfg = TcpConfig::linux();
    let bytes = 1u64 << 20;
    let path = Path::new(BitsPerSec::mbps(50), ms(160), 100_000_000);
    let cubic = CcaConfig::Cubic(CubicConfig::default());
    let r = run(Opts::new(cfg.clone(), cubic.clone(), bytes, path.clone()));
    let free = run(Opts::new(TcpConfig { rwnd: false, ..cfg.clone() }, cubic, bytes, path));
    assert!(r.rx.is_complete() && free.rx.is_complete());
    let (t, t_free) = (r.complete_at.unwrap(), free.complete_at.unwrap());
    assert!(t.as_secs_f64() - t_free.as_secs_f64() < 1e-3, "{t:?} vs {t_free:?}");
    let (clamp, ssthresh, rcvbuf) = r.rx.window_state().unwrap();
    assert!(ssthresh >= bytes && ssthresh <= clamp, "rcv_ssthresh {ssthresh}, clamp {clamp}");
    assert!(clamp > 8 * 64_088 && rcvbuf > 8 * cfg.rmem, "clamp {clamp}, rcvbuf {rcvbuf}");
    let rtt = r.rx.rcv_rtt().unwrap();
    // The path's 160 ms plus what queues: the last round (320 segments) arrives at the
    // bottleneck faster than 50 Mb/s, and queues at most 0.46 MB (74 ms) there.
    assert!(rtt >= ms(160) && rtt <= ms(160 + 74), "receiver RTT {rtt:?}");
    let segs = bytes.div_ceil(u64::from(cfg.mss));
    let (acks, acks_free) = (r.rx.stats().acks, free.rx.stats().acks);
    assert!(acks > acks_free + segs / 4, "{acks} ACKs vs {acks_free} without flow control");
}
