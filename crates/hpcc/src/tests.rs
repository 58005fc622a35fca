//! Hand-computed checks of the update rule (spec §4.1).
//!
//! Common set-up unless a test says otherwise: NIC line rate 100 Gb/s, `T` = 10 µs
//! (10 000 ns), `W` = 125 000 B (the BDP of 100 Gb/s × 10 µs), η = 0.95, W_AI = 40 Mb/s,
//! minimum rate 1 Gb/s, maxStage 0, fast reaction on. Hop records are written as
//! `hop(time in ns, cumulative tx bytes, queue bytes)` on a 100 Gb/s port.
//!
//! Useful identities: `Δbytes * 8 / tau` over 10 µs is 100 Gb/s for 125 000 B; a queue of
//! 125 000 B is one `W`, so with equal NIC and port rates the queue term is `qlen / 125 000`.
//! Rates are truncated toward zero to whole bps before `W_AI` is added.

use dcsim_core::cc::{CcCtx, CcFactory, CongestionControl, Feedback, FlowInit};
use dcsim_core::packet::{HeaderMode, IntHop, IntStack};
use dcsim_core::units::{BitsPerSec, Duration, Time};
use proptest::prelude::*;

use crate::{Hpcc, HpccFactory, HpccParams};

const LINE: BitsPerSec = BitsPerSec::gbps(100);

fn init() -> FlowInit {
    FlowInit {
        line_rate: LINE,
        base_rtt: Duration::from_us(10),
        bdp: 125_000,
        mtu: 1000,
        size: 10_000_000,
        seed: 0,
    }
}

fn flow_with(params: HpccParams) -> Hpcc {
    Hpcc::new(&params, &init())
}

fn flow() -> Hpcc {
    flow_with(HpccParams::default())
}

fn hop_at(rate: BitsPerSec, time_ns: u64, tx_bytes: u64, qlen: u64) -> IntHop {
    IntHop { rate, time: Time::from_ns(time_ns), tx_bytes, qlen }
}

fn hop(time_ns: u64, tx_bytes: u64, qlen: u64) -> IntHop {
    hop_at(LINE, time_ns, tx_bytes, qlen)
}

fn stack(hops: &[IntHop]) -> IntStack {
    let mut s = IntStack::default();
    for h in hops {
        s.push(*h);
    }
    s
}

#[track_caller]
fn assert_close(got: f64, want: f64) {
    assert!((got - want).abs() <= 1e-12 * want.abs().max(1.0), "got {got}, want {want}");
}

#[test]
fn first_ack_only_stores_hops() {
    let mut f = flow();
    let h0 = hop(1000, 7, 9);
    let h1 = hop_at(BitsPerSec::gbps(400), 1500, 11, 13);
    assert_eq!(f.on_ack(1000, 20_000, &stack(&[h0, h1])), None);
    assert_eq!(f.last_update_seq(), 20_000);
    assert_eq!(&f.stored_hops()[..2], &[h0, h1]);
    assert_eq!(f.stored_hops()[2], IntHop::default());
    assert_eq!(f.cur_rate(), LINE);
    assert_eq!(f.inc_stage(), 0);
    assert_eq!(f.u(), 1.0);
    assert!(f.hop_states().iter().all(|s| s.u == 1.0 && s.rc == LINE && s.inc_stage == 0));
}

#[test]
fn first_feedback_also_through_fast_react() {
    // A NACK for byte 0 is not > lastUpdateSeq (0); with fast reaction it still reaches the
    // first-feedback branch.
    let mut f = flow();
    assert_eq!(f.on_ack(0, 3000, &stack(&[hop(1000, 0, 0)])), None);
    assert_eq!(f.last_update_seq(), 3000);
    assert_eq!(f.stored_hops()[0], hop(1000, 0, 0));
    // Without fast reaction that NACK is ignored altogether.
    let mut f = flow_with(HpccParams { fast_react: false, ..HpccParams::default() });
    assert_eq!(f.on_ack(0, 3000, &stack(&[hop(1000, 0, 0)])), None);
    assert_eq!(f.last_update_seq(), 0);
    assert_eq!(f.stored_hops()[0], IntHop::default());
}

