//! CoDel under constant overload, against the closed forms of the control law.

mod common;

use common::{at_ms, ms, overload, pkt, Harness, Step};
use dcsim_aqm::codel::{CeSelector, CodelVars};
use dcsim_aqm::{Bytes, CoDel, CoDelParams, DropCause, Duration, Ecn, QueueDisc, Time};

const WIRE: u32 = 1500;

fn t_in() -> Duration {
    ms(1) // 12 Mb/s of 1500-byte packets
}
fn t_out() -> Duration {
    Duration::from_us(1200) // a 10 Mb/s link
}

/// CoDel with ECN on (Linux `codel ecn`), so that ECT traffic is marked.
fn codel(exact: bool) -> CoDel {
    CoDel::new(&CoDelParams {
        limit: 100_000,
        exact_sqrt: exact,
        ecn: true,
        ..CoDelParams::default()
    })
}

fn run(q: &mut CoDel, ecn: Ecn, end_ms: u64) -> Vec<Step<CodelVars>> {
    let mut h = Harness::new(1);
    let mut id = 0;
    overload(
        &mut h,
        q,
        &mut id,
        ecn,
        WIRE,
        t_in(),
        t_out(),
        Time::ZERO,
        Time::MAX,
        at_ms(end_ms),
        CoDel::vars,
    )
}

fn interval_over_sqrt(n: u32) -> u64 {
    (ms(100).as_ps() as f64 / f64::from(n).sqrt()).round() as u64
}

/// The j-th dequeue (at 1.2·j ms) takes the packet that arrived at (j−1) ms, so sojourn grows
/// as 1 + 0.2·j ms and first reaches 5 ms at j = 20 (24 ms). The first drop is at the first
/// dequeue strictly after 24 + 100 ms: j = 104, at 124.8 ms.
#[test]
fn first_drop_comes_an_interval_after_sojourn_first_exceeds_target() {
    let mut q = codel(false);
    let steps = run(&mut q, Ecn::NotEct, 400);
    let above = steps
        .iter()
        .find(|s| s.out.is_some_and(|d| s.t.saturating_since(d.entry.enq) >= ms(5)))
        .expect("sojourn exceeds target")
        .t;
    assert_eq!(above, Time(24 * 1_000_000_000));
    let first_drop = steps.iter().find(|s| !s.drops.is_empty()).expect("a drop").t;
    assert!(first_drop >= above + ms(100));
    assert_eq!(first_drop, Time(Duration::from_us(124_800).as_ps()));
    assert_eq!(steps.iter().find(|s| !s.drops.is_empty()).unwrap().drops[0].cause, DropCause::Aqm);
}

/// Checks, for every dequeue of `steps`, that each count increment n happened within one
/// packet time after its scheduled instant s_n and rescheduled s_{n+1} = s_n + interval/√n.
/// Returns the number of signals (drops or marks) checked.
fn check_schedule(steps: &[Step<CodelVars>], signals: impl Fn(&Step<CodelVars>) -> usize) -> usize {
    let mut checked = 0;
    let mut entered = false;
    for s in steps {
        let (b, a) = (s.before, s.after);
        let n_sig = signals(s);
        if !b.dropping && a.dropping {
            // Entering: one signal now, count = 1, next at now + interval.
            assert!(!entered, "left and re-entered the dropping state under constant overload");
            entered = true;
            assert_eq!((a.count, n_sig), (1, 1));
            assert_eq!(a.drop_next, s.t + Duration::from_ps(interval_over_sqrt(1)));
            checked += 1;
            continue;
        }
        if !(b.dropping && a.dropping) {
            assert_eq!(n_sig, 0, "signal outside the dropping state at {:?}", s.t);
            continue;
        }
        let incs = a.count - b.count;
        assert_eq!(incs as usize, n_sig, "one count per signal at {:?}", s.t);
        let mut s_n = b.drop_next;
        for i in 0..incs {
            let n = b.count + i; // the law's step uses the incremented count n + 1
            assert!(
                s.t >= s_n && s.t < s_n + t_out(),
                "signal {n} at {:?}, scheduled {:?}",
                s.t,
                s_n
            );
            s_n += Duration::from_ps(interval_over_sqrt(n + 1));
        }
        assert_eq!(a.drop_next, s_n, "schedule at {:?}", s.t);
        checked += n_sig;
    }
    checked
}

