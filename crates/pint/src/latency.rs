//! Latency quantiles by dynamic per-flow aggregation (PINT §3.2 example #2, §6.2).
//!
//! Each packet of a flow carries one `b`-bit digest: the latency of **one** hop, chosen by the
//! global hash (reservoir sampling, as in the Baseline layer of [`crate::path`]: hop `i` writes
//! with probability `1/i`, so the digest holds a uniformly random hop and the sink knows
//! which), compressed by a [`LatencyCodec`] — multiplicative approximation with nearest
//! rounding over a fixed range, `2^b` codes. The sink keeps, per hop, either **all** digests
//! (the exact baseline over compressed values) or a [`Kll`] sketch of a fixed number of
//! digests, and answers per-hop quantiles from them.
//!
//! [`latency_experiment`] measures the relative error of the p50 and p99 estimates against the
//! exact quantiles of the *true* latencies of all packets of the flow so far (every packet
//! crosses every hop, so the truth at hop `i` after `n` packets has `n` samples while the sink
//! has about `n / k` compressed ones). As packets accumulate, the sampling error vanishes and
//! the error converges to the compression error (at most `ε` with nearest rounding, since
//! rounding is monotone and so commutes with quantiles) plus the sketch's error.
//!
//! **Synthetic latencies** ([`LatencyModel::default`]): hop `i` (0-based) has log-normal
//! latency with median `1 µs · 2^i` and shape `σ = 1` (p99 ≈ 10× the median), in ns: a
//! skewed, heavy-ish tail like queueing delay, and hops that differ by a factor 2 so that a
//! decoder confusing hops would show. The default codec range is `[2^6, 2^22]` ns
//! (64 ns – 4.2 ms); values outside are clamped.

use std::fmt;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::approx::Multiplicative;
use crate::error::PintError;
use crate::hash::{hash2, reservoir_threshold};
use crate::kll::Kll;
use crate::stats::nearest_rank_index;

/// Compresses a latency in `[min, max]` into `bits` bits: code `c` stands for `min · β^c` with
/// `β = (max / min)^(1 / (2^bits - 1))` (made slightly larger if `f64` rounding requires),
/// nearest rounding in the log domain. For latencies inside the range the decoded value is
/// within a factor `√β = 1 + ε` of the truth; outside, the value is clamped first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyCodec {
    min: f64,
    bits: u32,
    max_code: u32,
    mult: Multiplicative,
}

impl LatencyCodec {
    /// A codec for latencies in `[min, max]` (`1 <= min < max`, finite) with `1..=31` bits.
    pub fn new(bits: u32, min: f64, max: f64) -> Result<Self, PintError> {
        if !(min.is_finite() && max.is_finite() && min >= 1.0 && max > min) {
            return Err(PintError::InvalidRange { min, max, bits });
        }
        let mult = Multiplicative::for_range(max / min, bits)
            .map_err(|_| PintError::InvalidRange { min, max, bits })?;
        Ok(LatencyCodec { min, bits, max_code: (1u32 << bits) - 1, mult })
    }

    /// Bits per digest.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// The guaranteed relative error `ε` for latencies inside the range.
    pub fn eps(&self) -> f64 {
        self.mult.eps()
    }

    /// Code of a latency (clamped into the range).
    pub fn encode(&self, latency: f64) -> u32 {
        self.mult.encode_nearest(latency / self.min).min(self.max_code)
    }

    /// Latency a code stands for.
    pub fn decode(&self, code: u32) -> f64 {
        self.min * self.mult.decode(code)
    }
}

/// Per-hop synthetic latency distributions: log-normal with the given medians (ns) and a
/// common shape `sigma`.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyModel {
    /// Median latency of each hop, ns (the path length is `medians_ns.len()`).
    pub medians_ns: Vec<f64>,
    /// Log-normal shape parameter.
    pub sigma: f64,
}

impl Default for LatencyModel {
    /// Five hops with medians 1, 2, 4, 8, 16 µs and `σ = 1`.
    fn default() -> Self {
        LatencyModel {
            medians_ns: (0..5).map(|i| 1000.0 * f64::from(1u32 << i)).collect(),
            sigma: 1.0,
        }
    }
}

impl LatencyModel {
    /// Number of hops.
    pub fn hops(&self) -> usize {
        self.medians_ns.len()
    }

    /// One latency sample for hop `hop` (Box–Muller normal, exponentiated).
    pub fn sample<R: Rng + ?Sized>(&self, hop: usize, rng: &mut R) -> f64 {
        let u1: f64 = 1.0 - rng.gen::<f64>(); // (0, 1]
        let u2: f64 = rng.gen();
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        self.medians_ns[hop] * (self.sigma * z).exp()
    }
}

