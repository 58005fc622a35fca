//! `dcsim harm`: the FCT-harm experiment of ccafct (heistp/ccafct; spec A4), simulated.
//!
//! A workload of short CUBIC flows (new HTTP connections, Not-ECT unless `--workload-ecn` says
//! otherwise) crosses one CoDel queue
//! (`fq_codel flows 1`) at a 50 Mb/s bottleneck, first alone ("solo") and then beside one bulk
//! flow of a competing congestion-control algorithm; the harm the competitor does to the
//! workload's flow completion times (geometric mean, median, P95) is
//! `(with − solo) / with` (Ware et al., HotNets'19). See `docs/harm.md`.
//!
//! ```text
//!  workload server (0) ─┐ 10 Gb/s, 1 µs            1 µs, 10 Gb/s ┌─ workload client (2)
//!                        ├─ switch 4 ══ 50 Mb/s, RTT/2 − 2 µs ══ switch 5 ─┤
//!  competitor server (1)─┘   fq_codel on both ends of the bottleneck     └─ competitor client (3)
//! ```
//!
//! The command is parse → validate → run, like the others: [`HarmPlan::new`] checks every
//! option and returns a [`CliError::BadOption`] naming it before anything runs or is written;
//! [`HarmPlan::run`] simulates the runs ([`Cell`]s: RTT × {solo, competitors} × seed) in
//! parallel; [`HarmResults`] turns them into ccafct's statistics, table and files. Every run
//! is deterministic and independent of the others, and results are assembled in cell order,
//! so the outputs do not depend on `--jobs`.
//!
//! ```
//! use dcsim_cli::harm::{HarmArgs, HarmPlan};
//! use clap::Parser;
//!
//! #[derive(Parser)]
//! struct Cmd {
//!     #[command(flatten)]
//!     args: HarmArgs,
//! }
//! let a = Cmd::parse_from(["harm", "--out", "x", "--rtt", "40ms,10ms", "--cca", "prague"]).args;
//! let plan = HarmPlan::new(&a).unwrap();
//! assert_eq!(plan.rtt_ms(), [10.0, 40.0]); // ordered by RTT
//! let names: Vec<String> = plan.cells().iter().map(|c| plan.cell_name(c)).collect();
//! assert_eq!(names, ["rtt10-solo-s1", "rtt10-prague-s1", "rtt40-solo-s1", "rtt40-prague-s1"]);
//!
//! let bad = Cmd::parse_from(["harm", "--out", "x", "--cca", "bbr2"]).args;
//! assert_eq!(
//!     HarmPlan::new(&bad).unwrap_err().to_string(),
//!     "--cca: unknown congestion control \"bbr2\"; known: newreno, cubic, dctcp, prague, bbr"
//! );
//! ```

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use dcsim_analysis::{
    aggregate_seeds, harm_ci_table, harm_csv, harm_summary_csv, harm_table, plot_harm_all,
    FctStats, HarmRow,
};
use dcsim_aqm::codel::CeSelector;
use dcsim_aqm::{DualPi2Params, FqCodelParams, QdiscConfig};
use dcsim_core::cc::NoCcFactory;
use dcsim_core::config::{FlowSpec, PortQdisc, SimConfig, SwitchConfig, TcpGroup, Transport};
use dcsim_core::ids::{FlowId, NodeId, PortNo};
use dcsim_core::network::Network;
use dcsim_core::units::{BitsPerSec, Bytes, Duration, Time};
use dcsim_core::{Counters, FlowResult, RunSummary, Simulation};
use dcsim_tcp::{cca_spec, CcaConfig, CongestionControl, EcnMode, Reuse, TcpConfig, CCA_SPECS};
use dcsim_types::params::Params;
use dcsim_workload::HarmWorkload;
use rayon::prelude::*;

use crate::error::CliError;
use crate::output;
use crate::sweep::{in_pool, progress};
use crate::units::{format_ps_as_ns, parse_duration, parse_rate, parse_size, HumanDuration};

/// Rate of the four host links (fast, so that only the bottleneck queues).
pub const HOST_RATE: BitsPerSec = BitsPerSec::gbps(10);
/// Propagation delay of each host link. The bottleneck carries the rest of the RTT:
/// `RTT/2 − 2·HOST_DELAY` each way.
pub const HOST_DELAY: Duration = Duration::from_us(1);
/// Shared buffer of each switch: large enough (α = 1/8 of it is 32 MiB) that the switch MMU
/// never drops before the queue discipline's own limits (fq_codel: 10240 packets ≈ 15.5 MB),
/// as on a Linux host where the qdisc is the only queue.
pub const SWITCH_BUFFER: Bytes = Bytes(256 << 20);
/// The run is stepped in these increments; it ends at the first step boundary at which every
/// workload flow has completed (or at the timeout).
pub const STEP: Duration = Duration::from_ms(10);
/// Destination port of the workload flows (ccafct's HTTP server listens on 8188).
pub const WORKLOAD_DPORT: u16 = 8188;
/// Destination port of the competitor (iperf3's default port).
pub const COMPETITOR_DPORT: u16 = 5201;
/// The priority class every packet uses (one lossy class; PFC is off).
pub const CLASS: u8 = 3;
/// The workload's server (the flows' source): node 0 of the dumbbell
/// ([`dcsim_topology::dumbbell_asym`]`(2, 2, ..)`).
pub const WORKLOAD_SERVER: NodeId = NodeId(0);
/// The competitor's sender.
pub const COMPETITOR_SERVER: NodeId = NodeId(1);
/// The workload's client (the flows' destination; it opens each connection).
pub const WORKLOAD_CLIENT: NodeId = NodeId(2);
/// The competitor's receiver.
pub const COMPETITOR_CLIENT: NodeId = NodeId(3);
/// The switch of the servers (its port towards [`RIGHT_SWITCH`] is the data bottleneck).
pub const LEFT_SWITCH: NodeId = NodeId(4);
/// The switch of the clients (its port towards [`LEFT_SWITCH`] carries ACKs and requests).
pub const RIGHT_SWITCH: NodeId = NodeId(5);
/// The slowest bottleneck accepted (slower ones make the engine's ideal FCTs of large flows
/// overflow 64-bit picoseconds).
pub const MIN_BANDWIDTH: BitsPerSec = BitsPerSec::mbps(1);
/// The largest RTT accepted.
pub const MAX_RTT: Duration = Duration::from_ms(10_000);
/// The largest `--ce-threshold` accepted.
const MAX_CE_THRESHOLD: Duration = Duration::from_ms(10_000);
/// The most seeds accepted.
pub const MAX_SEEDS: u64 = 1000;
/// The most workload flows accepted.
pub const MAX_FLOWS: usize = 1_000_000;
/// The longest `--warmup` and `--timeout` accepted.
pub const MAX_WAIT: Duration = Duration::from_ms(3_600_000);

