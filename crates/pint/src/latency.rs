//! Latency quantiles by dynamic per-flow aggregation (PINT §3.2 example #2, §6.2).
//!
//! Each packet of a flow carries one `b`-bit digest: the latency of **one** hop, chosen by the
//! global hash (reservoir sampling, as in the Baseline layer of [`crate::path`]: hop `i` writes
//! with probability `1/i`, so the digest holds a uniformly random hop and the sink knows
//! which), compressed by a [`LatencyCodec`] — multiplicative approximation with nearest
//! rounding over a fixed range, `2^b` codes. The sink keeps, per hop, **all** digests (the
//! exact baseline over compressed values), a [`Kll`] sketch of a fixed number of digests, or a
//! [`CodeHist`] of a fixed number of bytes, and answers per-hop quantiles from them.
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
//!
//! **Recorded latencies** ([`LatencySource::Traces`]): per-packet, per-hop latencies of real
//! flows, e.g. the switch hop latencies of a simulated fabric (the paper's §6.2 uses "the same
//! topology and workloads as in our congestion control experiments"). Each [`FlowTrace`] is
//! one flow; [`trace_range`] gives a codec range that covers them.

use std::fmt;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::approx::Multiplicative;
use crate::error::PintError;
use crate::hash::{hash2, reservoir_threshold};
use crate::hist::{CodeHist, CodeRange};
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

    /// Latency a range of codes stands for: the geometric mean of its ends (the value off by
    /// the least factor from every code of the range; [`decode`](Self::decode) for one code).
    pub fn decode_range(&self, r: CodeRange) -> f64 {
        if r.lo == r.hi {
            return self.decode(r.lo);
        }
        (self.decode(r.lo) * self.decode(r.hi)).sqrt()
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

/// The per-packet, per-hop latencies of one recorded flow.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowTrace {
    hops: usize,
    latencies_ns: Vec<f64>,
}

impl FlowTrace {
    /// A flow crossing `hops >= 1` hops; `latencies_ns` is packet-major (packet `p`'s latency
    /// at hop `h` is at `p * hops + h`), every value finite and positive, whole packets only.
    ///
    /// # Errors
    /// [`PintError::InvalidPathLength`] for 0 hops, [`PintError::InvalidExperiment`] for a
    /// partial packet or a latency that is not finite and positive.
    pub fn new(hops: usize, latencies_ns: Vec<f64>) -> Result<Self, PintError> {
        if hops == 0 {
            return Err(PintError::InvalidPathLength(0));
        }
        if !latencies_ns.len().is_multiple_of(hops) {
            return Err(PintError::InvalidExperiment(format!(
                "a trace of {} latencies is not whole packets of {hops} hops",
                latencies_ns.len()
            )));
        }
        if let Some(v) = latencies_ns.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
            return Err(PintError::InvalidExperiment(format!(
                "latency {v} ns: recorded latencies must be finite and positive"
            )));
        }
        Ok(FlowTrace { hops, latencies_ns })
    }

    /// Hops every packet crosses.
    pub fn hops(&self) -> usize {
        self.hops
    }

    /// Packets recorded.
    pub fn packets(&self) -> usize {
        self.latencies_ns.len() / self.hops
    }

    /// Packet `p`'s latencies, one per hop.
    ///
    /// # Panics
    /// If `p >= self.packets()`.
    pub fn packet(&self, p: usize) -> &[f64] {
        &self.latencies_ns[p * self.hops..(p + 1) * self.hops]
    }
}

/// A codec range `[2^a, 2^b]` ns (powers of two, `2^a >= 1`) covering every latency of
/// `traces`, or `None` if they hold no packet.
pub fn trace_range(traces: &[FlowTrace]) -> Option<(f64, f64)> {
    let all = traces.iter().flat_map(|t| t.latencies_ns.iter().copied());
    let (lo, hi) = all.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if hi == 0.0 {
        return None;
    }
    let lo = 2f64.powi(lo.log2().floor().max(0.0) as i32);
    let hi = 2f64.powi(hi.log2().ceil() as i32).max(2.0 * lo);
    Some((lo, hi))
}

/// Where the latencies of the experiment come from.
#[derive(Debug, Clone, PartialEq)]
pub enum LatencySource {
    /// Synthetic per-hop distributions; [`LatencyConfig::flows`] independent flows.
    Model(LatencyModel),
    /// Recorded flows, each used once (in order); [`LatencyConfig::flows`] is ignored and
    /// every trace must hold at least the largest checkpoint's packets.
    Traces(std::sync::Arc<Vec<FlowTrace>>),
}

