//! # dcsim-tcp
//!
//! A TCP endpoint written sans-IO: it is driven by segments and timer expiries and returns the
//! segments to send, with no notion of links or events, so the engine (`dcsim-core`) or a test
//! can drive it.
//!
//! The model follows Linux rather than the RFCs where they differ (see `docs/tcp.md`): SACK
//! with RACK loss detection and PRR, tail loss probes, F-RTO and the undo of spurious
//! reductions, quick-ACK at connection start, delayed ACKs every two segments, Linux's RTO
//! formula, the receive window, CUBIC with HyStart, DCTCP, Prague v0.6 and BBR v1.
//! The `dc-newreno` profile is the RFC-style NewReno of the buffer-sizing study.
//!
//! ## Driving it
//!
//! ```
//! use dcsim_tcp::{cca::{CcaConfig, CubicConfig}, Readiness, Receiver, Sender, TcpConfig};
//! use dcsim_types::{Duration, Time};
//!
//! let cfg = TcpConfig::linux();
//! let mut tx = Sender::new(&cfg, CcaConfig::Cubic(CubicConfig::default()), 10_000, Time::ZERO);
//! let mut rx = Receiver::new(&cfg, 10_000);
//! let mut now = Time::ZERO;
//! // A lossless path with 1 ms each way: deliver every segment, then every ACK.
//! while !tx.is_complete() {
//!     let mut data = Vec::new();
//!     while tx.readiness(now) == Readiness::Now {
//!         data.push(tx.poll_transmit(now).expect("ready"));
//!     }
//!     now += Duration::from_ms(1);
//!     let mut acks = Vec::new();
//!     for seg in &data {
//!         rx.on_segment(now, seg);
//!         while let Some(a) = rx.poll_transmit(now) {
//!             acks.push(a);
//!         }
//!     }
//!     now += Duration::from_ms(1);
//!     for a in &acks {
//!         tx.on_segment(now, a);
//!     }
//! }
//! assert!(rx.is_complete());
//! assert_eq!(tx.stats().retrans_segments, 0);
//! ```
#![warn(missing_docs)]

pub mod cca;
pub mod config;
pub mod receiver;
pub mod rtt;
pub mod rwnd;
pub mod segment;
pub mod sender;

pub use cca::{cca_spec, Cca, CcaConfig, CongestionControl, RateSample, CCA_SPECS};
pub use config::{EcnMode, LossDetection, Pacing, Recovery, Reuse, RtoMode, TcpConfig, TCP_SPEC};
pub use receiver::{Receiver, ReceiverStats};
pub use segment::{Flags, SackBlocks, Segment};
pub use sender::{Readiness, Sender, SenderStats};