/// Arguments of `dcsim harm`.
#[derive(Args, Debug, Clone)]
pub struct HarmArgs {
    /// Base round-trip times of the path (each above 4 µs, at most 10 s); runs and outputs are
    /// ordered by RTT.
    #[arg(
        long,
        value_name = "RTT,...",
        value_delimiter = ',',
        default_value = "10ms,20ms,40ms,80ms,160ms"
    )]
    pub rtt: Vec<String>,
    /// Competing congestion-control algorithms (newreno, cubic, dctcp, prague, bbr), one run each
    /// beside the workload, in this order after the solo run.
    #[arg(long, value_name = "CCA,...", value_delimiter = ',', default_value = "cubic,prague")]
    pub cca: Vec<String>,
    /// Repeat every run with seeds 1..=N (different workload flow lists and competitor phases);
    /// N > 1 adds 95% confidence intervals and harm-summary.csv.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seeds: u64,
    /// Workload flows per run (ccafct: 900 = 3 min / 200 ms). The workload window is
    /// flows × 200 ms.
    #[arg(long, value_name = "N", default_value_t = 900)]
    pub flows: usize,
    /// fq_codel flow queues, 1..=65536 (ccafct: 1, a single CoDel queue; Linux default 1024).
    /// Only with --aqm fq_codel [default: 1].
    #[arg(long = "fq-flows", value_name = "N")]
    pub fq_flows: Option<u32>,
    /// fq_codel's `ce_threshold`: also mark the packets `--ce-selector` picks whenever their
    /// sojourn exceeds this (spec A4's sensitivity check: 1 ms for ECT(1)), or `off`. Only
    /// with --aqm fq_codel [default: off].
    #[arg(long = "ce-threshold", value_name = "TIME|off")]
    pub ce_threshold: Option<String>,
    /// The packets `--ce-threshold` applies to: ect1 (ECT(1) and CE, Linux
    /// `ce_threshold_selector 0x1/0x1`, for L4S traffic) or any (every ECN-capable packet).
    /// Only with --ce-threshold [default: ect1].
    #[arg(long = "ce-selector", value_name = "ect1|any")]
    pub ce_selector: Option<String>,
    /// Queue discipline on both ends of the bottleneck: fq_codel (ccafct) or dualpi2.
    #[arg(long, value_name = "NAME", default_value = "fq_codel")]
    pub aqm: String,
    /// Bottleneck rate each way, from 1 Mb/s to below the 10 Gb/s host links.
    #[arg(long, value_name = "RATE", default_value = "50Mbps")]
    pub bandwidth: String,
    /// When the workload starts; the competitor starts within the first RTT (ccafct's
    /// slow-start delay).
    #[arg(long, value_name = "TIME", default_value = "20s")]
    pub warmup: String,
    /// The receivers' largest receive buffer (Linux `tcp_rmem[2]`; its half is the largest
    /// window autotuning reaches), from 128 KiB to 2 GiB, or `off` for no flow control.
    #[arg(long = "rmem-max", value_name = "SIZE|off", default_value = "6MiB")]
    pub rmem_max: String,
    /// ECN of the workload's connections: off (ccafct's `tcp_ecn = 2`: Not-ECT, so CoDel drops
    /// them), classic (RFC 3168, `tcp_ecn = 1`) or accurate (AccECN, `tcp_ecn = 3`).
    #[arg(long = "workload-ecn", value_name = "MODE", default_value = "off")]
    pub workload_ecn: String,
    /// ECN of the competitor's connection: accurate (ccafct's `tcp_ecn = 3`), classic or off.
    /// dctcp and prague take off or accurate.
    #[arg(long = "competitor-ecn", value_name = "MODE", default_value = "accurate")]
    pub competitor_ecn: String,
    /// How the workload's client gets a connection for each flow: go-http (ccafct's Go client:
    /// a flow takes a connection that frees while its own dial is under way, see docs/harm.md)
    /// or none (a new connection for every flow).
    #[arg(long, value_name = "go-http|none", default_value = "go-http")]
    pub reuse: String,
    /// How long after the workload window (flows × 200 ms) a run waits for unfinished
    /// workload flows (ccafct: 60 s).
    #[arg(long, value_name = "TIME", default_value = "60s")]
    pub timeout: String,
    /// Runs simulated in parallel [default: the number of available cores]; the results do
    /// not depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// The folder to write harm.csv, harm-summary.csv, runs/ and plots/ to.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// The queue discipline at the bottleneck.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aqm {
    /// fq_codel with Linux defaults (ECN on) and this many flow queues.
    FqCodel {
        /// Flow queues (1 = one CoDel queue, as ccafct).
        flows: u32,
        /// `ce_threshold` and the packets it applies to, or `None` (Linux's default: off).
        ce_threshold: Option<(Duration, CeSelector)>,
    },
    /// DualPI2 with Linux defaults (ECT(1) to the L queue).
    DualPi2,
}

impl Aqm {
    /// The discipline's configuration.
    pub fn qdisc(self) -> QdiscConfig {
        match self {
            Aqm::FqCodel { flows, ce_threshold } => QdiscConfig::FqCodel(FqCodelParams {
                flows,
                ce_threshold: ce_threshold.map(|(t, _)| t),
                ce_threshold_selector: ce_threshold.map_or(CeSelector::Any, |(_, s)| s),
                ..FqCodelParams::default()
            }),
            Aqm::DualPi2 => QdiscConfig::DualPi2(DualPi2Params::default()),
        }
    }

    /// `fq_codel flows N` or `dualpi2`, as in ccafct's parameter list.
    pub fn describe(self) -> String {
        match self {
            Aqm::FqCodel { flows, ce_threshold: None } => format!("fq_codel flows {flows}"),
            Aqm::FqCodel { flows, ce_threshold: Some((t, sel)) } => {
                let sel = match sel {
                    CeSelector::Ect1 => " ce_threshold_selector 0x1/0x1",
                    CeSelector::Any => "",
                };
                format!("fq_codel flows {flows} ce_threshold {}{sel}", HumanDuration(t))
            }
            Aqm::DualPi2 => "dualpi2".to_string(),
        }
    }
}

/// One run: an RTT, a competitor (or none: the solo run) and a seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    /// Index into [`HarmPlan::rtts`].
    pub rtt: usize,
    /// Index into [`HarmPlan::ccas`], or `None` for the solo run.
    pub cca: Option<usize>,
    /// The seed (1-based): the workload's flow list is `HarmWorkload::generate(seed)`, and the
    /// competitor starts at `HarmWorkload::competitor_phase(seed, rtt)`.
    pub seed: u64,
}

