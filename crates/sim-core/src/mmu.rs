//! The shared-buffer switch MMU: ingress/egress accounting, dynamic-threshold admission and
//! PFC pause/resume decisions (spec §3.2).
//!
//! Differences from the reference, deliberate: its u32 threshold arithmetic wraps when
//! headroom plus reserve exceed the buffer (quirk 17); here it saturates at 0. The set-up
//! arithmetic (per-port headroom `BDP × headroom_bdp_multiple`, its sum, the reserve times the
//! port count) saturates at `u64::MAX` bytes too; the `dcsim` command line rejects values
//! that would get there.
//!
//! Two admission options the reference lacks (both off by default, leaving its behaviour
//! unchanged):
//! * an explicit ingress dynamic-threshold alpha ([`SwitchConfig::dt_alpha`]): threshold
//!   `floor(alpha * free)` instead of `free >> shift`;
//! * egress admission for lossy classes ([`SwitchConfig::egress_cap`]): a lossy packet is
//!   dropped when its egress queue would exceed `min(cap, floor(egress_alpha * free))`.
//!
//! Either way every admitted packet is counted in its (ingress port, class) — reserve first,
//! then the shared pool, then (lossless classes only) headroom — and in its (egress port,
//! class), and [`Mmu::release`] undoes exactly that, so the counters return to zero.

use crate::config::SwitchConfig;
use crate::engine::{at, at_mut};
use crate::units::{BitsPerSec, Duration};

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
    /// [`SwitchConfig::dt_alpha`].
    dt_alpha: Option<f64>,
    /// Egress admission of lossy classes: `(cap, alpha)` ([`SwitchConfig::egress_cap`],
    /// [`SwitchConfig::egress_alpha`]).
    egress_admission: Option<(u64, f64)>,
    /// The counters of each (port, class), by port.
    pub(crate) cells: Vec<[Cell; QUEUES]>,
}

/// The counters of one (port, class): bytes counted at ingress (reserve and shared pool) and
/// in headroom, bytes queued at egress, and whether this switch has paused the upstream.
///
/// Kept together, and aligned so that one never straddles two cache lines, so that an
/// admission or release touches one line for its ingress port and one for its egress port
/// (four separate per-port arrays took up to four lines for the ingress side).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(align(32))]
pub(crate) struct Cell {
    pub(crate) ingress: u64,
    pub(crate) hdrm: u64,
    pub(crate) egress: u64,
    pub(crate) paused: bool,
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
                let bdp = rate.bytes_in(Duration::from_ps(delay_ps));
                // Without PFC (or with every class lossy) there is nothing to absorb in
                // flight: no headroom is set aside.
                if cfg.pfc_enabled && cfg.lossy_classes & 0xfe != 0xfe {
                    bdp.saturating_mul(cfg.headroom_bdp_multiple)
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
        let total_h: u64 = headroom.iter().fold(0, |a: u64, &h| a.saturating_add(h));
        let total_r = cfg.reserve.0.saturating_mul(n as u64);
        Mmu {
            reserve: cfg.reserve.0,
            resume_offset: cfg.resume_offset.0,
            pfc_classes: if cfg.pfc_enabled { !cfg.lossy_classes } else { 0 },
            pool: cfg.buffer.0.saturating_sub(total_h).saturating_sub(total_r),
            shared_used: 0,
            headroom,
            shift,
            dt_alpha: cfg.dt_alpha,
            egress_admission: cfg.egress_cap.map(|cap| (cap.0, cfg.egress_alpha)),
            cells: vec![[Cell::default(); QUEUES]; n],
        }
    }

    /// The counters of (`port`, `q`), read without the port's bounds check: `port` is a port
    /// of the switch (the ports invariant of `crate::engine::at`, debug-asserted), and `cells`
    /// has an entry for each (`Mmu::new`). Admission and release index them on every frame.
    #[inline(always)]
    fn cell(&mut self, port: usize, q: usize) -> &mut Cell {
        // SAFETY: as above.
        unsafe { &mut at_mut(&mut self.cells, port)[q] }
    }

