//! The shared-buffer switch MMU: ingress/egress accounting, dynamic-threshold admission and
//! PFC pause/resume decisions (spec §3.2).
//!
//! Differences from the reference, deliberate: its u32 threshold arithmetic wraps when
//! headroom plus reserve exceed the buffer (quirk 17); here it saturates at 0.

use crate::config::SwitchConfig;
use crate::units::BitsPerSec;

/// Number of priority queues per port.
pub const QUEUES: usize = 8;

/// Per-switch MMU state.
#[derive(Clone, Debug)]
pub(crate) struct Mmu {
    reserve: u64,
    resume_offset: u64,
    /// Bit `q` is set for the classes that pause their upstream (PFC on, class not lossy).
    pfc_classes: u8,
    /// `buffer - total headroom - total reserve` (saturating).
    pool: u64,
    shared_used: u64,
    headroom: Vec<u64>,
    shift: Vec<u32>,
    pub(crate) ingress: Vec<[u64; QUEUES]>,
    pub(crate) hdrm: Vec<[u64; QUEUES]>,
    pub(crate) egress: Vec<[u64; QUEUES]>,
    /// Whether this switch has paused the upstream of (ingress port, queue).
    pub(crate) paused: Vec<[bool; QUEUES]>,
}

/// What an admission decided.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Admit {
    /// Dropped: no buffer, no headroom.
    Drop,
    /// Admitted; send a PFC pause upstream for this (port, queue).
    Pause,
    /// Admitted.
    Ok,
}

impl Mmu {
    /// `ports`: (rate, delay in ps) of each port; `nic_rate`: the reference's "first host's NIC
    /// rate" that sets the per-port alpha shift.
    pub(crate) fn new(
        cfg: &SwitchConfig,
        ports: &[(BitsPerSec, u64)],
        nic_rate: BitsPerSec,
    ) -> Mmu {
        let n = ports.len();
        let headroom: Vec<u64> = ports
            .iter()
            .map(|&(rate, delay_ps)| {
                // floor(rate * delay / 8) bytes-per-second·seconds, i.e. one-way BDP in bytes.
                let bdp = (rate.0 as u128 * delay_ps as u128 / 8 / 1_000_000_000_000u128) as u64;
                // Without PFC (or with every class lossy) there is nothing to absorb in
                // flight: no headroom is set aside.
                if cfg.pfc_enabled && cfg.lossy_classes & 0xfe != 0xfe {
                    bdp * cfg.headroom_bdp_multiple
                } else {
                    0
                }
            })
            .collect();
        let shift = ports
            .iter()
            .map(|&(rate, _)| {
                let mut s = 3u32;
                let mut r = rate.0;
                while r > nic_rate.0 && s > 0 {
                    s -= 1;
                    r /= 2;
                }
                s
            })
            .collect();
        let total_h: u64 = headroom.iter().sum();
        let total_r = cfg.reserve.0 * n as u64;
        Mmu {
            reserve: cfg.reserve.0,
            resume_offset: cfg.resume_offset.0,
            pfc_classes: if cfg.pfc_enabled { !cfg.lossy_classes } else { 0 },
            pool: cfg.buffer.0.saturating_sub(total_h).saturating_sub(total_r),
            shared_used: 0,
            headroom,
            shift,
            ingress: vec![[0; QUEUES]; n],
            hdrm: vec![[0; QUEUES]; n],
            egress: vec![[0; QUEUES]; n],
            paused: vec![[false; QUEUES]; n],
        }
    }

    #[inline]
    fn threshold(&self, port: usize) -> u64 {
        self.pool.saturating_sub(self.shared_used) >> self.shift[port]
    }

    #[inline]
    fn shared(&self, port: usize, q: usize) -> u64 {
        self.ingress[port][q].saturating_sub(self.reserve)
    }

