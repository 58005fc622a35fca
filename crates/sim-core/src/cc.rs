//! The congestion-control plugin interface.
//!
//! A scheme is a [`CcFactory`] (one per run: its name, its header mode, how to build per-flow
//! state) and a [`CongestionControl`] (one per flow: reacts to ACK/NACK feedback and its own
//! timers by setting the flow's pacing rate and window). The core calls it statically: the
//! simulation is generic over the factory, and a CLI that offers several schemes wraps them in
//! an enum that dispatches with a `match` (see `dcsim-cli`).
//!
//! The order of calls on an ACK/NACK follows the reference (spec §2.4): the core first advances
//! `snd_una`, records completion, applies go-back-N for a NACK, then calls
//! [`CongestionControl::on_feedback`], then kicks the NIC scheduler.

use rand_chacha::ChaCha8Rng;

use crate::packet::{HeaderMode, IntStack};
use crate::units::{BitsPerSec, Duration, Time};

/// What one ACK or NACK tells the sender.
#[derive(Clone, Copy, Debug)]
pub struct Feedback<'a> {
    /// Cumulative acknowledged byte (`seq` of the ACK/NACK).
    pub ack: u64,
    /// This is a NACK.
    pub nack: bool,
    /// The data packet that triggered it was CE-marked.
    pub ecn: bool,
    /// The INT records the data packet collected (empty unless [`HeaderMode::Int`]).
    pub int: &'a IntStack,
    /// The data packet's sender timestamp (meaningful in [`HeaderMode::Timestamp`]).
    pub ts_echo: Time,
    /// The PINT digest the data packet collected (meaningful in [`HeaderMode::Pint`]).
    pub pint: u16,
}

/// Static facts about a flow, given to the factory when its queue pair is created.
#[derive(Clone, Copy, Debug)]
pub struct FlowInit {
    /// NIC line rate (the maximum pacing rate).
    pub line_rate: BitsPerSec,
    /// Base RTT used as the scheme's `T` (global or per pair, per the NIC config).
    pub base_rtt: Duration,
    /// BDP window in bytes (global or per pair), whether or not a window is in force.
    pub bdp: u64,
    /// Payload bytes per packet.
    pub mtu: u32,
    /// Flow size in bytes.
    pub size: u64,
    /// A seed for the flow's own random stream (derived from the run seed and the flow id), for
    /// schemes that draw random numbers.
    pub seed: u64,
}

/// A window law driven by INT probes, for a TCP connection whose controller does not read
/// ACKs for congestion (HPCC over TCP): once per RTT the sender sends a small probe on the
/// connection's path, every switch stamps an INT record on it, the receiver reflects it, and
/// the law turns the records into a congestion window.
///
/// Implemented by a scheme's crate (`dcsim-hpcc`'s `HpccProbeLaw`); called once per probe
/// echo, so it is dispatched dynamically.
pub trait ProbeLaw: Send + std::fmt::Debug {
    /// A probe echo arrived at `now` with the records `int`: the new congestion window in
    /// bytes, or `None` to keep the current one (e.g. the first probe only stores records).
    fn on_probe(&mut self, now: Time, int: &IntStack) -> Option<u64>;
    /// A copy of this law.
    fn clone_box(&self) -> Box<dyn ProbeLaw>;
}

impl Clone for Box<dyn ProbeLaw> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// Makes a [`ProbeLaw`] per TCP connection.
pub trait ProbeLawFactory: Send + Sync + std::fmt::Debug {
    /// The law's name (for summaries).
    fn name(&self) -> &str;
    /// The law of a new connection with facts `init`, and its initial congestion window in
    /// bytes. `ack_hold` is what the connection's receiver may hold delivered but not yet
    /// acknowledged (its delayed ACK: `(delack_segments − 1) × MSS`): bytes the sender's
    /// window counts that are no longer in the network.
    fn new_law(&self, init: &FlowInit, ack_hold: u64) -> (Box<dyn ProbeLaw>, u64);
}

/// A TCP group's probe-driven window control (see [`ProbeLaw`]).
#[derive(Clone, Debug)]
pub struct ProbeControl(pub std::sync::Arc<dyn ProbeLawFactory>);

impl PartialEq for ProbeControl {
    /// The same factory object.
    fn eq(&self, other: &ProbeControl) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Maximum number of timers a scheme can use per flow.
pub const MAX_TIMERS: usize = 4;

/// Requests a scheme makes of its flow's timers during a callback.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimerOp {
    /// Nothing.
    #[default]
    Keep,
    /// (Re)arm to fire at this time, replacing any pending expiry.
    Set(Time),
    /// Disarm.
    Cancel,
}

/// The sender's view of its flow, handed to every callback. The scheme reads the queue-pair
/// state and writes the new rate/window through it.
#[derive(Debug)]
pub struct CcCtx {
    /// Current time.
    pub now: Time,
    /// Next byte to send.
    pub snd_nxt: u64,
    /// First unacknowledged byte.
    pub snd_una: u64,
    /// Flow size.
    pub size: u64,
    /// NIC line rate.
    pub line_rate: BitsPerSec,
    pub(crate) rate: BitsPerSec,
    pub(crate) rate_set: Option<(BitsPerSec, bool)>,
    pub(crate) window: u64,
    pub(crate) timers: [TimerOp; MAX_TIMERS],
}

