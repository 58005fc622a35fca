//! Properties every discipline must have, for any sequence of enqueues and dequeues: bytes in
//! = bytes out + bytes dropped + backlog, the counts agree, and every packet comes out
//! (dequeued or dropped) exactly once.

mod common;

use common::Harness;
use dcsim_aqm::codel::CeSelector;
use dcsim_aqm::dualpi2::StepThresh;
use dcsim_aqm::{
    Bytes, CoDelParams, DualPi2Params, Duration, Ecn, Entry, FifoParams, FqCodelParams, Qdisc,
    QdiscConfig, QueueDisc, RedParams, Time,
};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    /// Advance the clock, then offer a packet.
    Enq { dt_us: u64, wire: u32, ecn: u8, flow: u32 },
    /// Advance the clock, then dequeue.
    Deq { dt_us: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u64..3_000, 1u32..3_000, 0u8..4, prop_oneof![Just(0u32), Just(1 << 31), any::<u32>()])
            .prop_map(|(dt_us, wire, ecn, flow)| Op::Enq { dt_us, wire, ecn, flow }),
        2 => (0u64..5_000).prop_map(|dt_us| Op::Deq { dt_us }),
    ]
}

/// Configurations small enough that limits, AQM drops and marks all happen.
fn configs() -> Vec<QdiscConfig> {
    let short = |ms| Duration::from_ms(ms);
    vec![
        QdiscConfig::Fifo(FifoParams::default()),
        QdiscConfig::Fifo(FifoParams { limit_bytes: Some(Bytes(20_000)), limit_packets: Some(12) }),
        QdiscConfig::Red(RedParams {
            kmin: Bytes(3_000),
            kmax: Bytes(15_000),
            pmax: 0.5,
            ecn: true,
        }),
        QdiscConfig::Red(RedParams {
            kmin: Bytes(3_000),
            kmax: Bytes(3_000),
            pmax: 1.0,
            ecn: false,
        }),
        QdiscConfig::CoDel(CoDelParams {
            target: short(1),
            interval: short(10),
            limit: 30,
            ecn: true,
            ..CoDelParams::default()
        }),
        QdiscConfig::CoDel(CoDelParams {
            target: short(1),
            interval: short(5),
            limit: 1000,
            ecn: false,
            ce_threshold: Some(short(2)),
            ce_threshold_selector: CeSelector::Ect1,
            exact_sqrt: true,
            ..CoDelParams::default()
        }),
        QdiscConfig::FqCodel(FqCodelParams {
            flows: 4,
            quantum: Bytes(300),
            limit: 25,
            memory_limit: Bytes(30_000),
            drop_batch_size: 3,
            target: short(1),
            interval: short(10),
            ..FqCodelParams::default()
        }),
        QdiscConfig::FqCodel(FqCodelParams {
            flows: 1,
            limit: 20,
            target: short(1),
            interval: short(8),
            ..FqCodelParams::default()
        }),
        QdiscConfig::DualPi2(DualPi2Params {
            limit: 40,
            target: short(2),
            tupdate: short(3),
            alpha: 5.0,
            beta: 50.0,
            ..DualPi2Params::default()
        }),
        QdiscConfig::DualPi2(DualPi2Params {
            limit: 1000,
            memory_limit: Some(Bytes(25_000)),
            target: short(1),
            tupdate: short(2),
            alpha: 20.0,
            beta: 100.0,
            step: StepThresh::Packets(3),
            min_qlen_step: 1,
            drop_overload: false,
            drop_early: true,
            c_protection: 50,
            ..DualPi2Params::default()
        }),
    ]
}

/// Records that a packet came out (fails if it already had).
type Outcome<'a> = dyn FnMut(&Entry, &mut Vec<u8>) -> Result<(), TestCaseError> + 'a;

