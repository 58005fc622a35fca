//! Path tracing by static per-flow aggregation (PINT §4.2, "hashing" variant).
//!
//! Every packet of a flow carries a `bits`-bit digest, split into `instances` independent
//! instances of `q = bits / instances` bits. Each instance works alone:
//!
//! 1. A *global hash* of the packet ID picks the instance's **layer** for this packet (the same
//!    choice at every hop, so no coordination is needed).
//! 2. Each hop `i` (1-based) draws `g(packet, i)` and decides whether it **acts**:
//!    - [`Layer::Baseline`]: with probability `1 / i`, the hop *overwrites* the digest with
//!      `h(switch, packet)`. This is reservoir sampling: the digest ends up holding the hash
//!      of a uniformly random hop, and the sink — which can recompute every `g` — knows which.
//!    - [`Layer::Xor`]: with probability `p`, the hop *XORs* `h(switch, packet)` onto the digest.
//! 3. `h` is a `q`-bit hash of `(switch ID, packet)`: a digest does not carry the ID itself,
//!    only evidence about it, so IDs of any width fit any budget.
//!
//! The sink's [`Decoder`] keeps, for every hop, the set of switch IDs of a known
//! [`Universe`] that agree with all the evidence so far. A Baseline digest filters the set of
//! its hop. An XOR digest is held until all but one of its acting hops are resolved; then their
//! hashes are XORed out (*peeling*) and it filters the last one. A hop whose set shrinks to one
//! ID is resolved, which may peel further digests. The true ID always survives every filter,
//! so a resolved hop is always right: the decoder returns a path only once every hop is
//! resolved, and that path is exactly the true one. Until then it says
//! [`DecodeStatus::Incomplete`].
//!
//! That guarantee assumes what the sink is told is true: the path has exactly `k` hops and its
//! IDs are in the universe. If not, filters run with wrong evidence; the decoder then
//! typically ends [`DecodeStatus::Inconsistent`] (some hop has no candidate left, or a peeled
//! digest does not XOR to zero), but it may pass through a wrong "complete" path first.
//!
//! [`PathScheme::pint`] is the multi-layer scheme (a Baseline layer plus XOR layers of
//! increasing probability, which help as more hops become known). [`PathScheme::naive`] is the
//! Baseline layer alone — each packet carries the hash of one uniformly chosen hop — the
//! comparison point (coupon collection, ≈ `k ln k` packets even with perfect hashes).
//!
//! ```
//! use dcsim_pint::path::{DecodeStatus, Decoder, PathScheme, Universe};
//!
//! let scheme = PathScheme::pint(8, 2, 10).unwrap(); // 8 bits: two 4-bit instances, d = 10
//! let path: Vec<u32> = (0..10).map(|i| 1000 + 7 * i).collect();
//! let mut decoder = Decoder::new(&scheme, path.len(), Universe::Range(1 << 12)).unwrap();
//! let mut packet = 0;
//! while !decoder.is_complete() {
//!     decoder.record(packet, scheme.encode_path(packet, &path));
//!     packet += 1;
//! }
//! assert_eq!(decoder.status(), DecodeStatus::Complete(path));
//! ```

use std::fmt;

use rand::seq::index;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::PintError;
use crate::hash::{hash2, reservoir_threshold, threshold, value_hash};
use crate::stats;

/// A switch identifier as written by switches (any 32-bit value).
pub type SwitchId = u32;

/// The digest carried by a packet: instance `j` occupies bits `[j·q, (j+1)·q)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Digest(pub u64);

/// What the hops of one instance do with a packet (chosen per packet by the global hash).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Layer {
    /// Hop `i` overwrites the digest with probability `1 / i` (reservoir sampling).
    Baseline,
    /// Every hop XORs its hash onto the digest with probability `p ∈ (0, 1]`.
    Xor {
        /// Per-hop acting probability.
        p: f64,
    },
}

/// Tags separating the uses of the global hash.
const TAG_LAYER: u64 = 0x4c41_5945_5200_0001;
const TAG_HOP: u64 = 0x484f_5000_0000_0002;

