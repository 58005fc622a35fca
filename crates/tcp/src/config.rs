//! The transport parameters ([`TcpConfig`]), its two profiles and its parameter spec.

use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, PluginSpec};
use dcsim_types::Duration;

/// How the sender recovers from loss detected by duplicate ACKs or SACK.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Recovery {
    /// RFC 6582 NewReno: `recover` point, cwnd inflation by duplicate ACKs, a partial ACK
    /// retransmits the next hole and deflates, exit with `min(ssthresh, flight + MSS)`.
    NewReno,
    /// SACK scoreboard (RFC 6675 pipe; lost segments first, then new data), with PRR when
    /// [`TcpConfig::prr`] is on, as Linux does.
    Sack,
}

/// How a SACK sender decides that a segment is lost.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LossDetection {
    /// RACK (RFC 8985, Linux `tcp_recovery.c`, the only detector of Linux ≥ 4.18 with SACK): a
    /// segment is lost when one sent after it was delivered and it is older than the latest
    /// delivered segment's RTT plus a reordering window (0 once `dupthresh` segments are SACKed
    /// or during recovery, else min_RTT/4). Detects lost retransmissions too.
    Rack,
    /// RFC 6675 `IsLost`: more than `(dupthresh − 1)·MSS` bytes SACKed above the segment.
    DupThresh,
}

/// Which RTO formula the sender uses.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RtoMode {
    /// Linux `tcp_rtt_estimator`: RTO = SRTT + max(4·mdev over the last RTT, min_rto), with the
    /// smaller gain for decreasing samples; capped at `max_rto`.
    Linux,
    /// RFC 6298: RTO = SRTT + max(G, 4·RTTVAR) clamped to `[min_rto, max_rto]`.
    Rfc6298,
}

/// Whether data segments are paced.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Pacing {
    /// Only CCAs that ask for it (Prague), as Linux without the fq qdisc (`SK_PACING_NEEDED`).
    Auto,
    /// Every flow (Linux with fq or internal pacing forced).
    On,
    /// Never.
    Off,
}

/// ECN negotiation result for the connection.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EcnMode {
    /// Data is Not-ECT; CE never arrives.
    Off,
    /// RFC 3168: ECT(0) on new data, the receiver echoes ECE until it sees CWR, the sender
    /// reduces once per window and sets CWR.
    Classic,
    /// Accurate ECN stand-in: the receiver echoes its cumulative CE byte count in every ACK
    /// (`ace`), so the sender knows the CE bytes per ACK.
    Accurate,
}

impl EcnMode {
    /// The modes' names, in declaration order (`off`, `classic`, `accurate`), as scenarios
    /// and options spell them.
    pub const NAMES: &'static [&'static str] = &["off", "classic", "accurate"];

    /// The mode's name.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The mode named `name`, if any.
    pub fn from_name(name: &str) -> Option<EcnMode> {
        [EcnMode::Off, EcnMode::Classic, EcnMode::Accurate].into_iter().find(|m| m.name() == name)
    }
}

/// Whether a client reuses its connections between flows (requests) to the same server.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Reuse {
    /// Every flow opens a connection of its own (with [`TcpConfig::handshake`]).
    None,
    /// As Go's `net/http` client with one shared `Transport` that closes its idle connections
    /// after each response (ccafct's client): a flow takes an idle connection if there is one,
    /// else dials a new one and meanwhile takes whichever connection frees first (its own
    /// dial's, another flow's finished one, or another dial no longer wanted). The engine runs
    /// the pool; the endpoints carry a sequence of requests and responses on one connection,
    /// and with [`TcpConfig::slow_start_after_idle`] (the `linux` profile's default, as
    /// Linux's) the server restarts its window after an idle period longer than its RTO.
    /// (Before 2026-11-29 it did so whatever the setting, so `dc-newreno` with reuse ran
    /// differently then.)
    GoHttp,
}

impl Reuse {
    /// The policies' names, in declaration order, as scenarios and options spell them.
    pub const NAMES: &'static [&'static str] = &["none", "go-http"];

    /// The policy's name.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The policy named `name`, if any.
    pub fn from_name(name: &str) -> Option<Reuse> {
        [Reuse::None, Reuse::GoHttp].into_iter().find(|m| m.name() == name)
    }
}

