//! A controller that leaves the window to something outside the socket: a probe-driven law
//! such as HPCC over TCP (see `dcsim_core::cc::ProbeLaw`), which sets cwnd with
//! [`crate::Sender::set_cwnd`] once per RTT from INT telemetry.
//!
//! The socket keeps its loss detection and recovery (retransmissions, RTO with cwnd = one
//! segment plus what is in flight); between two window settings ACKs do not grow the window and
//! a loss does not shrink it further (the next probe's window already reflects the queue that
//! caused it). `ssthresh` still records half the flight size, for the socket's bookkeeping.

use super::{AckSample, Congestion, CongestionControl, Window};

/// The external controller (no parameters).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct External;

impl CongestionControl for External {
    fn increase(&mut self, _w: &mut Window, _ack: &AckSample) {}

    fn ssthresh(&mut self, w: &Window, _cause: Congestion, in_flight: u64) -> u64 {
        (in_flight / 2).max(2 * w.mss)
    }

    /// The window is the outside law's: an undo leaves it as it is.
    fn undo_cwnd(&mut self, w: &Window, _prior_cwnd: u64) -> u64 {
        w.cwnd
    }

    fn owns_window(&self) -> bool {
        true
    }
}