fn check(cfg: &QdiscConfig, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut q = Qdisc::new(cfg);
    let mut h = Harness::new(5);
    let mut now = Time::ZERO;
    let (mut bytes_in, mut bytes_out, mut bytes_dropped) = (0u64, 0u64, 0u64);
    let mut seen = vec![0u8; ops.len()];
    let mut next = 0u32;
    let mut outcome = |e: &Entry, seen: &mut Vec<u8>| -> Result<(), TestCaseError> {
        let s = &mut seen[e.pkt as usize];
        prop_assert_eq!(*s, 0, "packet {} came out twice", e.pkt);
        *s = 1;
        Ok(())
    };
    let drain = |h: &mut Harness,
                 seen: &mut Vec<u8>,
                 bytes_dropped: &mut u64,
                 outcome: &mut Outcome<'_>|
     -> Result<(), TestCaseError> {
        for d in h.take_drops() {
            outcome(&d.entry, seen)?;
            *bytes_dropped += u64::from(d.entry.wire);
        }
        Ok(())
    };
    for o in ops {
        match *o {
            Op::Enq { dt_us, wire, ecn, flow } => {
                now += Duration::from_us(dt_us);
                let e = Entry { pkt: next, wire, ecn: Ecn::from_bits(ecn), flow, enq: now };
                next += 1;
                bytes_in += u64::from(wire);
                h.enq(&mut q, now, e);
            }
            Op::Deq { dt_us } => {
                now += Duration::from_us(dt_us);
                let was_empty = q.is_empty();
                match h.deq(&mut q, now) {
                    Some(d) => {
                        outcome(&d.entry, &mut seen)?;
                        bytes_out += u64::from(d.entry.wire);
                        prop_assert!(!d.marked || d.entry.ecn == Ecn::Ce);
                    }
                    None => prop_assert!(q.is_empty()),
                }
                if was_empty {
                    prop_assert!(h.dropped.is_empty());
                }
            }
        }
        drain(&mut h, &mut seen, &mut bytes_dropped, &mut outcome)?;
        prop_assert_eq!(bytes_in, bytes_out + bytes_dropped + q.backlog_bytes());
        prop_assert_eq!(q.is_empty(), q.len() == 0);
        prop_assert_eq!(q.len() == 0, q.backlog_bytes() == 0);
    }
    // Drain: everything still held comes out.
    while let Some(d) = h.deq(&mut q, now) {
        outcome(&d.entry, &mut seen)?;
        bytes_out += u64::from(d.entry.wire);
        drain(&mut h, &mut seen, &mut bytes_dropped, &mut outcome)?;
    }
    drain(&mut h, &mut seen, &mut bytes_dropped, &mut outcome)?;
    prop_assert_eq!((q.len(), q.backlog_bytes()), (0, 0));
    prop_assert_eq!(bytes_in, bytes_out + bytes_dropped);
    let offered = next as usize;
    prop_assert!(seen[..offered].iter().all(|&s| s == 1), "a packet never came out");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_packet_comes_out_exactly_once_and_bytes_are_conserved(ops in prop::collection::vec(op(), 1..400)) {
        for cfg in configs() {
            check(&cfg, &ops)?;
        }
    }
}

/// The configurations above do exercise drops and marks (otherwise the property is weak).
#[test]
fn the_property_configurations_drop_and_mark() {
    use rand::{Rng, SeedableRng};
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let ops: Vec<Op> = (0..3_000)
        .map(|_| {
            if r.gen_bool(0.6) {
                Op::Enq {
                    dt_us: r.gen_range(0..1_000),
                    wire: r.gen_range(64..1_600),
                    ecn: r.gen_range(0..4),
                    flow: r.gen(),
                }
            } else {
                Op::Deq { dt_us: r.gen_range(0..2_000) }
            }
        })
        .collect();
    for cfg in configs() {
        check(&cfg, &ops).unwrap();
        let mut q = Qdisc::new(&cfg);
        let mut h = Harness::new(5);
        let (mut now, mut marks, mut id) = (Time::ZERO, 0, 0);
        for o in &ops {
            match *o {
                Op::Enq { dt_us, wire, ecn, flow } => {
                    now += Duration::from_us(dt_us);
                    h.enq(
                        &mut q,
                        now,
                        Entry { pkt: id, wire, ecn: Ecn::from_bits(ecn), flow, enq: now },
                    );
                    id += 1;
                }
                Op::Deq { dt_us } => {
                    now += Duration::from_us(dt_us);
                    marks += usize::from(h.deq(&mut q, now).is_some_and(|d| d.marked));
                }
            }
        }
        let unlimited_fifo = matches!(&cfg, QdiscConfig::Fifo(p) if p.limit_bytes.is_none());
        assert!(unlimited_fifo || !h.dropped.is_empty(), "{} never dropped", cfg.name());
        let marks_expected =
            !matches!(&cfg, QdiscConfig::Fifo(_)) && !matches!(&cfg, QdiscConfig::Red(p) if !p.ecn);
        assert!(!marks_expected || marks > 0, "{} never marked", cfg.name());
    }
}
