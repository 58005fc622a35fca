//! Baseline congestion-control plugins for `dcsim-core`: **DCQCN** (Mellanox variant),
//! **TIMELY** and **DCTCP** (hardware-style, rate-based), each reproducing the behaviour of the
//! reference ns-3 HPCC simulator as described in *HPCC ns-3 reference simulator: behavioural
//! specification* (`../shared/reference/hpcc-ns3-semantics.md`, cited below as "spec §x").
//!
//! # Layout
//!
//! One file per algorithm. Each has
//! - a `…Params` struct with public fields, a [`Default`] equal to the reference run script's
//!   values (spec §5.1), a typed `check()` that returns a [`ParamError`] naming the offending
//!   field, and `validate()`, the same as one sentence (the factories themselves validate
//!   nothing at run time);
//! - the scheme's [`PluginSpec`](dcsim_types::params::PluginSpec) (`SPEC`, and `SPEC_W` for
//!   the windowed variant) and `…Params::from_params`, which reads the parameters from typed
//!   [`Params`](dcsim_types::params::Params) with the defaults above and checks them (the
//!   CLI's scheme registry calls both);
//! - a per-flow state struct whose logic lives in **pure methods** (`on_cnp`, `on_ack`,
//!   `on_*_timer`) taking plain numbers and returning what to do ([`Actions`] or a new rate), so
//!   that it can be tested without a simulation;
//! - a thin [`CongestionControl`](dcsim_core::cc::CongestionControl) impl that reads the
//!   [`CcCtx`], calls the pure method and writes the result back with
//!   [`CcCtx::set_rate`] (a plain overwrite: the already scheduled next send keeps its time, as
//!   in the reference; [`CcCtx::change_rate`] is HPCC's re-timing hook and is not used here);
//! - a factory ([`DcqcnFactory`], [`TimelyFactory`], [`DctcpFactory`]) with the scheme's name and
//!   header mode.
//!
//! # DCQCN (`"dcqcn"`, no telemetry header)
//!
//! Spec §4.3. The receiver echoes every CE mark in the ACK/NACK (there are no separate CNP
//! packets), so every flagged ACK is a congestion notification. The first one initialises
//! `alpha = 1` and starts two periodic timers: the alpha timer (every `t_alpha`: EWMA of "was
//! there a CNP in the last period" with gain `g`) and the decrease timer (every `t_dec`, offset by
//! +1 ns so that it runs after the alpha update of the same microsecond): if a CNP arrived since
//! the last check the rate is cut by `alpha/2` (floored at `MIN_RATE`), the increase stage is
//! reset and the increase timer (re)started. The increase timer (every `t_inc`) moves the rate
//! half-way towards the target rate; the target itself is raised by `AI` at stage `F` and by
//! `HAI` after it (fast recovery for stages `< F`). There is no byte counter. The rate is never
//! touched before the first CNP. See [`dcqcn`].
//!
//! # TIMELY (`"timely"`, 8-byte timestamp header)
//!
//! Spec §4.4. Each data packet carries its send time, echoed in the ACK; RTT = arrival time of
//! the ACK − echoed time. The rate reacts once per window of data (when the cumulative ACK passes
//! the `snd_nxt` recorded at the previous reaction): below `T_low` additive increase, above
//! `T_high` multiplicative decrease by `1 − β(1 − T_high/rtt)`, otherwise by the sign of the
//! smoothed RTT gradient (decrease by `1 − β·gradient`). After `hai_after` consecutive increases
//! the step becomes `HAI`. The first ACK only records the RTT. See [`timely`].
//!
//! # DCTCP (`"dctcp"`, no telemetry header)
//!
//! Spec §4.5. A rate-based hardware DCTCP starting at line rate: `alpha` is an EWMA (gain `g`)
//! of the fraction of CE-echoing ACKs per batch (a batch ends when the cumulative ACK passes the
//! `snd_nxt` recorded at its start); the first ECN echo outside a congestion-window-reduced
//! (CWR) period cuts the rate by `alpha/2` and enters CWR until the ACK passes the `snd_nxt` of
//! the cut; outside CWR each new batch adds `DCTCP_RATE_AI`. See [`dctcp`].
//!
//! # Windows: the "+w" variants are NIC configuration, not algorithms
//!
//! The reference's `dcqcn_vwin`, `timely_vwin` (and `dctcp`, which always uses one) run the
//! *same* algorithms with a BDP window enforced by the NIC (spec §2.1, §4.6). In dcsim that is
//! [`dcsim_core::config::NicConfig::window`] ([`WindowMode`](dcsim_core::config::WindowMode)):
//! `HAS_WIN 0` → `None`, `HAS_WIN 1, VAR_WIN 0` → `Fixed`, `HAS_WIN 1, VAR_WIN 1` →
//! `Variable` (window = BDP × rate / line rate, following the rate this crate sets). The CLI's
//! scheme profiles (`dcqcn`, `dcqcn-w`, `timely`, `timely-w`, `dctcp`) choose it together with
//! `ack_high_prio`. The reference run script's table (spec §5.1):
//!
//! | run-script `--cc` | CC | `t_alpha`/`t_dec`/`t_inc` (µs) | HAS_WIN | VAR_WIN | ACK_HIGH_PRIO | dcsim |
//! |---|---|---|---|---|---|---|
//! | `dcqcn` | DCQCN | 1 / 4 / 300 | 0 | 0 | 1 | `dcqcn`: `None` |
//! | `dcqcn_paper` | DCQCN | 50 / 50 / 55 | 0 | 0 | 1 | `dcqcn` + [`DcqcnParams::paper`] |
//! | `dcqcn_vwin` | DCQCN | 1 / 4 / 300 | 1 | 1 | 0 | `dcqcn-w`: `Variable` |
//! | `dcqcn_paper_vwin` | DCQCN | 50 / 50 / 55 | 1 | 1 | 0 | `dcqcn-w` + [`DcqcnParams::paper`] |
//! | `timely` | TIMELY | – | 0 | 0 | 1 | `timely`: `None` |
//! | `timely_vwin` | TIMELY | – | 1 | 1 | 1 | `timely-w`: `Variable` |
//! | `dctcp` | DCTCP | – | 1 | 1 | 0 | `dctcp`: `Variable` |
//! | `hp` (HPCC, for comparison) | HPCC | – | 1 | 1 | 0 | `Variable` |
//! | `hpccPint` (for comparison) | HPCC-PINT | – | 1 | 1 | 0 | `Variable` |
//!
//! `GLOBAL_T 1` everywhere (one network-wide BDP). `ACK_HIGH_PRIO` only selects which PFC
//! priority can block a host's ACK queue (spec §1.4, quirk 2).
//!
//! # Arithmetic
//!
//! Rates are integer bits per second. As in the reference (`DataRate * double` casts the
//! product to `u64`), every multiplication of a rate by a factor is done in `f64` and truncated
//! toward zero when stored; halving is integer division; sums and `min`/`max` are exact. All
//! EWMAs use the reference's expression order so that they are bit-identical. Times are
//! picoseconds; see [`timely`] for how RTT thresholds are kept identical to the reference's
//! nanosecond comparisons.
//!
//! # Quirk choices (spec §9 and §2.4)
//!
//! - **Completing ACK re-arms DCQCN timers** (spec §2.4): in the reference an ECN-flagged ACK
//!   that completes a flow which never saw a CNP runs the first-CNP branch *after* the
//!   completion cancelled the timers, which then fire until the end of the run (no effect on
//!   results). It cannot happen here: the core ignores timers of a completed flow, and
//!   [`Dcqcn`] additionally requests no timers from the completing ACK. The state update itself
//!   is still done, as in the reference (unobservable).
//! - **Quirk 15, alpha timer for the flow's life**: matched (the alpha and decrease timers keep
//!   running every period after the first CNP until the flow completes).
//! - **Quirk 14, DCTCP keeps the first batch's ECN count**: matched by default;
//!   [`DctcpParams::reset_ecn_count_after_first_batch`] opts into the fix.
//! - **32-bit sequence numbers**: the reference keeps `lastUpdateSeq`/`highSeq` and ACK
//!   sequence numbers in `u32` (flows ≥ 4 GiB break); here they are `u64`. Identical below
//!   4 GiB.
//! - **Intervals truncated to whole µs** (spec §0): the reference converts the DCQCN intervals
//!   to whole microseconds. [`DcqcnParams`] holds exact [`Duration`](dcsim_core::units::Duration)s;
//!   [`DcqcnParams::truncated_to_whole_us`] reproduces the truncation for the CLI. An interval
//!   of 0 (the reference's infinite loop) is rejected by [`DcqcnParams::validate`].
//! - **Timer callbacks and the NIC**: the reference's DCQCN timers change the rate without
//!   kicking the NIC scheduler; dcsim's core runs its scheduler after every CC callback. This is
//!   a property of the core, noted here because it only matters for DCQCN.

