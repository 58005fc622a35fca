//! # dcsim-hpcc
//!
//! HPCC (High Precision Congestion Control, SIGCOMM 2019) for dcsim: a sender-side, INT-based
//! rate controller, implemented as a [`dcsim_core::cc`] plugin. It follows the behaviour of
//! the reference ns-3 simulator (`alibaba-edu/High-Precision-Congestion-Control`, spec §4.1)
//! line by line, so that dcsim can be calibrated against it; every place where it deliberately
//! differs is listed under [Deliberate choices](#deliberate-choices).
//!
//! - [`HpccParams`]: η, maxStage, W_AI, the minimum rate and the three reference switches
//!   (fast reaction, multi-rate, sample feedback). `Default` is the reference run script's `hp`
//!   row.
//! - [`HpccFactory`]: the scheme (`name() == "hpcc"`, [`HeaderMode::Int`]: data packets carry
//!   42 bytes of INT, ACKs are 88 bytes; switches stamp a record per hop).
//! - [`SPEC`]: the scheme's name and parameters for front ends; [`HpccParams::from_params`]
//!   reads them from typed [`Params`](dcsim_types::params::Params) and checks them
//!   ([`HpccParams::check`] names the offending parameter).
//! - [`Hpcc`]: one flow's state. [`Hpcc::on_ack`] is the whole algorithm as a pure method that
//!   returns the new rate; the [`CongestionControl`] impl hands that rate to
//!   [`CcCtx::change_rate`], which also re-times the already scheduled next packet (spec §2.2).
//! - [`RateRule`]: the MI/AI step with its clamps (step 5 below), shared with HPCC-PINT.
//!
//! ```
//! use dcsim_core::cc::{CcFactory, FlowInit};
//! use dcsim_core::packet::{IntHop, IntStack};
//! use dcsim_core::units::{BitsPerSec, Duration, Time};
//! use dcsim_hpcc::{HpccFactory, HpccParams};
//!
//! let factory = HpccFactory::new(HpccParams::default()).unwrap();
//! let init = FlowInit {
//!     line_rate: BitsPerSec::gbps(100),
//!     base_rtt: Duration::from_us(10),
//!     bdp: 125_000,
//!     mtu: 1000,
//!     size: 1_000_000,
//!     seed: 0,
//! };
//! let mut flow = factory.new_flow(&init);
//! let int = |time_us: u64, tx_bytes, qlen| {
//!     let mut s = IntStack::default();
//!     let time = Time::from_ns(time_us * 1000);
//!     s.push(IntHop { rate: BitsPerSec::gbps(100), time, tx_bytes, qlen });
//!     s
//! };
//! // The first ACK only stores the hop record (the port then held one BDP, 125 000 B).
//! assert_eq!(flow.on_ack(1000, 20_000, &int(1, 0, 125_000)), None);
//! // One RTT later the port had sent at 100 Gb/s and holds half a BDP:
//! // u' = 1 + min(62 500, 125 000) / 125 000 = 1.5.
//! let r = flow.on_ack(21_000, 150_000, &int(11, 125_000, 62_500)).unwrap();
//! // u = 1.5, rate = 100G * 0.95 / 1.5 + 40 Mb/s (truncated to whole bps).
//! assert_eq!(r, BitsPerSec(63_373_333_333));
//! ```
//!
//! ## The algorithm (spec §4.1)
//!
//! Per flow: `lastUpdateSeq = 0`, reference rate `curRate = line rate`, `incStage = 0`, EWMA
//! `u = 1`, the last INT record of each of up to five hops. `T` is the flow's base RTT and `W`
//! its BDP in bytes ([`FlowInit::bdp`], used whether or not the NIC enforces a window).
//!
//! On every ACK or NACK with cumulative sequence `ack`:
//!
//! 1. If `ack > lastUpdateSeq` a **per-RTT** update runs; else, if fast reaction is on, a
//!    **fast** update; else nothing.
//! 2. First feedback (`lastUpdateSeq == 0`): set `lastUpdateSeq = snd_nxt`, store the hop
//!    records, stop.
//! 3. If more than five hops stamped the packet, its records are ignored (step 8 still runs).
//! 4. For each hop `i` (skipped on a fast update with sample feedback when its queue is empty):
//!    `tau` = time between its stored and new record; `txRate = Δbytes * 8 / tau`;
//!    `u'_i = txRate / lineRate_i + min(qlen_i, stored qlen_i) * NICrate / lineRate_i / W`;
//!    then the new record replaces the stored one.
//! 5. Single rate: the hop with the largest `u'` (strictly larger than the previous best,
//!    starting from 0) gives `U` and `dt = min(tau, T)`; `u = (u*(T - dt) + U*dt) / T` on
//!    **every** ACK that used a hop. With `c = u / η`: if `c >= 1` or `incStage >= maxStage`,
//!    `new = curRate / c + W_AI` and stage 0 (multiplicative); else `new = curRate + W_AI` and
//!    stage `incStage + 1` (additive). Clamp: first up to the minimum rate, then down to the
//!    line rate.
//! 6. Multi-rate: each used hop keeps its own `u_i` (same EWMA with its own `tau`), `Rc_i`
//!    and `stage_i` and gets its own `new_i` by the rule above; the flow paces at the minimum
//!    over hops of `new_i` (used hops) or `Rc_i` (hops not used this time) and the line rate.
//! 7. If any hop was used, the pacing rate becomes `new` (through `change_rate`) — on fast
//!    updates too. Only a per-RTT update commits `curRate = new` and `incStage` (multi-rate:
//!    `Rc_i`, `stage_i` of the used hops).
//! 8. A per-RTT update sets `lastUpdateSeq = snd_nxt` if that is larger.
//!
//! So with fast reaction the rate follows every ACK, but always as a step from the reference
//! rate committed at the last per-RTT update. With the run script's `maxStage = 0` every update
//! is multiplicative.
//!
//! ## Deliberate choices
//!
//! - **Full-precision INT.** dcsim's [`IntHop`] carries exact picosecond times, byte counts,
//!   queue lengths and line rates, not the reference's packed 24-bit time (ns), 20-bit byte
//!   count (units of 128·`INT_MULTI` bytes), 17-bit queue length (units of 80·`INT_MULTI`
//!   bytes) and 3-bit rate index. So there is no wrap handling (and no wrap to handle), no
//!   quantisation of `Δbytes` or `qlen`, and any port speed is understood. In the reference a
//!   queue below 80·`INT_MULTI` bytes (320 B at 100G) reads as empty; here only an empty queue
//!   is empty (this matters for sample feedback).
//! - **Units.** `tau` is computed in picoseconds and converted to seconds as
//!   `tau_ps as f64 / 1e12` (the reference: integer ns times `1e-9`); rates are `f64` bps
//!   inside an update and truncated toward zero to integer bps when stored, as in the
//!   reference. The EWMA uses `T` and `dt` in picoseconds (only their ratio matters).
//! - **`tau == 0`** (a record no later than the stored one; the reference divides by zero and
//!   gets `inf`/`NaN`, which can poison `u` for good): the hop is *not used* this time — it
//!   counts neither as a candidate for `U` nor towards "a hop was used" — but its record still
//!   replaces the stored one, as for any hop that is not sample-skipped. dcsim's switches stamp
//!   strictly increasing times per port and one flow's packets follow one path in FIFO order, so
//!   this does not happen in dcsim runs; it is a guard. A record with a zero line rate is
//!   treated the same way.
//! - **`W == 0`** (a zero BDP; the reference's `HAS_WIN 0` makes its `W` 0, turning the queue
//!   term into `+inf` or `NaN`): `W` is taken as 1 byte, so any standing queue reads as a huge
//!   utilisation and drives the rate to the minimum. dcsim always passes the BDP, with or
//!   without a window in force, so with `HAS_WIN 0`-like configurations HPCC still works
//!   (unlike the reference, which then pins flows to the minimum rate).
//! - **`T == 0`**: the EWMA weight `dt / T` (with `dt = min(tau, T)`) is taken as 1 when a
//!   hop was selected and 0 when none was, i.e. `u = U`.
//! - **`c == 0`** (multi-rate only: a hop's `u_i` can reach exactly 0; the reference converts
//!   `+inf` to an integer, undefined behaviour): `Rc_i / 0` saturates to `u64::MAX`, so that
//!   hop's rate becomes the line rate. The `f64 → u64` conversion saturates and maps `NaN` to 0,
//!   and the `+ W_AI` saturates, so no input panics.
//! - **The first feedback with more than five hops** stores nothing (the reference asserts, or
//!   in an optimized build overruns its five-entry array); its `lastUpdateSeq` is still set.
//! - **Multi-rate and `incStage`.** The reference writes an uninitialised value to the
//!   single-rate `incStage` on multi-rate per-RTT updates (never read); dcsim leaves it
//!   unchanged. `curRate` is set to the paced minimum, as in the reference.
//! - **64-bit sequence numbers.** `lastUpdateSeq` is `u64` (the reference's is `u32`, which
//!   breaks flows of 4 GiB or more).
//! - **Additive increase default.** `W_AI = line rate / 2500` in bps when
//!   [`HpccParams::rate_ai`] is `None`: the run script's `10 * bw / 25` Mb/s, exactly at every
//!   multiple of 2.5 Gb/s (the script floors to whole Mb/s in between).
//! - **Where the reference rounds time differently** (integer-ns timestamps, truncated
//!   serialization times) HPCC's inputs differ slightly; the formulas do not.
//!
//! What HPCC does *not* do here: it sets no window itself. The NIC's window mode
//! ([`dcsim_core::config::WindowMode`]) applies, and with `Variable` (the reference's
//! `VAR_WIN 1`, the `hp` row) the window follows the paced rate: `W * rate / line rate`.
//!
//! [`HeaderMode::Int`]: dcsim_core::packet::HeaderMode::Int
//! [`CongestionControl`]: dcsim_core::cc::CongestionControl
//! [`CcCtx::change_rate`]: dcsim_core::cc::CcCtx::change_rate
//! [`FlowInit::bdp`]: dcsim_core::cc::FlowInit::bdp
//! [`IntHop`]: dcsim_core::packet::IntHop
#![warn(missing_docs)]

mod hpcc;
mod params;
mod probe;
#[cfg(test)]
mod tests;

pub use hpcc::{HopState, Hpcc, HpccFactory, RateRule};
pub use params::{HpccParams, SPEC};
pub use probe::{HpccProbeFactory, HpccProbeLaw, PROBE_SPEC};