#[test]
fn one_hop_half_utilisation_empty_queue() {
    let mut f = flow();
    f.on_ack(1000, 20_000, &stack(&[hop(1000, 0, 0)]));
    // tau = 500 ns; 3125 B * 8 / 500 ns = 50 Gb/s -> u' = 50/100 + 0 = 0.5.
    // u = (1 * (10 000 - 500) + 0.5 * 500) / 10 000 = 9 750 / 10 000 = 0.975.
    // c = 0.975 / 0.95 = 1.0263... >= 1 -> MI:
    // 100e9 * 0.95 / 0.975 = 97 435 897 435.897... -> 97 435 897 435; + 40e6 = 97 475 897 435.
    let r = f.on_ack(21_000, 40_000, &stack(&[hop(1500, 3125, 0)]));
    assert_eq!(r, Some(BitsPerSec(97_475_897_435)));
    assert_close(f.u(), 0.975);
    // ack 21 000 > lastUpdateSeq 20 000: a per-RTT update, so it is committed.
    assert_eq!(f.cur_rate(), BitsPerSec(97_475_897_435));
    assert_eq!(f.inc_stage(), 0);
    assert_eq!(f.last_update_seq(), 40_000);
    assert_eq!(f.stored_hops()[0], hop(1500, 3125, 0));
}

#[test]
fn line_rate_clamp() {
    let mut f = flow();
    f.on_ack(1000, 20_000, &stack(&[hop(1000, 0, 0)]));
    // tau = 2 us; 12 500 B * 8 / 2 us = 50 Gb/s -> u' = 0.5.
    // u = (1 * 8 000 + 0.5 * 2 000) / 10 000 = 0.9; c = 0.9 / 0.95 < 1, but maxStage 0 -> MI:
    // 100e9 * 0.95 / 0.9 + 40e6 = 105 595 555 555 > 100e9 -> clamped to the line rate.
    let r = f.on_ack(21_000, 40_000, &stack(&[hop(3000, 12_500, 0)]));
    assert_close(f.u(), 0.9);
    assert_eq!(r, Some(LINE));
    assert_eq!(f.cur_rate(), LINE);
}

#[test]
fn standing_queue() {
    let mut f = flow();
    f.on_ack(1000, 20_000, &stack(&[hop(1000, 0, 125_000)]));
    // tau = 10 us = T; 125 000 B in 10 us = 100 Gb/s -> 1.0;
    // queue term min(62 500, 125 000) * 100G / 100G / 125 000 = 0.5 -> u' = 1.5.
    // dt = min(10 us, T) = T -> u = (1 * 0 + 1.5 * T) / T = 1.5.
    // c = 1.5 / 0.95; 100e9 * 0.95 / 1.5 = 63 333 333 333.3 -> 63 333 333 333; + 40e6.
    let r = f.on_ack(21_000, 40_000, &stack(&[hop(11_000, 125_000, 62_500)]));
    assert_close(f.u(), 1.5);
    assert_eq!(r, Some(BitsPerSec(63_373_333_333)));
    assert_eq!(f.cur_rate(), BitsPerSec(63_373_333_333));

    // The queue term takes the smaller of the new and the stored queue: here the stored one.
    // tau = 10 us, 125 000 B -> 1.0 (f64: 0.9999999999999999); min(100 000, 62 500) / 125 000
    // = 0.5 -> u' = 1.5, u = 1.5 again; 63 373 333 333 * 0.95 / 1.5 = 40 136 444 444.2
    // -> 40 136 444 444 + 40e6 = 40 176 444 444.
    let r = f.on_ack(41_000, 60_000, &stack(&[hop(21_000, 250_000, 100_000)]));
    assert_close(f.u(), 1.5);
    assert_eq!(r, Some(BitsPerSec(40_176_444_444)));
}

#[test]
fn two_hops_second_is_bottleneck() {
    let mut f = flow();
    let g400 = BitsPerSec::gbps(400);
    f.on_ack(1000, 20_000, &stack(&[hop_at(g400, 1000, 0, 200_000), hop(1200, 0, 50_000)]));
    // Hop 0, a 400 Gb/s port: tau = 10 us, 62 500 B -> 50 Gb/s -> 50/400 = 0.125;
    //   queue min(100 000, 200 000) * 100G / 400G / 125 000 = 0.2 -> u'0 = 0.325.
    // Hop 1, 100 Gb/s: tau = 8 us, 100 000 B -> 100 Gb/s -> 1.0;
    //   queue min(25 000, 50 000) / 125 000 = 0.2 -> u'1 = 1.2  (the max: U = 1.2, dt = 8 us).
    // u = (1 * 2 000 + 1.2 * 8 000) / 10 000 = 11 600 / 10 000 = 1.16.
    // 100e9 * 0.95 / 1.16 = 81 896 551 724.1 -> 81 896 551 724; + 40e6 = 81 936 551 724.
    let r = f.on_ack(
        21_000,
        40_000,
        &stack(&[hop_at(g400, 11_000, 62_500, 100_000), hop(9_200, 100_000, 25_000)]),
    );
    assert_close(f.u(), 1.16);
    assert_eq!(r, Some(BitsPerSec(81_936_551_724)));
    // Both records were stored.
    assert_eq!(f.stored_hops()[0], hop_at(g400, 11_000, 62_500, 100_000));
    assert_eq!(f.stored_hops()[1], hop(9_200, 100_000, 25_000));
}

