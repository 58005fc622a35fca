//! RED/ECN: the marking rule of dcsim's switch, checked against an independent replay of the
//! random stream.

mod common;

use common::{pkt, Harness};
use dcsim_aqm::{Bytes, DropCause, Ecn, QueueDisc, Red, RedParams, Time};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn red(kmin: u64, kmax: u64, pmax: f64, ecn: bool) -> Red {
    Red::new(&RedParams { kmin: Bytes(kmin), kmax: Bytes(kmax), pmax, ecn })
}

/// The rule as the pre-refactor engine wrote it (one draw only strictly between kmin and kmax).
fn reference(e: u64, kmin: u64, kmax: u64, pmax: f64, rng: &mut ChaCha8Rng) -> bool {
    if e > kmax {
        true
    } else if e > kmin {
        let p = pmax * (e - kmin) as f64 / (kmax - kmin) as f64;
        rng.gen::<f64>() < p
    } else {
        false
    }
}

/// At a fixed depth left behind (20 kB between kmin 10 kB and kmax 30 kB, pmax 0.5) the mark
/// probability is pmax·(e−kmin)/(kmax−kmin) = 0.25; each decision is the engine's draw.
#[test]
fn marking_probability_at_fixed_depth() {
    let (kmin, kmax, pmax) = (10_000, 30_000, 0.5);
    let mut q = red(kmin, kmax, pmax, true);
    let mut h = Harness::new(7);
    let mut replay = ChaCha8Rng::seed_from_u64(7);
    for i in 0..21 {
        h.enq(&mut q, Time::ZERO, pkt(i, 1000, Ecn::Ect0, 0));
    }
    let n = 100_000u32;
    let mut marks = 0u32;
    for i in 0..n {
        let d = h.deq(&mut q, Time::ZERO).unwrap();
        assert_eq!(q.backlog_bytes(), 20_000);
        assert_eq!(d.marked, reference(20_000, kmin, kmax, pmax, &mut replay), "decision {i}");
        assert_eq!(d.entry.ecn, if d.marked { Ecn::Ce } else { Ecn::Ect0 });
        marks += u32::from(d.marked);
        h.enq(&mut q, Time::ZERO, pkt(21 + i, 1000, Ecn::Ect0, 0));
    }
    // Binomial(n, 0.25): 5 standard deviations is about 685 marks.
    let sd = (f64::from(n) * 0.25 * 0.75).sqrt();
    assert!((f64::from(marks) - 25_000.0).abs() < 5.0 * sd, "{marks} marks");
    assert!(h.dropped.is_empty());
}

/// At or below kmin nothing is marked and the random stream is not advanced.
#[test]
fn no_draw_at_or_below_kmin() {
    let mut q = red(10_000, 30_000, 1.0, true);
    let mut h = Harness::new(3);
    for i in 0..11 {
        h.enq(&mut q, Time::ZERO, pkt(i, 1000, Ecn::Ect0, 0));
    }
    // Depths left behind: 10 000 (= kmin), 9 000, ..., 0.
    while let Some(d) = h.deq(&mut q, Time::ZERO) {
        assert!(!d.marked);
    }
    let mut fresh = ChaCha8Rng::seed_from_u64(3);
    assert_eq!(h.rng.gen::<u64>(), fresh.gen::<u64>(), "RED drew at or below kmin");
}

/// Above kmax every packet is marked, without a draw; an already-CE packet counts as marked.
#[test]
fn above_kmax_always_marks() {
    let mut q = red(1_000, 2_000, 0.0, true);
    let mut h = Harness::new(5);
    for i in 0..10 {
        let ecn = [Ecn::Ect0, Ecn::Ect1, Ecn::Ce][i as usize % 3];
        h.enq(&mut q, Time::ZERO, pkt(i, 1000, ecn, 0));
    }
    // Depths left behind 9 000 .. 3 000 are above kmax: 7 marks; 2 000, 1 000 and 0 are not
    // (pmax = 0 makes the ramp mark nothing).
    let marked: Vec<bool> =
        std::iter::from_fn(|| h.deq(&mut q, Time::ZERO)).map(|d| d.marked).collect();
    assert_eq!(marked, [true, true, true, true, true, true, true, false, false, false]);
    let mut fresh = ChaCha8Rng::seed_from_u64(5);
    let _ = fresh.gen::<f64>(); // the one draw at depth 2 000 (kmin < 2 000 <= kmax)
    assert_eq!(h.rng.gen::<u64>(), fresh.gen::<u64>());
}