/// Transport parameters. `Default` is the Linux profile ([`TcpConfig::linux`]).
#[derive(Clone, PartialEq, Debug)]
pub struct TcpConfig {
    /// Payload bytes per full segment. Linux: 1448 (1500 MTU − 40 − 12 B timestamps).
    pub mss: u32,
    /// Frame bytes around the payload of a data segment or ACK: Ethernet 14 + IP 20 + TCP 20 +
    /// timestamps 12 = 66 (so a full segment is 1514 B).
    pub header_bytes: u32,
    /// Frame bytes of a SYN or SYN-ACK without payload: 74 (TCP options MSS, SACK-permitted,
    /// timestamps, window scale).
    pub syn_frame_bytes: u32,
    /// Minimum frame size (Ethernet without FCS): 60.
    pub min_frame_bytes: u32,
    /// Initial window in segments (RFC 6928, Linux `TCP_INIT_CWND`): 10.
    pub iw: u32,
    /// Whether SACK is negotiated (receiver sends blocks; Linux `tcp_sack = 1`).
    pub sack: bool,
    /// Whether the timestamps option (RFC 7323) is used (Linux `tcp_timestamps = 1`): each
    /// segment carries its send time and each ACK echoes the receiver's `ts_recent`, so that an
    /// ACK of retransmitted data still gives an RTT sample (in whole milliseconds, Linux's
    /// timestamp clock), and with it the end of the RTO's backoff. The option's bytes are what
    /// `header_bytes` counts (66 for `linux`: Ethernet, IPv4, TCP and the 12-byte option).
    pub timestamps: bool,
    /// Whether the receiver's window limits the sender (Linux flow control, with the receive
    /// buffer autotuned as `tcp_moderate_rcvbuf = 1` does; see [`crate::rwnd`]). Off, the
    /// window is unlimited and the receiver ACKs as if it were always full grown.
    pub rwnd: bool,
    /// The receive buffer a connection starts with (Linux `tcp_rmem[1]`, 131 072 B): half of it
    /// is the initial window.
    pub rmem: u64,
    /// The largest receive buffer autotuning may reach (Linux `tcp_rmem[2]`, 6 MiB); it also
    /// sets the window scale.
    pub rmem_max: u64,
    /// Loss recovery algorithm.
    pub recovery: Recovery,
    /// Loss detection with SACK.
    pub loss_detection: LossDetection,
    /// Duplicate-ACK threshold (Linux `tcp_reordering = 3`).
    pub dupthresh: u32,
    /// RFC 3042 limited transmit for the NewReno recovery (implicit with SACK: SACKed segments
    /// leave the pipe).
    pub limited_transmit: bool,
    /// Proportional Rate Reduction (RFC 6937 as Linux `tcp_cwnd_reduction`) in recovery and CWR.
    pub prr: bool,
    /// Tail loss probe (RFC 8985 §7 as Linux `tcp_schedule_loss_probe`; needs SACK, as Linux).
    pub tlp: bool,
    /// F-RTO (RFC 5682, the SACK-enhanced version with SACK; Linux `tcp_frto = 2`): after a
    /// timeout, the first ACK that advances `snd_una` releases new data instead of more
    /// retransmissions, and an ACK of data never retransmitted marks the timeout spurious and
    /// undoes its reduction.
    pub frto: bool,
    /// The receiver ACKs once more than `delack_segments − 1` full segments are unacknowledged
    /// (Linux: 2).
    pub delack_segments: u32,
    /// Delayed-ACK timer (Linux `TCP_DELACK_MIN` = 40 ms).
    pub delack_timeout: Duration,
    /// Quick-ACK segments at connection start (Linux `TCP_MAX_QUICKACKS` = 16, bounded by
    /// rcv_wnd / 2·MSS, which the 64 KB initial window does not reach).
    pub quickack: u32,
    /// RTO formula.
    pub rto_mode: RtoMode,
    /// Lower bound of the RTO (Linux `TCP_RTO_MIN` = 200 ms).
    pub min_rto: Duration,
    /// Upper bound of the RTO (Linux `TCP_RTO_MAX` = 120 s).
    pub max_rto: Duration,
    /// RTO before the first RTT sample (RFC 6298, Linux `TCP_TIMEOUT_INIT` = 1 s); also the
    /// SYN and SYN-ACK retransmission timeout.
    pub initial_rto: Duration,
    /// Clock granularity G of the RFC 6298 formula (the simulator's clock: 0).
    pub clock_granularity: Duration,
    /// Slack added to the TLP timeout (when more than one segment is out) and to the RACK
    /// reordering timer (Linux `TCP_TIMEOUT_MIN` = 2 ms).
    pub timer_min: Duration,
    /// Pacing policy.
    pub pacing: Pacing,
    /// Pacing rate in slow start (cwnd < ssthresh/2), percent of cwnd/SRTT (Linux 200).
    pub pacing_ss_ratio: u32,
    /// Pacing rate otherwise, percent of cwnd/SRTT (Linux 120).
    pub pacing_ca_ratio: u32,
    /// ECN mode.
    pub ecn: EcnMode,
    /// Whether connections start with SYN / SYN-ACK / request.
    pub handshake: bool,
    /// Request payload the client sends with the handshake's third segment (100), and with
    /// each later request on a reused connection.
    pub request_bytes: u32,
    /// Connection reuse between the flows of a client and server ([`Reuse`]); anything but
    /// [`Reuse::None`] needs `handshake` and a request of at least one byte.
    pub reuse: Reuse,
    /// Linux `tcp_slow_start_after_idle` (RFC 5681 §4.1, RFC 2861): when the application
    /// writes to a connection that has had nothing in flight for longer than its RTO (a
    /// persistent connection's next message, a reused connection's next response), cwnd
    /// restarts from at most the initial window, halved once per RTO of idleness, with
    /// ssthresh at least ¾ of the old cwnd (`tcp_cwnd_restart`). Controllers that run the
    /// whole window (BBR, Prague, HPCC over TCP) keep theirs, as in Linux. The `linux` profile
    /// has it on (Linux's default); `dc-newreno` off, as data-center stacks commonly set it.
    /// The sysctl's other use, RFC 2861's decay of a window the sender leaves unused for an
    /// RTO (`tcp_cwnd_application_limited`), is not modelled (docs/tcp.md, "Not done yet").
    pub slow_start_after_idle: bool,
    /// Appropriate byte counting limit in slow start (RFC 3465 L, in segments per ACK);
    /// 0 = no limit, as Linux.
    pub abc: u32,
}