    /// Admits `size` bytes arriving on `inp` for queue `q`, leaving through `out`.
    pub(crate) fn admit(&mut self, inp: usize, out: usize, q: usize, size: u64) -> Admit {
        let th = self.threshold(inp);
        let s = self.shared(inp, q);
        let shared_full = size + s > th;
        let pfc = self.pfc_classes & (1 << q) != 0;
        let headroom_full = !pfc || size + self.hdrm[inp][q] > self.headroom[inp];
        if shared_full && headroom_full {
            return Admit::Drop;
        }
        let n = self.ingress[inp][q] + size;
        if n <= self.reserve {
            self.ingress[inp][q] += size;
        } else if n - self.reserve > th {
            self.hdrm[inp][q] += size;
        } else {
            self.ingress[inp][q] += size;
            self.shared_used += size.min(n - self.reserve);
        }
        self.egress[out][q] += size;
        if pfc && !self.paused[inp][q] {
            let th = self.threshold(inp);
            if self.hdrm[inp][q] > 0 || self.shared(inp, q) >= th {
                self.paused[inp][q] = true;
                return Admit::Pause;
            }
        }
        Admit::Ok
    }

    /// Releases `size` bytes of (`inp`, `q`) leaving through `out`; returns whether to send a
    /// PFC resume upstream for (`inp`, `q`).
    pub(crate) fn release(&mut self, inp: usize, out: usize, q: usize, size: u64) -> bool {
        let from_hdrm = self.hdrm[inp][q].min(size);
        self.hdrm[inp][q] -= from_hdrm;
        let rest = size - from_hdrm;
        let before = self.ingress[inp][q];
        self.ingress[inp][q] = before - rest;
        self.shared_used -= rest.min(before.saturating_sub(self.reserve));
        self.egress[out][q] -= size;
        if self.paused[inp][q] && self.hdrm[inp][q] == 0 {
            let s = self.shared(inp, q);
            if s == 0 || s + self.resume_offset <= self.threshold(inp) {
                self.paused[inp][q] = false;
                return true;
            }
        }
        false
    }

    /// Egress bytes of (port, queue) (for ECN).
    #[inline]
    pub(crate) fn egress_bytes(&self, port: usize, q: usize) -> u64 {
        self.egress[port][q]
    }

    /// Whether every counter is zero and nothing is paused.
    pub(crate) fn is_idle(&self) -> bool {
        self.shared_used == 0
            && self.ingress.iter().all(|a| a.iter().all(|&x| x == 0))
            && self.hdrm.iter().all(|a| a.iter().all(|&x| x == 0))
            && self.egress.iter().all(|a| a.iter().all(|&x| x == 0))
            && self.paused.iter().all(|a| a.iter().all(|&x| !x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Bytes;

    fn mmu() -> Mmu {
        let cfg = SwitchConfig { buffer: Bytes(1 << 20), ..SwitchConfig::default() };
        // 4 ports, 100G, 1 us: headroom 3 * 12500 = 37500 each.
        Mmu::new(&cfg, &[(BitsPerSec::gbps(100), 1_000_000); 4], BitsPerSec::gbps(100))
    }

    #[test]
    fn headroom_and_shift_follow_the_reference() {
        let cfg = SwitchConfig::default();
        let m = Mmu::new(
            &cfg,
            &[(BitsPerSec::gbps(100), 1_000_000), (BitsPerSec::gbps(400), 1_000_000)],
            BitsPerSec::gbps(100),
        );
        assert_eq!(m.headroom, vec![37_500, 150_000]);
        assert_eq!(m.shift, vec![3, 1]);
    }

    #[test]
    fn pause_then_resume_and_counters_return_to_zero() {
        let mut m = mmu();
        let mut paused_at = None;
        let mut admitted = 0;
        for i in 0..2000 {
            match m.admit(0, 1, 3, 1000) {
                Admit::Drop => break,
                Admit::Pause => {
                    paused_at.get_or_insert(i);
                    admitted += 1
                }
                Admit::Ok => admitted += 1,
            }
        }
        let p = paused_at.expect("a full queue must pause its upstream");
        // threshold = (1MiB - 4*37500 - 4*4096) >> 3 ~ 110 KB of shared space + 4 KB reserve
        assert!((100..130).contains(&p), "paused after {p} packets");
        // headroom absorbs at most 37500 B after the pause
        assert!(admitted - p <= 38, "admitted {admitted}, paused at {p}");
        let mut resumed = false;
        for _ in 0..admitted {
            resumed |= m.release(0, 1, 3, 1000);
        }
        assert!(resumed);
        assert!(m.is_idle());
    }
}