/// Not-ECT packets are dropped on exactly the decisions that mark ECT packets, and so is
/// everything when `ecn = false`; a dequeue that drops goes on to the next packet.
#[test]
fn not_ect_dropped_on_the_same_decisions() {
    let run = |ecn_pkt: Ecn, ecn_on: bool| {
        let mut q = red(10_000, 30_000, 0.6, ecn_on);
        let mut h = Harness::new(11);
        for i in 0..40 {
            h.enq(&mut q, Time::ZERO, pkt(i, 1000, ecn_pkt, 0));
        }
        let mut out = Vec::new();
        let mut signalled = Vec::new();
        while let Some(d) = h.deq(&mut q, Time::ZERO) {
            if d.marked {
                signalled.push(d.entry.pkt);
            }
            out.push(d.entry.pkt);
        }
        for d in &h.dropped {
            assert_eq!(d.cause, DropCause::Aqm);
            signalled.push(d.entry.pkt);
        }
        signalled.sort_unstable();
        (out, signalled, h.dropped.len())
    };
    let (_, marks, drops) = run(Ecn::Ect0, true);
    assert_eq!(drops, 0);
    let (out_n, drops_n, n_drops) = run(Ecn::NotEct, true);
    assert_eq!(drops_n, marks);
    assert_eq!(out_n.len() + n_drops, 40);
    assert!(out_n.iter().all(|p| drops_n.binary_search(p).is_err()));
    let (_, drops_off, _) = run(Ecn::Ect0, false);
    assert_eq!(drops_off, marks);
    // The depth trajectory is the same in every run, so the replay gives the signalled set.
    let mut replay = ChaCha8Rng::seed_from_u64(11);
    let expect: Vec<u32> = (0..40u32)
        .filter(|i| reference(39_000 - 1000 * u64::from(*i), 10_000, 30_000, 0.6, &mut replay))
        .collect();
    assert_eq!(marks, expect);
    assert!(marks.len() > 9 && marks.len() < 40, "the case must mix outcomes");
}

/// kmin == kmax is a step: everything leaving more than kmax bytes behind is marked, nothing
/// else, and nothing is drawn.
#[test]
fn kmin_equal_kmax_is_a_step() {
    let mut q = red(5_000, 5_000, 0.3, true);
    let mut h = Harness::new(1);
    for i in 0..12 {
        h.enq(&mut q, Time::ZERO, pkt(i, 1000, Ecn::Ect1, 0));
    }
    let mut seen = Vec::new();
    while let Some(d) = h.deq(&mut q, Time::ZERO) {
        seen.push((q.backlog_bytes(), d.marked));
    }
    assert!(seen.iter().all(|&(e, m)| m == (e > 5_000)));
    assert_eq!(seen.iter().filter(|s| s.1).count(), 6);
    let mut fresh = ChaCha8Rng::seed_from_u64(1);
    assert_eq!(h.rng.gen::<u64>(), fresh.gen::<u64>());
}

#[test]
fn params_are_validated_by_name() {
    use dcsim_aqm::red::{from_params, SPEC};
    use dcsim_types::params::{Params, Value};
    let p = Params::from_values(
        SPEC.params,
        vec![("kmin", Value::Size(Bytes(9))), ("kmax", Value::Size(Bytes(8)))],
    );
    let e = from_params(&p).unwrap_err();
    assert_eq!(e.field, "kmin");
    assert!(e.message.contains("kmax"), "{e}");
    let p = Params::from_values(SPEC.params, vec![("pmax", Value::Number(1.5))]);
    assert_eq!(from_params(&p).unwrap_err().field, "pmax");
    let p = Params::from_values(SPEC.params, vec![("pmax", Value::Number(-0.1))]);
    assert_eq!(from_params(&p).unwrap_err().field, "pmax");
    assert_eq!(from_params(&Params::default()), Ok(RedParams::default()));
}
