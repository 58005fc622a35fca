//! The congestion-control scheme registry: scheme names as written in `[cc] name = ...`, their
//! parameters, their profiles (the defaults they bring to `[nic]` and `[switch]`), and the
//! static dispatch from a [`CcChoice`] to the generic [`run`].
//!
//! Every scheme is one line of the registry below, naming its [`CcChoice`] variant, its
//! factory and how the factory is built from checked parameters, the plugin's
//! [`PluginSpec`] (its name and parameters) and its [`Profile`]. [`SCHEMES`], [`spec_of`],
//! [`params_of`], [`profile`], [`CcChoice::name`], `CcChoice::from_params` and
//! [`run_with_scheme`] are all derived from it.
//!
//! | name | algorithm | window | ACK high priority | default ECN map |
//! |---|---|---|---|---|
//! | `none` | line rate, no reaction | none | no | RED |
//! | `hpcc` | HPCC (`dcsim-hpcc`) | variable | no | RED |
//! | `hpcc-pint` | HPCC-PINT (`dcsim-pint`) | variable | no | RED |
//! | `dcqcn` | DCQCN (`dcsim-baselines`) | none | yes | RED |
//! | `dcqcn-w` | DCQCN | variable | no | RED |
//! | `timely` | TIMELY | none | yes | RED |
//! | `timely-w` | TIMELY | variable | yes | RED |
//! | `dctcp` | DCTCP | variable | no | DCTCP |
//!
//! No name is reserved at present ([`RESERVED`]). The parameters of every scheme are listed in
//! its spec ([`spec_of`]) and documented in `docs/schemes.md`.
//!
//! # From `[cc]` to a factory
//! Every key of the `[cc]` table but `name` must be a parameter of the scheme's spec (else
//! "unknown parameter"). Each value is converted by its [`Kind`] (units through
//! [`crate::units`]; integers must fit in 32 bits, as every scheme's counts are `u32`), and the
//! plugin's `from_params` builds and checks the parameters. A [`ParamError`] points at the
//! key of the parameter it names. If the scenario did not write that parameter, its default
//! conflicts with something written: the error points at the first written parameter
//! without which it disappears, and failing that at `cc.name`.
//!
//! # Adding a scheme
//! 1. In the plugin crate, one file: the algorithm, its factory, and its parameters with a
//!    `pub const SPEC: PluginSpec`, `XxxParams::from_params(&Params)` (typed getters taking
//!    the defaults) and `XxxParams::check` (a [`ParamError`] naming the field).
//! 2. Here, one line in the `registry!` list; then document the scheme in `docs/schemes.md`.

use std::ops::Range;
use std::time::Instant;

use dcsim_baselines::{
    dcqcn, dctcp, timely, DcqcnFactory, DcqcnParams, DctcpFactory, DctcpParams, TimelyFactory,
    TimelyParams,
};
use dcsim_core::apps::QueryRecord;
use dcsim_core::cc::{CcFactory, NoCcFactory, NONE_SPEC};
use dcsim_core::config::{EcnParams, FlowSpec, Monitor, SimConfig, WindowMode};
use dcsim_core::ids::FlowId;
use dcsim_core::network::{Network, RoutingTable};
use dcsim_core::qmon::PortQueue;
use dcsim_core::units::{BitsPerSec, Bytes, Duration, Time};
use dcsim_core::{
    Counters, FlowResult, HopSample, ParallelStats, Partition, Partitioner, PfcEvent, RunSummary,
    SimError, Simulation,
};
use dcsim_hpcc::{HpccFactory, HpccParams};
use dcsim_pint::{hpcc_pint, HpccPintFactory, HpccPintParams};
use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, PluginSpec, Value};

use crate::error::CliError;
use crate::scenario::Source;
use crate::units;