/// A path-tracing encoding: bit budget, instances, layer distribution and hash seed. Switches
/// and the sink must use the same scheme.
#[derive(Debug, Clone, PartialEq)]
pub struct PathScheme {
    q: u32,
    instances: u32,
    /// `(layer, weight)`, as given.
    layers: Vec<(Layer, f64)>,
    /// Per layer: the largest `x` (uniform 64-bit layer draw) that selects it, increasing.
    layer_cut: Vec<u64>,
    /// Per layer: acting threshold for XOR layers (unused for Baseline).
    act: Vec<u64>,
    seed: u64,
}

impl PathScheme {
    /// A scheme with `bits` bits per packet split into `instances` instances and the given
    /// layers with their weights (probabilities after normalisation). `seed` selects the global
    /// hash functions.
    pub fn new(
        bits: u32,
        instances: u32,
        layers: &[(Layer, f64)],
        seed: u64,
    ) -> Result<Self, PintError> {
        if instances == 0
            || bits == 0
            || bits > 64
            || !bits.is_multiple_of(instances)
            || bits / instances > 32
        {
            return Err(PintError::InvalidBudget { bits, instances });
        }
        if layers.is_empty() {
            return Err(PintError::InvalidLayers("no layers".into()));
        }
        let mut total = 0.0;
        for (layer, w) in layers {
            if !(w.is_finite() && *w >= 0.0) {
                return Err(PintError::InvalidLayers(format!("weight {w} of {layer:?}")));
            }
            if let Layer::Xor { p } = layer {
                if !(p.is_finite() && *p > 0.0 && *p <= 1.0) {
                    return Err(PintError::InvalidLayers(format!("XOR probability {p}")));
                }
            }
            total += w;
        }
        if total <= 0.0 {
            return Err(PintError::InvalidLayers("weights sum to 0".into()));
        }
        let mut layer_cut = Vec::with_capacity(layers.len());
        let mut acc = 0.0;
        for (i, (_, w)) in layers.iter().enumerate() {
            acc += w / total;
            let cut = if i + 1 == layers.len() { u64::MAX } else { threshold(acc) };
            layer_cut.push(cut);
        }
        let act = layers
            .iter()
            .map(|(l, _)| match l {
                Layer::Baseline => 0,
                Layer::Xor { p } => threshold(*p),
            })
            .collect();
        Ok(PathScheme {
            q: bits / instances,
            instances,
            layers: layers.to_vec(),
            layer_cut,
            act,
            seed,
        })
    }

    /// The recommended multi-layer PINT scheme for paths of up to about `d` hops, after the
    /// paper's tower of XOR layers (`p_ℓ = e↑↑ℓ / d`): Baseline with weight 0.6, XOR with
    /// `p = e / d` (weight 0.25) and XOR with `p = e^e / d ≈ 15.2 / d` (weight 0.15), XOR
    /// probabilities capped at 1/2. Early on, Baseline digests identify hops one at a time; once
    /// most hops are known, XOR digests mixing about `e` (then 15) hops peel the remaining ones
    /// without waiting for the coupon collector's tail. The weights were picked by a sweep over
    /// layer mixes for `k = d ∈ {5, …, 64}` and 4–16-bit budgets (`examples/layer_sweep.rs`).
    /// Seed 0.
    pub fn pint(bits: u32, instances: u32, d: usize) -> Result<Self, PintError> {
        if d == 0 {
            return Err(PintError::InvalidPathLength(d));
        }
        let d = d as f64;
        let e = std::f64::consts::E;
        let layers = [
            (Layer::Baseline, 0.6),
            (Layer::Xor { p: (e / d).min(0.5) }, 0.25),
            (Layer::Xor { p: (e.powf(e) / d).min(0.5) }, 0.15),
        ];
        Self::new(bits, instances, &layers, 0)
    }

    /// The naive scheme: the Baseline layer alone (each packet carries the hash of one
    /// uniformly chosen hop). Seed 0.
    pub fn naive(bits: u32, instances: u32) -> Result<Self, PintError> {
        Self::new(bits, instances, &[(Layer::Baseline, 1.0)], 0)
    }

    /// The same scheme with another hash seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Total bits per packet.
    pub fn bits(&self) -> u32 {
        self.q * self.instances
    }

    /// Bits per instance, `q`.
    pub fn bits_per_instance(&self) -> u32 {
        self.q
    }

    /// Number of independent instances.
    pub fn instances(&self) -> u32 {
        self.instances
    }

