//! RTT estimation and the retransmission timeout (RFC 6298 or Linux `tcp_rtt_estimator`).

use dcsim_types::{Duration, Time};

use crate::config::{RtoMode, TcpConfig};

/// Smoothed RTT, variation and the base RTO (before exponential backoff).
///
/// Karn's rule is the caller's: samples must come from segments sent once.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    mode: RtoMode,
    min_rto: Duration,
    max_rto: Duration,
    granularity: Duration,
    /// SRTT in picoseconds (0 = no sample yet).
    srtt: u64,
    /// RFC 6298 RTTVAR, or Linux `mdev_us` (which holds 4·mean deviation), in picoseconds.
    var: u64,
    /// Linux `mdev_max_us`: the largest `mdev` in the current RTT, at least `min_rto`.
    mdev_max: u64,
    /// Linux `rttvar_us`: what the RTO adds to SRTT.
    rttvar: u64,
    /// Linux `rtt_seq`: `snd_nxt` when the current RTT measurement window began.
    rtt_seq: u64,
    min_rtt: Option<Duration>,
    rto: Duration,
}

impl RttEstimator {
    /// An estimator with no sample yet (RTO = `initial_rto`).
    pub fn new(cfg: &TcpConfig) -> RttEstimator {
        RttEstimator {
            mode: cfg.rto_mode,
            min_rto: cfg.min_rto,
            max_rto: cfg.max_rto,
            granularity: cfg.clock_granularity,
            srtt: 0,
            var: 0,
            mdev_max: 0,
            rttvar: 0,
            rtt_seq: 0,
            min_rtt: None,
            rto: cfg.initial_rto,
        }
    }

    /// Takes one RTT sample `r`. `snd_una` and `snd_nxt` delimit Linux's per-RTT window for the
    /// deviation maximum (ignored by RFC 6298).
    pub fn sample(&mut self, r: Duration, snd_una: u64, snd_nxt: u64) {
        self.sample_ack(r, r, snd_una, snd_nxt);
    }

    /// An ACK's samples (Linux `tcp_ack_update_rtt`): `r` (the oldest newly acknowledged
    /// segment's, Karn's rule permitting) feeds the estimator; `ca`, the newest (S)ACKed
    /// segment's, the minimum (`tcp_update_rtt_min`).
    pub fn sample_ack(&mut self, r: Duration, ca: Duration, snd_una: u64, snd_nxt: u64) {
        let m = r.as_ps().max(1);
        self.min_rtt = Some(self.min_rtt.map_or(ca, |x| x.min(ca)));
        match self.mode {
            RtoMode::Rfc6298 => {
                if self.srtt == 0 {
                    self.srtt = m;
                    self.var = m / 2;
                } else {
                    let err = self.srtt.abs_diff(m);
                    self.var = self.var - self.var / 4 + err / 4;
                    self.srtt = self.srtt - self.srtt / 8 + m / 8;
                }
                let rto = self.srtt + self.granularity.as_ps().max(4 * self.var);
                self.rto = Duration(rto.clamp(self.min_rto.as_ps(), self.max_rto.as_ps()));
            }
            RtoMode::Linux => {
                let min_rto = self.min_rto.as_ps();
                if self.srtt == 0 {
                    self.srtt = m;
                    self.var = 2 * m; // "make sure rto = 3*rtt"
                    self.rttvar = self.var.max(min_rto);
                    self.mdev_max = self.rttvar;
                    self.rtt_seq = snd_nxt;
                } else {
                    let srtt = self.srtt as i128;
                    let mut err = m as i128 - srtt;
                    self.srtt = (srtt + err / 8).max(1) as u64;
                    let mdev = self.var as i128;
                    if err < 0 {
                        err = -err - mdev / 4;
                        // Eifel-like: a falling RTT moves mdev with gain 1/32.
                        if err > 0 {
                            err /= 8;
                        }
                    } else {
                        err -= mdev / 4;
                    }
                    self.var = (mdev + err).max(0) as u64;
                    if self.var > self.mdev_max {
                        self.mdev_max = self.var;
                        self.rttvar = self.rttvar.max(self.mdev_max);
                    }
                    if snd_una > self.rtt_seq {
                        if self.mdev_max < self.rttvar {
                            self.rttvar -= (self.rttvar - self.mdev_max) / 4;
                        }
                        self.rtt_seq = snd_nxt;
                        self.mdev_max = min_rto;
                    }
                }
                self.rto = Duration((self.srtt + self.rttvar).min(self.max_rto.as_ps()));
            }
        }
    }