/// With exact √: s_{n+1} = s_n + interval/√n exactly, and every drop within one packet time
/// of its instant.
#[test]
fn drop_instants_follow_interval_over_sqrt_count() {
    let mut q = codel(true);
    let steps = run(&mut q, Ecn::NotEct, 3_000);
    let drops = check_schedule(&steps, |s| s.drops.len());
    assert!(drops >= 100, "only {drops} drops");
    assert!(q.vars().dropping);
}

/// ECT traffic: marks on the same schedule, no drops, and the first mark where the Not-ECT
/// run dropped first.
#[test]
fn ect_traffic_is_marked_on_the_same_schedule_without_drops() {
    let mut q = codel(true);
    let steps = run(&mut q, Ecn::Ect0, 3_000);
    assert!(steps.iter().all(|s| s.drops.is_empty()));
    let marks = check_schedule(&steps, |s| usize::from(s.out.is_some_and(|d| d.marked)));
    assert!(marks >= 100, "only {marks} marks");
    let first_mark = steps.iter().find(|s| s.out.is_some_and(|d| d.marked)).unwrap();
    assert_eq!(first_mark.out.unwrap().entry.ecn, Ecn::Ce);
    let mut q2 = codel(true);
    let not_ect = run(&mut q2, Ecn::NotEct, 400);
    assert_eq!(first_mark.t, not_ect.iter().find(|s| !s.drops.is_empty()).unwrap().t);
}

/// No drop while the backlog left behind is at most one MTU (1514 B), however long packets
/// wait: a standing queue of `k − 1` packets, one arrival and one departure every 200 ms. The
/// control case leaves 1515 B behind and is dropped.
#[test]
fn no_drop_while_backlog_is_at_most_one_mtu() {
    for (k, wire, expect_drops) in
        [(1, 1500, false), (2, 700, false), (2, 1514, false), (2, 1515, true)]
    {
        let mut q = codel(false);
        let mut h = Harness::new(0);
        let mut id = 0;
        for _ in 1..k {
            h.enq(&mut q, Time::ZERO, pkt(id, wire, Ecn::NotEct, 0));
            id += 1;
        }
        for round in 0..50u64 {
            h.enq(&mut q, at_ms(round * 200), pkt(id, wire, Ecn::NotEct, 0));
            id += 1;
            h.deq(&mut q, at_ms(round * 200 + 199));
            if !expect_drops {
                assert_eq!(q.backlog_bytes(), (k - 1) * u64::from(wire));
            }
        }
        assert_eq!(!h.dropped.is_empty(), expect_drops, "{} x {wire} B left behind", k - 1);
    }
}

/// Drive overload until `stop_ms`, drain, idle, resume at `resume_ms`, and return the state
/// when the dropping state was left and when it was entered again (with the entry time).
fn leave_and_reenter(stop_ms: u64, resume_ms: u64) -> (CodelVars, CodelVars, Time) {
    let mut q = codel(false);
    let mut h = Harness::new(1);
    let mut id = 0;
    let steps = overload(
        &mut h,
        &mut q,
        &mut id,
        Ecn::NotEct,
        WIRE,
        t_in(),
        t_out(),
        Time::ZERO,
        at_ms(stop_ms),
        at_ms(resume_ms),
        CoDel::vars,
    );
    let left = steps
        .iter()
        .rev()
        .find(|s| s.before.dropping && !s.after.dropping)
        .expect("left the dropping state");
    let at_exit = left.before;
    assert!(!q.vars().dropping);
    while !q.is_empty() {
        h.deq(&mut q, at_ms(resume_ms)); // what is left leaves (below target by now, or alone)
    }
    h.take_drops();
    let steps = overload(
        &mut h,
        &mut q,
        &mut id,
        Ecn::NotEct,
        WIRE,
        t_in(),
        t_out(),
        at_ms(resume_ms),
        Time::MAX,
        at_ms(resume_ms + 1_000),
        CoDel::vars,
    );
    let entry =
        steps.iter().find(|s| !s.before.dropping && s.after.dropping).expect("entered again");
    (at_exit, entry.after, entry.t)
}