    /// The layers and their weights, as given.
    pub fn layers(&self) -> &[(Layer, f64)] {
        &self.layers
    }

    /// The hash seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Per-(packet, instance) key from which every hash of that instance is derived.
    #[inline]
    fn key(&self, packet_id: u64, instance: u32) -> u64 {
        hash2(hash2(self.seed, packet_id), u64::from(instance))
    }

    /// Index of the layer chosen for a key.
    #[inline]
    fn layer_index(&self, key: u64) -> usize {
        let x = hash2(key, TAG_LAYER);
        self.layer_cut.iter().position(|&c| x <= c).expect("the last cut is u64::MAX")
    }

    /// Whether hop number `hop` (1-based) acts, for a key and layer.
    #[inline]
    fn acts(&self, key: u64, layer: usize, hop: usize) -> bool {
        let g = hash2(key ^ TAG_HOP, hop as u64);
        match self.layers[layer].0 {
            Layer::Baseline => g <= reservoir_threshold(hop as u64),
            Layer::Xor { .. } => g <= self.act[layer],
        }
    }

    #[inline]
    fn mask(&self) -> u64 {
        if self.q == 64 {
            u64::MAX
        } else {
            (1u64 << self.q) - 1
        }
    }

    /// What switch `switch` at hop number `hop` (1-based: the first switch is hop 1) does to
    /// the digest of packet `packet_id`. This is the whole per-switch data-plane logic.
    pub fn stamp(&self, digest: &mut Digest, packet_id: u64, hop: usize, switch: SwitchId) {
        debug_assert!(hop >= 1, "hops are numbered from 1");
        let mask = self.mask();
        for inst in 0..self.instances {
            let key = self.key(packet_id, inst);
            let layer = self.layer_index(key);
            if !self.acts(key, layer, hop) {
                continue;
            }
            let shift = inst * self.q;
            let h = u64::from(value_hash(switch, key, self.q)) << shift;
            match self.layers[layer].0 {
                Layer::Baseline => digest.0 = (digest.0 & !(mask << shift)) | h,
                Layer::Xor { .. } => digest.0 ^= h,
            }
        }
    }

    /// The digest a packet has after crossing `path` (hop `i` of the path is `path[i - 1]`),
    /// starting from 0. Equal to calling [`stamp`](Self::stamp) hop by hop, but computes the
    /// per-packet hashes once.
    pub fn encode_path(&self, packet_id: u64, path: &[SwitchId]) -> Digest {
        let mask = self.mask();
        let mut d = 0u64;
        for inst in 0..self.instances {
            let key = self.key(packet_id, inst);
            let layer = self.layer_index(key);
            let shift = inst * self.q;
            let mut field = 0u32;
            match self.layers[layer].0 {
                Layer::Baseline => {
                    // Only the last writer's hash survives.
                    if let Some(h) = (1..=path.len()).rev().find(|&h| self.acts(key, layer, h)) {
                        field = value_hash(path[h - 1], key, self.q);
                    }
                }
                Layer::Xor { .. } => {
                    for (i, &s) in path.iter().enumerate() {
                        if self.acts(key, layer, i + 1) {
                            field ^= value_hash(s, key, self.q);
                        }
                    }
                }
            }
            d |= (u64::from(field) & mask) << shift;
        }
        Digest(d)
    }

    /// The hops (0-based indices into a path of length `k`) that acted on `packet_id` in
    /// `instance`, written into `out`; returns the layer. What the sink's recording module
    /// computes.
    pub fn acting_hops(
        &self,
        packet_id: u64,
        instance: u32,
        k: usize,
        out: &mut Vec<usize>,
    ) -> Layer {
        let key = self.key(packet_id, instance);
        let layer = self.layer_index(key);
        self.acting_for_key(key, layer, k, out);
        self.layers[layer].0
    }

    /// Acting hops given key and layer. For Baseline only the last writer matters, so only it
    /// is returned.
    fn acting_for_key(&self, key: u64, layer: usize, k: usize, out: &mut Vec<usize>) {
        out.clear();
        match self.layers[layer].0 {
            Layer::Baseline => {
                if let Some(h) = (1..=k).rev().find(|&h| self.acts(key, layer, h)) {
                    out.push(h - 1);
                }
            }
            Layer::Xor { .. } => {
                out.extend((1..=k).filter(|&h| self.acts(key, layer, h)).map(|h| h - 1))
            }
        }
    }
}