impl Default for TcpConfig {
    fn default() -> TcpConfig {
        TcpConfig {
            mss: 1448,
            header_bytes: 66,
            syn_frame_bytes: 74,
            min_frame_bytes: 60,
            iw: 10,
            sack: true,
            timestamps: true,
            rwnd: true,
            rmem: 131_072,
            rmem_max: 6 << 20,
            recovery: Recovery::Sack,
            loss_detection: LossDetection::Rack,
            dupthresh: 3,
            limited_transmit: true,
            prr: true,
            tlp: true,
            frto: true,
            delack_segments: 2,
            delack_timeout: Duration::from_ms(40),
            quickack: 16,
            rto_mode: RtoMode::Linux,
            min_rto: Duration::from_ms(200),
            max_rto: Duration::from_ms(120_000),
            initial_rto: Duration::from_ms(1000),
            clock_granularity: Duration::ZERO,
            timer_min: Duration::from_ms(2),
            pacing: Pacing::Auto,
            pacing_ss_ratio: 200,
            pacing_ca_ratio: 120,
            ecn: EcnMode::Off,
            handshake: false,
            request_bytes: 100,
            reuse: Reuse::None,
            slow_start_after_idle: true,
            abc: 0,
        }
    }
}

/// The shortest retransmission timer (`min_rto`, `initial_rto`) a connection may have:
/// [`dcsim_types::units::MIN_PERIOD`], 1 µs.
pub const MIN_TIMER: Duration = dcsim_types::units::MIN_PERIOD;

/// The longest timer or clock parameter [`TcpConfig::validate`] takes:
/// [`dcsim_types::units::TIME_LIMIT`] (2^62 ps, about 53 days), the bound the CLI puts on
/// every duration, so that a deadline (now plus the timer) cannot overflow.
pub const MAX_TIMER: Duration = dcsim_types::units::TIME_LIMIT;

/// The most header bytes [`TcpConfig::validate`] takes around a segment (`header_bytes`,
/// `syn_frame_bytes`, `min_frame_bytes`): 1 GiB, so that a frame's 32-bit size (headers, a
/// payload of at most 16 MiB and SACK blocks) cannot overflow. (The CLI refuses much less: a
/// group's frames must fit its MTU, with a message that says so.)
pub const MAX_HEADER_BYTES: u32 = 1 << 30;

/// The largest receive buffer [`TcpConfig::validate`] takes: 2 GiB, whose window (1 GiB) is the
/// most TCP's scaled 16-bit field can carry (65 535 << 14).
pub const MAX_RMEM: u64 = 1 << 31;

const PROFILES: &[&str] = &["linux", "dc-newreno"];
const RECOVERY: &[&str] = &["sack", "newreno"];
const LOSS_DETECTION: &[&str] = &["rack", "dupthresh"];
const RTO_MODES: &[&str] = &["linux", "rfc6298"];
const PACING: &[&str] = &["auto", "on", "off"];