/// How the sink stores each hop's digests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// Every digest (exact quantiles of the compressed values).
    All,
    /// A KLL sketch retaining at most this many digests.
    Kll(usize),
    /// A [`CodeHist`] of this many bytes (at `b` bits per digest, a 100-digest sketch is
    /// `100 · b / 8` bytes).
    Hist(usize),
}

impl fmt::Display for Storage {
    /// `all`, `kll<digests>` or `hist<bytes>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Storage::All => write!(f, "all"),
            Storage::Kll(b) => write!(f, "kll{b}"),
            Storage::Hist(b) => write!(f, "hist{b}"),
        }
    }
}

/// One latency experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyConfig {
    /// Where the latencies come from.
    pub source: LatencySource,
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
            source: LatencySource::Model(LatencyModel::default()),
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
    /// Mean over hops and flows of the storage's **rank** error at p50: the distance from 0.5
    /// to the range of normalized ranks, among the digests the sink received for the hop, of
    /// the code the storage returned (0 for exact storage; a sketch's own error; 1 for a hop
    /// without any digest yet).
    pub p50_rank_err: f64,
    /// Same for p99.
    pub p99_rank_err: f64,
}

impl LatencyRow {
    /// CSV header matching [`Display`](fmt::Display).
    pub const CSV_HEADER: &'static str =
        "bits,storage,packets,p50_err,p99_err,p50_rank_err,p99_rank_err";
}

impl fmt::Display for LatencyRow {
    /// One CSV line (no newline), columns as in [`LatencyRow::CSV_HEADER`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{},{},{},{:.4},{:.4},{:.4},{:.4}",
            self.bits,
            self.storage,
            self.packets,
            self.p50_err,
            self.p99_err,
            self.p50_rank_err,
            self.p99_rank_err
        )
    }
}

/// Exact nearest-rank quantile of the digests `codes`, `None` if there are none.
fn exact_quantile(codes: &[u32], q: f64) -> Option<u32> {
    if codes.is_empty() {
        return None;
    }
    let mut c = codes.to_vec();
    let i = nearest_rank_index(c.len(), q);
    Some(*c.select_nth_unstable(i).1)
}

/// Distance from `q` to the normalized rank range `[#{< lo}, #{<= hi}] / n` of the codes
/// `r` in `codes` (non-empty).
fn rank_error(codes: &[u32], r: CodeRange, q: f64) -> f64 {
    let n = codes.len() as f64;
    let below = codes.iter().filter(|&&x| x < r.lo).count() as f64 / n;
    let upto = codes.iter().filter(|&&x| x <= r.hi).count() as f64 / n;
    if q < below {
        below - q
    } else if q > upto {
        q - upto
    } else {
        0.0
    }
}

/// Nearest-rank quantile of true latencies (`xs` non-empty).
fn true_quantile(xs: &[f64], q: f64) -> f64 {
    let mut c = xs.to_vec();
    let i = nearest_rank_index(c.len(), q);
    *c.select_nth_unstable_by(i, |a, b| a.total_cmp(b)).1
}

/// A hop's fixed-size storage at the sink (exact storage is the list of received digests).
enum Sketch {
    Kll(Kll<u32>),
    Hist(CodeHist),
}

impl Sketch {
    /// The sketch `storage` keeps for one hop, `None` for exact storage.
    fn new(storage: Storage, bits: u32, seed: u64) -> Result<Option<Sketch>, PintError> {
        Ok(match storage {
            Storage::All => None,
            Storage::Kll(b) => Some(Sketch::Kll(Kll::with_budget(b, seed)?)),
            Storage::Hist(b) => Some(Sketch::Hist(CodeHist::with_budget(b, bits, seed)?)),
        })
    }

    fn update(&mut self, code: u32) {
        match self {
            Sketch::Kll(s) => s.update(code),
            Sketch::Hist(s) => s.update(code),
        }
    }

    fn quantile(&self, q: f64) -> Option<CodeRange> {
        match self {
            Sketch::Kll(s) => s.quantile(q).map(CodeRange::one),
            Sketch::Hist(s) => s.quantile(q),
        }
    }
}