/// The switch IDs the decoder considers possible.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Universe {
    /// IDs `0..n`.
    Range(u32),
    /// An explicit candidate set (e.g. the switches of a topology); duplicates are ignored.
    Set(Vec<SwitchId>),
}

impl Universe {
    /// Number of distinct candidates.
    pub fn len(&self) -> usize {
        match self {
            Universe::Range(n) => *n as usize,
            Universe::Set(v) => v.len(),
        }
    }

    /// Whether there is no candidate.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `id` is a candidate.
    pub fn contains(&self, id: SwitchId) -> bool {
        match self {
            Universe::Range(n) => id < *n,
            Universe::Set(v) => v.binary_search(&id).is_ok(),
        }
    }

    fn normalised(self) -> Self {
        match self {
            Universe::Set(mut v) => {
                v.sort_unstable();
                v.dedup();
                Universe::Set(v)
            }
            r => r,
        }
    }

    /// Every candidate `m` with `value_hash(m, key, q) == digest`.
    fn matching(&self, key: u64, q: u32, digest: u32) -> Vec<SwitchId> {
        match self {
            Universe::Range(n) => (0..*n).filter(|&m| value_hash(m, key, q) == digest).collect(),
            Universe::Set(v) => {
                v.iter().copied().filter(|&m| value_hash(m, key, q) == digest).collect()
            }
        }
    }
}

/// The decoder's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeStatus {
    /// Every hop is determined; this is the path (hop 1 first).
    Complete(Vec<SwitchId>),
    /// Not enough evidence yet: `resolved` of the `k` hops are determined.
    Incomplete {
        /// Number of determined hops.
        resolved: usize,
    },
    /// The digests contradict every path over the universe (wrong `k`, a switch outside the
    /// universe, or a digest that was not produced by this scheme).
    Inconsistent,
}

/// What the decoder knows about one hop.
#[derive(Debug, Clone)]
enum HopState {
    /// No evidence yet: every ID of the universe is possible.
    Open,
    /// The IDs that agree with all the evidence (at least two).
    Candidates(Vec<SwitchId>),
    /// Determined.
    Resolved(SwitchId),
}

/// An XOR digest with at least two acting hops still unresolved.
#[derive(Debug, Clone)]
struct Held {
    key: u64,
    residual: u32,
    unresolved: Vec<u32>,
    done: bool,
}

/// The sink: records digests of one flow's packets and infers its path of `k` hops
/// (recording module + inference module with peeling). See the [module docs](self).
#[derive(Debug, Clone)]
pub struct Decoder {
    scheme: PathScheme,
    k: usize,
    universe: Universe,
    hops: Vec<HopState>,
    resolved: usize,
    held: Vec<Held>,
    /// Per hop: indices into `held` of digests waiting on it.
    waiting: Vec<Vec<u32>>,
    /// Pending single-hop constraints `(hop, key, digest)`.
    work: Vec<(usize, u64, u32)>,
    scratch: Vec<usize>,
    packets: u64,
    inconsistent: bool,
}

impl Decoder {
    /// A decoder for paths of exactly `k >= 1` hops (the sink knows `k`, e.g. from the TTL)
    /// whose switch IDs lie in `universe`.
    pub fn new(scheme: &PathScheme, k: usize, universe: Universe) -> Result<Self, PintError> {
        if k == 0 {
            return Err(PintError::InvalidPathLength(k));
        }
        let universe = universe.normalised();
        if universe.is_empty() {
            return Err(PintError::EmptyUniverse);
        }
        Ok(Decoder {
            scheme: scheme.clone(),
            k,
            universe,
            hops: vec![HopState::Open; k],
            resolved: 0,
            held: Vec::new(),
            waiting: vec![Vec::new(); k],
            work: Vec::new(),
            scratch: Vec::new(),
            packets: 0,
            inconsistent: false,
        })
    }