/// The transport's parameters (defaults: the `linux` profile; `profile` picks the base).
pub const TCP_PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "profile",
        Kind::Choice(PROFILES),
        "linux",
        "base profile the other keys override",
    ),
    ParamSpec::new("mss", Kind::Size, "1448", "payload bytes per full segment"),
    ParamSpec::new("header_bytes", Kind::Size, "66", "frame bytes around a segment's payload"),
    ParamSpec::new("syn_frame_bytes", Kind::Size, "74", "frame bytes of a SYN or SYN-ACK"),
    ParamSpec::new("min_frame_bytes", Kind::Size, "60", "minimum frame size"),
    ParamSpec::new("iw", Kind::Integer, "10", "initial window, segments (RFC 6928)"),
    ParamSpec::new("sack", Kind::Bool, "true", "negotiate SACK (RFC 2018)"),
    ParamSpec::new(
        "timestamps",
        Kind::Bool,
        "true",
        "timestamps option (RFC 7323): RTT samples from echoed send times, in ms",
    ),
    ParamSpec::new(
        "rwnd",
        Kind::Bool,
        "true",
        "receive-window flow control with Linux's buffer autotuning",
    ),
    ParamSpec::new("rmem", Kind::Size, "131072", "initial receive buffer (tcp_rmem[1])"),
    ParamSpec::new("rmem_max", Kind::Size, "6MiB", "largest receive buffer (tcp_rmem[2])"),
    ParamSpec::new("recovery", Kind::Choice(RECOVERY), "sack", "loss recovery"),
    ParamSpec::new("loss_detection", Kind::Choice(LOSS_DETECTION), "rack", "SACK loss detection"),
    ParamSpec::new("dupthresh", Kind::Integer, "3", "duplicate-ACK threshold"),
    ParamSpec::new("limited_transmit", Kind::Bool, "true", "RFC 3042 limited transmit"),
    ParamSpec::new("prr", Kind::Bool, "true", "proportional rate reduction (RFC 6937)"),
    ParamSpec::new("tlp", Kind::Bool, "true", "tail loss probe (RFC 8985 §7; needs SACK)"),
    ParamSpec::new("frto", Kind::Bool, "true", "F-RTO after a timeout (RFC 5682, Linux tcp_frto)"),
    ParamSpec::new("delack_segments", Kind::Integer, "2", "ACK every N full segments"),
    ParamSpec::new("delack_timeout", Kind::Duration, "40ms", "delayed-ACK timer"),
    ParamSpec::new("quickack", Kind::Integer, "16", "segments ACKed at once at connection start"),
    ParamSpec::new("rto_mode", Kind::Choice(RTO_MODES), "linux", "RTO formula"),
    ParamSpec::new("min_rto", Kind::Duration, "200ms", "RTO lower bound"),
    ParamSpec::new("max_rto", Kind::Duration, "120s", "RTO upper bound"),
    ParamSpec::new("initial_rto", Kind::Duration, "1s", "RTO before an RTT sample; SYN timeout"),
    ParamSpec::new("clock_granularity", Kind::Duration, "0ns", "G in the RFC 6298 formula"),
    ParamSpec::new(
        "timer_min",
        Kind::Duration,
        "2ms",
        "TLP and RACK timer slack (TCP_TIMEOUT_MIN)",
    ),
    ParamSpec::new("pacing", Kind::Choice(PACING), "auto", "pace data: auto = if the CCA asks"),
    ParamSpec::new("pacing_ss_ratio", Kind::Integer, "200", "pacing % of cwnd/SRTT in slow start"),
    ParamSpec::new("pacing_ca_ratio", Kind::Integer, "120", "pacing % of cwnd/SRTT otherwise"),
    ParamSpec::new(
        "ecn",
        Kind::Choice(EcnMode::NAMES),
        "off",
        "ECN: off, classic (RFC 3168) or accurate",
    ),
    ParamSpec::new("handshake", Kind::Bool, "false", "SYN / SYN-ACK / request before data"),
    ParamSpec::new("request_bytes", Kind::Size, "100", "request payload sent by the client"),
    ParamSpec::new(
        "reuse",
        Kind::Choice(Reuse::NAMES),
        "none",
        "connections reused between flows: none, or as Go's net/http client (needs handshake)",
    ),
    ParamSpec::new(
        "slow_start_after_idle",
        Kind::Bool,
        "true",
        "restart cwnd after idling longer than the RTO (Linux tcp_slow_start_after_idle)",
    ),
    ParamSpec::new("abc", Kind::Integer, "0", "slow-start ABC limit L, segments (0 = none)"),
];

/// The transport as a plugin: name `tcp`.
pub const TCP_SPEC: PluginSpec = PluginSpec {
    name: "tcp",
    summary: "Linux-like TCP endpoint: SACK/RACK/PRR/TLP, delayed and quick ACKs, RTO, ECN, pacing",
    params: TCP_PARAMS,
};