/// A validated `dcsim harm` command line.
#[derive(Clone, Debug)]
pub struct HarmPlan {
    /// Base RTTs, ascending.
    pub rtts: Vec<Duration>,
    /// Competitor names, in the order given.
    pub ccas: Vec<String>,
    /// Their configurations (defaults of each algorithm).
    pub cca_configs: Vec<CcaConfig>,
    /// Seeds `1..=seeds`.
    pub seeds: u64,
    /// The workload generator (its `start` is `--warmup`).
    pub workload: HarmWorkload,
    /// The bottleneck's queue discipline.
    pub aqm: Aqm,
    /// The bottleneck rate.
    pub bandwidth: BitsPerSec,
    /// The wait after the workload window.
    pub timeout: Duration,
    /// The receivers' `tcp_rmem[2]`, or `None` without flow control.
    pub rmem_max: Option<u64>,
    /// ECN of the workload's connections.
    pub workload_ecn: EcnMode,
    /// The workload client's connection reuse.
    pub reuse: Reuse,
    /// ECN of the competitor's connection.
    pub competitor_ecn: EcnMode,
}

fn bad(option: &'static str, message: impl Into<String>) -> CliError {
    CliError::BadOption { option, message: message.into() }
}

fn duration_option(option: &'static str, text: &str) -> Result<Duration, CliError> {
    parse_duration(text.trim()).map_err(|e| bad(option, e.to_string()))
}

fn ecn_option(option: &'static str, text: &str) -> Result<EcnMode, CliError> {
    EcnMode::from_name(text.trim()).ok_or_else(|| {
        let known = EcnMode::NAMES.join(", ");
        bad(option, format!("unknown ECN mode {:?}; known: {known}", text.trim()))
    })
}

impl HarmPlan {
    /// Checks every option.
    ///
    /// # Errors
    /// [`CliError::BadOption`] naming the first bad option: an RTT that does not parse, is not
    /// above 4 µs (the host links' share of the round trip) or is above 10 s, or is given twice;
    /// an unknown or repeated algorithm; zero or too many seeds or flows; `--fq-flows` outside
    /// 1..=65536 or given with `--aqm dualpi2`; an unknown `--aqm`; a bottleneck rate below 1 Mb/s
    /// or not below the host links' 10 Gb/s; a warm-up or timeout above an hour; an unknown ECN
    /// mode, or `--competitor-ecn classic` with dctcp or prague (whose response needs the
    /// accurate CE count).
    pub fn new(a: &HarmArgs) -> Result<HarmPlan, CliError> {
        let min_rtt = HOST_DELAY * 4;
        let mut rtts = Vec::with_capacity(a.rtt.len());
        for text in &a.rtt {
            let d = duration_option("--rtt", text)?;
            if d <= min_rtt {
                return Err(bad(
                    "--rtt",
                    format!(
                        "{} is too short: the host links alone take {} of the round trip \
                         (the RTT must be above that)",
                        text.trim(),
                        HumanDuration(min_rtt)
                    ),
                ));
            }
            if d > MAX_RTT {
                return Err(bad(
                    "--rtt",
                    format!("{} is above the largest RTT accepted, 10 s", text.trim()),
                ));
            }
            if rtts.contains(&d) {
                return Err(bad("--rtt", format!("{} is given twice", text.trim())));
            }
            rtts.push(d);
        }
        if rtts.is_empty() {
            return Err(bad("--rtt", "give at least one RTT"));
        }
        rtts.sort();

        let known = || CCA_SPECS.iter().map(|s| s.name).collect::<Vec<_>>().join(", ");
        let mut ccas: Vec<String> = Vec::new();
        let mut cca_configs = Vec::new();
        for name in &a.cca {
            let name = name.trim();
            if cca_spec(name).is_none() {
                return Err(bad(
                    "--cca",
                    format!("unknown congestion control {name:?}; known: {}", known()),
                ));
            }
            if ccas.iter().any(|c| c == name) {
                return Err(bad("--cca", format!("{name} is given twice")));
            }
            let cfg = CcaConfig::from_params(name, &Params::default())
                .map_err(|e| bad("--cca", e.to_string()))?;
            ccas.push(name.to_string());
            cca_configs.push(cfg);
        }
        if ccas.is_empty() {
            return Err(bad("--cca", format!("give at least one competitor ({})", known())));
        }

        if a.seeds == 0 || a.seeds > MAX_SEEDS {
            return Err(bad("--seeds", format!("must be in 1..={MAX_SEEDS}, got {}", a.seeds)));
        }
        if a.flows == 0 || a.flows > MAX_FLOWS {
            return Err(bad("--flows", format!("must be in 1..={MAX_FLOWS}, got {}", a.flows)));
        }
        let aqm = match a.aqm.trim() {
            "fq_codel" => {
                let flows = a.fq_flows.unwrap_or(1);
                if flows == 0 || flows > FqCodelParams::MAX_FLOWS {
                    return Err(bad(
                        "--fq-flows",
                        format!("must be in 1..={}, got {flows}", FqCodelParams::MAX_FLOWS),
                    ));
                }
                let ce_threshold = match a.ce_threshold.as_deref().map(str::trim) {
                    None | Some("off") => {
                        if let Some(sel) = &a.ce_selector {
                            return Err(bad(
                                "--ce-selector",
                                format!(
                                    "{} given, but it only applies with --ce-threshold",
                                    sel.trim()
                                ),
                            ));
                        }
                        None
                    }
                    Some(text) => {
                        let t = duration_option("--ce-threshold", text)?;
                        if t == Duration::ZERO || t > MAX_CE_THRESHOLD {
                            return Err(bad(
                                "--ce-threshold",
                                format!("{} is outside (0, 10 s]", text.trim()),
                            ));
                        }
                        let sel = match a.ce_selector.as_deref().map(str::trim) {
                            None | Some("ect1") => CeSelector::Ect1,
                            Some("any") => CeSelector::Any,
                            Some(other) => {
                                return Err(bad(
                                    "--ce-selector",
                                    format!("unknown selector {other:?}; known: ect1, any"),
                                ))
                            }
                        };
                        Some((t, sel))
                    }
                };
                Aqm::FqCodel { flows, ce_threshold }
            }
            "dualpi2" => {
                if let Some(f) = a.fq_flows {
                    return Err(bad(
                        "--fq-flows",
                        format!("{f} given, but it only applies to --aqm fq_codel"),
                    ));
                }
                for (option, v) in
                    [("--ce-threshold", &a.ce_threshold), ("--ce-selector", &a.ce_selector)]
                {
                    if let Some(v) = v.as_deref().filter(|v| v.trim() != "off") {
                        return Err(bad(
                            option,
                            format!("{} given, but it only applies to --aqm fq_codel", v.trim()),
                        ));
                    }
                }
                Aqm::DualPi2
            }
            other => {
                return Err(bad(
                    "--aqm",
                    format!("unknown queue discipline {other:?}; known: fq_codel, dualpi2"),
                ))
            }
        };
        let bandwidth =
            parse_rate(a.bandwidth.trim()).map_err(|e| bad("--bandwidth", e.to_string()))?;
        if bandwidth < MIN_BANDWIDTH || bandwidth >= HOST_RATE {
            return Err(bad(
                "--bandwidth",
                format!(
                    "{} is outside 1 Mb/s up to (not including) the host links' 10 Gb/s",
                    a.bandwidth.trim()
                ),
            ));
        }
        let warmup = duration_option("--warmup", &a.warmup)?;
        let timeout = duration_option("--timeout", &a.timeout)?;
        for (option, d, text) in
            [("--warmup", warmup, &a.warmup), ("--timeout", timeout, &a.timeout)]
        {
            if d > MAX_WAIT {
                return Err(bad(option, format!("{} is above an hour", text.trim())));
            }
        }
        let workload = HarmWorkload {
            flows: a.flows,
            start: Time::from_ps(warmup.as_ps()),
            ..HarmWorkload::default()
        };
        workload.validate().map_err(|e| bad("--flows", e.to_string()))?;
        let rmem_max = match a.rmem_max.trim() {
            "off" => None,
            text => {
                let v = parse_size(text).map_err(|e| bad("--rmem-max", e.to_string()))?.get();
                let cfg = TcpConfig { rmem_max: v, ..TcpConfig::linux() };
                cfg.validate().map_err(|e| bad("--rmem-max", e.message))?;
                Some(v)
            }
        };
        let workload_ecn = ecn_option("--workload-ecn", &a.workload_ecn)?;
        let reuse = Reuse::from_name(a.reuse.trim()).ok_or_else(|| {
            let known = Reuse::NAMES.join(", ");
            bad("--reuse", format!("unknown connection reuse {:?}; known: {known}", a.reuse.trim()))
        })?;
        let competitor_ecn = ecn_option("--competitor-ecn", &a.competitor_ecn)?;
        if competitor_ecn == EcnMode::Classic {
            if let Some(c) = ccas.iter().find(|c| matches!(c.as_str(), "dctcp" | "prague")) {
                return Err(bad(
                    "--competitor-ecn",
                    format!(
                        "{c} needs the accurate CE count (RFC 3168's echo latches until CWR, \
                         so its alpha would be overestimated); give off or accurate"
                    ),
                ));
            }
        }
        Ok(HarmPlan {
            rtts,
            ccas,
            cca_configs,
            seeds: a.seeds,
            workload,
            aqm,
            bandwidth,
            timeout,
            rmem_max,
            workload_ecn,
            reuse,
            competitor_ecn,
        })
    }