#[test]
fn equal_utilisation_first_hop_wins() {
    let mut f = flow();
    f.on_ack(1000, 20_000, &stack(&[hop(1000, 0, 150_000), hop(1000, 0, 150_000)]));
    // Both hops: no bytes sent, queue 150 000 / 125 000 = 1.2. Hop 0 (tau 8 us) comes first and
    // hop 1 (tau 4 us) is not strictly larger, so dt = 8 us:
    // u = (1 * 2 000 + 1.2 * 8 000) / 10 000 = 1.16 (hop 1's tau would give 1.08).
    // Rate as in the two-hop case: 81 936 551 724.
    let r = f.on_ack(21_000, 40_000, &stack(&[hop(9_000, 0, 150_000), hop(5_000, 0, 150_000)]));
    assert_close(f.u(), 1.16);
    assert_eq!(r, Some(BitsPerSec(81_936_551_724)));
}

#[test]
fn all_zero_utilisation_keeps_u_but_recomputes_rate() {
    let mut f = flow();
    f.on_ack(1000, 20_000, &stack(&[hop(1000, 0, 0)]));
    // Idle port: u' = 0, never > U = 0, so U = 0 and dt = 0: u = (1 * T + 0) / T = 1.
    // The rate is still recomputed: c = 1 / 0.95; 100e9 * 0.95 = 95e9; + 40e6.
    let r = f.on_ack(21_000, 40_000, &stack(&[hop(3000, 0, 0)]));
    assert_eq!(f.u(), 1.0);
    assert_eq!(r, Some(BitsPerSec(95_040_000_000)));
    assert_eq!(f.cur_rate(), BitsPerSec(95_040_000_000));
}

#[test]
fn fast_react_between_per_rtt_updates() {
    let mut f = flow();
    f.on_ack(1000, 20_000, &stack(&[hop(1000, 0, 125_000)]));
    // ack 2 000 <= lastUpdateSeq 20 000: fast reaction. Same numbers as `standing_queue`:
    // u = 1.5, rate 63 373 333 333, but curRate stays at the line rate.
    let r = f.on_ack(2_000, 22_000, &stack(&[hop(11_000, 125_000, 62_500)]));
    assert_eq!(r, Some(BitsPerSec(63_373_333_333)));
    assert_close(f.u(), 1.5);
    assert_eq!(f.cur_rate(), LINE);
    assert_eq!(f.last_update_seq(), 20_000);
    assert_eq!(f.stored_hops()[0], hop(11_000, 125_000, 62_500)); // stored on every ACK

    // Next fast ACK: tau = 2 us, 25 000 B -> 100 Gb/s -> 1.0; queue min(0, 62 500) = 0 -> 1.0.
    // u = (1.5 * 8 000 + 1.0 * 2 000) / 10 000 = 1.4. The step is from curRate (100G), not from
    // the last paced rate: 100e9 * 0.95 / 1.4 = 67 857 142 857.1 -> + 40e6 = 67 897 142 857.
    let r = f.on_ack(3_000, 23_000, &stack(&[hop(13_000, 150_000, 0)]));
    assert_close(f.u(), 1.4);
    assert_eq!(r, Some(BitsPerSec(67_897_142_857)));
    assert_eq!(f.cur_rate(), LINE);

    // ack 25 000 > 20 000: per-RTT. tau = 10 us, 125 000 B -> 1.0, no queue; dt = T -> u = 1.0
    // (f64: 0.9999999999999999). 100e9 * 0.95 / 1.0 = 95e9 -> + 40e6 = 95 040 000 000, committed.
    let r = f.on_ack(25_000, 60_000, &stack(&[hop(23_000, 275_000, 0)]));
    assert_close(f.u(), 1.0);
    assert_eq!(r, Some(BitsPerSec(95_040_000_000)));
    assert_eq!(f.cur_rate(), BitsPerSec(95_040_000_000));
    assert_eq!(f.last_update_seq(), 60_000);

    // Fast again: tau = 1 us, 6 250 B -> 50 Gb/s -> 0.5; u = (1.0 * 9 000 + 0.5 * 1 000) / 10 000
    // = 0.95 -> c = 1 -> 95 040 000 000 / 1 + 40e6 = 95 080 000 000; curRate unchanged.
    let r = f.on_ack(26_000, 61_000, &stack(&[hop(24_000, 281_250, 0)]));
    assert_close(f.u(), 0.95);
    assert_eq!(r, Some(BitsPerSec(95_080_000_000)));
    assert_eq!(f.cur_rate(), BitsPerSec(95_040_000_000));
    assert_eq!(f.last_update_seq(), 60_000);
}