/// Defines [`CcChoice`], [`run_with_scheme`] and the registry table from one line per scheme:
///
/// ```text
/// Variant: Factory [{ params: XxxParams::from_params }], SPEC, window, ack_high_prio, ecn
///          [, setup];
/// ```
///
/// `Factory { params: XxxParams::from_params }` builds the factory (`Factory::from`) from its checked
/// parameters; a bare `Factory` is a unit struct without parameters. `window` is a [`WindowMode`] variant,
/// `ecn` an [`EcnDefault`] variant. `setup`, if given, is a `fn(&Factory, &mut SimConfig)`
/// run before the simulation is built (for settings the switches must share with the scheme).
macro_rules! registry {
    ($(
        $variant:ident: $factory:ident $({ params: $from:path })?, $spec:path,
        $window:ident, $ack:literal, $ecn:ident $(, $setup:path)?;
    )*) => {
        /// A congestion-control scheme chosen by a scenario, with its parameters applied.
        #[derive(Clone, Debug)]
        pub enum CcChoice {
            $(
                #[doc = concat!("The scheme of [`", stringify!($spec), "`].")]
                $variant($factory),
            )*
        }

        /// Every registered scheme, in registry order.
        const REGISTRY: &[Scheme] = &[$(
            Scheme {
                spec: &$spec,
                build: |p| Ok(CcChoice::$variant(registry!(@build p, $factory $(, $from)?))),
                profile: Profile {
                    window: WindowMode::$window,
                    ack_high_prio: $ack,
                    ecn: EcnDefault::$ecn,
                },
            },
        )*];

        /// Every scheme name `[cc] name` accepts, in registry order.
        pub const SCHEMES: &[&str] = &[$($spec.name),*];

        impl CcChoice {
            /// The scheme's name as written in scenarios.
            pub fn name(&self) -> &'static str {
                match self {
                    $(CcChoice::$variant(_) => $spec.name,)*
                }
            }

            /// The header area the scheme's data packets carry ([`CcFactory::header_mode`]).
            pub fn header_mode(&self) -> dcsim_core::packet::HeaderMode {
                match self {
                    $(CcChoice::$variant(f) => f.header_mode(),)*
                }
            }

            /// The name the factory itself reports ([`CcFactory::name`]).
            #[cfg(test)]
            fn factory_name(&self) -> &str {
                match self {
                    $(CcChoice::$variant(f) => f.name(),)*
                }
            }
        }

        /// Runs the scenario with the chosen scheme (one match arm per registered scheme).
        ///
        /// # Errors
        /// The simulator's own validation ([`Simulation::new`]); a scenario that passed the
        /// loader's validation should not trigger it.
        pub fn run_with_scheme(choice: CcChoice, input: SimInput) -> Result<RunOutput, SimError> {
            match choice {
                $(CcChoice::$variant(f) => {
                    let setup: fn(&$factory, &mut SimConfig) = registry!(@setup $($setup)?);
                    let mut input = input;
                    setup(&f, &mut input.cfg);
                    run(f, input)
                })*
            }
        }
    };
    (@build $p:ident, $factory:ident, $from:path) => { <$factory>::from($from($p)?) };
    (@build $p:ident, $factory:ident) => {{ let _ = $p; $factory }};
    (@setup $setup:path) => { $setup };
    (@setup) => { |_, _| {} };
}

registry! {
    // Variant: factory [{ params: its constructor from `Params` }], spec, nic.window,
    // nic.ack_high_prio, default ECN map [, setup];
    None:     NoCcFactory,                                             NONE_SPEC,        None,     false,  Red;
    Hpcc:     HpccFactory { params: HpccParams::from_params },         dcsim_hpcc::SPEC, Variable, false,  Red;
    HpccPint: HpccPintFactory { params: HpccPintParams::from_params }, hpcc_pint::SPEC,  Variable, false,  Red;
    Dcqcn:    DcqcnFactory { params: DcqcnParams::from_params },       dcqcn::SPEC,      None,     true,   Red;
    DcqcnW:   DcqcnFactory { params: DcqcnParams::from_params },       dcqcn::SPEC_W,    Variable, false,  Red;
    Timely:   TimelyFactory { params: TimelyParams::from_params },     timely::SPEC,     None,     true,   Red;
    TimelyW:  TimelyFactory { params: TimelyParams::from_params },     timely::SPEC_W,   Variable, true,   Red;
    Dctcp:    DctcpFactory { params: DctcpParams::from_params },       dctcp::SPEC,      Variable, false,  Dctcp;
}

/// One line of the registry.
struct Scheme {
    /// The plugin's name and parameters.
    spec: &'static PluginSpec,
    /// The factory from parameters already converted to their kinds.
    build: fn(&Params) -> Result<CcChoice, ParamError>,
    /// The defaults it brings to `[nic]` and `[switch]`.
    profile: Profile,
}

/// The registry line of scheme `name`.
fn scheme(name: &str) -> Option<&'static Scheme> {
    REGISTRY.iter().find(|s| s.spec.name == name)
}

/// The spec (name, summary, parameters) of scheme `name`, if it is registered.
pub fn spec_of(name: &str) -> Option<&'static PluginSpec> {
    scheme(name).map(|s| s.spec)
}

/// The `[cc]` parameter names of scheme `name`, in the spec's order (empty for `none` and for
/// unknown names).
pub fn params_of(name: &str) -> Vec<&'static str> {
    spec_of(name).map_or_else(Vec::new, PluginSpec::param_names)
}

/// Scheme names reserved for schemes that are not available yet: `[cc] name` rejects them
/// with a message saying so.
pub const RESERVED: &[&str] = &[];

/// How the default ECN map is derived from a switch port's rate `s` (in Gb/s), spec §5.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnDefault {
    /// kmin = 4·s KB, kmax = 16·s KB, pmax = 0.2 (the reference's `100·s/25`, `400·s/25`):
    /// 400 KB / 1600 KB at 100 Gb/s.
    Red,
    /// kmin = kmax = 3·s KB, pmax = 1 (the reference's DCTCP `30·s/10`): 300 KB at 100 Gb/s.
    Dctcp,
}