    /// Why `--ce-threshold` can mark nothing in this plan, if so: with the `ect1` selector it
    /// marks only ECT(1) packets, which of the competitors only Prague sends, and only with
    /// ECN on.
    pub fn ce_threshold_idle(&self) -> Option<String> {
        let Aqm::FqCodel { ce_threshold: Some((_, CeSelector::Ect1)), .. } = self.aqm else {
            return None;
        };
        let ect1 = self.competitor_ecn != EcnMode::Off
            && self.cca_configs.iter().any(|c| c.build().ect() == dcsim_types::Ecn::Ect1);
        (!ect1).then(|| {
            "--ce-threshold with --ce-selector ect1 marks only ECT(1) packets, and no run here \
             sends any (only prague does, with ECN on); it changes nothing"
                .to_string()
        })
    }

    /// The Linux profile with this plan's receive buffers.
    fn linux_tcp(&self) -> TcpConfig {
        let d = TcpConfig::linux();
        TcpConfig {
            rwnd: self.rmem_max.is_some(),
            rmem_max: self.rmem_max.unwrap_or(d.rmem_max),
            ..d
        }
    }

    /// The RTTs in milliseconds, ascending.
    pub fn rtt_ms(&self) -> Vec<f64> {
        self.rtts.iter().map(|d| rtt_ms(*d)).collect()
    }

    /// Every run, in output order: by RTT, then the solo run and the competitors in the order
    /// given, then by seed.
    pub fn cells(&self) -> Vec<Cell> {
        let mut v = Vec::new();
        for rtt in 0..self.rtts.len() {
            let ccas = std::iter::once(None).chain((0..self.ccas.len()).map(Some));
            for cca in ccas {
                for seed in 1..=self.seeds {
                    v.push(Cell { rtt, cca, seed });
                }
            }
        }
        v
    }

    /// The competitor's name of a run, or [`dcsim_analysis::SOLO_CCA`] (`-`) for solo.
    pub fn cca_label(&self, c: &Cell) -> &str {
        c.cca.map_or(dcsim_analysis::SOLO_CCA, |i| self.ccas[i].as_str())
    }

    /// The run's folder name under `runs/`: `rtt<ms>-<cca|solo>-s<seed>`.
    pub fn cell_name(&self, c: &Cell) -> String {
        let cca = c.cca.map_or("solo", |i| self.ccas[i].as_str());
        format!("rtt{}-{cca}-s{}", rtt_ms(self.rtts[c.rtt]), c.seed)
    }

    /// When the workload window ends (`start + flows × mean gap`) plus the timeout: the latest
    /// a run goes on.
    pub fn deadline(&self) -> Time {
        let window = self.workload.mean_gap * self.workload.flows as u64;
        self.workload.start + window + self.timeout
    }

    /// Bytes the competitor is given: twice what the bottleneck carries until the deadline, so
    /// that it is still sending when the run ends ("the competitor stops when the workload
    /// ends"). Not more, because the simulator computes every flow's ideal FCT in 64-bit
    /// picoseconds.
    pub fn competitor_bytes(&self) -> u64 {
        let bits = u128::from(self.bandwidth.0) * u128::from(self.deadline().as_ps());
        let bytes = bits / 8 / 1_000_000_000_000 * 2 + 1_000_000;
        u64::try_from(bytes).expect("bounded by the option limits")
    }

    /// The network of a run at base RTT `rtt`: [`dcsim_topology::dumbbell_asym`] with two hosts
    /// on each side, host links at [`HOST_RATE`] and [`HOST_DELAY`], and the bottleneck at the
    /// plan's rate with `rtt/2 − 2·HOST_DELAY` (rounded down to the picosecond).
    pub fn network(&self, rtt: Duration) -> Network {
        let bottleneck_delay = Duration::from_ps(rtt.as_ps() / 2 - 2 * HOST_DELAY.as_ps());
        dcsim_topology::dumbbell_asym(2, 2, HOST_RATE, HOST_DELAY, self.bandwidth, bottleneck_delay)
            .expect("the harm dumbbell's arguments are valid")
            .validate()
            .expect("the harm dumbbell is a valid network")
    }