#[test]
fn fast_react_off_ignores_acks_within_the_rtt() {
    let mut f = flow_with(HpccParams { fast_react: false, ..HpccParams::default() });
    f.on_ack(1000, 20_000, &stack(&[hop(1000, 0, 125_000)]));
    assert_eq!(f.on_ack(2_000, 22_000, &stack(&[hop(11_000, 125_000, 62_500)])), None);
    assert_eq!(f.u(), 1.0);
    assert_eq!(f.stored_hops()[0], hop(1000, 0, 125_000)); // not even stored
    assert_eq!(f.last_update_seq(), 20_000);
    // The per-RTT ACK then measures from the first record: the `standing_queue` numbers.
    let r = f.on_ack(21_000, 40_000, &stack(&[hop(11_000, 125_000, 62_500)]));
    assert_eq!(r, Some(BitsPerSec(63_373_333_333)));
}

#[test]
fn last_update_seq_never_goes_back() {
    let mut f = flow();
    f.on_ack(1000, 20_000, &stack(&[hop(1000, 0, 0)]));
    // Per-RTT (30 000 > 20 000) with snd_nxt 15 000 (< lastUpdateSeq): the rate is committed
    // but lastUpdateSeq stays.
    assert!(f.on_ack(30_000, 15_000, &stack(&[hop(3000, 12_500, 0)])).is_some());
    assert_eq!(f.last_update_seq(), 20_000);
}

#[test]
fn additive_stage_with_max_stage() {
    let mut f = flow_with(HpccParams { max_stage: 2, ..HpccParams::default() });
    f.on_ack(1000, 10_000, &stack(&[hop(1000, 0, 125_000)]));
    // Congested RTT (`standing_queue`): c = 1.5 / 0.95 >= 1 -> MI, 63 373 333 333, stage 0.
    let r = f.on_ack(11_000, 20_000, &stack(&[hop(11_000, 125_000, 62_500)]));
    assert_eq!(r, Some(BitsPerSec(63_373_333_333)));
    assert_eq!(f.inc_stage(), 0);

    // tau = T, 62 500 B -> 50 Gb/s -> 0.5, no queue; u = 0.5, c = 0.526 < 1 and stage 0 < 2:
    // AI: 63 373 333 333 + 40e6 = 63 413 333 333, stage 1.
    let r = f.on_ack(21_000, 30_000, &stack(&[hop(21_000, 187_500, 0)]));
    assert_close(f.u(), 0.5);
    assert_eq!(r, Some(BitsPerSec(63_413_333_333)));
    assert_eq!((f.cur_rate(), f.inc_stage()), (BitsPerSec(63_413_333_333), 1));

    // Fast ACK in the additive phase: tau = 1 us, 6 250 B -> 0.5; u stays 0.5; AI from curRate:
    // 63 453 333 333, but stage stays 1 and curRate stays.
    let r = f.on_ack(22_000, 31_000, &stack(&[hop(22_000, 193_750, 0)]));
    assert_eq!(r, Some(BitsPerSec(63_453_333_333)));
    assert_eq!((f.cur_rate(), f.inc_stage()), (BitsPerSec(63_413_333_333), 1));

    // Per-RTT: tau = 9 us, 56 250 B -> 50 Gb/s -> 0.5; stage 1 < 2 -> AI again, stage 2.
    let r = f.on_ack(31_000, 40_000, &stack(&[hop(31_000, 250_000, 0)]));
    assert_eq!(r, Some(BitsPerSec(63_453_333_333)));
    assert_eq!((f.cur_rate(), f.inc_stage()), (BitsPerSec(63_453_333_333), 2));

    // Stage 2 >= maxStage 2 -> MI although c < 1: 63 453 333 333 * 0.95 / 0.5 + 40e6
    // = 120 601 333 332 -> clamped to 100G; stage back to 0.
    let r = f.on_ack(41_000, 50_000, &stack(&[hop(41_000, 312_500, 0)]));
    assert_eq!(r, Some(LINE));
    assert_eq!((f.cur_rate(), f.inc_stage()), (LINE, 0));
}

#[test]
fn congestion_resets_the_additive_stage() {
    let mut f = flow_with(HpccParams { max_stage: 5, ..HpccParams::default() });
    f.on_ack(1000, 10_000, &stack(&[hop(1000, 0, 0)]));
    // u = 0.5 (tau = T, 50 Gb/s, queue min(125 000, 0) = 0): c < 1, stage 0 < 5 -> AI from the line rate:
    // 100e9 + 40e6 -> clamped to 100e9; stage 1.
    let r = f.on_ack(11_000, 20_000, &stack(&[hop(11_000, 62_500, 125_000)]));
    assert_eq!(r, Some(LINE));
    assert_eq!(f.inc_stage(), 1);
    // u' = 1.0 + min(62 500, 125 000) / 125 000 = 1.5, u = 1.5: c >= 1 -> MI and stage 0:
    // 63 373 333 333 as in `standing_queue`.
    let r = f.on_ack(21_000, 30_000, &stack(&[hop(21_000, 187_500, 62_500)]));
    assert_eq!(r, Some(BitsPerSec(63_373_333_333)));
    assert_eq!(f.inc_stage(), 0);
}