impl TcpConfig {
    /// Linux defaults (the FCT-harm experiment): SACK with RACK and PRR, TLP, F-RTO, delayed ACK every
    /// 2 segments with quick-ACK start, 200 ms minimum RTO with Linux's RTO formula.
    pub fn linux() -> TcpConfig {
        TcpConfig::default()
    }

    /// The data-center NewReno of the buffer-sizing study: no SACK (so no TLP), no F-RTO, RFC 6582
    /// recovery, delayed ACK every 4 segments, RFC 6298 RTO with a 2 ms minimum, no ECN, no
    /// restart after idle, MSS 1460 in 1500-byte frames (IP MTU, no Ethernet header or
    /// timestamps counted).
    pub fn dc_newreno() -> TcpConfig {
        TcpConfig {
            mss: 1460,
            header_bytes: 40,
            syn_frame_bytes: 60,
            min_frame_bytes: 60,
            sack: false,
            timestamps: false,
            rwnd: false,
            recovery: Recovery::NewReno,
            loss_detection: LossDetection::DupThresh,
            prr: false,
            tlp: false,
            frto: false,
            delack_segments: 4,
            rto_mode: RtoMode::Rfc6298,
            min_rto: Duration::from_ms(2),
            ecn: EcnMode::Off,
            slow_start_after_idle: false,
            ..TcpConfig::default()
        }
    }

    /// The named profile (`"linux"` or `"dc-newreno"`).
    pub fn profile(name: &str) -> Option<TcpConfig> {
        match name {
            "linux" => Some(TcpConfig::linux()),
            "dc-newreno" => Some(TcpConfig::dc_newreno()),
            _ => None,
        }
    }