#![warn(missing_docs)]

use dcsim_core::cc::{CcCtx, TimerOp, MAX_TIMERS};
use dcsim_core::units::BitsPerSec;
use dcsim_types::params::ParamError;

pub mod dcqcn;
pub mod dctcp;
pub mod timely;

pub use dcqcn::{Dcqcn, DcqcnFactory, DcqcnParams};
pub use dctcp::{Dctcp, DctcpFactory, DctcpParams};
pub use timely::{Timely, TimelyFactory, TimelyParams};

/// What one reaction of an algorithm asks of its flow: an optional new pacing rate and one
/// operation per timer slot. Returned by the pure methods; applied to a [`CcCtx`] by the trait
/// impls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Actions {
    /// The new pacing rate, if the algorithm assigned one (written with [`CcCtx::set_rate`],
    /// which does not re-time the already scheduled next send).
    pub rate: Option<BitsPerSec>,
    /// Timer requests by slot.
    pub timers: [TimerOp; MAX_TIMERS],
}

impl Actions {
    /// Writes the requests into `ctx`.
    pub fn apply(&self, ctx: &mut CcCtx) {
        if let Some(r) = self.rate {
            ctx.set_rate(r);
        }
        for (id, op) in self.timers.iter().enumerate() {
            match *op {
                TimerOp::Keep => {}
                TimerOp::Set(at) => ctx.set_timer(id, at),
                TimerOp::Cancel => ctx.cancel_timer(id),
            }
        }
    }

