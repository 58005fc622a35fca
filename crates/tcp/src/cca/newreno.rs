//! NewReno window rules (RFC 5681 with RFC 3465 byte counting; Linux `tcp_reno_*`).
//!
//! Slow start grows cwnd by the bytes ACKed (optionally at most `L·MSS` per ACK, set by the
//! transport's `abc`); congestion avoidance adds one MSS per cwnd of ACKed bytes; a reduction
//! sets ssthresh to half the flight size (RFC 5681 (4)) or half cwnd (Linux), at least 2 MSS.

use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, PluginSpec};

use super::{AckSample, Congestion, CongestionControl, Window};

/// NewReno's parameters.
pub const SPEC: PluginSpec = PluginSpec {
    name: "newreno",
    summary: "NewReno: slow start, +1 MSS per RTT, halve on congestion",
    params: &[ParamSpec::new(
        "halve",
        Kind::Choice(&["flight", "cwnd"]),
        "flight",
        "what a reduction halves: the flight size (RFC 5681) or cwnd (Linux tcp_reno_ssthresh)",
    )],
};

/// NewReno configuration.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct NewRenoConfig {
    /// Halve the flight size (`true`, RFC 5681) or cwnd (`false`, Linux).
    pub halve_flight: bool,
}

impl Default for NewRenoConfig {
    fn default() -> NewRenoConfig {
        NewRenoConfig { halve_flight: true }
    }
}

impl NewRenoConfig {
    /// From parameters (see [`SPEC`]).
    ///
    /// # Errors
    /// None today; the signature is shared by every controller.
    pub fn from_params(p: &Params) -> Result<NewRenoConfig, ParamError> {
        Ok(NewRenoConfig { halve_flight: p.choice("halve", "flight") == "flight" })
    }
}

/// NewReno state (none beyond the window).
#[derive(Clone, Debug)]
pub struct NewReno {
    cfg: NewRenoConfig,
}

impl NewReno {
    /// A fresh controller.
    pub fn new(cfg: NewRenoConfig) -> NewReno {
        NewReno { cfg }
    }
}

/// Reno growth shared by NewReno and DCTCP (Linux `tcp_reno_cong_avoid`).
pub(crate) fn reno_increase(w: &mut Window, ack: &AckSample) {
    if !ack.cwnd_limited {
        return;
    }
    let mut acked = ack.acked;
    if w.in_slow_start() {
        acked = w.slow_start(acked, ack.abc_limit);
        if acked == 0 {
            return;
        }
    }
    let cwnd = w.cwnd;
    w.cong_avoid_ai(cwnd, acked);
}

impl CongestionControl for NewReno {
    fn increase(&mut self, w: &mut Window, ack: &AckSample) {
        reno_increase(w, ack);
    }

    fn ssthresh(&mut self, w: &Window, _cause: Congestion, in_flight: u64) -> u64 {
        let base = if self.cfg.halve_flight { in_flight } else { w.cwnd };
        (base / 2).max(2 * w.mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssthresh_halves_flight_or_cwnd_with_a_floor_of_two_segments() {
        let w = Window { cwnd: 100_000, ssthresh: u64::MAX, mss: 1000, cwnd_cnt: 0 };
        let mut rfc = NewReno::new(NewRenoConfig::default());
        assert_eq!(rfc.ssthresh(&w, Congestion::Loss, 60_000), 30_000);
        assert_eq!(rfc.ssthresh(&w, Congestion::Loss, 3_000), 2_000);
        let mut linux = NewReno::new(NewRenoConfig { halve_flight: false });
        assert_eq!(linux.ssthresh(&w, Congestion::Loss, 60_000), 50_000);
    }
}