#[test]
fn min_rate_clamp() {
    let mut f = flow();
    f.on_ack(1000, 20_000, &stack(&[hop(1000, 0, 12_500_000)]));
    // tau = T, 100 Gb/s -> 1.0; queue 12 500 000 / 125 000 = 100 -> u' = 101 = u.
    // 100e9 * 0.95 / 101 = 940 594 059.4 -> + 40e6 = 980 594 059 < 1e9 -> MIN_RATE 1 Gb/s.
    let r = f.on_ack(21_000, 40_000, &stack(&[hop(11_000, 125_000, 12_500_000)]));
    assert_close(f.u(), 101.0);
    assert_eq!(r, Some(BitsPerSec::gbps(1)));
    assert_eq!(f.cur_rate(), BitsPerSec::gbps(1));
}

#[test]
fn min_rate_above_line_rate_ends_at_line_rate() {
    // The clamps run in the reference's order: up to MIN_RATE, then down to the line rate.
    let mut f = flow_with(HpccParams { min_rate: BitsPerSec::gbps(200), ..HpccParams::default() });
    f.on_ack(1000, 20_000, &stack(&[hop(1000, 0, 12_500_000)]));
    let r = f.on_ack(21_000, 40_000, &stack(&[hop(11_000, 125_000, 12_500_000)]));
    assert_eq!(r, Some(LINE));
}

#[test]
fn sample_feedback_skips_empty_queues_on_fast_updates_only() {
    let mut f = flow_with(HpccParams { sample_feedback: true, ..HpccParams::default() });
    f.on_ack(1000, 20_000, &stack(&[hop(1000, 0, 0), hop(1000, 0, 50_000)]));
    // Fast ACK. Hop 0 reports an empty queue: skipped (it would give u' = 1.0, 25 000 B in
    // 2 us, and u = 1.0 -> rate 95.04G), and its record is not stored.
    // Hop 1: tau = 2 us, 12 500 B -> 50 Gb/s -> 0.5; queue min(25 000, 50 000) / 125 000 = 0.2
    // -> u' = 0.7. u = (1 * 8 000 + 0.7 * 2 000) / 10 000 = 0.94; c < 1, maxStage 0 -> MI:
    // 100e9 * 0.95 / 0.94 + 40e6 = 101 103 829 787 -> clamped to 100G.
    let r = f.on_ack(2_000, 22_000, &stack(&[hop(3000, 25_000, 0), hop(3000, 12_500, 25_000)]));
    assert_close(f.u(), 0.94);
    assert_eq!(r, Some(LINE));
    assert_eq!(f.stored_hops()[0], hop(1000, 0, 0));
    assert_eq!(f.stored_hops()[1], hop(3000, 12_500, 25_000));

    // Fast ACK with both queues empty: nothing used, nothing stored, no rate.
    assert_eq!(
        f.on_ack(3_000, 23_000, &stack(&[hop(4000, 37_500, 0), hop(4000, 25_000, 0)])),
        None
    );
    assert_close(f.u(), 0.94);
    assert_eq!(f.stored_hops()[1], hop(3000, 12_500, 25_000));

    // Per-RTT ACK: empty queues are not skipped. Hop 0: tau = 10 us from its first record,
    // 125 000 B -> 1.0. Hop 1: tau = 8 us, 37 500 B -> 37.5 Gb/s -> 0.375, queue 0.
    // U = 1.0, dt = 10 us = T -> u = 1.0 -> 95e9 + 40e6.
    let r = f.on_ack(21_000, 40_000, &stack(&[hop(11_000, 125_000, 0), hop(11_000, 50_000, 0)]));
    assert_close(f.u(), 1.0);
    assert_eq!(r, Some(BitsPerSec(95_040_000_000)));
    assert_eq!(f.cur_rate(), BitsPerSec(95_040_000_000));
}