/// How the sink stores each hop's digests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// Every digest (exact quantiles of the compressed values).
    All,
    /// A KLL sketch retaining at most this many digests.
    Kll(usize),
}

impl fmt::Display for Storage {
    /// `all` or `kll<budget>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Storage::All => write!(f, "all"),
            Storage::Kll(b) => write!(f, "kll{b}"),
        }
    }
}

/// One latency experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyConfig {
    /// Per-hop latency distributions.
    pub model: LatencyModel,
    /// Digest bits (e.g. 4 or 8).
    pub bits: u32,
    /// Codec range, ns.
    pub range_ns: (f64, f64),
    /// Digest storage at the sink.
    pub storage: Storage,
    /// Packet counts at which the error is measured (increasing).
    pub checkpoints: Vec<u64>,
    /// Independent flows to average over.
    pub flows: usize,
    /// Master seed.
    pub seed: u64,
}

impl LatencyConfig {
    /// The default model and range with the given bits, storage, checkpoints and flows.
    pub fn new(bits: u32, storage: Storage, checkpoints: &[u64], flows: usize, seed: u64) -> Self {
        LatencyConfig {
            model: LatencyModel::default(),
            bits,
            range_ns: (64.0, 4_194_304.0),
            storage,
            checkpoints: checkpoints.to_vec(),
            flows,
            seed,
        }
    }
}

/// One row of a latency table: mean relative quantile errors after `packets` packets.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyRow {
    /// Digest bits.
    pub bits: u32,
    /// Sink storage.
    pub storage: Storage,
    /// Packets of the flow so far.
    pub packets: u64,
    /// Mean over hops and flows of `|p50_est - p50_true| / p50_true`.
    pub p50_err: f64,
    /// Same for p99.
    pub p99_err: f64,
}

impl LatencyRow {
    /// CSV header matching [`Display`](fmt::Display).
    pub const CSV_HEADER: &'static str = "bits,storage,packets,p50_err,p99_err";
}

impl fmt::Display for LatencyRow {
    /// One CSV line (no newline), columns as in [`LatencyRow::CSV_HEADER`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{},{},{},{:.4},{:.4}",
            self.bits, self.storage, self.packets, self.p50_err, self.p99_err
        )
    }
}

/// Per-hop digest store.
enum Store {
    All(Vec<u32>),
    Kll(Kll<u32>),
}

impl Store {
    fn push(&mut self, code: u32) {
        match self {
            Store::All(v) => v.push(code),
            Store::Kll(s) => s.update(code),
        }
    }

    fn quantile(&self, q: f64) -> Option<u32> {
        match self {
            Store::All(v) if v.is_empty() => None,
            Store::All(v) => {
                let mut c = v.clone();
                let i = nearest_rank_index(c.len(), q);
                Some(*c.select_nth_unstable(i).1)
            }
            Store::Kll(s) => s.quantile(q),
        }
    }
}

/// Nearest-rank quantile of true latencies (`xs` non-empty).
fn true_quantile(xs: &[f64], q: f64) -> f64 {
    let mut c = xs.to_vec();
    let i = nearest_rank_index(c.len(), q);
    *c.select_nth_unstable_by(i, |a, b| a.total_cmp(b)).1
}