impl EcnDefault {
    /// The ECN parameters for a port of rate `rate` (bytes rounded down).
    pub fn params(self, rate: BitsPerSec) -> EcnParams {
        // s Gb/s times k KB = k * rate / 10^6 bytes.
        let kb = |k: u64| Bytes((u128::from(rate.0) * u128::from(k) / 1_000_000) as u64);
        match self {
            EcnDefault::Red => EcnParams { kmin: kb(4), kmax: kb(16), pmax: 0.2 },
            EcnDefault::Dctcp => EcnParams { kmin: kb(3), kmax: kb(3), pmax: 1.0 },
        }
    }
}

/// The settings a scheme brings to other sections: the reference run script's per-scheme
/// choices (spec §5.1). They are defaults only: explicit `[nic]` / `[switch]` values win.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// `nic.window`.
    pub window: WindowMode,
    /// `nic.ack_high_prio`.
    pub ack_high_prio: bool,
    /// The rule for the default `switch.ecn_map`.
    pub ecn: EcnDefault,
}

/// The profile of scheme `name` (any name; unknown names get `none`'s).
pub fn profile(name: &str) -> Profile {
    scheme(name)
        .or_else(|| scheme(NONE_SPEC.name))
        .map(|s| s.profile)
        .expect("`none` is registered")
}

impl CcChoice {
    /// The floor the scheme puts under a flow's rate (its `min_rate`, given or default), for
    /// the schemes that have one.
    pub fn min_rate(&self) -> Option<BitsPerSec> {
        match self {
            CcChoice::None(_) => None,
            CcChoice::Hpcc(f) => Some(f.params.min_rate),
            CcChoice::HpccPint(f) => Some(f.params.min_rate),
            CcChoice::Dcqcn(f) | CcChoice::DcqcnW(f) => Some(f.params.min_rate),
            CcChoice::Timely(f) | CcChoice::TimelyW(f) => Some(f.params.min_rate),
            CcChoice::Dctcp(f) => Some(f.params.min_rate),
        }
    }

    /// Builds the scheme `name` from the `[cc]` table `p`. `name` must be one of [`SCHEMES`].
    ///
    /// Unknown keys are rejected first (in key order), then each value is converted to its
    /// parameter's kind (in the spec's order), then the plugin builds and checks the parameters.
    pub(crate) fn from_params(name: &str, p: CcParams<'_>) -> Result<CcChoice, CliError> {
        let Some(scheme) = scheme(name) else { return Err(p.unknown_scheme(name)) };
        let spec = scheme.spec;
        if let Some(key) = p.table.keys().find(|k| *k != "name" && spec.param(k).is_none()) {
            return Err(p.unknown_parameter(spec, key));
        }
        let mut given = Vec::new();
        for param in spec.params {
            if let Some(v) = p.table.get(param.name) {
                given.push((param.name, p.convert(param, v)?));
            }
        }
        (scheme.build)(&Params::from_values(spec.params, given.clone()))
            .map_err(|e| p.param_error(scheme, &given, &e))
    }
}

/// Everything a run needs besides the scheme.
pub struct SimInput {
    /// The network.
    pub net: Network,
    /// Its routes.
    pub routes: RoutingTable,
    /// Switch/NIC parameters, stop time and seed.
    pub cfg: SimConfig,
    /// The flows, ids equal to positions.
    pub flows: Vec<FlowSpec>,
    /// Worker threads: above 1 the nodes are split into shards ([`SHARDS_PER_THREAD`] per
    /// thread unless `shards` says otherwise) and run in parallel. Results never depend on it.
    pub threads: usize,
    /// Shards to split the nodes into; 0 for the default ([`Parallelism::shard_count`]). More
    /// shards than threads run several to a thread (each thread runs its own, shard `i` on
    /// thread `i % threads`, then claims any not yet started, window by window); with many
    /// shards on one thread, the run measures the balance of a larger thread count on a small
    /// machine (`RunOutput::parallel`). Results never depend on it.
    pub shards: usize,
    /// How the nodes are split into shards. Results never depend on it.
    pub partitioner: Partitioner,
    /// Record every shard's window and every thread's barrier wait in
    /// `RunOutput::parallel.trace` (`Simulation::trace_windows`). Results never depend on it.
    pub trace_windows: bool,
    /// Every this many windows, deal the shards out to the threads again by their measured
    /// time (`Simulation::set_rebalance`); 0 never. Results never depend on it.
    pub rebalance: u64,
    /// Bind each thread to a CPU of its own (`Simulation::set_pin_threads`). Results never
    /// depend on it.
    pub pin_threads: bool,
    /// Flows whose data packets are recorded at every switch ([`RunOutput::hop_trace`]).
    pub trace: Vec<FlowId>,
    /// Where completed queries go as the run proceeds (in steps of [`QUERY_STEP`] of simulated
    /// time, each step's queries in completion order); without one they are collected in
    /// [`RunOutput::queries`].
    pub query_sink: Option<QuerySink>,
    /// Where the window trace goes as the run proceeds (with `trace_windows`; the run is then
    /// stepped, in steps of at most [`QUERY_STEP`], and each step's records are handed over,
    /// so that a long run's trace is not held in memory whole); without one it is collected
    /// in `RunOutput::parallel.trace`.
    pub window_sink: Option<WindowSink>,
    /// Told how far the run has got, a few times a second of wall-clock time (the run is then
    /// stepped with `Simulation::run_until`, which changes nothing in its results).
    pub progress: Option<ProgressFn>,
}

