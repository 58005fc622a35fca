//! HPCC over TCP: the window law of a TCP sender that learns the path's load from one INT
//! probe per RTT instead of from every ACK (the buffer-sizing study's user-space TCP; spec
//! B2).
//!
//! On each probe echo the law compares every hop's record with the one the previous probe
//! brought: `u'` = txRate/B + min(qlen)/(B·T) ([`crate::hpcc`]'s per-hop sample), the largest
//! over the hops is `U`, smoothed by the EWMA with weight `min(Δts, T)/T`; then HPCC's rule
//! ([`RateRule::next_rate`]) gives the new reference, committed on every probe (a probe *is*
//! the per-RTT update), and the window is that rate times `T`. The first probe only stores
//! records. The initial window is `B·T` (one BDP at line rate).
//!
//! The rate is bounded by the line rate plus the receiver's delayed-ACK hold: the window may
//! reach `B·T` plus the bytes a delayed-ACK receiver holds unacknowledged (`(N − 1)·MSS` for an
//! ACK every N segments), which the sender's window counts although they have left the
//! network. With the bound at `B·T`, a lone connection could not fill its path: a window of
//! one BDP waited for each ACK behind N − 1 held segments (72% of a 25 Gb/s link with N = 4;
//! RoCE's HPCC, whose receiver ACKs every packet, reaches 91% there). Where many connections
//! share a link, `U` keeps their windows below the bound (the buffer study's flooding run did
//! not change; its storage run, with 2 MB queries, did: docs/buffer-sizing.md).

use dcsim_core::cc::{FlowInit, ProbeLaw, ProbeLawFactory};
use dcsim_core::packet::{IntHop, IntStack, MAX_INT_HOPS};
use dcsim_core::units::{BitsPerSec, Time, PS_PER_SEC};
use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, PluginSpec};

use crate::hpcc::{ewma, sample, HopSample, RateRule};
use crate::params::HpccParams;

/// HPCC as a TCP group's controller (`[[group]] cca = "hpcc"`): the parameters that apply to
/// a probe-driven window.
pub const PROBE_SPEC: PluginSpec = PluginSpec {
    name: "hpcc",
    summary: "HPCC over TCP: cwnd from one INT probe per RTT (buffer-sizing study)",
    params: &[
        ParamSpec::new("eta", Kind::Number, "0.95", "the target utilization η, in (0, 1]"),
        ParamSpec::new(
            "max_stage",
            Kind::Integer,
            "0",
            "additive-increase updates allowed in a row before a multiplicative one",
        ),
        ParamSpec::new(
            "rate_ai",
            Kind::Rate,
            "10*bw/25 Mbps (10Mbps at 25Gbps)",
            "the additive increase W_AI per probe, as a rate (window W_AI·T)",
        ),
        ParamSpec::new("min_rate", Kind::Rate, "1000Mbps", "the lower bound of W/T"),
    ],
};

/// Makes an [`HpccProbeLaw`] per connection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HpccProbeFactory {
    /// η, maxStage, W_AI (as a rate), minimum rate; the ACK-clocking options of [`HpccParams`]
    /// do not apply.
    pub params: HpccParams,
}

impl HpccProbeFactory {
    /// From parameters described by [`PROBE_SPEC`].
    ///
    /// # Errors
    /// A parameter out of range (see [`HpccParams::check`]).
    pub fn from_params(p: &Params) -> Result<HpccProbeFactory, ParamError> {
        // The ACK-clocking parameters are not in PROBE_SPEC: they keep their defaults.
        HpccParams::from_params(p).map(|params| HpccProbeFactory { params })
    }
}

impl ProbeLawFactory for HpccProbeFactory {
    fn name(&self) -> &str {
        "hpcc"
    }

    fn new_law(&self, init: &FlowInit, ack_hold: u64) -> (Box<dyn ProbeLaw>, u64) {
        let law = HpccProbeLaw::new(&self.params, init, ack_hold);
        let w0 = law.window_of(law.cur);
        (Box::new(law), w0)
    }
}