/// Run one latency experiment: one row per checkpoint. A hop without any digest yet counts as
/// a relative error of 1.
pub fn latency_experiment(cfg: &LatencyConfig) -> Result<Vec<LatencyRow>, PintError> {
    let k = cfg.model.hops();
    if k == 0 {
        return Err(PintError::InvalidPathLength(0));
    }
    if !(cfg.model.sigma.is_finite() && cfg.model.sigma >= 0.0)
        || cfg.model.medians_ns.iter().any(|m| !(m.is_finite() && *m > 0.0))
    {
        return Err(PintError::InvalidExperiment(
            "latency medians must be > 0 and sigma >= 0".into(),
        ));
    }
    if cfg.flows == 0
        || cfg.checkpoints.is_empty()
        || cfg.checkpoints.windows(2).any(|w| w[0] >= w[1])
        || cfg.checkpoints[0] == 0
    {
        return Err(PintError::InvalidExperiment(
            "need at least one flow and strictly increasing positive checkpoints".into(),
        ));
    }
    if let Storage::Kll(b) = cfg.storage {
        if b < 8 {
            return Err(PintError::InvalidSketch(b));
        }
    }
    let codec = LatencyCodec::new(cfg.bits, cfg.range_ns.0, cfg.range_ns.1)?;
    let mut sums = vec![(0.0f64, 0.0f64); cfg.checkpoints.len()];
    let last = *cfg.checkpoints.last().expect("checked non-empty");
    for flow in 0..cfg.flows {
        let flow_seed = hash2(cfg.seed, flow as u64);
        let mut rng = ChaCha8Rng::seed_from_u64(flow_seed);
        let mut truth: Vec<Vec<f64>> = vec![Vec::with_capacity(last as usize); k];
        let mut stores: Vec<Store> = (0..k)
            .map(|h| match cfg.storage {
                Storage::All => Store::All(Vec::new()),
                Storage::Kll(b) => Store::Kll(
                    Kll::with_budget(b, hash2(flow_seed, h as u64)).expect("budget checked"),
                ),
            })
            .collect();
        let mut lat = vec![0.0; k];
        let mut next = 0;
        for pkt in 1..=last {
            for (h, l) in lat.iter_mut().enumerate() {
                *l = cfg.model.sample(h, &mut rng);
                truth[h].push(*l);
            }
            // Reservoir choice of the reporting hop by the global hash of the packet ID.
            let key = hash2(flow_seed ^ 0x4c41_5400, pkt);
            let writer = (1..=k)
                .rev()
                .find(|&i| hash2(key, i as u64) <= reservoir_threshold(i as u64))
                .expect("hop 1 always writes")
                - 1;
            stores[writer].push(codec.encode(lat[writer]));
            if pkt == cfg.checkpoints[next] {
                for (h, store) in stores.iter().enumerate() {
                    let (s50, s99) = &mut sums[next];
                    for (q, sum) in [(0.5, s50), (0.99, s99)] {
                        let t = true_quantile(&truth[h], q);
                        *sum += match store.quantile(q) {
                            Some(c) => (codec.decode(c) - t).abs() / t,
                            None => 1.0,
                        };
                    }
                }
                next += 1;
            }
        }
    }
    let denom = (cfg.flows * k) as f64;
    Ok(cfg
        .checkpoints
        .iter()
        .zip(sums)
        .map(|(&packets, (s50, s99))| LatencyRow {
            bits: cfg.bits,
            storage: cfg.storage,
            packets,
            p50_err: s50 / denom,
            p99_err: s99 / denom,
        })
        .collect())
}

/// Rows for every combination of `bits` and `storages` (default model and range), each at
/// every checkpoint, averaged over `flows` flows. Every combination sees the same flows (the
/// same latencies and reporting hops, from `seed`), so rows differ only by encoding and
/// storage.
pub fn latency_table(
    bits: &[u32],
    storages: &[Storage],
    checkpoints: &[u64],
    flows: usize,
    seed: u64,
) -> Result<Vec<LatencyRow>, PintError> {
    let mut rows = Vec::new();
    for &b in bits {
        for &st in storages {
            let cfg = LatencyConfig::new(b, st, checkpoints, flows, seed);
            rows.extend(latency_experiment(&cfg)?);
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codec_range_and_bound() {
        let c = LatencyCodec::new(8, 64.0, 4_194_304.0).unwrap();
        assert_eq!(c.encode(1.0), 0);
        assert_eq!(c.encode(1e12), 255);
        for i in 0..1000 {
            let v = 64.0 * (1.0111f64).powi(i);
            if v > 4_194_304.0 {
                break;
            }
            let d = c.decode(c.encode(v));
            assert!(
                d <= v * (1.0 + c.eps()) * (1.0 + 1e-12)
                    && d >= v / (1.0 + c.eps()) / (1.0 + 1e-12)
            );
        }
        assert!(LatencyCodec::new(8, 0.5, 10.0).is_err());
        assert!(LatencyCodec::new(0, 1.0, 10.0).is_err());
    }

    #[test]
    fn storage_names() {
        assert_eq!(Storage::All.to_string(), "all");
        assert_eq!(Storage::Kll(100).to_string(), "kll100");
        let r = LatencyRow {
            bits: 4,
            storage: Storage::Kll(100),
            packets: 10,
            p50_err: 0.5,
            p99_err: 0.25,
        };
        assert_eq!(r.to_string(), "4,kll100,10,0.5000,0.2500");
    }

    #[test]
    fn bad_configs() {
        let mut cfg = LatencyConfig::new(8, Storage::All, &[10, 5], 1, 0);
        assert!(latency_experiment(&cfg).is_err());
        cfg.checkpoints = vec![10];
        cfg.flows = 0;
        assert!(latency_experiment(&cfg).is_err());
        cfg.flows = 1;
        cfg.storage = Storage::Kll(4);
        assert!(latency_experiment(&cfg).is_err());
    }
}