    /// The simulation set-up of a run: the flows (the workload's `flows` flows with ids
    /// `0..flows`, then the competitor, if any) and the configuration.
    pub fn setup(&self, c: &Cell, net: &Network) -> (Vec<FlowSpec>, SimConfig) {
        let list = self.workload.generate(c.seed).expect("validated workload");
        let mut flows: Vec<FlowSpec> = list
            .iter()
            .enumerate()
            .map(|(i, f)| FlowSpec {
                id: FlowId(i as u32),
                src: WORKLOAD_SERVER,
                dst: WORKLOAD_CLIENT,
                size: f.size,
                start: f.start,
                pg: CLASS,
                dport: WORKLOAD_DPORT,
            })
            .collect();
        let workload_tcp = TcpConfig {
            ecn: self.workload_ecn,
            handshake: true,
            reuse: self.reuse,
            ..self.linux_tcp()
        };
        let mut groups = vec![TcpGroup {
            name: "workload".into(),
            tcp: workload_tcp,
            cca: CcaConfig::Cubic(Default::default()),
            probe: None,
        }];
        let mut transport = vec![Transport::Tcp(0); flows.len()];
        if let Some(i) = c.cca {
            flows.push(FlowSpec {
                id: FlowId(flows.len() as u32),
                src: COMPETITOR_SERVER,
                dst: COMPETITOR_CLIENT,
                size: self.competitor_bytes(),
                start: Time::from_ps(
                    HarmWorkload::competitor_phase(c.seed, self.rtts[c.rtt]).as_ps(),
                ),
                pg: CLASS,
                dport: COMPETITOR_DPORT,
            });
            groups.push(TcpGroup {
                name: self.ccas[i].clone(),
                tcp: TcpConfig { ecn: self.competitor_ecn, ..self.linux_tcp() },
                cca: self.cca_configs[i].clone(),
                probe: None,
            });
            transport.push(Transport::Tcp(1));
        }
        let port = |from: NodeId, to: NodeId| {
            let p = net.ports(from).iter().position(|p| p.peer == to);
            PortNo(p.expect("the two switches are linked") as u16)
        };
        let qdiscs = [(LEFT_SWITCH, RIGHT_SWITCH), (RIGHT_SWITCH, LEFT_SWITCH)]
            .into_iter()
            .map(|(node, to)| PortQdisc {
                node,
                port: port(node, to),
                classes: 0xfe,
                qdisc: self.aqm.qdisc(),
            })
            .collect();
        // One lossy class: PFC off; ECN marking only by the queue disciplines (no RED).
        let switch = SwitchConfig {
            buffer: SWITCH_BUFFER,
            pfc_enabled: false,
            ecn_enabled: false,
            qdiscs,
            ..SwitchConfig::default()
        };
        let cfg = SimConfig {
            switch,
            seed: c.seed,
            stop_time: self.deadline(),
            tcp_groups: groups,
            flow_transport: transport,
            ..SimConfig::default()
        };
        (flows, cfg)
    }

    /// Simulates one run.
    ///
    /// The run goes to the workload's start, notes what the competitor has delivered, then
    /// steps in [`STEP`]s until every workload flow has completed or the deadline
    /// ([`HarmPlan::deadline`]) is reached. The workload period runs from the workload's start
    /// to that end.
    pub fn run_cell(&self, c: &Cell) -> RunOutcome {
        let net = self.network(self.rtts[c.rtt]);
        let (flows, cfg) = self.setup(c, &net);
        let n = self.workload.flows;
        let competitor = c.cca.map(|_| FlowId(n as u32));
        let deadline = cfg.stop_time;
        let routes = dcsim_topology::compute_routes(&net);
        let mut sim = Simulation::new(net, routes, cfg, flows, NoCcFactory)
            .expect("the harm experiment's flows and configuration are valid");
        let start = self.workload.start;
        let delivered = |sim: &Simulation<NoCcFactory>, f: FlowId| {
            sim.tcp_receiver(f).map_or(0, dcsim_tcp::Receiver::delivered)
        };
        sim.run_until(start);
        let competitor_at_start = competitor.map_or(0, |f| delivered(&sim, f));
        let mut t = start;
        loop {
            let all_done = sim.summary().flows_done >= n
                && sim.flow_results()[..n].iter().all(|r| r.fct.is_some());
            if all_done || t >= deadline {
                break;
            }
            t = (t + STEP).min(deadline);
            sim.run_until(t);
        }
        let period = t - start;
        let results: Vec<FlowResult> = sim.flow_results()[..n].to_vec();
        let fcts_ns: Vec<f64> =
            results.iter().filter_map(|r| r.fct).map(|f| f.as_ps() as f64 / 1000.0).collect();
        let workload_bytes: u64 = (0..n).map(|i| delivered(&sim, FlowId(i as u32))).sum();
        let competitor_bytes = competitor.map(|f| delivered(&sim, f) - competitor_at_start);
        let counters = *sim.counters();
        let mut summary = sim.summary();
        summary.end_time = t;
        summary.flows_done = fcts_ns.len();
        summary.flows_unfinished = n - fcts_ns.len();
        RunOutcome {
            cell: *c,
            fcts_ns,
            results,
            counters,
            summary,
            period,
            workload_bytes,
            competitor_bytes,
        }
    }

    /// Simulates every run ([`HarmPlan::cells`]) on `jobs` threads, calling `done` after each.
    ///
    /// # Errors
    /// [`CliError::Threads`] if the pool cannot start; [`CliError::BadOption`] (`--timeout`) if
    /// some run finished no workload flow at all, so that it has no statistics.
    pub fn run(&self, jobs: usize, done: &(dyn Fn(&Cell) + Sync)) -> Result<HarmResults, CliError> {
        let cells = self.cells();
        let runs: Vec<RunOutcome> = in_pool(jobs, cells.len(), || {
            cells
                .par_iter()
                .map(|c| {
                    let r = self.run_cell(c);
                    done(c);
                    r
                })
                .collect()
        })?;
        HarmResults::new(self, runs)
    }
}

/// The files of a run's folder under `runs/`.
const RUN_FILES: [&str; 3] = ["fct.csv", "unfinished.csv", "counters.csv"];

