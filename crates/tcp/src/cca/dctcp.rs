//! DCTCP (RFC 8257) as Linux `tcp_dctcp.c`.
//!
//! α (in 1/1024 units, as Linux) is updated once per window of data from the fraction of
//! delivered bytes that were CE-echoed: α ← α − α·g + g·F with g = 2^−shift_g (1/16); α starts
//! at `alpha_on_init` (1024 = 1, Linux `dctcp_alpha_on_init`). A CE echo makes the socket enter
//! CWR with ssthresh = cwnd·(1 − α/2) (at least 2 segments): at most one reduction per window.
//! A loss halves cwnd. Growth is Reno's. Retransmissions stay ECT (`tcp_ca_needs_ecn`).

use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, PluginSpec};

use super::newreno::reno_increase;
use super::{AckSample, Congestion, CongestionControl, Window};

/// DCTCP's parameters.
pub const SPEC: PluginSpec = PluginSpec {
    name: "dctcp",
    summary: "DCTCP (RFC 8257, Linux tcp_dctcp.c): cwnd·(1 − α/2) per window with CE",
    params: &[
        ParamSpec::new(
            "shift_g",
            Kind::Integer,
            "4",
            "EWMA gain g = 2^-shift_g (Linux dctcp_shift_g)",
        ),
        ParamSpec::new(
            "alpha_on_init",
            Kind::Integer,
            "1024",
            "initial α in 1/1024 (Linux dctcp_alpha_on_init)",
        ),
    ],
};

/// DCTCP configuration.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct DctcpConfig {
    /// g = 2^−shift_g.
    pub shift_g: u32,
    /// Initial α, in 1/1024.
    pub alpha_on_init: u32,
}

impl Default for DctcpConfig {
    fn default() -> DctcpConfig {
        DctcpConfig { shift_g: 4, alpha_on_init: 1024 }
    }
}

impl DctcpConfig {
    /// From parameters (see [`SPEC`]).
    ///
    /// # Errors
    /// `shift_g` outside 1..=10 or `alpha_on_init` above 1024.
    pub fn from_params(p: &Params) -> Result<DctcpConfig, ParamError> {
        let shift_g = p.u32("shift_g", 4)?;
        if !(1..=10).contains(&shift_g) {
            return Err(ParamError::new("shift_g", format!("must be in 1..=10, got {shift_g}")));
        }
        let alpha_on_init = p.u32("alpha_on_init", 1024)?;
        if alpha_on_init > 1024 {
            return Err(ParamError::new(
                "alpha_on_init",
                format!("must be at most 1024, got {alpha_on_init}"),
            ));
        }
        Ok(DctcpConfig { shift_g, alpha_on_init })
    }
}

/// DCTCP state.
#[derive(Clone, Debug)]
pub struct Dctcp {
    cfg: DctcpConfig,
    /// α in 1/1024.
    alpha: u32,
    next_seq: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
    /// cwnd when the last reduction began (Linux `loss_cwnd`), for the undo.
    loss_cwnd: u64,
}

/// Linux `DCTCP_MAX_ALPHA`.
const MAX_ALPHA: u32 = 1024;

impl Dctcp {
    /// A fresh controller.
    pub fn new(cfg: DctcpConfig) -> Dctcp {
        let alpha = cfg.alpha_on_init.min(MAX_ALPHA);
        Dctcp { cfg, alpha, next_seq: 0, old_delivered: 0, old_delivered_ce: 0, loss_cwnd: 0 }
    }
    /// α as a fraction.
    pub fn alpha(&self) -> f64 {
        f64::from(self.alpha) / f64::from(MAX_ALPHA)
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, _w: &mut Window, ack: &AckSample) {
        // dctcp_update_alpha: once snd_una passes the window's end.
        if ack.snd_una < self.next_seq {
            return;
        }
        let delivered = ack.delivered - self.old_delivered;
        let delivered_ce = ack.delivered_ce - self.old_delivered_ce;
        let mut alpha = self.alpha;
        let decay = alpha >> self.cfg.shift_g;
        // min_not_zero(alpha, alpha >> g): let α reach 0.
        alpha -= if decay == 0 { alpha } else { decay };
        if delivered_ce > 0 {
            let f = (delivered_ce << (10 - self.cfg.shift_g)) / delivered.max(1);
            alpha = (u64::from(alpha) + f).min(u64::from(MAX_ALPHA)) as u32;
        }
        self.alpha = alpha;
        self.next_seq = ack.snd_nxt;
        self.old_delivered = ack.delivered;
        self.old_delivered_ce = ack.delivered_ce;
    }

    fn increase(&mut self, w: &mut Window, ack: &AckSample) {
        reno_increase(w, ack);
    }

    fn ssthresh(&mut self, w: &Window, cause: Congestion, _in_flight: u64) -> u64 {
        // Both `dctcp_ssthresh` and `dctcp_react_to_loss` record the window they reduce.
        self.loss_cwnd = w.cwnd;
        let segs = w.segs();
        let s = match cause {
            Congestion::Ecn => segs - ((segs * u64::from(self.alpha)) >> 11),
            // dctcp_react_to_loss (on entering Recovery and on CA_EVENT_LOSS).
            Congestion::Loss | Congestion::Timeout => segs / 2,
        };
        s.max(2) * w.mss
    }

    /// Linux `dctcp_cwnd_undo`.
    fn undo_cwnd(&mut self, w: &Window, _prior_cwnd: u64) -> u64 {
        w.cwnd.max(self.loss_cwnd)
    }

    fn needs_ecn(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssthresh_uses_alpha_for_ecn_and_halves_for_loss() {
        let mut d = Dctcp::new(DctcpConfig::default());
        let w = Window { cwnd: 100_000, ssthresh: u64::MAX, mss: 1000, cwnd_cnt: 0 };
        // α = 1: cwnd·(1 − 1/2).
        assert_eq!(d.ssthresh(&w, Congestion::Ecn, 0), 50_000);
        d.alpha = 256;
        // 100 − 100·256/2048 = 87.5 → 88 segments (Linux subtracts the truncated product).
        assert_eq!(d.ssthresh(&w, Congestion::Ecn, 0), 88_000);
        assert_eq!(d.ssthresh(&w, Congestion::Loss, 0), 50_000);
    }

    /// Linux `dctcp_cwnd_undo`: back to the window the last reduction started from, whatever
    /// the socket's `prior_cwnd`.
    #[test]
    fn undo_returns_to_the_reduced_window() {
        let mut d = Dctcp::new(DctcpConfig::default());
        let w = Window { cwnd: 100_000, ssthresh: u64::MAX, mss: 1000, cwnd_cnt: 0 };
        d.ssthresh(&w, Congestion::Timeout, 0);
        let now = Window { cwnd: 3_000, ..w };
        assert_eq!(d.undo_cwnd(&now, 7_000), 100_000);
        assert_eq!(d.undo_cwnd(&Window { cwnd: 120_000, ..w }, 7_000), 120_000);
    }
}