/// Run one latency experiment: one row per checkpoint. A hop without any digest yet counts as
/// a relative error of 1.
pub fn latency_experiment(cfg: &LatencyConfig) -> Result<Vec<LatencyRow>, PintError> {
    if cfg.checkpoints.is_empty()
        || cfg.checkpoints.windows(2).any(|w| w[0] >= w[1])
        || cfg.checkpoints[0] == 0
    {
        return Err(PintError::InvalidExperiment(
            "need strictly increasing positive checkpoints".into(),
        ));
    }
    let last = *cfg.checkpoints.last().expect("checked non-empty");
    let flows = match &cfg.source {
        LatencySource::Model(model) => {
            if model.hops() == 0 {
                return Err(PintError::InvalidPathLength(0));
            }
            if !(model.sigma.is_finite() && model.sigma >= 0.0)
                || model.medians_ns.iter().any(|m| !(m.is_finite() && *m > 0.0))
            {
                return Err(PintError::InvalidExperiment(
                    "latency medians must be > 0 and sigma >= 0".into(),
                ));
            }
            cfg.flows
        }
        LatencySource::Traces(traces) => {
            if let Some(t) = traces.iter().find(|t| (t.packets() as u64) < last) {
                return Err(PintError::InvalidExperiment(format!(
                    "a trace of {} packets is shorter than the last checkpoint ({last})",
                    t.packets()
                )));
            }
            traces.len()
        }
    };
    if flows == 0 {
        return Err(PintError::InvalidExperiment("need at least one flow".into()));
    }
    let codec = LatencyCodec::new(cfg.bits, cfg.range_ns.0, cfg.range_ns.1)?;
    let mut sums = vec![[0.0f64; 4]; cfg.checkpoints.len()];
    let mut hop_count = 0usize;
    for flow in 0..flows {
        let flow_seed = hash2(cfg.seed, flow as u64);
        let mut rng = ChaCha8Rng::seed_from_u64(flow_seed);
        let k = match &cfg.source {
            LatencySource::Model(m) => m.hops(),
            LatencySource::Traces(t) => t[flow].hops(),
        };
        hop_count += k;
        // Each hop's vector reserved whole (`vec![v; k]` would clone it, and a clone of an
        // empty vector drops the capacity: all but one would grow by doubling, to 1.7× the
        // memory at 10⁷ packets).
        let mut truth: Vec<Vec<f64>> = (0..k).map(|_| Vec::with_capacity(last as usize)).collect();
        // Every digest the sink received per hop: the exact storage itself, and the reference
        // for a sketch's rank error.
        let mut received: Vec<Vec<u32>> = vec![Vec::new(); k];
        let mut sketches: Vec<Option<Sketch>> = (0..k)
            .map(|h| Sketch::new(cfg.storage, cfg.bits, hash2(flow_seed, h as u64)))
            .collect::<Result<_, _>>()?;
        let mut lat = vec![0.0; k];
        let mut next = 0;
        for pkt in 1..=last {
            match &cfg.source {
                LatencySource::Model(m) => {
                    for (h, l) in lat.iter_mut().enumerate() {
                        *l = m.sample(h, &mut rng);
                    }
                }
                LatencySource::Traces(t) => lat.copy_from_slice(t[flow].packet(pkt as usize - 1)),
            }
            for (h, l) in lat.iter().enumerate() {
                truth[h].push(*l);
            }
            // Reservoir choice of the reporting hop by the global hash of the packet ID.
            let key = hash2(flow_seed ^ 0x4c41_5400, pkt);
            let writer = (1..=k)
                .rev()
                .find(|&i| hash2(key, i as u64) <= reservoir_threshold(i as u64))
                .expect("hop 1 always writes")
                - 1;
            let code = codec.encode(lat[writer]);
            received[writer].push(code);
            if let Some(s) = &mut sketches[writer] {
                s.update(code);
            }
            if pkt == cfg.checkpoints[next] {
                for h in 0..k {
                    for (i, q) in [0.5, 0.99].into_iter().enumerate() {
                        let t = true_quantile(&truth[h], q);
                        let estimate = match &sketches[h] {
                            Some(s) => s.quantile(q),
                            None => exact_quantile(&received[h], q).map(CodeRange::one),
                        };
                        let (value_err, rank_err) = match estimate {
                            Some(r) => (
                                (codec.decode_range(r) - t).abs() / t,
                                rank_error(&received[h], r, q),
                            ),
                            None => (1.0, 1.0),
                        };
                        sums[next][i] += value_err;
                        sums[next][2 + i] += rank_err;
                    }
                }
                next += 1;
            }
        }
    }
    let denom = hop_count as f64;
    Ok(cfg
        .checkpoints
        .iter()
        .zip(sums)
        .map(|(&packets, s)| LatencyRow {
            bits: cfg.bits,
            storage: cfg.storage,
            packets,
            p50_err: s[0] / denom,
            p99_err: s[1] / denom,
            p50_rank_err: s[2] / denom,
            p99_rank_err: s[3] / denom,
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

/// As [`latency_table`], over recorded flows instead of the synthetic model, with the codec
/// range `range_ns` (e.g. from [`trace_range`]).
///
/// # Errors
/// As [`latency_experiment`]: among others, a trace shorter than the last checkpoint, or a
/// range the codec cannot cover with a bit width.
pub fn latency_table_traced(
    traces: std::sync::Arc<Vec<FlowTrace>>,
    range_ns: (f64, f64),
    bits: &[u32],
    storages: &[Storage],
    checkpoints: &[u64],
    seed: u64,
) -> Result<Vec<LatencyRow>, PintError> {
    let mut rows = Vec::new();
    for &b in bits {
        for &st in storages {
            let cfg = LatencyConfig {
                source: LatencySource::Traces(traces.clone()),
                range_ns,
                flows: traces.len(),
                ..LatencyConfig::new(b, st, checkpoints, 1, seed)
            };
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
        assert_eq!(Storage::Hist(100).to_string(), "hist100");
        let r = LatencyRow {
            bits: 4,
            storage: Storage::Kll(100),
            packets: 10,
            p50_err: 0.5,
            p99_err: 0.25,
            p50_rank_err: 0.0,
            p99_rank_err: 0.125,
        };
        assert_eq!(r.to_string(), "4,kll100,10,0.5000,0.2500,0.0000,0.1250");
    }

    /// Recorded flows that hold exactly what the model would sample give the model's rows.
    #[test]
    fn traces_replay_the_model() {
        let checkpoints = [10, 100, 400];
        let model = LatencyModel::default();
        let traces: Vec<FlowTrace> = (0..3u64)
            .map(|flow| {
                let mut rng = ChaCha8Rng::seed_from_u64(hash2(5, flow));
                let v = (0..400 * model.hops()).map(|i| model.sample(i % model.hops(), &mut rng));
                FlowTrace::new(model.hops(), v.collect()).unwrap()
            })
            .collect();
        let traces = std::sync::Arc::new(traces);
        for st in [Storage::All, Storage::Kll(16)] {
            let by_model = latency_experiment(&LatencyConfig::new(8, st, &checkpoints, 3, 5));
            let range = LatencyConfig::new(8, st, &checkpoints, 3, 5).range_ns;
            let by_trace =
                latency_table_traced(traces.clone(), range, &[8], &[st], &checkpoints, 5);
            assert_eq!(by_model.unwrap(), by_trace.unwrap(), "{st}");
        }
    }

    /// A hop with a constant latency: every estimate is the codec's value for it, so the error
    /// is exactly the compression error, from the first packet on.
    #[test]
    fn constant_trace_has_only_compression_error() {
        let t = FlowTrace::new(2, [300.0, 1000.0].repeat(50)).unwrap();
        let range = trace_range(std::slice::from_ref(&t)).unwrap();
        assert_eq!(range, (256.0, 1024.0));
        let codec = LatencyCodec::new(4, range.0, range.1).unwrap();
        let e = |v: f64| (codec.decode(codec.encode(v)) - v).abs() / v;
        let want = (e(300.0) + e(1000.0)) / 2.0;
        let rows = latency_table_traced(
            std::sync::Arc::new(vec![t]),
            range,
            &[4],
            &[Storage::All, Storage::Kll(8)],
            &[20, 50],
            1,
        )
        .unwrap();
        for r in rows {
            assert!((r.p50_err - want).abs() < 1e-12 && (r.p99_err - want).abs() < 1e-12, "{r}");
            assert_eq!((r.p50_rank_err, r.p99_rank_err), (0.0, 0.0));
        }
    }

    #[test]
    fn rank_error_of_ties() {
        let codes = [1, 2, 2, 2, 3];
        let one = CodeRange::one;
        assert_eq!(rank_error(&codes, one(2), 0.5), 0.0);
        assert!((rank_error(&codes, one(3), 0.5) - 0.3).abs() < 1e-12);
        assert!((rank_error(&codes, one(1), 0.99) - 0.79).abs() < 1e-12);
        assert_eq!(rank_error(&codes, CodeRange { lo: 2, hi: 3 }, 0.99), 0.0);
    }

    #[test]
    fn bad_traces() {
        assert!(FlowTrace::new(0, vec![]).is_err());
        assert!(FlowTrace::new(2, vec![1.0, 2.0, 3.0]).is_err());
        assert!(FlowTrace::new(1, vec![1.0, 0.0]).is_err());
        assert!(FlowTrace::new(1, vec![1.0, f64::NAN]).is_err());
        assert_eq!(trace_range(&[FlowTrace::new(1, vec![]).unwrap()]), None);
        assert_eq!(trace_range(&[FlowTrace::new(1, vec![0.3, 5.0]).unwrap()]), Some((1.0, 8.0)));
        let short = std::sync::Arc::new(vec![FlowTrace::new(1, vec![100.0; 9]).unwrap()]);
        let e = latency_table_traced(short, (64.0, 128.0), &[8], &[Storage::All], &[5, 10], 1);
        assert!(e.unwrap_err().to_string().contains("shorter than the last checkpoint"));
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