/// Shards per thread when the shard count is not given and there are several threads.
///
/// With more shards than threads, a thread whose shards were light in a window claims the
/// shards another has not started, so the threads' loads even out window by window. Measured
/// (docs/performance.md, "Two shards per thread by default"): on the 2-vCPU VM, two threads ran
/// the 2 ms fat tree in 4.17 s (median of nine) with four shards against 4.69 s with two; on
/// the 12 ms fat tree the bound for 16 threads rises from 12.47× (16 shards) to 15.00× (32
/// claimed) for 5% more packets crossing shards.
pub const SHARDS_PER_THREAD: usize = 2;

/// Windows between deals of the shards to the threads by their measured time when a run does
/// not say ([`SimInput::rebalance`], `dcsim run --rebalance`). Measured on a 16-core Xeon guest
/// (docs/performance.md, "Twenty-seventh session"): the 12 ms fat tree on 16 threads took
/// 3.01–3.38 s dealt every 16 windows (threads pinned) against 3.21–3.48 s without, and two
/// threads on the 2 ms fat tree 1.78–2.12 s against 1.94–2.13 s; no change on the 2-vCPU VM.
/// Results never depend on it.
pub const DEFAULT_REBALANCE: u64 = 16;

/// The most shards a run asks for (`--shards`' bound; a network has at most one per switch).
pub const MAX_SHARDS: usize = 4096;

/// The most threads a run uses, far above any machine's cores (`--threads` above it asks for
/// its shards, and runs them on this many; a warning says so). Each takes a 2 MiB stack of
/// address space: 4096 of them on a k = 48 fat tree exhausted a 4 GB address-space limit (1024
/// too), and the allocator aborted the run; 512 fit. Where the system refuses a thread below
/// the bound, the run goes on with those that started (a warning says so too).
pub const MAX_THREADS: usize = 512;

/// The default shard count for `threads` threads: [`SHARDS_PER_THREAD`] each, at most
/// [`MAX_SHARDS`], or one shard (the sequential engine) on one thread. (`--threads 4294967295`
/// asked the partitioner for 8.6 billion shards and aborted on the allocation.)
pub fn default_shards(threads: usize) -> usize {
    if threads > 1 {
        threads.saturating_mul(SHARDS_PER_THREAD).min(MAX_SHARDS)
    } else {
        1
    }
}

/// Threads, shards and partitioner of a run ([`SimInput::threads`], [`SimInput::shards`],
/// [`SimInput::partitioner`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parallelism {
    /// Worker threads (at least 1).
    pub threads: usize,
    /// Shards; 0 for the default: [`SHARDS_PER_THREAD`] per thread with several threads, one
    /// with one.
    pub shards: usize,
    /// How nodes are split into shards.
    pub partitioner: Partitioner,
    /// Record every shard's window and every thread's barrier wait
    /// ([`SimInput::trace_windows`]).
    pub trace_windows: bool,
    /// Deal the shards out to the threads by measured time every this many windows; 0 never
    /// ([`SimInput::rebalance`]).
    pub rebalance: u64,
    /// Bind each thread to a CPU of its own ([`SimInput::pin_threads`]).
    pub pin_threads: bool,
}

impl Parallelism {
    /// `threads` threads, the default shards, split by the default partitioner, dealt to the
    /// threads every [`DEFAULT_REBALANCE`] windows, untraced, unpinned.
    pub fn threads(threads: usize) -> Parallelism {
        Parallelism {
            threads,
            shards: 0,
            partitioner: Partitioner::default(),
            trace_windows: false,
            rebalance: DEFAULT_REBALANCE,
            pin_threads: false,
        }
    }

    /// The shards this asks for.
    pub fn shard_count(&self) -> usize {
        if self.shards == 0 {
            default_shards(self.threads)
        } else {
            self.shards
        }
    }
}

/// How far a run has got (see [`SimInput::progress`]).
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Simulated time reached.
    pub now: Time,
    /// The stop time.
    pub stop: Time,
    /// Events processed so far.
    pub events: u64,
    /// Wall-clock time since the run started.
    pub wall: std::time::Duration,
    /// The run is over (no event left, or the stop time reached).
    pub done: bool,
}

/// Receives [`Progress`] reports during a run.
pub type ProgressFn = Box<dyn FnMut(&Progress) + Send>;