    /// Feed the digest of one packet.
    pub fn record(&mut self, packet_id: u64, digest: Digest) {
        self.packets += 1;
        if self.inconsistent || self.resolved == self.k {
            return;
        }
        let q = self.scheme.q;
        let mask = self.scheme.mask();
        let mut acting = std::mem::take(&mut self.scratch);
        for inst in 0..self.scheme.instances {
            let d = ((digest.0 >> (inst * q)) & mask) as u32;
            let key = self.scheme.key(packet_id, inst);
            let layer = self.scheme.layer_index(key);
            self.scheme.acting_for_key(key, layer, self.k, &mut acting);
            let mut residual = d;
            let mut unresolved = Vec::new();
            for &h in &acting {
                match self.hops[h] {
                    HopState::Resolved(m) => residual ^= value_hash(m, key, q),
                    _ => unresolved.push(h as u32),
                }
            }
            match unresolved.len() {
                0 => {
                    if residual != 0 {
                        self.inconsistent = true;
                    }
                }
                1 => self.work.push((unresolved[0] as usize, key, residual)),
                _ => {
                    let idx = self.held.len() as u32;
                    for &h in &unresolved {
                        self.waiting[h as usize].push(idx);
                    }
                    self.held.push(Held { key, residual, unresolved, done: false });
                }
            }
            self.drain();
        }
        self.scratch = acting;
    }

    /// Apply pending constraints until none is left (peeling cascades through here).
    fn drain(&mut self) {
        let q = self.scheme.q;
        while let Some((h, key, d)) = self.work.pop() {
            if self.inconsistent {
                self.work.clear();
                return;
            }
            let survivors = match &mut self.hops[h] {
                HopState::Resolved(m) => {
                    if value_hash(*m, key, q) != d {
                        self.inconsistent = true;
                    }
                    continue;
                }
                HopState::Open => self.universe.matching(key, q, d),
                HopState::Candidates(c) => {
                    c.retain(|&m| value_hash(m, key, q) == d);
                    std::mem::take(c)
                }
            };
            match survivors.len() {
                0 => {
                    self.inconsistent = true;
                }
                1 => {
                    let m = survivors[0];
                    self.hops[h] = HopState::Resolved(m);
                    self.resolved += 1;
                    self.peel(h, m);
                }
                _ => self.hops[h] = HopState::Candidates(survivors),
            }
        }
    }

    /// Hop `h` was just resolved to `m`: XOR its hash out of the digests waiting on it.
    fn peel(&mut self, h: usize, m: SwitchId) {
        let q = self.scheme.q;
        for idx in std::mem::take(&mut self.waiting[h]) {
            let held = &mut self.held[idx as usize];
            if held.done {
                continue;
            }
            held.residual ^= value_hash(m, held.key, q);
            held.unresolved.retain(|&x| x as usize != h);
            match held.unresolved.len() {
                0 => {
                    held.done = true;
                    if held.residual != 0 {
                        self.inconsistent = true;
                    }
                }
                1 => {
                    held.done = true;
                    self.work.push((held.unresolved[0] as usize, held.key, held.residual));
                }
                _ => {}
            }
        }
    }

    /// The current verdict.
    pub fn status(&self) -> DecodeStatus {
        if self.inconsistent {
            DecodeStatus::Inconsistent
        } else if let Some(p) = self.path() {
            DecodeStatus::Complete(p)
        } else {
            DecodeStatus::Incomplete { resolved: self.resolved }
        }
    }

    /// The path, once every hop is determined (and the evidence is consistent).
    pub fn path(&self) -> Option<Vec<SwitchId>> {
        if self.inconsistent || self.resolved < self.k {
            return None;
        }
        self.hops
            .iter()
            .map(|h| match h {
                HopState::Resolved(m) => Some(*m),
                _ => None,
            })
            .collect()
    }

    /// Whether every hop is determined.
    pub fn is_complete(&self) -> bool {
        !self.inconsistent && self.resolved == self.k
    }

    /// Whether the evidence contradicts every path over the universe.
    pub fn is_inconsistent(&self) -> bool {
        self.inconsistent
    }

    /// Number of determined hops.
    pub fn resolved(&self) -> usize {
        self.resolved
    }

    /// Number of IDs still possible for hop `hop` (0-based), or `None` if `hop >= k`.
    pub fn candidates(&self, hop: usize) -> Option<usize> {
        self.hops.get(hop).map(|h| match h {
            HopState::Open => self.universe.len(),
            HopState::Candidates(c) => c.len(),
            HopState::Resolved(_) => 1,
        })
    }