#[test]
fn multi_rate_keeps_per_hop_state() {
    let mut f =
        flow_with(HpccParams { multi_rate: true, sample_feedback: true, ..HpccParams::default() });
    f.on_ack(1000, 20_000, &stack(&[hop(1000, 0, 0), hop(1000, 0, 125_000)]));
    // Per-RTT. Hop 0: tau = 10 us = T, 62 500 B -> 0.5, no queue -> u_0 = 0.5.
    //   c = 0.5 / 0.95 < 1, maxStage 0 -> MI: 100e9 * 1.9 + 40e6 -> clamped 100G, stage 0.
    // Hop 1: tau = 5 us, 62 500 B -> 100 Gb/s -> 1.0; queue min(62 500, 125 000) -> 0.5;
    //   u'_1 = 1.5; u_1 = (1 * 5 000 + 1.5 * 5 000) / 10 000 = 1.25.
    //   100e9 * 0.95 / 1.25 = 76e9 -> + 40e6 = 76 040 000 000.
    // Paced rate = min(100G, 100G, 76.04G).
    let r = f.on_ack(21_000, 40_000, &stack(&[hop(11_000, 62_500, 0), hop(6000, 62_500, 62_500)]));
    assert_eq!(r, Some(BitsPerSec(76_040_000_000)));
    let hs = f.hop_states();
    assert_close(hs[0].u, 0.5);
    assert_close(hs[1].u, 1.25);
    assert_eq!((hs[0].rc, hs[0].inc_stage), (LINE, 0));
    assert_eq!((hs[1].rc, hs[1].inc_stage), (BitsPerSec(76_040_000_000), 0));
    assert_eq!(f.cur_rate(), BitsPerSec(76_040_000_000));
    assert_eq!(f.u(), 1.0); // the single-rate EWMA is not used

    // Fast ACK: hop 0 has an empty queue and is skipped (sample feedback), hop 1:
    // tau = 1 us, 12 500 B -> 1.0, queue min(62 500, 62 500) -> 0.5, u'_1 = 1.5;
    // u_1 = (1.25 * 9 000 + 1.5 * 1 000) / 10 000 = 1.275.
    // new_1 = 76 040 000 000 * 0.95 / 1.275 = 56 657 254 901.96 -> + 40e6 = 56 697 254 901.
    // Hop 0 not used: its Rc_0 = 100G enters the minimum. Nothing is committed.
    let r = f.on_ack(22_000, 41_000, &stack(&[hop(12_000, 75_000, 0), hop(7000, 75_000, 62_500)]));
    assert_eq!(r, Some(BitsPerSec(56_697_254_901)));
    let hs = f.hop_states();
    assert_close(hs[0].u, 0.5);
    assert_close(hs[1].u, 1.275);
    assert_eq!(hs[1].rc, BitsPerSec(76_040_000_000));
    assert_eq!(f.cur_rate(), BitsPerSec(76_040_000_000));
}

#[test]
fn multi_rate_zero_utilisation_gives_line_rate() {
    let mut f = flow_with(HpccParams { multi_rate: true, ..HpccParams::default() });
    f.on_ack(1000, 20_000, &stack(&[hop(1000, 0, 125_000)]));
    let r = f.on_ack(21_000, 40_000, &stack(&[hop(11_000, 125_000, 62_500)]));
    // u_0 = 1.5 (as in `standing_queue`) -> 63 373 333 333 committed as Rc_0.
    assert_eq!(r, Some(BitsPerSec(63_373_333_333)));
    // An idle RTT: tau = 10 us, no bytes, no queue -> u'_0 = 0, u_0 = (1.5 * 0 + 0 * T) / T = 0;
    // c = 0 -> Rc_0 / 0 = +inf, saturating -> clamped to the line rate (the reference: UB).
    let r = f.on_ack(41_000, 60_000, &stack(&[hop(21_000, 125_000, 0)]));
    assert_eq!(f.hop_states()[0].u, 0.0);
    assert_eq!(r, Some(LINE));
    assert_eq!(f.hop_states()[0].rc, LINE);
}

#[test]
fn more_than_five_hops_are_ignored() {
    let six: Vec<IntHop> = (0..6).map(|i| hop(5000 + i, 1000, 1000)).collect();
    // First feedback with six hops: nothing stored, lastUpdateSeq still set.
    let mut f = flow();
    assert_eq!(f.on_ack(1000, 20_000, &stack(&six)), None);
    assert_eq!(f.last_update_seq(), 20_000);
    assert!(f.stored_hops().iter().all(|h| *h == IntHop::default()));

    let mut f = flow();
    f.on_ack(1000, 20_000, &stack(&[hop(1000, 0, 125_000)]));
    // Per-RTT with six hops: records ignored, rate untouched, lastUpdateSeq advanced.
    assert_eq!(f.on_ack(21_000, 40_000, &stack(&six)), None);
    assert_eq!(f.stored_hops()[0], hop(1000, 0, 125_000));
    assert_eq!((f.u(), f.cur_rate(), f.last_update_seq()), (1.0, LINE, 40_000));

    // Exactly five hops are used. Each: tau = T, 100 Gb/s -> 1.0 (f64 0.9999999999999999),
    // queue 0 -> u = 1.0 -> 95 040 000 000.
    let mut f = flow();
    let first: Vec<IntHop> = (0..5).map(|_| hop(1000, 0, 0)).collect();
    let second: Vec<IntHop> = (0..5).map(|_| hop(11_000, 125_000, 0)).collect();
    f.on_ack(1000, 20_000, &stack(&first));
    assert_eq!(f.on_ack(21_000, 40_000, &stack(&second)), Some(BitsPerSec(95_040_000_000)));
    assert_eq!(&f.stored_hops()[..], &second[..]);
}