/// The wall-clock time a progress step aims at.
const PROGRESS_STEP: std::time::Duration = std::time::Duration::from_millis(200);

impl std::fmt::Debug for SimInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimInput")
            .field("net", &self.net)
            .field("flows", &self.flows.len())
            .field("threads", &self.threads)
            .field("shards", &self.shards)
            .field("partitioner", &self.partitioner)
            .field("trace_windows", &self.trace_windows)
            .field("rebalance", &self.rebalance)
            .field("pin_threads", &self.pin_threads)
            .field("trace", &self.trace)
            .field("query_sink", &self.query_sink.is_some())
            .field("window_sink", &self.window_sink.is_some())
            .field("progress", &self.progress.is_some())
            .finish_non_exhaustive()
    }
}

/// Receives completed queries during a run (see [`SimInput::query_sink`]).
pub type QuerySink = Box<dyn FnMut(&[QueryRecord]) + Send>;

/// Receives a run's window records during the run (see [`SimInput::window_sink`]).
pub type WindowSink = Box<dyn FnMut(dcsim_core::WindowTrace) + Send>;

/// The simulated time between two hand-overs of completed queries to a [`QuerySink`].
pub const QUERY_STEP: Duration = Duration::from_ms(1);

/// What a finished run produced.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// The run summary.
    pub summary: RunSummary,
    /// One record per flow, indexed by flow id.
    pub results: Vec<FlowResult>,
    /// Run-wide counters.
    pub counters: Counters,
    /// Wall-clock time spent in [`Simulation::run`].
    pub wall: std::time::Duration,
    /// Shards the run used.
    pub shards: usize,
    /// Shards the run asked its partitioner for (`--shards`, or the default for its threads);
    /// the partitioner may make fewer ([`RunOutput::shards`]).
    pub shards_asked: usize,
    /// How the nodes were split, when the run used several shards.
    pub partitioner: Option<Partitioner>,
    /// How the windows of a run with several shards went (empty otherwise).
    pub parallel: ParallelStats,
    /// Why a parallel run fell back to one shard, if it did.
    pub fallback: Option<String>,
    /// The switch passages of [`SimInput::trace`]'s flows (`Simulation::hop_trace`).
    pub hop_trace: Vec<HopSample>,
    /// What was monitored (the scenario's `[output]` and the command line).
    pub monitor: Monitor,
    /// The PFC frames switches sent, if logged (`Simulation::pfc_log`).
    pub pfc_log: Vec<PfcEvent>,
    /// Per switch egress port backlog statistics, if monitored (`Simulation::queue_stats`).
    pub queues: Vec<PortQueue>,
    /// The completed queries of the run's applications, in completion order, unless they went
    /// to [`SimInput::query_sink`].
    pub queries: Vec<QueryRecord>,
    /// The periodic backlog samples, if asked for (`Simulation::queue_samples`).
    pub samples: Vec<dcsim_core::qmon::PortSamples>,
    /// Per priority class backlog statistics, if asked for (`Simulation::class_queue_stats`).
    pub class_queues: Vec<dcsim_core::qmon::ClassQueue>,
    /// The run had link events (its `counters.csv` lists `drops_link_down`).
    pub faults: bool,
    /// RoCE queue pairs had a retransmission timeout (`counters.csv` lists `timeouts` and
    /// `flows_failed`).
    pub rto: bool,
    /// Payload bytes of data packets still in flight or queued when the run ended
    /// ([`dcsim_core::Simulation::data_bytes_in_flight`]): with it the data bytes balance,
    /// `data_bytes_sent = data_bytes_delivered + data_bytes_dropped + data_bytes_in_flight`.
    pub data_bytes_in_flight: u64,
}