    /// Number of packets recorded.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// The path length `k`.
    pub fn k(&self) -> usize {
        self.k
    }
}

/// Which scheme an experiment runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemeKind {
    /// [`PathScheme::pint`] with `d = k`.
    Pint,
    /// [`PathScheme::naive`].
    Naive,
}

impl SchemeKind {
    /// Lower-case name, as used in tables.
    pub fn name(self) -> &'static str {
        match self {
            SchemeKind::Pint => "pint",
            SchemeKind::Naive => "naive",
        }
    }

    /// The scheme for this kind, budget and path length.
    pub fn scheme(self, bits: u32, instances: u32, k: usize) -> Result<PathScheme, PintError> {
        match self {
            SchemeKind::Pint => PathScheme::pint(bits, instances, k),
            SchemeKind::Naive => PathScheme::naive(bits, instances),
        }
    }
}

/// One path-tracing experiment: `trials` random paths of `k` distinct IDs drawn uniformly from
/// `0..universe`; each trial uses fresh hash functions (scheme seed) and consecutive packet IDs
/// from a random start, and counts packets until the decoder is complete.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceConfig {
    /// Scheme to run.
    pub scheme: SchemeKind,
    /// Path length.
    pub k: usize,
    /// Bits per packet.
    pub bits: u32,
    /// Instances sharing the bits.
    pub instances: u32,
    /// Number of trials.
    pub trials: usize,
    /// Size of the universe of switch IDs (`0..universe`).
    pub universe: u32,
    /// Give up on a trial after this many packets (counted as a failure).
    pub max_packets: u64,
    /// Master seed.
    pub seed: u64,
}

impl TraceConfig {
    /// The default experiment: `2^16` IDs, at most 10⁶ packets per trial.
    pub fn new(
        scheme: SchemeKind,
        k: usize,
        bits: u32,
        instances: u32,
        trials: usize,
        seed: u64,
    ) -> Self {
        TraceConfig {
            scheme,
            k,
            bits,
            instances,
            trials,
            universe: 1 << 16,
            max_packets: 1_000_000,
            seed,
        }
    }
}

/// Outcome of an experiment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceStats {
    /// Packets needed, per decoded trial (in trial order).
    pub packets: Vec<u64>,
    /// Trials that hit `max_packets` undecoded.
    pub failures: usize,
    /// Trials whose decoder returned a path other than the true one (always 0 unless there is
    /// a bug; counted rather than asserted so experiments report it).
    pub wrong: usize,
}

impl TraceStats {
    /// Mean packets to decode.
    pub fn mean(&self) -> f64 {
        stats::mean(&self.packets)
    }

    /// Nearest-rank quantile of packets to decode.
    pub fn percentile(&self, q: f64) -> Option<u64> {
        stats::percentile(&self.packets, q)
    }

    /// 99th percentile of packets to decode.
    pub fn p99(&self) -> Option<u64> {
        self.percentile(0.99)
    }
}

/// Run [`TraceConfig`].
pub fn run_trace(cfg: &TraceConfig) -> Result<TraceStats, PintError> {
    if cfg.k == 0 {
        return Err(PintError::InvalidPathLength(cfg.k));
    }
    if (cfg.universe as usize) < cfg.k {
        return Err(PintError::InvalidExperiment(format!(
            "universe of {} IDs cannot hold a path of {} distinct switches",
            cfg.universe, cfg.k
        )));
    }
    let base = cfg.scheme.scheme(cfg.bits, cfg.instances, cfg.k)?;
    let mut out = TraceStats { packets: Vec::with_capacity(cfg.trials), failures: 0, wrong: 0 };
    for trial in 0..cfg.trials {
        let mut rng = ChaCha8Rng::seed_from_u64(hash2(cfg.seed, trial as u64));
        let scheme = base.clone().with_seed(rng.gen());
        let path: Vec<SwitchId> = index::sample(&mut rng, cfg.universe as usize, cfg.k)
            .into_iter()
            .map(|i| i as SwitchId)
            .collect();
        let mut dec = Decoder::new(&scheme, cfg.k, Universe::Range(cfg.universe))?;
        let start: u64 = rng.gen();
        let mut n = 0;
        while !dec.is_complete() && !dec.is_inconsistent() && n < cfg.max_packets {
            let pid = start.wrapping_add(n);
            dec.record(pid, scheme.encode_path(pid, &path));
            n += 1;
        }
        match dec.path() {
            Some(p) if p == path => out.packets.push(n),
            Some(_) => out.wrong += 1,
            None if dec.is_inconsistent() => out.wrong += 1,
            None => out.failures += 1,
        }
    }
    Ok(out)
}