#[test]
fn zero_tau_hop_is_not_used_but_stored() {
    let mut f = flow();
    f.on_ack(1000, 20_000, &stack(&[hop(1000, 0, 125_000)]));
    // Same timestamp as the stored record (the reference divides by zero): not used.
    assert_eq!(f.on_ack(21_000, 40_000, &stack(&[hop(1000, 0, 125_000)])), None);
    assert_eq!(f.u(), 1.0);
    assert_eq!(f.cur_rate(), LINE);
    // A record older than the stored one is not used either, but replaces it.
    assert_eq!(f.on_ack(41_000, 60_000, &stack(&[hop(500, 0, 125_000)])), None);
    assert_eq!(f.stored_hops()[0], hop(500, 0, 125_000));
    // Deltas are then measured from it: tau = 10 us, 125 000 B, queue 62 500 -> u' = 1.5,
    // the `standing_queue` result.
    let r = f.on_ack(61_000, 80_000, &stack(&[hop(10_500, 125_000, 62_500)]));
    assert_eq!(r, Some(BitsPerSec(63_373_333_333)));

    // With two hops, the other hop is still used: hop 1 gives u' = 1.5 over T.
    let mut f = flow();
    f.on_ack(1000, 20_000, &stack(&[hop(1000, 0, 0), hop(1000, 0, 125_000)]));
    let r = f.on_ack(21_000, 40_000, &stack(&[hop(1000, 0, 0), hop(11_000, 125_000, 62_500)]));
    assert_eq!(r, Some(BitsPerSec(63_373_333_333)));
}

#[test]
fn zero_bdp_counts_the_queue_against_one_byte() {
    let mut f = Hpcc::new(&HpccParams::default(), &FlowInit { bdp: 0, ..init() });
    f.on_ack(1000, 20_000, &stack(&[hop(1000, 0, 0)]));
    // Empty queue: finite (the reference: 0 / 0 = NaN). tau = 500 ns at 50 Gb/s -> u' = 0.5,
    // u = 0.975 and the rate of `one_hop_half_utilisation_empty_queue`.
    let r = f.on_ack(21_000, 40_000, &stack(&[hop(1500, 3125, 0)]));
    assert_eq!(r, Some(BitsPerSec(97_475_897_435)));
    // Queue min(1000, 1000) with W = 1 byte: u' = 1.0 + 1000 / 1 = 1001 (the reference: +inf);
    // u = (0.975 * 0 + 1001 * T) / T = 1001. First an unqueued RTT (u' = 1.0, u = 1.0, curRate
    // 97 475 897 435 * 0.95 + 40e6 = 92 642 102 563), then the queued one:
    // 92 642 102 563 * 0.95 / 1001 + 40e6 = 127 922 075 -> MIN_RATE 1 Gb/s.
    f.on_ack(41_000, 60_000, &stack(&[hop(11_500, 128_125, 1000)]));
    let r = f.on_ack(61_000, 80_000, &stack(&[hop(21_500, 253_125, 1000)]));
    assert_close(f.u(), 1001.0);
    assert_eq!(r, Some(BitsPerSec::gbps(1)));
}

#[test]
fn zero_base_rtt_takes_the_sample() {
    let mut f = Hpcc::new(&HpccParams::default(), &FlowInit { base_rtt: Duration::ZERO, ..init() });
    f.on_ack(1000, 20_000, &stack(&[hop(1000, 0, 125_000)]));
    // T = 0: weight dt / T taken as 1 -> u = U = 1.5 (tau = 1 us, 12 500 B -> 1.0, queue 0.5).
    let r = f.on_ack(21_000, 40_000, &stack(&[hop(2000, 12_500, 62_500)]));
    assert_close(f.u(), 1.5);
    assert_eq!(r, Some(BitsPerSec(63_373_333_333)));
    // No hop selected (idle): u unchanged.
    f.on_ack(41_000, 60_000, &stack(&[hop(3000, 12_500, 0)]));
    assert_close(f.u(), 1.5);
}

#[test]
fn rate_ai_follows_the_line_rate() {
    let f =
        Hpcc::new(&HpccParams::default(), &FlowInit { line_rate: BitsPerSec::gbps(25), ..init() });
    assert_eq!(f.rate_ai(), BitsPerSec::mbps(10));
    assert_eq!(f.cur_rate(), BitsPerSec::gbps(25));
    let f = Hpcc::new(
        &HpccParams { rate_ai: Some(BitsPerSec::mbps(50)), ..HpccParams::default() },
        &init(),
    );
    assert_eq!(f.rate_ai(), BitsPerSec::mbps(50));
}