    /// Free bytes of the shared pool.
    #[inline]
    fn free(&self) -> u64 {
        self.pool.saturating_sub(self.shared_used)
    }

    /// The ingress dynamic threshold of `port`: `free >> shift[port]` (the reference), or
    /// `floor(alpha * free)` with an explicit alpha.
    #[inline]
    fn threshold(&self, port: usize) -> u64 {
        self.threshold_of(self.shift[port], self.free())
    }

    /// The ingress dynamic threshold of a port whose alpha shift is `shift`, with `free` bytes
    /// of the shared pool free (as [`Mmu::threshold`], from values the caller holds).
    #[inline(always)]
    fn threshold_of(&self, shift: u32, free: u64) -> u64 {
        match self.dt_alpha {
            None => free >> shift,
            Some(alpha) => scaled(alpha, free),
        }
    }

    /// Admits `size` bytes arriving on `inp` for queue `q`, leaving through `out`.
    ///
    /// Inlined into the switch's arrival handler: the port's facts and its cell are read once
    /// and the thresholds computed from them (the call and the repeated lookups were a third
    /// of its cost).
    #[inline(always)]
    pub(crate) fn admit(&mut self, inp: usize, out: usize, q: usize, size: u64) -> Admit {
        let pfc = self.pfc_classes & (1 << q) != 0;
        if !pfc {
            if let Some((cap, alpha)) = self.egress_admission {
                return self.admit_egress(inp, out, q, size, cap, alpha);
            }
        }
        // SAFETY: `inp` is a port of the switch (the ports invariant of `crate::engine::at`),
        // and the MMU has an entry for each port in `headroom` and `shift` (`Mmu::new`).
        let (reserve, headroom, shift) =
            unsafe { (self.reserve, *at(&self.headroom, inp), *at(&self.shift, inp)) };
        let free = self.free();
        let th_free = self.threshold_of(shift, free);
        let c = self.cell(inp, q);
        let s = c.ingress.saturating_sub(reserve);
        // A queue's shared bytes never exceed what is free besides them: a no-op for the
        // reference's threshold (at most `free`), a bound for an explicit alpha above 1.
        let th = th_free.min(s + free);
        let shared_full = size + s > th;
        let headroom_full = !pfc || size + c.hdrm > headroom;
        if shared_full && headroom_full {
            return Admit::Drop;
        }
        let n = c.ingress + size;
        let mut to_shared = 0;
        if n <= reserve {
            c.ingress = n;
        } else if n - reserve > th {
            c.hdrm += size;
        } else {
            c.ingress = n;
            to_shared = size.min(n - reserve);
        }
        let may_pause = pfc && !c.paused;
        let (hdrm, ingress) = (c.hdrm, c.ingress);
        self.shared_used += to_shared;
        self.cell(out, q).egress += size;
        if may_pause
            && (hdrm > 0
                || ingress.saturating_sub(reserve) >= self.threshold_of(shift, self.free()))
        {
            self.cell(inp, q).paused = true;
            return Admit::Pause;
        }
        Admit::Ok
    }

    /// Egress admission of a lossy class: drop when the egress queue (`out`, `q`) would exceed
    /// `min(cap, floor(alpha * free))` or the bytes beyond the ingress reserve do not fit in
    /// the free shared buffer; else count the packet like a shared-buffer admission at ingress
    /// (reserve, then shared pool; never headroom).
    fn admit_egress(
        &mut self,
        inp: usize,
        out: usize,
        q: usize,
        size: u64,
        cap: u64,
        alpha: f64,
    ) -> Admit {
        let free = self.free();
        let limit = cap.min(scaled(alpha, free));
        let n = self.cells[inp][q].ingress + size;
        let to_shared = n.saturating_sub(self.reserve).min(size);
        if self.cells[out][q].egress + size > limit || to_shared > free {
            return Admit::Drop;
        }
        self.cells[inp][q].ingress = n;
        self.shared_used += to_shared;
        self.cells[out][q].egress += size;
        Admit::Ok
    }

