//! fq_codel: DRR fairness, new-flow priority, fattest-flow overflow, and equality with CoDel
//! at one flow.

mod common;

use common::{at_ms, ms, pkt, Harness};
use dcsim_aqm::{
    Bytes, CoDel, CoDelParams, DropCause, Dropped, Duration, Ecn, FqCodel, FqCodelParams,
    QueueDisc, Time,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Flow hashes that land in queues 0 and 512 of 1024 (`(hash · 1024) >> 32`).
const A: u32 = 0;
const B: u32 = 1 << 31;

fn fq(p: FqCodelParams) -> FqCodel {
    FqCodel::new(&p)
}

#[test]
fn flow_index_is_reciprocal_scale() {
    let q = fq(FqCodelParams::default());
    assert_eq!((q.flow_index(A), q.flow_index(B), q.flow_index(u32::MAX)), (0, 512, 1023));
    let q = fq(FqCodelParams { flows: 3, ..FqCodelParams::default() });
    assert_eq!(q.flow_index(0x5555_5555), 0);
    assert_eq!(q.flow_index(0x5555_5556), 1);
}

/// Two backlogged flows, 1500 B and 300 B packets: DRR keeps their served bytes within one
/// quantum plus one packet of each other at every point.
#[test]
fn drr_gives_equal_byte_shares_with_different_packet_sizes() {
    let quantum = 1514;
    let mut q = fq(FqCodelParams::default());
    let mut h = Harness::new(0);
    for i in 0..1_500 {
        h.enq(&mut q, Time::ZERO, pkt(i, 1500, Ecn::NotEct, A));
    }
    for i in 0..7_000 {
        h.enq(&mut q, Time::ZERO, pkt(10_000 + i, 300, Ecn::NotEct, B));
    }
    let (mut a, mut b) = (0i64, 0i64);
    for _ in 0..4_200 {
        let d = h.deq(&mut q, Time::ZERO).unwrap();
        if d.entry.flow == A {
            a += i64::from(d.entry.wire);
        } else {
            b += i64::from(d.entry.wire);
        }
        assert!((a - b).abs() <= quantum + 1500, "A {a} B {b}");
    }
    assert!(a > 1_000_000 && b > 1_000_000, "A {a} B {b}");
    assert!(h.dropped.is_empty());
}

/// A packet of a new (sparse) flow leaves before the backlogged flows' next packet.
#[test]
fn new_flow_has_priority() {
    let mut q = fq(FqCodelParams::default());
    let mut h = Harness::new(0);
    for i in 0..100 {
        h.enq(&mut q, Time::ZERO, pkt(i, 1500, Ecn::NotEct, A));
        h.enq(&mut q, Time::ZERO, pkt(1000 + i, 1500, Ecn::NotEct, B));
    }
    for _ in 0..10 {
        h.deq(&mut q, at_ms(1));
    }
    let sparse = 0x4000_0000; // queue 256
    h.enq(&mut q, at_ms(1), pkt(7777, 100, Ecn::NotEct, sparse));
    assert_eq!(h.deq(&mut q, at_ms(1)).unwrap().entry.pkt, 7777);
    // Then the round robin of the backlogged flows resumes.
    assert_ne!(h.deq(&mut q, at_ms(1)).unwrap().entry.flow, sparse);
}

/// CoDel's "backlog > mtu" test uses the qdisc-wide backlog (Linux passes
/// `sch->qstats.backlog`): a flow that leaves nothing behind still counts as above target
/// while other flows hold bytes.
#[test]
fn codel_backlog_test_is_qdisc_wide() {
    let mut q = fq(FqCodelParams::default());
    let mut h = Harness::new(0);
    h.enq(&mut q, Time::ZERO, pkt(1, 1500, Ecn::NotEct, A));
    for i in 0..10 {
        h.enq(&mut q, Time::ZERO, pkt(100 + i, 1500, Ecn::NotEct, B));
    }
    assert_eq!(h.deq(&mut q, at_ms(10)).unwrap().entry.pkt, 1);
    assert_eq!(q.flow_backlog(0), 0);
    assert_eq!(q.flow_vars(0).first_above_time, Some(at_ms(110)));
}

/// Overflow drops from the head of the fattest flow until half its bytes are gone, and
/// raises that flow's CoDel count by the number dropped.
#[test]
fn overflow_drops_from_the_fattest_flow() {
    let mut q = fq(FqCodelParams { limit: 10, ..FqCodelParams::default() });
    let mut h = Harness::new(0);
    for i in 0..8 {
        h.enq(&mut q, Time::ZERO, pkt(i, 1000, Ecn::NotEct, A));
    }
    for i in 0..2 {
        h.enq(&mut q, Time::ZERO, pkt(100 + i, 1000, Ecn::NotEct, B));
    }
    assert!(h.dropped.is_empty());
    h.enq(&mut q, Time::ZERO, pkt(200, 1000, Ecn::NotEct, B)); // the 11th packet
    let dropped: Vec<(u32, DropCause)> = h.dropped.iter().map(|d| (d.entry.pkt, d.cause)).collect();
    assert_eq!(
        dropped,
        [
            (0, DropCause::Overflow),
            (1, DropCause::Overflow),
            (2, DropCause::Overflow),
            (3, DropCause::Overflow)
        ]
    );
    assert_eq!((q.len(), q.backlog_bytes(), q.flow_backlog(0)), (7, 7000, 4000));
    assert_eq!(q.flow_vars(0).count, 4);

    // drop_batch_size caps the batch.
    let mut q = fq(FqCodelParams { limit: 10, drop_batch_size: 3, ..FqCodelParams::default() });
    let mut h = Harness::new(0);
    for i in 0..11 {
        h.enq(&mut q, Time::ZERO, pkt(i, 1000, Ecn::NotEct, A));
    }
    assert_eq!(h.dropped.iter().map(|d| d.entry.pkt).collect::<Vec<_>>(), [0, 1, 2]);
}

/// The memory limit (bytes) triggers the same fattest-flow drop.
/// Equal backlogs: Linux's scan over the queues in index order keeps the first, the lowest
/// index, whichever queue filled first (queue state is created on first use, in that order).
#[test]
fn overflow_ties_go_to_the_lowest_queue_index() {
    let mut q = fq(FqCodelParams { limit: 8, ..FqCodelParams::default() });
    let mut h = Harness::new(0);
    // Queue 512 (B) first, then queue 0 (A): four packets each.
    for i in 0..4 {
        h.enq(&mut q, Time::ZERO, pkt(100 + i, 1000, Ecn::NotEct, B));
    }
    for i in 0..4 {
        h.enq(&mut q, Time::ZERO, pkt(i, 1000, Ecn::NotEct, A));
    }
    assert!(h.dropped.is_empty());
    // A 1000-byte packet of a third queue (1): 9 packets, queues 0 and 512 tie at 4000 bytes.
    h.enq(&mut q, Time::ZERO, pkt(300, 1000, Ecn::NotEct, 0x0040_0000));
    let dropped: Vec<u32> = h.dropped.iter().map(|d| d.entry.pkt).collect();
    assert_eq!(dropped, [0, 1], "half of queue 0's bytes, from its head");
    assert_eq!((q.flow_backlog(0), q.flow_backlog(512), q.flow_backlog(1)), (2000, 4000, 1000));
}

/// Queues take memory only once used: 65 536 of them cost nothing until packets come, and
/// a queue never used reads as empty, in CoDel's initial state.
#[test]
fn queues_are_created_by_their_first_packet() {
    let mut q = fq(FqCodelParams { flows: 65_536, ..FqCodelParams::default() });
    assert_eq!(q.flows_used(), 0);
    assert_eq!((q.flow_backlog(7), q.flow_vars(7).count), (0, 0));
    let mut h = Harness::new(0);
    for i in 0..10 {
        h.enq(&mut q, Time::ZERO, pkt(i, 1000, Ecn::NotEct, i << 20));
    }
    h.enq(&mut q, Time::ZERO, pkt(10, 1000, Ecn::NotEct, 0));
    assert_eq!(q.flows_used(), 10, "ten distinct queues");
    assert_eq!(q.flow_backlog(0), 2000);
}

#[test]
fn memory_limit_drops_from_the_fattest_flow() {
    let mut q = fq(FqCodelParams { memory_limit: Bytes(10_000), ..FqCodelParams::default() });
    let mut h = Harness::new(0);
    for i in 0..9 {
        h.enq(&mut q, Time::ZERO, pkt(i, 1000, Ecn::NotEct, A));
    }
    h.enq(&mut q, Time::ZERO, pkt(50, 1000, Ecn::NotEct, B)); // exactly 10 000: kept
    assert!(h.dropped.is_empty());
    h.enq(&mut q, Time::ZERO, pkt(51, 1500, Ecn::NotEct, B)); // 11 500 > 10 000
                                                              // Fattest is A (9 000 B): drop until 4 500 B are gone, i.e. 5 packets.
    assert_eq!(h.dropped.iter().map(|d| d.entry.pkt).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    assert_eq!(q.backlog_bytes(), 6_500);
}

/// With one flow, fq_codel makes exactly CoDel's decisions: same packets out, same marks,
/// same drops at the same calls, same CoDel state, on a bursty mixed-ECN overload.
#[test]
fn one_flow_equals_codel() {
    for (seed, exact) in [(1u64, false), (2, true), (3, false)] {
        // fq_codel's ECN default (on), which Linux's codel leaves off.
        let law = CoDelParams {
            limit: 1_000_000,
            exact_sqrt: exact,
            ecn: true,
            ..CoDelParams::default()
        };
        let mut c = CoDel::new(&law);
        let mut f = fq(FqCodelParams {
            flows: 1,
            limit: 1_000_000,
            memory_limit: Bytes(1 << 40),
            exact_sqrt: exact,
            ..FqCodelParams::default()
        });
        let (mut hc, mut hf) = (Harness::new(seed), Harness::new(seed));
        let mut trace = ChaCha8Rng::seed_from_u64(seed);
        let (mut now, mut id, mut link_free) = (Time::ZERO, 0u32, Time::ZERO);
        let (mut drops, mut marks) = (0, 0);
        let rate_ps_per_byte = 800_000; // 10 Mb/s
        while now < at_ms(20_000) {
            // Bursts on/off: about 14 Mb/s offered while on.
            let on = (now.as_ps() / ms(2_000).as_ps()) % 3 != 2;
            if on && trace.gen_bool(0.6) {
                let wire = trace.gen_range(64..=1514);
                let ecn = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::NotEct][trace.gen_range(0..4)];
                let flow = trace.gen();
                hc.enq(&mut c, now, pkt(id, wire, ecn, flow));
                hf.enq(&mut f, now, pkt(id, wire, ecn, flow));
                id += 1;
            }
            if now >= link_free && !c.is_empty() {
                let (dc, df) = (hc.deq(&mut c, now), hf.deq(&mut f, now));
                assert_eq!(dc, df, "at {now:?}");
                let (xc, xf): (Vec<Dropped>, Vec<Dropped>) = (hc.take_drops(), hf.take_drops());
                assert_eq!(xc, xf, "at {now:?}");
                drops += xc.len();
                if let Some(d) = dc {
                    marks += usize::from(d.marked);
                    link_free = now + Duration::from_ps(u64::from(d.entry.wire) * rate_ps_per_byte);
                }
            }
            assert_eq!(c.vars(), f.flow_vars(0));
            assert_eq!((c.len(), c.backlog_bytes()), (f.len(), f.backlog_bytes()));
            now += Duration::from_us(500);
        }
        assert!(drops > 20 && marks > 20, "seed {seed}: {drops} drops, {marks} marks");
    }
}

#[test]
fn params_are_validated_by_name() {
    use dcsim_aqm::fq_codel::{from_params, SPEC};
    use dcsim_types::params::{Params, Value};
    let with = |v: Vec<(&'static str, Value)>| from_params(&Params::from_values(SPEC.params, v));
    assert_eq!(with(vec![("flows", Value::Integer(0))]).unwrap_err().field, "flows");
    let e = with(vec![("flows", Value::Integer(65_537))]).unwrap_err();
    assert_eq!(e.field, "flows");
    assert!(e.message.contains("65536"), "{e}");
    assert!(with(vec![("flows", Value::Integer(65_536))]).is_ok());
    assert_eq!(with(vec![("quantum", Value::Size(Bytes(0)))]).unwrap_err().field, "quantum");
    // Linux's bound, 1 MiB; 2^63 had wrapped the deficit negative and hung the scheduler.
    assert!(with(vec![("quantum", Value::Size(Bytes(1 << 20)))]).is_ok());
    for q in [(1 << 20) + 1, 1 << 63, u64::MAX] {
        assert_eq!(with(vec![("quantum", Value::Size(Bytes(q)))]).unwrap_err().field, "quantum");
    }
    assert_eq!(
        with(vec![("memory_limit", Value::Size(Bytes(0)))]).unwrap_err().field,
        "memory_limit"
    );
    assert_eq!(
        with(vec![("drop_batch_size", Value::Integer(0))]).unwrap_err().field,
        "drop_batch_size"
    );
    assert_eq!(with(vec![("target", Value::Duration(ms(200)))]).unwrap_err().field, "target");
    let d = with(vec![]).unwrap();
    assert_eq!(d, FqCodelParams::default());
    assert_eq!(
        (d.flows, d.quantum, d.limit, d.memory_limit, d.ecn, d.ce_threshold, d.drop_batch_size),
        (1024, Bytes(1514), 10_240, Bytes(32 << 20), true, None, 64)
    );
}