/// Builds and runs a simulation with `factory`.
///
/// # Errors
/// See [`run_with_scheme`].
pub fn run<F: CcFactory>(factory: F, input: SimInput) -> Result<RunOutput, SimError> {
    let SimInput {
        net,
        routes,
        cfg,
        flows,
        threads,
        shards,
        partitioner,
        trace_windows,
        rebalance,
        pin_threads,
        trace,
        mut query_sink,
        mut window_sink,
        mut progress,
    } = input;
    let shards =
        Parallelism { threads, shards, partitioner, trace_windows, rebalance, pin_threads }
            .shard_count();
    let monitor = cfg.monitor.clone();
    let (faults, rto) = (!cfg.faults.events.is_empty(), cfg.nic.rto.is_some());
    let queries_streamed = !cfg.apps.is_empty() && query_sink.is_some();
    let stepped = queries_streamed || (trace_windows && window_sink.is_some());
    let stop = cfg.stop_time;
    let part = if shards > 1 {
        partitioner.partition(&net, &routes, &flows, &cfg, shards)
    } else {
        Partition::single(net.node_count())
    };
    let mut sim = Simulation::with_partition(net, routes, cfg, flows, factory, part)?;
    sim.set_threads(threads.clamp(1, MAX_THREADS));
    if trace_windows {
        sim.trace_windows();
    }
    sim.set_rebalance(rebalance);
    sim.set_pin_threads(pin_threads);
    sim.trace_hop_latency(&trace)?;
    let t0 = Instant::now();
    let summary = if stepped || progress.is_some() {
        // Hand completed queries and window records over as the run goes, so that they do not
        // pile up (steps of at most QUERY_STEP), and report progress: steps of simulated time
        // sized so that each takes about PROGRESS_STEP of wall-clock time. Stepping changes
        // nothing in the run.
        let mut t = Time::ZERO;
        let mut step = if stepped { QUERY_STEP } else { Duration::from_us(10) };
        loop {
            t = Time(t.0.saturating_add(step.as_ps())).min(stop);
            let w = Instant::now();
            let s = sim.run_until(t);
            if let Some(sink) = query_sink.as_mut().filter(|_| queries_streamed) {
                sink(&sim.take_queries());
            }
            if let Some(sink) = window_sink.as_mut() {
                if let Some(records) = sim.take_window_trace() {
                    sink(records);
                }
            }
            let done = t >= stop || !sim.has_events();
            if let Some(p) = progress.as_mut() {
                let now = if done { s.end_time } else { t };
                p(&Progress { now, stop, events: s.events, wall: t0.elapsed(), done });
                // Grow or shrink the step towards PROGRESS_STEP of wall-clock time.
                let took = w.elapsed();
                let ps = step.as_ps();
                step = if took < PROGRESS_STEP / 2 {
                    Duration::from_ps(ps.saturating_mul(2))
                } else if took > PROGRESS_STEP * 2 {
                    Duration::from_ps((ps / 2).max(1_000))
                } else {
                    step
                };
                if stepped {
                    step = step.min(QUERY_STEP);
                }
            }
            if done {
                break s;
            }
        }
    } else {
        sim.run()
    };
    let wall = t0.elapsed();
    let queries = if queries_streamed { Vec::new() } else { sim.take_queries() };
    let queues = if monitor.queue_lengths { sim.queue_stats(summary.end_time) } else { Vec::new() };
    let samples = sim.queue_samples();
    let class_queues =
        if monitor.per_class { sim.class_queue_stats(summary.end_time) } else { Vec::new() };
    Ok(RunOutput {
        summary,
        results: sim.flow_results().to_vec(),
        counters: *sim.counters(),
        wall,
        shards: sim.shards(),
        shards_asked: shards,
        partitioner: (sim.shards() > 1).then_some(partitioner),
        parallel: sim.parallel_stats().clone(),
        fallback: sim.fallback().map(str::to_string),
        hop_trace: sim.hop_trace(),
        monitor,
        pfc_log: sim.pfc_log(),
        queues,
        queries,
        samples,
        class_queues,
        faults,
        rto,
        data_bytes_in_flight: sim.data_bytes_in_flight(),
    })
}

/// The `[cc]` table of a scenario, for `CcChoice::from_params`: converts its values to typed
/// [`Params`] and points errors at their keys.
#[derive(Debug)]
pub struct CcParams<'a> {
    src: &'a Source,
    scheme: String,
    table: &'a toml::Table,
}