/// [`run_trace`] for the PINT scheme with the default universe (`2^16` IDs) and packet cap.
pub fn experiment(
    k: usize,
    bits: u32,
    instances: u32,
    trials: usize,
    seed: u64,
) -> Result<TraceStats, PintError> {
    run_trace(&TraceConfig::new(SchemeKind::Pint, k, bits, instances, trials, seed))
}

/// One row of [`path_tracing_table`]: packets needed to decode a path.
#[derive(Debug, Clone, PartialEq)]
pub struct PathRow {
    /// `"pint"` or `"naive"`.
    pub scheme: &'static str,
    /// Path length.
    pub k: usize,
    /// Bits per packet.
    pub bits: u32,
    /// Instances.
    pub instances: u32,
    /// Trials run.
    pub trials: usize,
    /// Mean packets to decode (over decoded trials).
    pub mean: f64,
    /// Median packets.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Maximum.
    pub max: u64,
    /// Trials not decoded within the packet cap.
    pub failures: usize,
    /// Trials decoded to a wrong path (must be 0).
    pub wrong: usize,
}

impl PathRow {
    /// CSV header matching [`Display`](fmt::Display).
    pub const CSV_HEADER: &'static str =
        "scheme,k,bits,instances,trials,mean,p50,p99,max,failures,wrong";
}

impl fmt::Display for PathRow {
    /// One CSV line (no newline), columns as in [`PathRow::CSV_HEADER`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{},{},{},{},{},{:.1},{},{},{},{},{}",
            self.scheme,
            self.k,
            self.bits,
            self.instances,
            self.trials,
            self.mean,
            self.p50,
            self.p99,
            self.max,
            self.failures,
            self.wrong
        )
    }
}