/// Removes the folders under `runs` of runs an earlier `harm` into the same output wrote and
/// this one does not (`keep` names this one's), so that `runs/` matches `harm.csv`. Only a
/// folder that holds nothing but a run's files is removed.
///
/// # Errors
/// A folder that cannot be listed or removed.
fn remove_stale_runs(runs: &std::path::Path, keep: &[String]) -> Result<(), CliError> {
    let read = |p: &std::path::Path| {
        std::fs::read_dir(p).map_err(|source| CliError::Read { path: p.to_path_buf(), source })
    };
    for entry in read(runs)? {
        let entry = entry.map_err(|source| CliError::Read { path: runs.to_path_buf(), source })?;
        let path = entry.path();
        let name = entry.file_name();
        // A folder itself, not a link to one elsewhere.
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if !is_dir || keep.iter().any(|k| name == k.as_str()) {
            continue;
        }
        let mut files = Vec::new();
        let mut only_run_files = true;
        for e in read(&path)? {
            let e = e.map_err(|source| CliError::Read { path: path.clone(), source })?;
            let is_file = e.file_type().is_ok_and(|t| t.is_file());
            if is_file && RUN_FILES.iter().any(|f| e.file_name() == *f) {
                files.push(e.path());
            } else {
                only_run_files = false;
            }
        }
        if !only_run_files {
            continue;
        }
        for f in files {
            std::fs::remove_file(&f).map_err(|source| CliError::Write { path: f, source })?;
        }
        std::fs::remove_dir(&path).map_err(|source| CliError::Write { path, source })?;
    }
    Ok(())
}

/// An RTT in milliseconds.
fn rtt_ms(d: Duration) -> f64 {
    d.as_ps() as f64 / 1e9
}

/// What one run produced.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// The run.
    pub cell: Cell,
    /// FCTs of the workload flows that completed, ns, by flow id.
    pub fcts_ns: Vec<f64>,
    /// The workload flows' results, by flow id.
    pub results: Vec<FlowResult>,
    /// The run's counters (both directions of the bottleneck, every flow).
    pub counters: Counters,
    /// Events, end of the run, and workload flows done and unfinished.
    pub summary: RunSummary,
    /// The workload period: from the workload's start to the end of the run.
    pub period: Duration,
    /// Bytes the workload delivered (in order, at the client).
    pub workload_bytes: u64,
    /// Bytes the competitor delivered during the workload period (`None` for solo).
    pub competitor_bytes: Option<u64>,
}

impl RunOutcome {
    /// Workload flows that had not completed when the run ended.
    pub fn unfinished(&self) -> usize {
        self.results.len() - self.fcts_ns.len()
    }

    /// Goodput over the workload period, Mb/s.
    fn goodput_mbps(&self, bytes: u64) -> f64 {
        let s = self.period.as_secs_f64();
        if s > 0.0 {
            bytes as f64 * 8.0 / s / 1e6
        } else {
            0.0
        }
    }

    /// Packets dropped at the bottleneck: AQM drops, queue-discipline overflows and switch
    /// buffer drops (the last are 0 with [`SWITCH_BUFFER`]).
    pub fn drops(&self) -> u64 {
        let c = &self.counters;
        c.aqm_drops + c.qdisc_overflow_drops + c.mmu_drops
    }

    /// `counters.csv`: every counter ([`output::counter_rows_all`]; `flows_done` and
    /// `flows_unfinished` count the workload flows, `end_time_ns` is the end of the run), then
    /// `workload_period_ns`, `workload_bytes_delivered` and, beside a competitor,
    /// `competitor_bytes_delivered` (during the workload period).
    pub fn counters_csv(&self) -> String {
        let mut s = String::from("name,value\n");
        for (name, v) in output::counter_rows_all(&self.counters, &self.summary) {
            s.push_str(&format!("{name},{v}\n"));
        }
        s.push_str(&format!("workload_period_ns,{}\n", format_ps_as_ns(self.period.as_ps())));
        s.push_str(&format!("workload_bytes_delivered,{}\n", self.workload_bytes));
        if let Some(b) = self.competitor_bytes {
            s.push_str(&format!("competitor_bytes_delivered,{b}\n"));
        }
        s
    }
}

/// Every run of a plan with its [`HarmRow`] (statistics and harms), in cell order.
#[derive(Clone, Debug)]
pub struct HarmResults {
    /// The runs, in [`HarmPlan::cells`] order.
    pub runs: Vec<RunOutcome>,
    /// One row per run, in the same order.
    pub rows: Vec<HarmRow>,
    /// Run folder names, in the same order.
    pub names: Vec<String>,
}

