//! `Qdisc::passes_through_when_empty`: where it says a packet offered to an empty discipline
//! comes straight back, enqueueing and dequeueing it at once returns the same packet,
//! unmarked, drops nothing, draws no random number and leaves the discipline empty — the
//! claim a switch relies on to send a packet through an idle port without queueing it.

mod common;

use common::{pkt, Harness};
use dcsim_aqm::{
    Bytes, CoDelParams, DualPi2Params, Ecn, FifoParams, FqCodelParams, Qdisc, QdiscConfig,
    QueueDisc, RedParams, Time,
};
use proptest::prelude::*;
use rand::Rng;

fn config() -> impl Strategy<Value = QdiscConfig> {
    let red = (0u64..200_000, 0u64..200_000, 0.0f64..=1.0, any::<bool>()).prop_map(
        |(a, b, pmax, ecn)| {
            QdiscConfig::Red(RedParams { kmin: Bytes(a.min(b)), kmax: Bytes(a.max(b)), pmax, ecn })
        },
    );
    let fifo =
        (prop::option::of(1u64..5_000), prop::option::of(1u32..4)).prop_map(|(bytes, packets)| {
            QdiscConfig::Fifo(FifoParams { limit_bytes: bytes.map(Bytes), limit_packets: packets })
        });
    prop_oneof![
        4 => red,
        4 => fifo,
        1 => Just(QdiscConfig::CoDel(CoDelParams::default())),
        1 => Just(QdiscConfig::FqCodel(FqCodelParams::default())),
        1 => Just(QdiscConfig::DualPi2(DualPi2Params::default())),
    ]
}

fn ecn() -> impl Strategy<Value = Ecn> {
    prop::sample::select(vec![Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce])
}

proptest! {
    #[test]
    fn an_empty_discipline_that_says_so_hands_the_packet_straight_back(
        cfg in config(),
        // Packets offered and drained first, so that the check sees a used discipline.
        before in prop::collection::vec((1u32..3_000, ecn()), 0..6),
        wire in 1u32..6_000,
        mark in ecn(),
        seed in any::<u64>(),
    ) {
        let mut q = Qdisc::new(&cfg);
        let mut h = Harness::new(seed);
        for (i, &(w, e)) in before.iter().enumerate() {
            h.enq(&mut q, Time::from_ns(i as u64), pkt(i as u32, w, e, 0));
        }
        while h.deq(&mut q, Time::from_ns(10)).is_some() {}
        h.take_drops();
        prop_assert!(q.is_empty());
        let says = q.passes_through_when_empty(wire);
        match &cfg {
            QdiscConfig::Red(_) => prop_assert!(says),
            QdiscConfig::Fifo(p) => {
                let fits = p.limit_bytes.is_none_or(|b| u64::from(wire) <= b.get());
                prop_assert_eq!(says, fits);
            }
            _ => prop_assert!(!says),
        }
        if says {
            let mut untouched = h.rng.clone();
            let now = Time::from_ns(20);
            h.enq(&mut q, now, pkt(99, wire, mark, 7));
            let d = h.deq(&mut q, now).expect("the packet comes back");
            prop_assert_eq!(d.entry.pkt, 99);
            prop_assert_eq!(d.entry.wire, wire);
            prop_assert_eq!(d.entry.ecn, mark);
            prop_assert!(!d.marked);
            prop_assert!(h.dropped.is_empty());
            prop_assert!(q.is_empty() && q.backlog_bytes() == 0);
            prop_assert_eq!(h.rng.gen::<u64>(), untouched.gen::<u64>(), "no random draw");
        }
    }
}