    /// The same actions without any timer request.
    pub fn without_timers(self) -> Actions {
        Actions { rate: self.rate, timers: [TimerOp::Keep; MAX_TIMERS] }
    }
}

/// `rate * c` stored back as a rate: the product is computed in `f64` and truncated toward zero
/// (the reference's `DataRate::operator*(double)`). Negative or NaN products give 0.
#[inline]
pub(crate) fn mul_rate(rate: BitsPerSec, c: f64) -> BitsPerSec {
    BitsPerSec((rate.0 as f64 * c) as u64)
}

/// Whole gigabits per second of a line rate (floor), the `bw` of the reference run script's
/// rate formulas (`5*bw/25` etc., Python 2 integer division).
#[inline]
pub(crate) fn bw_gbps(line_rate: BitsPerSec) -> u64 {
    line_rate.0 / 1_000_000_000
}

/// Checks that a gain/weight is in (0, 1] (NaN is not).
pub(crate) fn check_unit_interval(name: &'static str, v: f64) -> Result<(), ParamError> {
    if v > 0.0 && v <= 1.0 {
        Ok(())
    } else {
        Err(ParamError::new(
            name,
            format!("must be in (0, 1], got {}", dcsim_types::params::Num(v)),
        ))
    }
}

/// A [`ParamError`] as one sentence starting with the parameter's name: what the
/// `validate()` methods return.
pub(crate) fn sentence(e: ParamError) -> String {
    format!("{} {}", e.field, e.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mul_rate_truncates_toward_zero() {
        assert_eq!(mul_rate(BitsPerSec(3), 0.5), BitsPerSec(1));
        assert_eq!(mul_rate(BitsPerSec::gbps(100), 0.5), BitsPerSec::gbps(50));
        assert_eq!(mul_rate(BitsPerSec(100), -1.0), BitsPerSec(0));
        assert_eq!(mul_rate(BitsPerSec(100), f64::NAN), BitsPerSec(0));
    }

    #[test]
    fn bw_is_floored_gbps() {
        assert_eq!(bw_gbps(BitsPerSec::gbps(100)), 100);
        assert_eq!(bw_gbps(BitsPerSec(25_999_999_999)), 25);
    }

    #[test]
    fn without_timers_keeps_rate() {
        let mut a = Actions { rate: Some(BitsPerSec(5)), ..Actions::default() };
        a.timers[1] = TimerOp::Cancel;
        let b = a.without_timers();
        assert_eq!(b.rate, Some(BitsPerSec(5)));
        assert_eq!(b.timers, [TimerOp::Keep; MAX_TIMERS]);
    }

    #[test]
    fn unit_interval_messages_name_the_field() {
        let err = |v| sentence(check_unit_interval("g", v).unwrap_err());
        assert!(check_unit_interval("g", 1.0).is_ok());
        assert_eq!(check_unit_interval("g", 0.0).unwrap_err().field, "g");
        assert_eq!(err(0.0), "g must be in (0, 1], got 0");
        assert!(err(f64::NAN).starts_with("g must be"));
        assert!(check_unit_interval("g", 1.5).is_err());
    }
}