/// Re-entering within 16 intervals of the last scheduled drop resumes from count − lastcount;
/// later, count restarts at 1.
#[test]
fn reentry_resumes_count_from_count_minus_lastcount() {
    let (exit, again, t) = leave_and_reenter(3_000, 3_500);
    let delta = exit.count - exit.lastcount;
    assert!(delta > 1, "delta {delta}");
    assert!(t.saturating_since(exit.drop_next) < ms(1_600));
    assert_eq!(again.count, delta);
    assert_eq!(again.lastcount, delta);

    let (exit, again, t) = leave_and_reenter(3_000, 6_000);
    assert!(exit.count - exit.lastcount > 1);
    assert!(t.saturating_since(exit.drop_next) >= ms(1_600));
    assert_eq!((again.count, again.lastcount), (1, 1));
}

#[test]
fn overflow_drops_the_arriving_packet() {
    let mut q = CoDel::new(&CoDelParams { limit: 3, ..CoDelParams::default() });
    let mut h = Harness::new(0);
    for i in 0..5 {
        h.enq(&mut q, Time::ZERO, pkt(i, 100, Ecn::NotEct, 0));
    }
    let dropped: Vec<(u32, DropCause)> = h.dropped.iter().map(|d| (d.entry.pkt, d.cause)).collect();
    assert_eq!(dropped, [(3, DropCause::Overflow), (4, DropCause::Overflow)]);
    assert_eq!(q.peek(), Some(0));
}

/// ce_threshold marks ECN-capable packets whose sojourn exceeds it — all of them, or only
/// ECT(1)/CE with the `ect1` selector — and never touches Not-ECT packets.
#[test]
fn ce_threshold_marks_by_selector() {
    for (sel, expect) in [
        (CeSelector::Any, [false, true, true, true]),
        (CeSelector::Ect1, [false, false, true, true]),
    ] {
        let mut q = CoDel::new(&CoDelParams {
            ce_threshold: Some(ms(1)),
            ce_threshold_selector: sel,
            ..CoDelParams::default()
        });
        let mut h = Harness::new(0);
        let ecns = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce];
        for (i, e) in ecns.iter().enumerate() {
            h.enq(&mut q, Time::ZERO, pkt(i as u32, 1500, *e, 0));
        }
        // Sojourn 2 ms: above ce_threshold, below target (no CoDel action).
        let marked: Vec<bool> = (0..4).map(|_| h.deq(&mut q, at_ms(2)).unwrap().marked).collect();
        assert_eq!(marked, expect, "{sel:?}");
        // At exactly the threshold nothing is marked (strictly above, as Linux).
        h.enq(&mut q, Time::ZERO, pkt(9, 1500, Ecn::Ect1, 0));
        assert!(!h.deq(&mut q, at_ms(1)).unwrap().marked);
        assert!(h.dropped.is_empty());
    }
}

#[test]
fn params_are_validated_by_name() {
    use dcsim_aqm::codel::{from_params, SPEC};
    use dcsim_types::params::{Params, Value};
    let with = |v: Vec<(&'static str, Value)>| from_params(&Params::from_values(SPEC.params, v));
    assert_eq!(with(vec![("target", Value::Duration(ms(100)))]).unwrap_err().field, "target");
    assert_eq!(
        with(vec![("target", Value::Duration(Duration::ZERO))]).unwrap_err().field,
        "target"
    );
    assert_eq!(with(vec![("interval", Value::Duration(ms(4)))]).unwrap_err().field, "target");
    assert_eq!(
        with(vec![("interval", Value::Duration(Duration::ZERO))]).unwrap_err().field,
        "interval"
    );
    assert_eq!(with(vec![("limit", Value::Integer(0))]).unwrap_err().field, "limit");
    assert_eq!(
        with(vec![("ce_threshold", Value::Duration(Duration::ZERO))]).unwrap_err().field,
        "ce_threshold"
    );
    let p = with(vec![
        ("ce_threshold", Value::Duration(ms(1))),
        ("ce_threshold_selector", Value::Choice("ect1")),
    ])
    .unwrap();
    assert_eq!((p.ce_threshold, p.ce_threshold_selector), (Some(ms(1)), CeSelector::Ect1));
    // Without a threshold the selector would select nothing: refused (it ran silently).
    let e = with(vec![("ce_threshold_selector", Value::Choice("ect1"))]).unwrap_err();
    assert_eq!(e.field, "ce_threshold_selector");
    assert!(e.message.contains("without ce_threshold"), "{e}");
    assert_eq!(with(vec![]), Ok(CoDelParams::default()));
    assert_eq!(CoDelParams::default().mtu, Bytes(1514));
}