impl HarmResults {
    /// Computes each run's statistics and, beside a competitor, its harms against the solo run
    /// of the same RTT and seed.
    ///
    /// # Errors
    /// [`CliError::BadOption`] (`--timeout`) if a run has no completed workload flow.
    pub fn new(plan: &HarmPlan, runs: Vec<RunOutcome>) -> Result<HarmResults, CliError> {
        let stats: Vec<FctStats> = runs
            .iter()
            .map(|r| {
                FctStats::of(&r.fcts_ns).ok_or_else(|| {
                    bad(
                        "--timeout",
                        format!(
                            "run {}: no workload flow completed within {} of the workload's \
                             window",
                            plan.cell_name(&r.cell),
                            HumanDuration(plan.timeout)
                        ),
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        let solo_of = |c: &Cell| {
            runs.iter()
                .position(|r| r.cell.rtt == c.rtt && r.cell.seed == c.seed && r.cell.cca.is_none())
                .expect("every RTT and seed has a solo run")
        };
        let rows = runs
            .iter()
            .zip(&stats)
            .map(|(r, s)| {
                let c = &r.cell;
                let rtt = rtt_ms(plan.rtts[c.rtt]);
                let n = r.results.len();
                let mut row = match c.cca {
                    None => HarmRow::solo(rtt, c.seed, n, r.unfinished(), s),
                    Some(_) => HarmRow::competitor(
                        rtt,
                        plan.cca_label(c),
                        c.seed,
                        n,
                        r.unfinished(),
                        s,
                        &stats[solo_of(c)],
                    ),
                };
                row.workload_goodput_mbps = Some(r.goodput_mbps(r.workload_bytes));
                row.competitor_goodput_mbps = r.competitor_bytes.map(|b| r.goodput_mbps(b));
                row.drops = Some(r.drops());
                row.marks = Some(r.counters.ecn_marks);
                row.reused = Some(r.counters.tcp_reused_connections);
                row
            })
            .collect();
        let names = runs.iter().map(|r| plan.cell_name(&r.cell)).collect();
        Ok(HarmResults { runs, rows, names })
    }

    /// Events over every run.
    pub fn events(&self) -> u64 {
        self.runs.iter().map(|r| r.summary.events).sum()
    }
}

/// `dcsim harm`: validates, runs, writes the files and prints ccafct's table (or, for several
/// seeds, the table with confidence intervals) and a timing line to `out`; unfinished
/// workload flows are reported on `notes`.
///
/// # Errors
/// A bad option (before anything runs), a run without completed flows, or an output that
/// cannot be written. Nothing is written unless every run succeeded.
pub fn harm_command(
    a: &HarmArgs,
    out: &mut dyn Write,
    notes: &mut dyn Write,
) -> Result<(), CliError> {
    let t0 = Instant::now();
    let plan = HarmPlan::new(a)?;
    output::check_out_dir(&a.out)?;
    if let Some(why) = plan.ce_threshold_idle() {
        let _ = writeln!(notes, "note: {why}");
    }
    let jobs = match a.jobs {
        Some(j) => j as usize,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let cells = plan.cells();
    let bar = progress(cells.len(), "runs");
    let done = |c: &Cell| {
        bar.inc(1);
        bar.set_message(plan.cell_name(c));
    };
    let results = plan.run(jobs, &done)?;
    bar.finish_and_clear();
    let wall = t0.elapsed().as_secs_f64();

    let dir = &a.out;
    let mkdir = crate::output::create_out_dir;
    let summaries = aggregate_seeds(&results.rows);
    // Every output (the runs' files, the figures, the tables) is staged in one set and goes
    // in place only once all are written: a failure anywhere (a figure, a run's folder that
    // is a file) leaves none of them. The figures are drawn into a hidden folder first. (The
    // figures and each run's files had gone in place one group at a time.)
    let plots = dir.join("plots");
    mkdir(&plots)?;
    let mut title =
        format!("ccafct, {} at {} Mb/s", plan.aqm.describe(), plan.bandwidth.0 as f64 / 1e6);
    if (plan.workload_ecn, plan.competitor_ecn) != (EcnMode::Off, EcnMode::Accurate) {
        let (w, c) = (plan.workload_ecn.name(), plan.competitor_ecn.name());
        title.push_str(&format!(", ECN workload {w}, competitor {c}"));
    }
    if plan.reuse != Reuse::GoHttp {
        title.push_str(&format!(", connection reuse {}", plan.reuse.name()));
    }
    let mut set = output::Staged::new(dir);
    let drafts = output::Drafts::new(&plots, "plots")?;
    let figures = plot_harm_all(&summaries, drafts.path(), "rtt", &title)?;
    drafts.stage(&figures, &plots, &mut set)?;
    let dports = vec![WORKLOAD_DPORT; plan.workload.flows];
    for (r, name) in results.runs.iter().zip(&results.names) {
        mkdir(&dir.join("runs").join(name))?;
        let at = |file: &str| format!("runs/{name}/{file}");
        set.write(&at("fct.csv"), output::fct_csv(&r.results, &dports))?;
        match output::unfinished_csv(&r.results, &dports) {
            Some(text) => set.write(&at("unfinished.csv"), text)?,
            None => set.remove(&at("unfinished.csv")),
        }
        set.write(&at("counters.csv"), r.counters_csv())?;
    }
    if plan.seeds > 1 {
        set.write("harm-summary.csv", harm_summary_csv(&summaries))?;
    } else {
        set.remove("harm-summary.csv");
    }
    set.write("harm.csv", harm_csv(&results.rows))?;
    set.commit()?;
    drop(drafts);
    remove_stale_runs(&dir.join("runs"), &results.names)?;

    for (r, name) in results.runs.iter().zip(&results.names) {
        if r.unfinished() > 0 {
            let _ = writeln!(
                notes,
                "note: run {name}: {} of {} workload flows unfinished at the timeout",
                r.unfinished(),
                r.results.len()
            );
        }
    }
    let table = if plan.seeds == 1 { harm_table(&results.rows) } else { harm_ci_table(&summaries) };
    let _ = write!(out, "{table}");
    let events = results.events();
    let rate = if wall > 0.0 { events as f64 / wall / 1e6 } else { 0.0 };
    let _ = writeln!(
        out,
        "{} runs ({} RTTs x {} x {} seed{}) in {wall:.1} s with {jobs} job{}: {:.1} M events, \
         {rate:.2} M events/s; wrote {}",
        results.runs.len(),
        plan.rtts.len(),
        plan.ccas.len() + 1,
        plan.seeds,
        if plan.seeds == 1 { "" } else { "s" },
        if jobs == 1 { "" } else { "s" },
        events as f64 / 1e6,
        dir.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        args: HarmArgs,
    }

    fn plan(extra: &[&str]) -> HarmPlan {
        let mut argv = vec!["harm", "--out", "x"];
        argv.extend_from_slice(extra);
        HarmPlan::new(&Cmd::parse_from(argv).args).unwrap()
    }

    #[test]
    fn defaults_are_ccafcts() {
        let p = plan(&[]);
        assert_eq!(p.rtt_ms(), [10.0, 20.0, 40.0, 80.0, 160.0]);
        assert_eq!(p.ccas, ["cubic", "prague"]);
        assert_eq!(
            (p.seeds, p.workload.flows, p.aqm),
            (1, 900, Aqm::FqCodel { flows: 1, ce_threshold: None })
        );
        assert_eq!(p.bandwidth, BitsPerSec::mbps(50));
        // 20 s warm-up + 900 × 200 ms + 60 s.
        assert_eq!(p.deadline(), Time::from_ns(260_000_000_000));
        // The competitor cannot finish: twice what 50 Mb/s carries in 260 s.
        assert_eq!(p.competitor_bytes(), 50_000_000 / 8 * 260 * 2 + 1_000_000);
        assert_eq!(p.cells().len(), 15);
        assert_eq!(p.rmem_max, Some(6 << 20));
        assert!(plan(&["--rmem-max", "off"]).rmem_max.is_none());
        assert_eq!(plan(&["--rmem-max", "64MiB"]).rmem_max, Some(64 << 20));
    }

    #[test]
    fn the_path_has_the_requested_rtt_and_fq_codel_on_both_ends() {
        let p = plan(&["--rtt", "40ms", "--cca", "prague", "--fq-flows", "4"]);
        let net = p.network(p.rtts[0]);
        // One way: host link, bottleneck, host link.
        let delay = |a: NodeId, b: NodeId| {
            net.ports(a).iter().find(|x| x.peer == b).map(|x| x.delay).unwrap()
        };
        let one_way = delay(WORKLOAD_SERVER, LEFT_SWITCH)
            + delay(LEFT_SWITCH, RIGHT_SWITCH)
            + delay(RIGHT_SWITCH, WORKLOAD_CLIENT);
        assert_eq!(one_way, Duration::from_ms(20));
        assert_eq!(delay(COMPETITOR_SERVER, LEFT_SWITCH), HOST_DELAY);
        assert_eq!(delay(RIGHT_SWITCH, COMPETITOR_CLIENT), HOST_DELAY);

        let (flows, cfg) = p.setup(&Cell { rtt: 0, cca: Some(0), seed: 3 }, &net);
        assert_eq!(flows.len(), 901);
        let comp = flows[900];
        // The competitor starts at the seed's phase, within the first RTT.
        let phase = HarmWorkload::competitor_phase(3, Duration::from_ms(40));
        assert!(phase < Duration::from_ms(40));
        assert_eq!(
            (comp.src, comp.dst, comp.start),
            (COMPETITOR_SERVER, COMPETITOR_CLIENT, Time::from_ps(phase.as_ps()))
        );
        let (other, _) = p.setup(&Cell { rtt: 0, cca: Some(0), seed: 4 }, &net);
        assert_ne!(other[900].start, comp.start, "another seed, another phase");
        assert!(flows[..900].iter().all(|f| f.src == WORKLOAD_SERVER && f.dst == WORKLOAD_CLIENT));
        assert_eq!(cfg.flow_transport[899], Transport::Tcp(0));
        assert_eq!(cfg.flow_transport[900], Transport::Tcp(1));
        let (w, c) = (&cfg.tcp_groups[0], &cfg.tcp_groups[1]);
        assert_eq!((w.tcp.ecn, w.tcp.handshake, w.cca.name()), (EcnMode::Off, true, "cubic"));
        assert_eq!(
            (c.tcp.ecn, c.tcp.handshake, c.cca.name()),
            (EcnMode::Accurate, false, "prague")
        );
        assert!(!cfg.switch.pfc_enabled && !cfg.switch.ecn_enabled);
        let ends: Vec<(NodeId, NodeId)> = cfg
            .switch
            .qdiscs
            .iter()
            .map(|q| (q.node, net.ports(q.node)[q.port.idx()].peer))
            .collect();
        assert_eq!(ends, [(LEFT_SWITCH, RIGHT_SWITCH), (RIGHT_SWITCH, LEFT_SWITCH)]);
        for q in &cfg.switch.qdiscs {
            assert_eq!(q.classes & (1 << CLASS), 1 << CLASS);
            match &q.qdisc {
                QdiscConfig::FqCodel(f) => {
                    assert_eq!((f.flows, f.ecn), (4, true));
                    assert_eq!(*f, FqCodelParams { flows: 4, ..FqCodelParams::default() });
                }
                other => panic!("{other:?}"),
            }
        }
        // The solo run has the same workload and no competitor.
        let (solo, cfg) = p.setup(&Cell { rtt: 0, cca: None, seed: 3 }, &net);
        assert_eq!(solo[..], flows[..900]);
        assert_eq!(cfg.tcp_groups.len(), 1);
    }

    #[test]
    fn ce_threshold_reaches_fq_codel_and_its_description() {
        let p = plan(&["--ce-threshold", "1ms", "--fq-flows", "8"]);
        let want = Some((Duration::from_ms(1), CeSelector::Ect1));
        assert_eq!(p.aqm, Aqm::FqCodel { flows: 8, ce_threshold: want });
        let QdiscConfig::FqCodel(f) = p.aqm.qdisc() else { panic!("{:?}", p.aqm.qdisc()) };
        assert_eq!(
            f,
            FqCodelParams {
                flows: 8,
                ce_threshold: Some(Duration::from_ms(1)),
                ce_threshold_selector: CeSelector::Ect1,
                ..FqCodelParams::default()
            }
        );
        assert!(p.aqm.describe().contains("ce_threshold_selector 0x1/0x1"), "{}", p.aqm.describe());
        let any = plan(&["--ce-threshold", "500us", "--ce-selector", "any"]);
        let QdiscConfig::FqCodel(f) = any.aqm.qdisc() else { panic!() };
        assert_eq!(
            (f.flows, f.ce_threshold, f.ce_threshold_selector),
            (1, Some(Duration::from_us(500)), CeSelector::Any)
        );
        assert!(!any.aqm.describe().contains("selector"));
        let QdiscConfig::FqCodel(f) = plan(&[]).aqm.qdisc() else { panic!() };
        assert_eq!(f, FqCodelParams { flows: 1, ..FqCodelParams::default() });
        assert_eq!(plan(&["--ce-threshold", "off"]).aqm, plan(&[]).aqm);
        assert_eq!(plan(&["--aqm", "dualpi2", "--ce-threshold", "off"]).aqm, Aqm::DualPi2);
        // The threshold for ECT(1) marks nothing without an ECT(1) sender; `any` marks ECT(0).
        assert!(p.ce_threshold_idle().is_none(), "prague with ECN sends ECT(1)");
        for extra in [&["--cca", "cubic,bbr"][..], &["--competitor-ecn", "off"]] {
            let mut args = vec!["--ce-threshold", "1ms"];
            args.extend_from_slice(extra);
            assert!(plan(&args).ce_threshold_idle().is_some(), "{args:?}");
        }
        assert!(any.ce_threshold_idle().is_none());
    }

    #[test]
    fn ecn_options_reach_the_groups_and_classic_is_refused_for_dctcp_and_prague() {
        let ecn_of = |extra: &[&str]| {
            let p = plan(extra);
            let net = p.network(p.rtts[0]);
            let (_, cfg) = p.setup(&Cell { rtt: 0, cca: Some(0), seed: 1 }, &net);
            (cfg.tcp_groups[0].tcp.ecn, cfg.tcp_groups[1].tcp.ecn)
        };
        assert_eq!(ecn_of(&["--cca", "bbr"]), (EcnMode::Off, EcnMode::Accurate));
        assert_eq!(
            ecn_of(&["--cca", "bbr", "--competitor-ecn", "off", "--workload-ecn", "accurate"]),
            (EcnMode::Accurate, EcnMode::Off)
        );
        assert_eq!(
            ecn_of(&["--cca", "cubic", "--competitor-ecn", "classic", "--workload-ecn", "classic"]),
            (EcnMode::Classic, EcnMode::Classic)
        );
        let err = |extra: &[&str]| {
            let mut argv = vec!["harm", "--out", "x"];
            argv.extend_from_slice(extra);
            HarmPlan::new(&Cmd::parse_from(argv).args).unwrap_err().to_string()
        };
        let e = err(&["--cca", "cubic,prague", "--competitor-ecn", "classic"]);
        assert!(e.contains("--competitor-ecn") && e.contains("prague"), "{e}");
        let e = err(&["--workload-ecn", "on"]);
        assert!(e.contains("--workload-ecn") && e.contains("\"on\""), "{e}");
        assert!(err(&["--competitor-ecn", "ECT1"]).contains("off, classic, accurate"));
    }
}