    /// Smoothed RTT, if there was a sample.
    pub fn srtt(&self) -> Option<Duration> {
        (self.srtt > 0).then_some(Duration(self.srtt))
    }
    /// RFC 6298 RTTVAR, or Linux's 4·mdev term (`rttvar_us`), if there was a sample.
    pub fn rttvar(&self) -> Option<Duration> {
        (self.srtt > 0).then_some(Duration(match self.mode {
            RtoMode::Rfc6298 => self.var,
            RtoMode::Linux => self.rttvar,
        }))
    }
    /// Smallest sample so far.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }
    /// The RTO before backoff.
    pub fn rto(&self) -> Duration {
        self.rto
    }
    /// The RTO after `backoff` expiries: doubled each time, capped at `max_rto`.
    pub fn backed_off(&self, backoff: u32) -> Duration {
        backoff_of(self.rto, backoff, self.max_rto)
    }
}

/// `base · 2^n`, capped at `max` (but never below `base`).
pub(crate) fn backoff_of(base: Duration, n: u32, max: Duration) -> Duration {
    let ps = base.as_ps().saturating_mul(1u64 << n.min(40));
    Duration(ps.min(max.as_ps().max(base.as_ps())))
}

/// An RTT sample from an echoed timestamp (Linux `tcp_rtt_tsopt_us`): Linux's timestamp clock
/// counts milliseconds, so the sample is the difference of the two times in whole milliseconds,
/// at least one.
pub(crate) fn ts_rtt(now: Time, echoed: Time) -> Duration {
    let ms = Duration::from_ms(1).as_ps();
    let delta = (now.as_ps() / ms).saturating_sub(echoed.as_ps() / ms).max(1);
    Duration::from_ms(delta)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_ms(x)
    }

    #[test]
    fn rfc6298_first_and_second_samples() {
        let cfg = TcpConfig { rto_mode: RtoMode::Rfc6298, min_rto: ms(1), ..TcpConfig::linux() };
        let mut e = RttEstimator::new(&cfg);
        assert_eq!(e.rto(), ms(1000));
        e.sample(ms(100), 0, 0);
        // SRTT = R, RTTVAR = R/2, RTO = R + 4·R/2 = 3R.
        assert_eq!((e.srtt(), e.rttvar(), e.rto()), (Some(ms(100)), Some(ms(50)), ms(300)));
        e.sample(ms(200), 0, 0);
        // RTTVAR = 3/4·50 + 1/4·100 = 62.5; SRTT = 7/8·100 + 1/8·200 = 112.5.
        assert_eq!(e.srtt(), Some(Duration::from_us(112_500)));
        assert_eq!(e.rttvar(), Some(Duration::from_us(62_500)));
        assert_eq!(e.rto(), Duration::from_us(112_500 + 250_000));
        assert_eq!(e.backed_off(3), Duration::from_us(8 * 362_500));
    }

    #[test]
    fn rfc6298_clamps_to_min_rto() {
        let cfg = TcpConfig { rto_mode: RtoMode::Rfc6298, ..TcpConfig::dc_newreno() };
        let mut e = RttEstimator::new(&cfg);
        e.sample(Duration::from_us(20), 0, 0);
        assert_eq!(e.rto(), ms(2));
    }

    #[test]
    fn linux_rto_is_srtt_plus_at_least_min_rto() {
        let cfg = TcpConfig::linux();
        let mut e = RttEstimator::new(&cfg);
        e.sample(ms(10), 0, 100);
        assert_eq!(e.rto(), ms(210));
        for i in 0..50 {
            e.sample(ms(10), 100 + i, 200 + i);
        }
        assert_eq!(e.rto(), ms(210));
        // A first sample of 1 s gives 3 s, as Linux's "rto = 3*rtt".
        let mut e = RttEstimator::new(&cfg);
        e.sample(ms(1000), 0, 1);
        assert_eq!(e.rto(), ms(3000));
    }
}
