//! Properties of the pure algorithm cores over arbitrary event sequences: rates stay within
//! their bounds, `alpha` stays a fraction, timers always move forward.

use dcsim_baselines::{Dcqcn, DcqcnParams, Dctcp, DctcpParams, Timely, TimelyParams};
use dcsim_core::cc::TimerOp;
use dcsim_core::units::{BitsPerSec, Duration, Time};
use proptest::prelude::*;

const LINE: BitsPerSec = BitsPerSec::gbps(100);

proptest! {
    #[test]
    fn dcqcn_bounds(
        ops in proptest::collection::vec((0u8..4, 1u64..400_000), 1..400),
        clamp in any::<bool>(),
        f in 0u32..4,
        g_inv in 1u32..512,
    ) {
        let p = DcqcnParams {
            clamp_target_rate: clamp,
            fast_recovery_times: f,
            ewma_gain: 1.0 / f64::from(g_inv),
            ..DcqcnParams::default()
        };
        let mut d = Dcqcn::new(&p, LINE);
        let mut now = Time::ZERO;
        let mut changed = false;
        for (op, step_ns) in ops {
            now += Duration::from_ns(step_ns);
            let a = match op {
                0 => d.on_cnp(now),
                1 => d.on_alpha_timer(now),
                2 => d.on_decrease_timer(now),
                _ => d.on_increase_timer(now),
            };
            for t in a.timers {
                if let TimerOp::Set(at) = t {
                    prop_assert!(at > now);
                }
            }
            if let Some(r) = a.rate {
                changed = true;
                prop_assert_eq!(r, d.rate());
            }
            prop_assert!(d.rate() <= LINE && d.target_rate() <= LINE);
            prop_assert!((0.0..=1.0).contains(&d.alpha()));
            if changed {
                // Halving truncates, so an increase from the floor can land 1 bps below it.
                prop_assert!(d.rate().0 + 1 >= p.min_rate.0, "rate {}", d.rate());
            }
        }
    }

    #[test]
    fn timely_bounds(
        rtts_ns in proptest::collection::vec(1u64..2_000_000, 1..300),
        gaps in proptest::collection::vec(1u64..20_000, 300),
    ) {
        let p = TimelyParams::default();
        let mut t = Timely::new(&p, LINE);
        let mut ack = 0u64;
        let mut prev_stage = 0;
        for (rtt, gap) in rtts_ns.into_iter().zip(gaps) {
            ack += gap;
            let r = t.on_ack(ack, ack + 10_000, Duration::from_ns(rtt));
            if let Some(r) = r {
                prop_assert_eq!(r, t.rate());
                prop_assert!(t.inc_stage() == 0 || t.inc_stage() == prev_stage + 1);
            }
            prev_stage = t.inc_stage();
            prop_assert!(t.rate() >= p.min_rate && t.rate() <= LINE);
        }
    }

    #[test]
    fn dctcp_bounds(
        acks in proptest::collection::vec((0u64..3_000, any::<bool>(), 0u64..20_000), 1..400),
        reset in any::<bool>(),
    ) {
        let p = DctcpParams { reset_ecn_count_after_first_batch: reset, ..DctcpParams::default() };
        let mut d = Dctcp::new(&p, LINE, 1000);
        let mut ack = 0u64;
        for (step, ecn, ahead) in acks {
            ack += step;
            let was_cwr = d.in_cwr();
            let high = d.high_seq();
            let before = d.rate();
            let r = d.on_ack(ack, ack + ahead, ecn);
            if let Some(r) = r {
                prop_assert_eq!(r, d.rate());
            } else {
                prop_assert_eq!(before, d.rate());
            }
            if was_cwr && ack <= high {
                // Still in the same CWR period: no cut.
                prop_assert!(d.rate() >= before);
            }
            prop_assert!(d.rate() >= p.min_rate && d.rate() <= LINE);
            prop_assert!((0.0..=1.0).contains(&d.alpha()));
        }
    }
}