impl<'a> CcParams<'a> {
    /// The `[cc]` table `table` of `src`, for scheme `scheme`.
    pub(crate) fn new(src: &'a Source, scheme: &str, table: &'a toml::Table) -> CcParams<'a> {
        CcParams { src, scheme: scheme.to_string(), table }
    }

    fn span(&self, key: &str) -> Option<Range<usize>> {
        self.src.span_of(&["cc", key])
    }

    fn error(&self, key: &str, message: String) -> CliError {
        self.src.error_at(self.span(key), format!("cc.{key}"), message)
    }

    /// `value` as a value of `param`'s kind. The messages follow "field `cc.x`: ".
    fn convert(&self, param: &ParamSpec, value: &toml::Value) -> Result<Value, CliError> {
        use toml::Value as T;
        let key = param.name;
        let found = value.type_str();
        let unit =
            |r: Result<Value, units::UnitError>| r.map_err(|e| self.error(key, e.to_string()));
        let non_negative = |v: i64| {
            u64::try_from(v).map_err(|_| {
                self.error(key, format!("{v} is negative; expected a non-negative integer"))
            })
        };
        match (param.kind, value) {
            (Kind::Number, T::Float(v)) => Ok(Value::Number(*v)),
            (Kind::Number, T::Integer(v)) => Ok(Value::Number(*v as f64)),
            (Kind::Number, _) => Err(self.error(key, format!("expected a number, found {found}"))),
            (Kind::Integer, T::Integer(v)) => {
                let v = non_negative(*v)?;
                if v > u64::from(u32::MAX) {
                    return Err(self.error(key, format!("{v} is larger than {}", u32::MAX)));
                }
                Ok(Value::Integer(v))
            }
            (Kind::Integer, _) => {
                Err(self.error(key, format!("expected a non-negative integer, found {found}")))
            }
            (Kind::Bool, T::Boolean(v)) => Ok(Value::Bool(*v)),
            (Kind::Bool, _) => {
                Err(self.error(key, format!("expected true or false, found {found}")))
            }
            (Kind::Rate, T::String(s)) => {
                let r = units::parse_rate(s).map_err(|e| self.error(key, e.to_string()))?;
                // As the topology's rates: a scheme's rates add to a flow's (HPCC's, DCQCN's,
                // TIMELY's additive increase), and beyond it wrapped a flow's rate to 0.
                if r > dcsim_core::units::MAX_RATE {
                    return Err(self.error(
                        key,
                        format!(
                            "`{s}` is above the largest rate supported, {}",
                            dcsim_core::units::MAX_RATE_TEXT
                        ),
                    ));
                }
                Ok(Value::Rate(r))
            }
            (Kind::Rate, _) => Err(self.error(
                key,
                format!("expected a rate with a unit such as \"40Mbps\", found {found}"),
            )),
            (Kind::Duration, T::String(s)) => unit(units::parse_duration(s).map(Value::Duration)),
            (Kind::Duration, _) => {
                Err(self.error(key, format!("needs a unit, e.g. \"1us\" (found {found})")))
            }
            (Kind::Size, T::Integer(v)) => Ok(Value::Size(Bytes(non_negative(*v)?))),
            (Kind::Size, T::String(s)) => unit(units::parse_size(s).map(Value::Size)),
            (Kind::Size, _) => Err(self.error(
                key,
                format!("expected a size in bytes such as 1514 or \"32MiB\", found {found}"),
            )),
            (Kind::Choice(words), T::String(s)) => match words.iter().find(|w| **w == s.as_str()) {
                Some(w) => Ok(Value::Choice(w)),
                None => {
                    Err(self
                        .error(key, format!("unknown value \"{s}\" (valid: {})", words.join(", "))))
                }
            },
            (Kind::Choice(words), _) => {
                Err(self.error(key, format!("expected one of {}, found {found}", words.join(", "))))
            }
        }
    }

    /// Locates the plugin's error `e` about the parameters `given` (see the module docs): at
    /// its field if written, else at the first written parameter without which the error
    /// disappears, else at `cc.name`.
    fn param_error(
        &self,
        scheme: &Scheme,
        given: &[(&'static str, Value)],
        e: &ParamError,
    ) -> CliError {
        let message = format!("{} {}", e.field, e.message);
        if given.iter().any(|(k, _)| *k == e.field) {
            return self.error(e.field, message);
        }
        let culprit = given.iter().map(|(k, _)| *k).find(|k| {
            let rest = given.iter().filter(|(n, _)| n != k).copied().collect();
            (scheme.build)(&Params::from_values(scheme.spec.params, rest)).err().as_ref() != Some(e)
        });
        match culprit {
            Some(key) => self.error(key, message),
            None => self.src.error_at(
                self.span("name"),
                "cc.name",
                format!("scheme \"{}\": {message}", self.scheme),
            ),
        }
    }

    fn unknown_parameter(&self, spec: &PluginSpec, key: &str) -> CliError {
        let list = if spec.params.is_empty() {
            "none".to_string()
        } else {
            spec.params.iter().map(|p| format!("`{}`", p.name)).collect::<Vec<_>>().join(", ")
        };
        self.error(
            key,
            format!(
                "unknown parameter `{key}` for scheme \"{}\" (its parameters: {list})",
                self.scheme
            ),
        )
    }

    fn unknown_scheme(&self, name: &str) -> CliError {
        self.src.error_at(self.span("name"), "cc.name".to_string(), unknown_scheme_message(name))
    }
}

/// `unknown scheme "x" (valid schemes: none, ...)`, or for a [`RESERVED`] name
/// `scheme "x" is not available yet (valid schemes: ...)`.
pub(crate) fn unknown_scheme_message(name: &str) -> String {
    if RESERVED.contains(&name) {
        format!("scheme \"{name}\" is not available yet (valid schemes: {})", SCHEMES.join(", "))
    } else {
        format!("unknown scheme \"{name}\" (valid schemes: {})", SCHEMES.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::validate;

    const MINIMAL: &str =
        "[topology]\nkind = \"star\"\nsenders = 2\n\n[[flows.list]]\nsrc = 0\ndst = 2\nsize = 1\n";

    /// The `[cc]` table `body` (line 10 on) loaded in a minimal scenario.
    fn load(body: &str) -> Result<CcChoice, String> {
        let text = format!("{MINIMAL}[cc]\n{body}");
        validate(&Source::new("t.toml", text), None).map(|v| v.cc).map_err(|e| e.to_string())
    }

    #[test]
    fn the_registry_is_consistent() {
        assert_eq!(
            SCHEMES,
            ["none", "hpcc", "hpcc-pint", "dcqcn", "dcqcn-w", "timely", "timely-w", "dctcp"]
        );
        for (i, s) in REGISTRY.iter().enumerate() {
            assert!(REGISTRY[..i].iter().all(|t| t.spec.name != s.spec.name), "{}", s.spec.name);
            let choice = (s.build)(&Params::default()).unwrap();
            assert_eq!(choice.name(), s.spec.name);
            // The "-w" variants are the plain scheme's factory with another profile.
            assert_eq!(choice.factory_name(), s.spec.name.trim_end_matches("-w"));
            assert_eq!(profile(s.spec.name), s.profile);
            assert_eq!(params_of(s.spec.name), s.spec.param_names());
        }
        assert_eq!(profile("no-such-scheme"), profile("none"));
        assert!(params_of("none").is_empty() && params_of("no-such-scheme").is_empty());
        assert_eq!(profile("dctcp").ecn, EcnDefault::Dctcp);
        assert!(profile("timely-w").ack_high_prio && !profile("dcqcn-w").ack_high_prio);
    }

    /// Each spec's default, written in a scenario, gives the plugin's default (defaults that
    /// scale with the line rate cannot be written and are skipped).
    #[test]
    fn spec_defaults_are_the_plugins_defaults() {
        let mut checked = 0;
        for s in REGISTRY {
            let default = format!("{:?}", (s.build)(&Params::default()).unwrap());
            for p in s.spec.params {
                let value = match p.kind {
                    Kind::Rate | Kind::Duration | Kind::Size | Kind::Choice(_) => {
                        format!("\"{}\"", p.default)
                    }
                    _ => p.default.to_string(),
                };
                if p.default.contains("bw") || p.default.contains("line rate") {
                    continue;
                }
                let body = format!("name = \"{}\"\n{} = {value}\n", s.spec.name, p.name);
                let c = load(&body).unwrap_or_else(|e| panic!("{}.{}: {e}", s.spec.name, p.name));
                assert_eq!(format!("{c:?}"), default, "{}.{}", s.spec.name, p.name);
                checked += 1;
            }
        }
        assert!(checked >= 25, "{checked}");
    }

    #[test]
    fn values_are_converted_by_kind() {
        let CcChoice::Timely(f) =
            load("name = \"timely\"\nalpha = 1\nt_low = \"1.5us\"\nrate_ai = \"1Gbps\"\n").unwrap()
        else {
            panic!()
        };
        assert_eq!(f.params.alpha, 1.0);
        assert_eq!(f.params.t_low, dcsim_core::units::Duration::from_ns(1500));
        assert_eq!(f.params.rate_ai, Some(BitsPerSec::gbps(1)));
        assert_eq!(
            load("name = \"hpcc\"\nfast_react = 1\n").unwrap_err(),
            "t.toml:11:14: field `cc.fast_react`: expected true or false, found integer"
        );
        assert_eq!(
            load("name = \"hpcc\"\neta = \"high\"\n").unwrap_err(),
            "t.toml:11:7: field `cc.eta`: expected a number, found string"
        );
        assert_eq!(
            load("name = \"dcqcn\"\nfast_recovery_times = 1.5\n").unwrap_err(),
            "t.toml:11:23: field `cc.fast_recovery_times`: expected a non-negative integer, \
             found float"
        );
        let e = load("name = \"dcqcn\"\nrp_timer = \"300\"\n").unwrap_err();
        assert_eq!(e, "t.toml:11:12: field `cc.rp_timer`: `300` needs a unit, e.g. \"1us\"");
    }

    #[test]
    fn errors_point_at_what_was_written() {
        // Unknown keys come first, whatever else is wrong.
        assert_eq!(
            load("name = \"dctcp\"\newma_gain = 0\nrp_timer = 1\n").unwrap_err(),
            "t.toml:12:12: field `cc.rp_timer`: unknown parameter `rp_timer` for scheme \"dctcp\" \
             (its parameters: `ewma_gain`, `rate_ai`, `min_rate`, \
             `reset_ecn_count_after_first_batch`)"
        );
        assert_eq!(
            load("name = \"none\"\nx = 1\n").unwrap_err(),
            "t.toml:11:5: field `cc.x`: unknown parameter `x` for scheme \"none\" \
             (its parameters: none)"
        );
        // A default in conflict with a written value: the written value that causes it.
        assert_eq!(
            load("name = \"timely\"\nalpha = 0.5\nt_high = \"10us\"\n").unwrap_err(),
            "t.toml:12:10: field `cc.t_high`: t_low (50000ns) must not exceed t_high (10000ns)"
        );
        assert_eq!(
            load("name = \"timely\"\nt_high = \"10us\"\nt_low = \"20us\"\n").unwrap_err(),
            "t.toml:12:9: field `cc.t_low`: t_low (20000ns) must not exceed t_high (10000ns)"
        );
    }
}