/// Packets-to-decode rows for every path length in `ks`, every `(bits, instances)` budget and
/// both schemes (PINT first), with the default universe of `2^16` IDs. Row seeds are derived
/// from `seed`, `k` and the budget, so a row does not depend on which others are computed.
pub fn path_tracing_table(
    ks: &[usize],
    budgets: &[(u32, u32)],
    trials: usize,
    seed: u64,
) -> Result<Vec<PathRow>, PintError> {
    let mut rows = Vec::new();
    for &k in ks {
        for &(bits, instances) in budgets {
            for kind in [SchemeKind::Pint, SchemeKind::Naive] {
                let row_seed =
                    hash2(hash2(seed, k as u64), u64::from(bits) << 32 | u64::from(instances));
                let cfg = TraceConfig::new(kind, k, bits, instances, trials, row_seed);
                let s = run_trace(&cfg)?;
                rows.push(PathRow {
                    scheme: kind.name(),
                    k,
                    bits,
                    instances,
                    trials,
                    mean: s.mean(),
                    p50: s.percentile(0.5).unwrap_or(0),
                    p99: s.p99().unwrap_or(0),
                    max: s.percentile(1.0).unwrap_or(0),
                    failures: s.failures,
                    wrong: s.wrong,
                });
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_validation() {
        assert!(PathScheme::naive(8, 3).is_err());
        assert!(PathScheme::naive(0, 1).is_err());
        assert!(PathScheme::naive(64, 1).is_err());
        assert!(PathScheme::naive(64, 2).is_ok());
        assert!(PathScheme::new(8, 1, &[], 0).is_err());
        assert!(PathScheme::new(8, 1, &[(Layer::Xor { p: 0.0 }, 1.0)], 0).is_err());
        assert!(PathScheme::new(8, 1, &[(Layer::Baseline, 0.0)], 0).is_err());
        assert_eq!(
            PathScheme::naive(8, 3).unwrap_err().to_string(),
            "a budget of 8 bits does not split into 3 instances of 1..=32 bits each (total <= 64)"
        );
    }

    #[test]
    fn baseline_digest_is_hash_of_the_reported_writer() {
        let s = PathScheme::naive(16, 2).unwrap();
        let path: Vec<u32> = (0..20).map(|i| i * 3 + 1).collect();
        let mut hops = Vec::new();
        let mut counts = vec![0u32; path.len()];
        for pid in 0..20_000u64 {
            let d = s.encode_path(pid, &path);
            for inst in 0..2 {
                let layer = s.acting_hops(pid, inst, path.len(), &mut hops);
                assert_eq!(layer, Layer::Baseline);
                assert_eq!(hops.len(), 1);
                let key = s.key(pid, inst);
                let got = (d.0 >> (inst * 8)) & 0xff;
                assert_eq!(got as u32, value_hash(path[hops[0]], key, 8));
                counts[hops[0]] += 1;
            }
        }
        // Reservoir sampling: each of the 20 hops writes ~2000 of 40 000 digests.
        for c in counts {
            assert!((1_750..2_250).contains(&c), "{c}");
        }
    }

    #[test]
    fn xor_digest_is_xor_of_acting_hops() {
        let s = PathScheme::new(12, 1, &[(Layer::Xor { p: 0.3 }, 1.0)], 9).unwrap();
        let path: Vec<u32> = (0..15).map(|i| 100 + i).collect();
        let mut hops = Vec::new();
        let mut total = 0;
        for pid in 0..2_000u64 {
            let d = s.encode_path(pid, &path);
            s.acting_hops(pid, 0, path.len(), &mut hops);
            total += hops.len();
            let key = s.key(pid, 0);
            let x = hops.iter().fold(0u32, |acc, &h| acc ^ value_hash(path[h], key, 12));
            assert_eq!(d.0 as u32, x);
        }
        // 15 hops × 0.3 × 2000 packets = 9000 acting hops expected.
        assert!((8_500..9_500).contains(&total), "{total}");
    }

    #[test]
    fn decoder_detects_foreign_paths() {
        let s = PathScheme::pint(8, 1, 5).unwrap();
        // The path uses IDs outside the decoder's universe: the evidence soon contradicts
        // every candidate.
        let path = [5000u32, 5001, 5002, 5003, 5004];
        let mut dec = Decoder::new(&s, 5, Universe::Range(1000)).unwrap();
        for pid in 0..5_000 {
            dec.record(pid, s.encode_path(pid, &path));
        }
        assert_eq!(dec.status(), DecodeStatus::Inconsistent);
    }

    #[test]
    fn decoder_detects_wrong_k() {
        let s = PathScheme::pint(8, 2, 6).unwrap();
        let path = [10u32, 20, 30, 40, 50, 60];
        // The sink thinks the path has 5 hops.
        let mut dec = Decoder::new(&s, 5, Universe::Range(256)).unwrap();
        for pid in 0..5_000 {
            dec.record(pid, s.encode_path(pid, &path));
        }
        assert_eq!(dec.status(), DecodeStatus::Inconsistent);
    }

    #[test]
    fn set_universe() {
        let s = PathScheme::pint(16, 1, 4).unwrap();
        let universe: Vec<u32> = (0..500).map(|i| i * 7919 + 13).collect();
        let path = vec![universe[3], universe[77], universe[400], universe[12]];
        let mut dec = Decoder::new(&s, 4, Universe::Set(universe)).unwrap();
        let mut pid = 0;
        while !dec.is_complete() {
            dec.record(pid, s.encode_path(pid, &path));
            pid += 1;
            assert!(pid < 10_000);
        }
        assert_eq!(dec.path(), Some(path));
        assert!(Decoder::new(&s, 4, Universe::Set(vec![])).is_err());
        assert!(Decoder::new(&s, 0, Universe::Range(4)).is_err());
    }

    #[test]
    fn csv_row() {
        let r = PathRow {
            scheme: "pint",
            k: 5,
            bits: 8,
            instances: 2,
            trials: 10,
            mean: 12.34,
            p50: 12,
            p99: 20,
            max: 21,
            failures: 0,
            wrong: 0,
        };
        assert_eq!(r.to_string(), "pint,5,8,2,10,12.3,12,20,21,0,0");
        assert_eq!(PathRow::CSV_HEADER.split(',').count(), r.to_string().split(',').count());
    }
}