#[test]
fn plugin_applies_the_rate_with_change_rate() {
    let factory = HpccFactory::default();
    assert_eq!(factory.name(), "hpcc");
    assert_eq!(factory.header_mode(), HeaderMode::Int);
    let mut cc = factory.new_flow(&init());
    fn fb(ack: u64, int: &IntStack) -> Feedback<'_> {
        Feedback { ack, nack: false, ecn: false, int, ts_echo: Time::ZERO, pint: 0 }
    }
    let ctx =
        |snd_nxt| CcCtx::new(Time::from_ns(50_000), snd_nxt, 0, 10_000_000, LINE, LINE, 125_000);

    let first = stack(&[hop(1000, 0, 125_000)]);
    let mut c = ctx(20_000);
    cc.on_feedback(&mut c, &fb(1000, &first));
    assert_eq!(c.requested_rate(), None);
    assert_eq!(cc.last_update_seq(), 20_000);

    let second = stack(&[hop(11_000, 125_000, 62_500)]);
    let mut c = ctx(40_000);
    cc.on_feedback(&mut c, &fb(21_000, &second));
    // `true`: re-time the scheduled send (ChangeRate), not a plain overwrite.
    assert_eq!(c.requested_rate(), Some((BitsPerSec(63_373_333_333), true)));
    assert_eq!(c.rate(), BitsPerSec(63_373_333_333));
    assert_eq!(c.window(), 125_000); // HPCC leaves the window to the NIC
    assert_eq!(cc.last_update_seq(), 40_000);
}

#[test]
fn factory_validates() {
    assert!(HpccFactory::new(HpccParams::default()).is_ok());
    assert_eq!(
        HpccFactory::new(HpccParams { eta: 0.0, ..HpccParams::default() }).unwrap_err(),
        "eta must be in (0, 1], got 0"
    );
}

/// A random but physical ACK sequence: one path of 1..=5 hops, per-hop times strictly
/// increasing, byte counters non-decreasing.
/// One ACK: how far it advances `ack` (mod 3 KB) and, per hop, (Δtime ns, Δbytes, qlen).
type AckStep = (u64, Vec<(u64, u64, u64)>);

fn acks() -> impl Strategy<Value = (usize, Vec<AckStep>)> {
    (1usize..=5).prop_flat_map(|n| {
        let step = (
            1u64..40_000,
            prop::collection::vec((1u64..20_000, 0u64..200_000, 0u64..2_000_000), n),
        );
        (Just(n), prop::collection::vec(step, 1..60))
    })
}

proptest! {
    #[test]
    fn rate_stays_within_bounds(
        (n, seq) in acks(),
        eta in 0.5f64..=1.0,
        max_stage in 0u32..4,
        fast_react: bool,
        multi_rate: bool,
        sample_feedback: bool,
        min_gbps in 1u64..150,
        rtt_ns in 0u64..50_000,
        bdp in 0u64..500_000,
    ) {
        let params = HpccParams {
            eta, max_stage, fast_react, multi_rate, sample_feedback,
            min_rate: BitsPerSec::gbps(min_gbps),
            ..HpccParams::default()
        };
        let init = FlowInit { base_rtt: Duration::from_ns(rtt_ns), bdp, ..init() };
        let mut f = Hpcc::new(&params, &init);
        let lo = BitsPerSec::gbps(min_gbps).min(LINE);
        let (mut ack, mut snd_nxt) = (0u64, 0u64);
        let mut now = [(0u64, 0u64); 5];
        for (acked, hops) in seq {
            ack += acked % 3 * 1000; // sometimes no progress: fast reaction
            snd_nxt = snd_nxt.max(ack) + 1000;
            let records: Vec<IntHop> = hops.iter().enumerate().map(|(i, &(dt, db, q))| {
                now[i].0 += dt;
                now[i].1 += db;
                hop(now[i].0, now[i].1, q)
            }).collect();
            prop_assert_eq!(records.len(), n);
            let before = f.last_update_seq();
            if let Some(r) = f.on_ack(ack, snd_nxt, &stack(&records)) {
                prop_assert!(r >= lo && r <= LINE, "rate {:?}", r);
            }
            prop_assert!(f.last_update_seq() >= before);
            prop_assert!(f.cur_rate() >= lo && f.cur_rate() <= LINE);
            prop_assert!(f.u().is_finite() && f.u() >= 0.0);
            for s in f.hop_states() {
                prop_assert!(s.u.is_finite() && s.u >= 0.0);
                prop_assert!(s.rc >= lo && s.rc <= LINE);
            }
        }
    }
}