    /// Builds a configuration from parameters (see [`TCP_PARAMS`]): the profile, then each
    /// given key, then [`TcpConfig::validate`].
    ///
    /// # Errors
    /// A value out of range, naming the parameter.
    pub fn from_params(p: &Params) -> Result<TcpConfig, ParamError> {
        let base = p.choice("profile", "linux");
        let d = TcpConfig::profile(base)
            .ok_or_else(|| ParamError::new("profile", format!("unknown profile {base:?}")))?;
        let size32 = |name: &'static str, default: u32| -> Result<u32, ParamError> {
            let v = p.size(name, dcsim_types::Bytes(u64::from(default))).get();
            u32::try_from(v).map_err(|_| ParamError::new(name, format!("{v} bytes is too large")))
        };
        let c = TcpConfig {
            mss: size32("mss", d.mss)?,
            header_bytes: size32("header_bytes", d.header_bytes)?,
            syn_frame_bytes: size32("syn_frame_bytes", d.syn_frame_bytes)?,
            min_frame_bytes: size32("min_frame_bytes", d.min_frame_bytes)?,
            iw: p.u32("iw", d.iw)?,
            sack: p.bool("sack", d.sack),
            timestamps: p.bool("timestamps", d.timestamps),
            rwnd: p.bool("rwnd", d.rwnd),
            rmem: p.size("rmem", dcsim_types::Bytes(d.rmem)).get(),
            rmem_max: p.size("rmem_max", dcsim_types::Bytes(d.rmem_max)).get(),
            recovery: match p
                .choice("recovery", if d.recovery == Recovery::Sack { "sack" } else { "newreno" })
            {
                "newreno" => Recovery::NewReno,
                _ => Recovery::Sack,
            },
            loss_detection: match p.choice(
                "loss_detection",
                if d.loss_detection == LossDetection::Rack { "rack" } else { "dupthresh" },
            ) {
                "dupthresh" => LossDetection::DupThresh,
                _ => LossDetection::Rack,
            },
            dupthresh: p.u32("dupthresh", d.dupthresh)?,
            limited_transmit: p.bool("limited_transmit", d.limited_transmit),
            prr: p.bool("prr", d.prr),
            tlp: p.bool("tlp", d.tlp),
            frto: p.bool("frto", d.frto),
            delack_segments: p.u32("delack_segments", d.delack_segments)?,
            delack_timeout: p.duration("delack_timeout", d.delack_timeout),
            quickack: p.u32("quickack", d.quickack)?,
            rto_mode: match p
                .choice("rto_mode", if d.rto_mode == RtoMode::Linux { "linux" } else { "rfc6298" })
            {
                "rfc6298" => RtoMode::Rfc6298,
                _ => RtoMode::Linux,
            },
            min_rto: p.duration("min_rto", d.min_rto),
            max_rto: p.duration("max_rto", d.max_rto),
            initial_rto: p.duration("initial_rto", d.initial_rto),
            clock_granularity: p.duration("clock_granularity", d.clock_granularity),
            timer_min: p.duration("timer_min", d.timer_min),
            pacing: match p.choice("pacing", PACING[d.pacing as usize]) {
                "on" => Pacing::On,
                "off" => Pacing::Off,
                _ => Pacing::Auto,
            },
            pacing_ss_ratio: p.u32("pacing_ss_ratio", d.pacing_ss_ratio)?,
            pacing_ca_ratio: p.u32("pacing_ca_ratio", d.pacing_ca_ratio)?,
            ecn: EcnMode::from_name(p.choice("ecn", d.ecn.name())).unwrap_or(EcnMode::Off),
            handshake: p.bool("handshake", d.handshake),
            request_bytes: size32("request_bytes", d.request_bytes)?,
            reuse: Reuse::from_name(p.choice("reuse", d.reuse.name())).unwrap_or(Reuse::None),
            slow_start_after_idle: p.bool("slow_start_after_idle", d.slow_start_after_idle),
            abc: p.u32("abc", d.abc)?,
        };
        // Settings that would be ignored when given: refused (a profile's own defaults are
        // not checked here, so `sack = false` alone still turns the Linux profile's TLP off).
        if p.has("tlp") && c.tlp && !c.sack {
            return Err(ParamError::new("tlp", "needs sack = true (the probe is SACK-based)"));
        }
        c.validate()?;
        Ok(c)
    }

    /// Checks the ranges and the combinations: among them, `min_rto` and `initial_rto` (and so
    /// `max_rto`, which may not be below them) at least [`MIN_TIMER`].
    ///
    /// # Errors
    /// The first problem found, naming the parameter.
    pub fn validate(&self) -> Result<(), ParamError> {
        let positive = |name: &'static str, v: u64| {
            if v == 0 {
                Err(ParamError::new(name, "must be greater than 0"))
            } else {
                Ok(())
            }
        };
        positive("mss", u64::from(self.mss))?;
        if self.reuse != Reuse::None {
            if !self.handshake {
                return Err(ParamError::new(
                    "reuse",
                    "needs handshake = true (a reused connection is one a flow opened)",
                ));
            }
            if self.request_bytes == 0 {
                return Err(ParamError::new(
                    "reuse",
                    "needs request_bytes of at least 1 (each flow on a connection is a request)",
                ));
            }
        }
        positive("iw", u64::from(self.iw))?;
        positive("dupthresh", u64::from(self.dupthresh))?;
        positive("delack_segments", u64::from(self.delack_segments))?;
        positive("min_rto", self.min_rto.as_ps())?;
        positive("initial_rto", self.initial_rto.as_ps())?;
        // Timers shorter than a microsecond fire millions of times per simulated second per
        // connection (a 1 ps RTO made a 50 ms run take days): refused, as no stack uses them.
        for (name, v) in [("min_rto", self.min_rto), ("initial_rto", self.initial_rto)] {
            if v < MIN_TIMER {
                return Err(ParamError::new(name, format!("must be at least 1us, got {v}")));
            }
        }
        // Absurd magnitudes wrapped a deadline or a frame's size (silently, in release builds).
        // (`min_rto` and `initial_rto` may not exceed `max_rto`, checked below.)
        for (name, v) in [
            ("delack_timeout", self.delack_timeout),
            ("max_rto", self.max_rto),
            ("clock_granularity", self.clock_granularity),
            ("timer_min", self.timer_min),
        ] {
            if v > MAX_TIMER {
                return Err(ParamError::new(name, format!("{v} is longer than {MAX_TIMER}")));
            }
        }
        for (name, v) in [
            ("header_bytes", self.header_bytes),
            ("syn_frame_bytes", self.syn_frame_bytes),
            ("min_frame_bytes", self.min_frame_bytes),
        ] {
            if v > MAX_HEADER_BYTES {
                return Err(ParamError::new(
                    name,
                    format!("{v} B is more than {MAX_HEADER_BYTES} B"),
                ));
            }
        }
        // A frame of no bytes takes no time on the wire: every frame without payload (an ACK,
        // a SYN) must have some, from its headers or the padding.
        if self.header_bytes.max(self.min_frame_bytes) == 0 {
            return Err(ParamError::new(
                "header_bytes",
                "0 with min_frame_bytes = 0 makes an ACK a frame of 0 bytes, which takes no \
                 time on the wire: give either above 0",
            ));
        }
        if self.handshake && self.syn_frame_bytes.max(self.min_frame_bytes) == 0 {
            return Err(ParamError::new(
                "syn_frame_bytes",
                "0 with min_frame_bytes = 0 makes a SYN a frame of 0 bytes, which takes no \
                 time on the wire: give either above 0",
            ));
        }
        positive("pacing_ss_ratio", u64::from(self.pacing_ss_ratio))?;
        positive("pacing_ca_ratio", u64::from(self.pacing_ca_ratio))?;
        if self.min_rto > self.max_rto {
            return Err(ParamError::new(
                "min_rto",
                format!("must not exceed max_rto ({} > {})", self.min_rto, self.max_rto),
            ));
        }
        if self.initial_rto > self.max_rto {
            return Err(ParamError::new(
                "initial_rto",
                format!("must not exceed max_rto ({} > {})", self.initial_rto, self.max_rto),
            ));
        }
        if self.recovery == Recovery::Sack && !self.sack {
            return Err(ParamError::new("recovery", "\"sack\" recovery needs sack = true"));
        }
        // The buffer: room for a few segments at the start (Linux's clamp keeps one in
        // reserve and never goes below two), and a window the 30-bit field can scale.
        let min_rmem = 8 * (u64::from(self.mss) + 12);
        if self.rwnd && self.rmem < min_rmem {
            return Err(ParamError::new(
                "rmem",
                format!("must be at least 8 segments ({min_rmem} B), got {} B", self.rmem),
            ));
        }
        if self.rwnd && self.rmem_max < self.rmem {
            return Err(ParamError::new(
                "rmem_max",
                format!("must not be below rmem ({} B), got {} B", self.rmem, self.rmem_max),
            ));
        }
        if self.rwnd && self.rmem_max > MAX_RMEM {
            return Err(ParamError::new(
                "rmem_max",
                format!("must not exceed {MAX_RMEM} B (a 1 GiB window), got {} B", self.rmem_max),
            ));
        }
        if self.mss > 1 << 24 {
            return Err(ParamError::new("mss", format!("{} is larger than 16 MiB", self.mss)));
        }
        // The request (sent with the handshake) goes out as one segment.
        if self.handshake && self.request_bytes > self.mss {
            return Err(ParamError::new(
                "request_bytes",
                format!(
                    "must not exceed mss ({}): the request goes out in one segment, got {}",
                    self.mss, self.request_bytes
                ),
            ));
        }

        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dcsim_types::params::Value;

    #[test]
    fn profiles_differ_where_documented() {
        let l = TcpConfig::linux();
        let d = TcpConfig::dc_newreno();
        assert_eq!((l.mss, l.delack_segments, l.sack, l.timestamps), (1448, 2, true, true));
        assert_eq!((d.mss, d.delack_segments, d.sack, d.ecn), (1460, 4, false, EcnMode::Off));
        assert!(!d.timestamps);
        assert_eq!(d.min_rto, Duration::from_ms(2));
        assert!(l.slow_start_after_idle && !d.slow_start_after_idle);
        assert!(l.validate().is_ok() && d.validate().is_ok());
    }

    /// A receive buffer too small for a few segments, a largest one below the first, or one
    /// whose window the scaled field cannot carry, is refused, naming the field; with flow
    /// control off none of them is read, so none is checked.
    #[test]
    fn receive_buffers_are_checked_when_used() {
        let ok = TcpConfig::linux();
        assert_eq!(
            TcpConfig { rmem: 8 * 1460 - 1, ..ok.clone() }.validate().unwrap_err().field,
            "rmem"
        );
        assert!(TcpConfig { rmem: 8 * 1460, ..ok.clone() }.validate().is_ok());
        let c = TcpConfig { rmem_max: ok.rmem - 1, ..ok.clone() };
        assert_eq!(c.validate().unwrap_err().field, "rmem_max");
        let c = TcpConfig { rmem_max: MAX_RMEM + 1, ..ok.clone() };
        assert_eq!(c.validate().unwrap_err().field, "rmem_max");
        assert!(TcpConfig { rmem_max: MAX_RMEM, ..ok.clone() }.validate().is_ok());
        assert!(TcpConfig { rwnd: false, rmem: 0, rmem_max: 0, ..ok }.validate().is_ok());
    }

    /// Timers whose deadlines would overflow, and headers whose frames would, are refused
    /// (a deadline or a frame size wrapped before), naming the field; the bounds themselves
    /// are taken.
    #[test]
    fn absurd_timers_and_headers_are_refused() {
        let ok = TcpConfig::linux();
        let mut c = ok.clone();
        c.delack_timeout = Duration::from_ps(u64::MAX);
        assert_eq!(c.validate().unwrap_err().field, "delack_timeout");
        let mut c = ok.clone();
        c.max_rto = Duration::from_ps(u64::MAX);
        c.initial_rto = Duration::from_ps(u64::MAX);
        assert_eq!(c.validate().unwrap_err().field, "max_rto");
        let mut c = ok.clone();
        c.header_bytes = u32::MAX - 100;
        assert_eq!(c.validate().unwrap_err().field, "header_bytes");
        let mut c = ok.clone();
        c.syn_frame_bytes = MAX_HEADER_BYTES + 1;
        assert_eq!(c.validate().unwrap_err().field, "syn_frame_bytes");
        let mut c = ok.clone();
        c.max_rto = MAX_TIMER;
        c.header_bytes = MAX_HEADER_BYTES;
        assert!(c.validate().is_ok());
    }

    /// A frame without payload has some bytes (0-byte ACKs and SYNs took no time on the
    /// wire); headers of 0 are taken when the padding gives the frame its size.
    #[test]
    fn frames_without_payload_are_not_empty() {
        let mut c = TcpConfig::linux();
        (c.header_bytes, c.min_frame_bytes) = (0, 0);
        assert_eq!(c.validate().unwrap_err().field, "header_bytes");
        c.header_bytes = 1;
        assert!(c.validate().is_ok());
        (c.header_bytes, c.min_frame_bytes) = (0, 60);
        assert!(c.validate().is_ok());
        let mut c = TcpConfig::linux();
        (c.syn_frame_bytes, c.min_frame_bytes, c.handshake) = (0, 0, true);
        assert_eq!(c.validate().unwrap_err().field, "syn_frame_bytes");
        c.handshake = false;
        assert!(c.validate().is_ok());
    }

    #[test]
    fn params_override_the_profile_and_errors_name_the_field() {
        let p = Params::from_values(
            TCP_PARAMS,
            vec![("profile", Value::Choice("dc-newreno")), ("delack_segments", Value::Integer(8))],
        );
        let c = TcpConfig::from_params(&p).unwrap();
        assert_eq!((c.mss, c.delack_segments), (1460, 8));

        let p = Params::from_values(TCP_PARAMS, vec![("mss", Value::Size(dcsim_types::Bytes(0)))]);
        assert_eq!(TcpConfig::from_params(&p).unwrap_err().field, "mss");
        let p = Params::from_values(TCP_PARAMS, vec![("min_rto", Value::Duration(Duration::ZERO))]);
        assert_eq!(TcpConfig::from_params(&p).unwrap_err().field, "min_rto");
        let p = Params::from_values(
            TCP_PARAMS,
            vec![
                ("min_rto", Value::Duration(Duration::from_ms(5))),
                ("max_rto", Value::Duration(Duration::from_ms(4))),
            ],
        );
        let e = TcpConfig::from_params(&p).unwrap_err();
        assert_eq!(e.field, "min_rto");
        assert!(e.message.contains("max_rto"), "{e}");
        let p = Params::from_values(TCP_PARAMS, vec![("sack", Value::Bool(false))]);
        assert_eq!(TcpConfig::from_params(&p).unwrap_err().field, "recovery");
        for m in [EcnMode::Off, EcnMode::Classic, EcnMode::Accurate] {
            let p = Params::from_values(TCP_PARAMS, vec![("ecn", Value::Choice(m.name()))]);
            assert_eq!(TcpConfig::from_params(&p).unwrap().ecn, m);
            assert_eq!(EcnMode::from_name(m.name()), Some(m));
        }
        assert_eq!(EcnMode::Accurate.name(), "accurate");
        assert_eq!(EcnMode::from_name("on"), None);

        let reuse = ("reuse", Value::Choice("go-http"));
        let p = Params::from_values(TCP_PARAMS, vec![reuse]);
        assert_eq!(TcpConfig::from_params(&p).unwrap_err().field, "reuse");
        let p = Params::from_values(TCP_PARAMS, vec![reuse, ("handshake", Value::Bool(true))]);
        assert_eq!(TcpConfig::from_params(&p).unwrap().reuse, Reuse::GoHttp);

        // The profile's restart after idle, and the key that overrides it.
        let ssai = |v: Vec<(&'static str, Value)>| {
            TcpConfig::from_params(&Params::from_values(TCP_PARAMS, v))
                .unwrap()
                .slow_start_after_idle
        };
        assert!(ssai(vec![]));
        assert!(!ssai(vec![("slow_start_after_idle", Value::Bool(false))]));
        assert!(!ssai(vec![("profile", Value::Choice("dc-newreno"))]));
        let on = ("slow_start_after_idle", Value::Bool(true));
        assert!(ssai(vec![("profile", Value::Choice("dc-newreno")), on]));
    }

    #[test]
    fn every_param_in_the_spec_is_read() {
        // A spec key that from_params ignored would silently keep its default.
        for spec in TCP_PARAMS {
            assert!(TCP_SPEC.param(spec.name).is_some());
        }
        assert_eq!(TCP_SPEC.params.len(), 36);
    }
}