    /// Releases `size` bytes of (`inp`, `q`) leaving through `out`; returns whether to send a
    /// PFC resume upstream for (`inp`, `q`). Inlined into the switch's egress path, as
    /// [`Mmu::admit`] is into its ingress.
    #[inline(always)]
    pub(crate) fn release(&mut self, inp: usize, out: usize, q: usize, size: u64) -> bool {
        let reserve = self.reserve;
        let c = self.cell(inp, q);
        let from_hdrm = c.hdrm.min(size);
        c.hdrm -= from_hdrm;
        let rest = size - from_hdrm;
        let before = c.ingress;
        c.ingress = before - rest;
        let (paused, hdrm, ingress) = (c.paused, c.hdrm, c.ingress);
        self.shared_used -= rest.min(before.saturating_sub(reserve));
        self.cell(out, q).egress -= size;
        if paused && hdrm == 0 {
            let s = ingress.saturating_sub(reserve);
            // Saturating: an offset larger than any threshold means "resume once the queue's
            // shared use is gone" (an absurd one wrapped to resume at once in release builds).
            if s == 0 || s.saturating_add(self.resume_offset) <= self.threshold(inp) {
                self.cell(inp, q).paused = false;
                return true;
            }
        }
        false
    }

    /// Forgets the pauses this switch sent out of `port` (its link failed).
    pub(crate) fn forget_pauses(&mut self, port: usize) {
        for c in &mut self.cells[port] {
            c.paused = false;
        }
    }

    /// Egress bytes of (port, queue) (for ECN).
    #[inline]
    pub(crate) fn egress_bytes(&self, port: usize, q: usize) -> u64 {
        self.cells[port][q].egress
    }

    /// Bytes of the shared pool in use (for tests).
    #[cfg(test)]
    pub(crate) fn shared_used(&self) -> u64 {
        self.shared_used
    }

    /// Whether every counter is zero and nothing is paused.
    pub(crate) fn is_idle(&self) -> bool {
        self.shared_used == 0 && self.cells.iter().all(|a| a.iter().all(|c| *c == Cell::default()))
    }
}