/// One TCP connection's HPCC state (see the module documentation).
#[derive(Clone, Debug)]
pub struct HpccProbeLaw {
    rule: RateRule,
    /// `T`, picoseconds.
    t_ps: u64,
    /// `B·T` in bytes (at least 1): the normaliser of queue lengths.
    bdp: u64,
    /// The NIC line rate `B` (the rule's upper bound is above it by the receiver's hold).
    line: BitsPerSec,
    /// The committed reference `W_c`, as a rate (`W_c / T`).
    cur: BitsPerSec,
    inc_stage: u32,
    u: f64,
    hops: [IntHop; MAX_INT_HOPS],
    first: bool,
}

impl HpccProbeLaw {
    /// A connection's law: `W_c` = line rate × T, `u` = 1, no stored records; its rate at most
    /// the line rate plus `ack_hold · 8 / T` (the window at most `B·T + ack_hold`, `ack_hold`
    /// being what the receiver may hold unacknowledged: see the module documentation).
    pub fn new(params: &HpccParams, init: &FlowInit, ack_hold: u64) -> HpccProbeLaw {
        let line = init.line_rate;
        let t_ps = init.base_rtt.as_ps();
        let mut rule =
            RateRule::new(params.eta, params.max_stage, params.rate_ai, params.min_rate, line);
        if t_ps > 0 {
            let hold = u128::from(ack_hold) * 8 * u128::from(PS_PER_SEC) / u128::from(t_ps);
            rule.line_rate =
                BitsPerSec(line.0.saturating_add(hold.min(u128::from(u64::MAX)) as u64));
        }
        HpccProbeLaw {
            rule,
            t_ps,
            bdp: init.bdp.max(1),
            line,
            cur: line,
            inc_stage: 0,
            u: 1.0,
            hops: [IntHop::default(); MAX_INT_HOPS],
            first: true,
        }
    }

    /// The window (bytes) of reference rate `r`: `r · T / 8`, at least one byte.
    pub fn window_of(&self, r: BitsPerSec) -> u64 {
        ((u128::from(r.0) * u128::from(self.t_ps) / 8 / u128::from(PS_PER_SEC)) as u64).max(1)
    }

    /// The utilisation EWMA `u`.
    pub fn u(&self) -> f64 {
        self.u
    }

    /// The committed reference `W_c / T`.
    pub fn cur_rate(&self) -> BitsPerSec {
        self.cur
    }

    /// One probe echo: the new window in bytes, or `None` for the first probe (or one whose
    /// records give no sample: more hops than [`MAX_INT_HOPS`], or time that did not advance).
    pub fn on_echo(&mut self, int: &IntStack) -> Option<u64> {
        let nhop = int.nhop as usize;
        if nhop > MAX_INT_HOPS {
            return None;
        }
        let hops = &int.hops[..nhop];
        if self.first {
            self.first = false;
            self.hops[..nhop].copy_from_slice(hops);
            return None;
        }
        let mut winner: Option<HopSample> = None;
        let mut any = false;
        for (i, hop) in hops.iter().enumerate() {
            let stored = std::mem::replace(&mut self.hops[i], *hop);
            let Some(s) = sample(hop, &stored, self.line, self.bdp) else { continue };
            any = true;
            if s.u > winner.as_ref().map_or(0.0, |w| w.u) {
                winner = Some(s);
            }
        }
        if !any {
            return None;
        }
        let (big_u, dt) = winner.map_or((0.0, 0), |w| (w.u, w.tau_ps));
        self.u = ewma(self.u, big_u, dt, self.t_ps);
        let (rate, stage) = self.rule.next_rate(self.u, self.cur, self.inc_stage);
        self.cur = rate;
        self.inc_stage = stage;
        Some(self.window_of(rate))
    }
}

impl ProbeLaw for HpccProbeLaw {
    fn on_probe(&mut self, _now: Time, int: &IntStack) -> Option<u64> {
        self.on_echo(int)
    }

    fn clone_box(&self) -> Box<dyn ProbeLaw> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dcsim_core::units::Duration;

    fn init() -> FlowInit {
        FlowInit {
            line_rate: BitsPerSec::gbps(25),
            base_rtt: Duration::from_us(16),
            bdp: 50_000,
            mtu: 1460,
            size: u64::MAX,
            seed: 1,
        }
    }