impl CcCtx {
    /// A context as the simulator builds it before a callback. Public so that schemes can be
    /// unit-tested (and driven by other simulators) outside dcsim's engine.
    pub fn new(
        now: Time,
        snd_nxt: u64,
        snd_una: u64,
        size: u64,
        line_rate: BitsPerSec,
        rate: BitsPerSec,
        window: u64,
    ) -> CcCtx {
        CcCtx {
            now,
            snd_nxt,
            snd_una,
            size,
            line_rate,
            rate,
            rate_set: None,
            window,
            timers: [TimerOp::Keep; MAX_TIMERS],
        }
    }

    /// The current pacing rate.
    pub fn rate(&self) -> BitsPerSec {
        self.rate
    }
    /// Overwrites the pacing rate; the next packet already scheduled keeps its send time
    /// (DCQCN, TIMELY, DCTCP in the reference).
    pub fn set_rate(&mut self, r: BitsPerSec) {
        self.rate = r;
        self.rate_set = Some((r, false));
    }
    /// Changes the pacing rate and re-times the already scheduled next send by the difference in
    /// the last packet's serialization time at the old and new rate (the reference's
    /// `ChangeRate`, used by HPCC, spec §2.2).
    pub fn change_rate(&mut self, r: BitsPerSec) {
        self.rate = r;
        self.rate_set = Some((r, true));
    }
    /// The configured window in bytes (0 = none); the NIC scales it with the rate in
    /// [`crate::config::WindowMode::Variable`].
    pub fn window(&self) -> u64 {
        self.window
    }
    /// Replaces the base window (bytes, 0 = none).
    pub fn set_window(&mut self, w: u64) {
        self.window = w;
    }
    /// Arms timer `id` (< [`MAX_TIMERS`]) to fire at `at`.
    pub fn set_timer(&mut self, id: usize, at: Time) {
        self.timers[id] = TimerOp::Set(at);
    }
    /// Disarms timer `id`.
    pub fn cancel_timer(&mut self, id: usize) {
        self.timers[id] = TimerOp::Cancel;
    }
    /// What the callback asked of timer `id` (for tests and embedders).
    pub fn timer_op(&self, id: usize) -> TimerOp {
        self.timers[id]
    }
    /// The rate the callback set, and whether it asked for re-timing (`change_rate`), if any.
    pub fn requested_rate(&self) -> Option<(BitsPerSec, bool)> {
        self.rate_set
    }
}

/// Per-flow congestion-control state. Every hook but [`on_feedback`](Self::on_feedback) has a
/// no-op default.
pub trait CongestionControl {
    /// An ACK or NACK arrived for this flow (also the one that completes it).
    fn on_feedback(&mut self, ctx: &mut CcCtx, fb: &Feedback<'_>);
    /// Timer `id` fired.
    fn on_timer(&mut self, _ctx: &mut CcCtx, _id: usize) {}
}

/// A congestion-control scheme: chosen once per run, builds per-flow state.
pub trait CcFactory: Sync {
    /// Per-flow state (`Send`, so that shards can run on other threads).
    type Cc: CongestionControl + Send;
    /// The scheme's name as used in scenarios.
    fn name(&self) -> &str;
    /// Which in-band header area data packets carry (and whether switches stamp INT).
    fn header_mode(&self) -> HeaderMode;
    /// Builds the state of a new flow.
    fn new_flow(&self, init: &FlowInit) -> Self::Cc;
    /// The digest a switch writes into a data packet that carries a PINT area
    /// ([`HeaderMode::Pint`]), from its egress port's utilisation `u` (the EWMA of
    /// [`crate::telemetry::PortUtil`]), drawing any randomness from the port's stream; the
    /// switch keeps the path maximum. Only schemes whose packets carry a digest need it (the
    /// codec is theirs: HPCC-PINT's lives in `dcsim-pint`); the default writes 0.
    fn pint_digest(&self, u: f64, rng: &mut ChaCha8Rng) -> u16 {
        let _ = (u, rng);
        0
    }
}

/// The `none` scheme: sends at line rate and never reacts; the window (if any) is whatever the
/// NIC config gives. For fabric tests and ideal-FCT checks.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoCc;

impl CongestionControl for NoCc {
    fn on_feedback(&mut self, _ctx: &mut CcCtx, _fb: &Feedback<'_>) {}
}

/// Factory for [`NoCc`].
#[derive(Clone, Copy, Debug, Default)]
pub struct NoCcFactory;

impl CcFactory for NoCcFactory {
    type Cc = NoCc;
    fn name(&self) -> &str {
        "none"
    }
    fn header_mode(&self) -> HeaderMode {
        HeaderMode::None
    }
    fn new_flow(&self, _init: &FlowInit) -> NoCc {
        NoCc
    }
}

/// The `none` scheme as front ends list it: [`NoCcFactory`] takes no parameters.
pub const NONE_SPEC: dcsim_types::params::PluginSpec = dcsim_types::params::PluginSpec {
    name: "none",
    summary: "sends at line rate and never reacts (for fabric tests)",
    params: &[],
};