/// `floor(alpha * bytes)` (`alpha > 0`; saturates at `u64::MAX`).
#[inline]
fn scaled(alpha: f64, bytes: u64) -> u64 {
    (alpha * bytes as f64) as u64
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

    /// A (port, class) cell fills half a cache line and never straddles two.
    #[test]
    fn cells_sit_in_one_cache_line() {
        assert_eq!(std::mem::size_of::<Cell>(), 32);
        assert_eq!(std::mem::align_of::<Cell>(), 32);
        let m = mmu();
        assert_eq!(m.cells.as_ptr() as usize % 32, 0);
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

    /// An absurd headroom multiple or reserve saturates (the release build used to wrap to a
    /// small headroom); the pool is then empty.
    #[test]
    fn set_up_arithmetic_saturates() {
        let cfg = SwitchConfig {
            headroom_bdp_multiple: u64::MAX / 2,
            reserve: Bytes(u64::MAX / 3),
            ..SwitchConfig::default()
        };
        let m = Mmu::new(&cfg, &[(BitsPerSec::gbps(100), 1_000_000); 4], BitsPerSec::gbps(100));
        assert_eq!(m.headroom, vec![u64::MAX; 4]);
        assert_eq!(m.pool, 0);
        let far = (BitsPerSec(u64::MAX), u64::MAX);
        let m = Mmu::new(&SwitchConfig::default(), &[far], BitsPerSec::gbps(100));
        assert_eq!(m.headroom, vec![u64::MAX]);
    }

    /// A resume offset too large to add to any backlog resumes a paused queue only once its
    /// shared use is gone (the sum used to wrap in release builds and resume at once, and to
    /// panic in debug ones).
    #[test]
    fn an_absurd_resume_offset_resumes_only_when_the_shared_use_is_gone() {
        for offset in [u64::MAX, u64::MAX - 1, 1 << 40] {
            let cfg = SwitchConfig {
                buffer: Bytes(1 << 20),
                resume_offset: Bytes(offset),
                ..SwitchConfig::default()
            };
            let mut m =
                Mmu::new(&cfg, &[(BitsPerSec::gbps(100), 1_000_000); 4], BitsPerSec::gbps(100));
            let mut admitted = 0u64;
            while m.admit(0, 1, 3, 1000) == Admit::Ok {
                admitted += 1;
            }
            // The packet that paused.
            admitted += 1;
            // Every release but those that empty the shared part keeps the pause: the reserve
            // (4096 B) holds the last four packets, so the pause lifts with the fifth-last.
            let mut resumed_at = None;
            for i in 0..admitted {
                if m.release(0, 1, 3, 1000) {
                    resumed_at.get_or_insert(i);
                }
            }
            assert_eq!(resumed_at, Some(admitted - 5), "offset {offset}");
            assert!(m.is_idle());
        }
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

    /// 4 ports at 100 Gb/s with 1 µs links: 37 500 B of headroom each when some class is
    /// lossless, none when every class is lossy.
    const PORTS: [(BitsPerSec, u64); 4] = [(BitsPerSec::gbps(100), 1_000_000); 4];

    fn mmu_with(cfg: SwitchConfig) -> Mmu {
        Mmu::new(&cfg, &PORTS, BitsPerSec::gbps(100))
    }

    #[test]
    fn explicit_alpha_pauses_when_the_queue_reaches_alpha_times_the_free_buffer() {
        // No reserve, so that every byte is shared: the pool is 1 260 000 - 4 * 37 500 =
        // 1 110 000 B. With alpha = 0.11, one queue of 1000 B packets pauses when its shared
        // bytes s reach floor(0.11 * (1 110 000 - s)): at s = 110 000 (free 1 000 000,
        // 0.11 * free = 110 000), the 110th packet. After 109 packets s = 109 000 and the
        // threshold is floor(0.11 * 1 001 000) = 110 110: no pause yet.
        let cfg = SwitchConfig {
            buffer: Bytes(1_260_000),
            reserve: Bytes(0),
            dt_alpha: Some(0.11),
            ..SwitchConfig::default()
        };
        let mut m = mmu_with(cfg);
        assert_eq!(m.pool, 1_110_000);
        for k in 1..=109u64 {
            assert_eq!(m.admit(0, 1, 3, 1000), Admit::Ok, "packet {k}");
            let (s, free) = (m.shared_used(), 1_110_000 - m.shared_used());
            assert_eq!(s, 1000 * k);
            assert!(s < (0.11 * free as f64) as u64, "packet {k}");
        }
        assert_eq!(m.threshold(0), 110_110);
        assert_eq!(m.admit(0, 1, 3, 1000), Admit::Pause);
        assert_eq!((m.shared_used(), m.threshold(0)), (110_000, 110_000));
        // The per-port rate shift does not apply with an explicit alpha: a 400G port (shift 1
        // under the reference's rule) has the same threshold.
        let fast = Mmu::new(
            &SwitchConfig { dt_alpha: Some(0.11), ..SwitchConfig::default() },
            &[(BitsPerSec::gbps(400), 1_000_000), (BitsPerSec::gbps(100), 1_000_000)],
            BitsPerSec::gbps(100),
        );
        assert_eq!(fast.threshold(0), fast.threshold(1));
        // Resume once s + 3072 (the resume offset) <= floor(0.11 * free): after releasing j
        // packets s = 110 000 - 1000 j and the threshold is 110 000 + 110 j, so at j = 3
        // (110 072 <= 110 330; at j = 2, 111 072 > 110 220).
        assert!(!m.release(0, 1, 3, 1000));
        assert!(!m.release(0, 1, 3, 1000));
        assert!(m.release(0, 1, 3, 1000));
        for _ in 0..107 {
            assert!(!m.release(0, 1, 3, 1000));
        }
        assert!(m.is_idle());
    }

    #[test]
    fn the_default_threshold_is_the_reference_shift() {
        // The same switch without an explicit alpha: free >> 3 (alpha = 1/8). One queue
        // settles at s = pool / 9: the 124th packet (s 124 000 > 123 375, the threshold
        // before it) goes to headroom and pauses.
        let cfg =
            SwitchConfig { buffer: Bytes(1_260_000), reserve: Bytes(0), ..Default::default() };
        let mut m = mmu_with(cfg);
        for k in 1..=123 {
            assert_eq!(m.admit(0, 1, 3, 1000), Admit::Ok, "packet {k}");
        }
        assert_eq!(m.threshold(0), (1_110_000 - 123_000) >> 3);
        assert_eq!(m.admit(0, 1, 3, 1000), Admit::Pause);
        assert_eq!((m.shared_used(), m.cells[0][3].hdrm), (123_000, 1000));
    }

    #[test]
    fn a_large_alpha_never_takes_more_than_the_free_buffer() {
        // alpha = 500, pool 1 110 000 B. Queue A (port 0) pauses once s >= 500 * free, i.e.
        // at s = 1 108 000 (free 2000), its 1108th packet of 1000 B. Queue B (port 2) then
        // sends 1500-byte packets: the first fits (free 2000), the second would exceed the
        // 500 B still free although 500 * 500 = 250 000 B is B's dynamic threshold, so it
        // goes to headroom and pauses instead of overcommitting the pool.
        let cfg = SwitchConfig {
            buffer: Bytes(1_260_000),
            reserve: Bytes(0),
            dt_alpha: Some(500.0),
            ..SwitchConfig::default()
        };
        let mut m = mmu_with(cfg);
        for k in 1..=1107 {
            assert_eq!(m.admit(0, 1, 3, 1000), Admit::Ok, "packet {k}");
        }
        assert_eq!(m.admit(0, 1, 3, 1000), Admit::Pause);
        assert_eq!(m.shared_used(), 1_108_000);
        assert_eq!(m.admit(2, 1, 3, 1500), Admit::Ok);
        assert_eq!(m.shared_used(), 1_109_500);
        assert_eq!(m.threshold(2), 250_000);
        assert_eq!(m.admit(2, 1, 3, 1500), Admit::Pause);
        assert_eq!((m.shared_used(), m.cells[2][3].hdrm), (1_109_500, 1500));
    }

    #[test]
    fn egress_admission_admits_a_burst_up_to_exactly_the_cap() {
        // Every class lossy (no PFC): no headroom, pool = 1 MiB - 4 * 4096 = 1 032 192 B.
        // Cap 256 KiB: 1024-byte packets from three ingress ports into one egress queue are
        // admitted while the queue stays <= 262 144 B, i.e. exactly 256 of them; the free
        // buffer (>= 770 048 B) never binds with alpha = 1.
        let cfg = SwitchConfig {
            buffer: Bytes(1 << 20),
            pfc_enabled: false,
            egress_cap: Some(Bytes(256 << 10)),
            ..SwitchConfig::default()
        };
        let mut m = mmu_with(cfg);
        assert_eq!(m.pool, 1_032_192);
        let mut admitted = Vec::new();
        for i in 0..400 {
            let inp = [0, 2, 3][i % 3];
            match m.admit(inp, 1, 3, 1024) {
                Admit::Ok => admitted.push(inp),
                Admit::Drop => {}
                Admit::Pause => panic!("a lossy class never pauses"),
            }
            if i < 256 {
                assert_eq!(admitted.len(), i + 1, "packet {i} is within the cap");
            }
        }
        assert_eq!(admitted.len(), 256);
        assert_eq!(m.egress_bytes(1, 3), 262_144);
        // Another egress queue (another class, another port) has a cap of its own.
        assert_eq!(m.admit(0, 1, 4, 1024), Admit::Ok);
        assert_eq!(m.admit(0, 2, 3, 1024), Admit::Ok);
        // Draining one packet makes room for exactly one more.
        m.release(admitted[0], 1, 3, 1024);
        assert_eq!(m.admit(admitted[0], 1, 3, 1024), Admit::Ok);
        assert_eq!(m.admit(admitted[0], 1, 3, 1024), Admit::Drop);
        for inp in admitted {
            assert!(!m.release(inp, 1, 3, 1024));
        }
        m.release(0, 1, 4, 1024);
        m.release(0, 2, 3, 1024);
        assert!(m.is_idle(), "the accounting returns to zero");
    }

    #[test]
    fn egress_alpha_bounds_a_queue_at_alpha_times_the_free_buffer() {
        // Pool 1 000 000 B (no reserve, no headroom), alpha 0.25, cap = the buffer: a packet is
        // admitted while e + 1000 <= floor(0.25 * (1 000 000 - e)), i.e. e <= 199 200: 200
        // packets (e = 200 000 = 0.25 * 800 000), then drops.
        let cfg = SwitchConfig {
            buffer: Bytes(1_000_000),
            reserve: Bytes(0),
            pfc_enabled: false,
            egress_cap: Some(Bytes(1_000_000)),
            egress_alpha: 0.25,
            ..SwitchConfig::default()
        };
        let mut m = mmu_with(cfg);
        for k in 1..=200 {
            assert_eq!(m.admit(0, 1, 3, 1000), Admit::Ok, "packet {k}");
        }
        assert_eq!(m.admit(0, 1, 3, 1000), Admit::Drop);
        assert_eq!((m.egress_bytes(1, 3), m.shared_used()), (200_000, 200_000));
    }

    #[test]
    fn egress_admission_leaves_lossless_classes_on_ingress_admission_with_pfc() {
        // Class 3 lossy (egress admission, cap 64 KiB), class 4 lossless: class 4 still
        // pauses its upstream at the ingress threshold, far beyond the lossy cap.
        let cfg = SwitchConfig {
            buffer: Bytes(1 << 20),
            lossy_classes: 1 << 3,
            egress_cap: Some(Bytes(64 << 10)),
            ..SwitchConfig::default()
        };
        let mut m = mmu_with(cfg);
        let lossy = (0..100).filter(|_| m.admit(0, 1, 3, 1024) == Admit::Ok).count();
        assert_eq!(lossy, 64);
        let mut pause = None;
        for k in 0..1000 {
            if m.admit(2, 1, 4, 1000) == Admit::Pause {
                pause = Some(k);
                break;
            }
        }
        let k = pause.expect("the lossless class pauses");
        assert!(k > 64, "paused after {k} packets");
    }

    #[test]
    fn admission_parameters_are_checked() {
        let d = SwitchConfig::default();
        assert_eq!(d.check_admission(), Ok(()));
        for a in [0.0, -1.0, 1000.0, f64::NAN, f64::INFINITY] {
            let c = SwitchConfig { dt_alpha: Some(a), ..d.clone() };
            assert_eq!(c.check_admission().unwrap_err().0, "pfc_alpha", "{a}");
            let c = SwitchConfig { egress_cap: Some(Bytes(1000)), egress_alpha: a, ..d.clone() };
            assert_eq!(c.check_admission().unwrap_err().0, "egress_alpha", "{a}");
        }
        let c = SwitchConfig { dt_alpha: Some(0.11), ..d.clone() };
        assert_eq!(c.check_admission(), Ok(()));
        let c = SwitchConfig { egress_cap: Some(Bytes(0)), ..d.clone() };
        assert_eq!(c.check_admission(), Err(("egress_cap", "must be at least 1 byte".into())));
        let c = SwitchConfig { egress_cap: Some(Bytes((32 << 20) + 1)), ..d.clone() };
        assert_eq!(
            c.check_admission(),
            Err(("egress_cap", "33554433B is larger than the switch buffer (33554432B)".into()))
        );
        let c = SwitchConfig { egress_cap: Some(Bytes(32 << 20)), ..d };
        assert_eq!(c.check_admission(), Ok(()));
    }
}