    fn stack(hops: &[IntHop]) -> IntStack {
        let mut s = IntStack::default();
        for h in hops {
            s.push(*h);
        }
        s
    }

    /// A hand-computed case: two hops, 16 µs apart; hop 0 (100G) sent 100 KB with no queue,
    /// hop 1 (25G) sent 50 KB with 25 KB queued in both records.
    /// u'_0 = 100e3·8/16e-6/100e9 = 0.5; u'_1 = 50e3·8/16e-6/25e9 + 25e3·25e9/25e9/50e3 = 1.5.
    /// U = 1.5, τ = T: u = 1.5. c = u/η = 1.5/0.95; W = 25G / c + 10 Mb/s → window W·T/8.
    #[test]
    fn utilisation_and_window_match_a_hand_computed_case() {
        let f = HpccProbeFactory { params: HpccParams::default() };
        let (mut law, w0) = f.new_law(&init(), 0);
        assert_eq!(w0, 50_000, "W_init = 25 Gb/s × 16 µs");
        let t0 = Time::from_ns(100_000);
        let t1 = t0 + Duration::from_us(16);
        let r = BitsPerSec::gbps;
        let a = [
            IntHop { rate: r(100), time: t0, tx_bytes: 1_000_000, qlen: 0 },
            IntHop { rate: r(25), time: t0, tx_bytes: 2_000_000, qlen: 25_000 },
        ];
        let b = [
            IntHop { rate: r(100), time: t1, tx_bytes: 1_100_000, qlen: 0 },
            IntHop { rate: r(25), time: t1, tx_bytes: 2_050_000, qlen: 25_000 },
        ];
        assert_eq!(law.on_probe(t0, &stack(&a)), None, "the first probe only stores records");
        let w = law.on_probe(t1, &stack(&b)).expect("a window");
        let c = 1.5 / 0.95;
        let rate = (25e9 / c) as u64 + 10_000_000;
        let expect = (rate as u128 * 16_000_000 / 8 / 1_000_000_000_000) as u64;
        assert_eq!(w, expect);
        // Below target: multiplicative increase towards line rate, capped there.
        let c2 = [
            IntHop { rate: r(100), time: t1 + Duration::from_us(16), tx_bytes: 1_110_000, qlen: 0 },
            IntHop { rate: r(25), time: t1 + Duration::from_us(16), tx_bytes: 2_060_000, qlen: 0 },
        ];
        let w2 = law.on_probe(t1, &stack(&c2)).expect("a window");
        assert!(w2 > w, "{w2} > {w}");
        assert!(w2 <= 50_000);
    }

    /// Below target on every probe, the window grows to one BDP plus the receiver's hold and
    /// stops there; without a hold, at one BDP.
    #[test]
    fn the_window_is_bounded_by_one_bdp_plus_the_receivers_hold() {
        let f = HpccProbeFactory { params: HpccParams::default() };
        for hold in [0, 4380] {
            let (mut law, w0) = f.new_law(&init(), hold);
            assert_eq!(w0, 50_000, "W_init = B·T whatever the hold");
            let mut top = 0;
            for k in 0..200u64 {
                let t = Time::from_ns(100_000) + Duration::from_us(16 * k);
                // An idle 25G hop: u' = 0 on every probe, so the rule raises the window.
                let hop = IntHop { rate: BitsPerSec::gbps(25), time: t, tx_bytes: k, qlen: 0 };
                if let Some(w) = law.on_probe(t, &stack(&[hop])) {
                    assert!(w <= 50_000 + hold, "{w} with hold {hold}");
                    top = top.max(w);
                }
            }
            assert!(top + 2 >= 50_000 + hold, "reaches the bound: {top} with hold {hold}");
        }
    }

    #[test]
    fn parameters_are_checked() {
        use dcsim_types::params::Value;
        let p = Params::from_values(PROBE_SPEC.params, vec![("eta", Value::Number(0.0))]);
        assert_eq!(HpccProbeFactory::from_params(&p).unwrap_err().field, "eta");
        let p = Params::from_values(PROBE_SPEC.params, vec![]);
        assert_eq!(HpccProbeFactory::from_params(&p).unwrap().params.eta, 0.95);
    }
}
