//! Connection reuse ([`Reuse::GoHttp`]): a client sends requests one after another on one
//! connection, the server answers each with the size it asks for, and the server's window
//! carries over from one response to the next unless the connection was idle for longer than
//! the RTO (Linux `tcp_slow_start_after_idle`).

use dcsim_tcp::cca::cubic::CubicConfig;
use dcsim_tcp::{CcaConfig, Receiver, Reuse, Segment, Sender, TcpConfig};
use dcsim_types::{Duration, Time};

/// One direction's segments in flight: each arrives `delay` after it was sent (no queue, no
/// rate: the server's whole window leaves at once).
#[derive(Default)]
struct Wire {
    /// (arrival, send order, towards the server, segment)
    inflight: Vec<(Time, u64, bool, Segment)>,
    sent: u64,
}

impl Wire {
    fn send(&mut self, at: Time, to_server: bool, seg: Segment) {
        self.inflight.push((at, self.sent, to_server, seg));
        self.sent += 1;
    }
    fn next(&mut self) -> Option<(Time, bool, Segment)> {
        let i =
            (0..self.inflight.len()).min_by_key(|&i| (self.inflight[i].0, self.inflight[i].1))?;
        let (t, _, s, seg) = self.inflight.swap_remove(i);
        Some((t, s, seg))
    }
    fn first_arrival(&self) -> Option<Time> {
        self.inflight.iter().map(|e| e.0).min()
    }
}

/// What the server sent: each data segment's send time and sequence number.
struct Trace {
    data: Vec<(Time, u64)>,
    done: Vec<Time>,
    client: Receiver,
    server: Sender,
}

/// Runs a client that asks for `sizes` one after another on one connection, each request
/// `gap` after the previous response completed (the first once the handshake completes).
fn exchange(sizes: &[u64], delay: Duration, gap: Duration) -> Trace {
    exchange_with(TcpConfig::linux(), sizes, delay, gap)
}

/// [`exchange`] with the server and client of `base` (reuse and the handshake turned on).
fn exchange_with(base: TcpConfig, sizes: &[u64], delay: Duration, gap: Duration) -> Trace {
    let cfg = TcpConfig { handshake: true, reuse: Reuse::GoHttp, ..base };
    let cca = CcaConfig::Cubic(CubicConfig::default());
    let mut server = Sender::new(&cfg, cca, 0, Time::ZERO);
    let mut client = Receiver::new(&cfg, 0);
    let mut wire = Wire::default();
    let mut data = Vec::new();
    let mut done = Vec::new();
    let (mut asked, mut answered) = (0usize, 0usize);
    let mut next_request: Option<Time> = None;
    let mut now = Time::ZERO;
    client.connect(now);
    for _ in 0..1_000_000 {
        while let Some(s) = client.poll_transmit(now) {
            wire.send(now + delay, true, s);
        }
        while let Some(s) = server.poll_transmit(now) {
            if s.len > 0 {
                data.push((now, s.seq));
            }
            wire.send(now + delay, false, s);
        }
        let timers = [client.deadline(), server.deadline(), next_request];
        let t_timer = timers.into_iter().flatten().min();
        let t_seg = wire.first_arrival();
        match (t_seg, t_timer) {
            (Some(a), b) if b.is_none_or(|b| a <= b) => {
                let (t, to_server, seg) = wire.next().unwrap();
                now = t;
                if to_server {
                    server.on_segment(now, &seg);
                    for _ in 0..server.take_requests() {
                        server.write(now, sizes[answered]);
                        answered += 1;
                    }
                } else {
                    let was = client.is_established();
                    client.on_segment(now, &seg);
                    if !was && client.is_established() {
                        next_request = Some(now);
                    }
                    if asked > 0 && done.len() < asked && client.delivered() >= client.total_bytes()
                    {
                        done.push(now);
                        if asked < sizes.len() {
                            next_request = Some(now + gap);
                        }
                    }
                }
            }
            (_, Some(b)) | (Some(b), None) => {
                // (`Some(b), None` cannot happen: the first arm takes it.)
                now = b;
                if next_request.is_some_and(|r| r <= now) {
                    next_request = None;
                    client.request(now, sizes[asked]);
                    asked += 1;
                }
                client.on_deadline(now);
                server.on_deadline(now);
            }
            (None, None) => break,
        }
    }
    Trace { data, done, client, server }
}

/// The segments the server sent in the instant the first byte of `at_seq` left.
fn burst_at(t: &Trace, at_seq: u64) -> usize {
    let start = t.data.iter().find(|d| d.1 == at_seq).expect("sent").0;
    t.data.iter().filter(|d| d.0 == start).count()
}

#[test]
fn requests_follow_each_other_on_one_connection_and_the_window_carries_over() {
    let mss = 1448;
    let sizes = [200 * mss, 100 * mss];
    let t = exchange(&sizes, Duration::from_ms(5), Duration::ZERO);
    assert_eq!(t.done.len(), 2, "both responses complete");
    assert_eq!(t.client.delivered(), sizes.iter().sum::<u64>());
    assert!(t.server.is_complete());
    // The first response starts from the initial window; the second from the window the
    // first ended with, far above it (slow start grew it past 100 segments, and nothing was
    // lost).
    assert_eq!(burst_at(&t, 0), 10);
    let second = burst_at(&t, sizes[0]);
    assert_eq!(second, 100, "the whole second response leaves in one flight");
    assert_eq!(t.server.stats().idle_restarts, 0);
    // Each response is one round trip after its request: the second takes one flight.
    let took = t.done[1] - t.done[0];
    assert!(took < Duration::from_ms(11), "the second response took {took}");
}

#[test]
fn a_connection_idle_for_longer_than_the_rto_restarts_from_the_initial_window() {
    let mss = 1448;
    let sizes = [200 * mss, 100 * mss];
    // The RTO is at least 200 ms; 1.5 s of idleness is more than four RTOs.
    let t = exchange(&sizes, Duration::from_ms(5), Duration::from_ms(1500));
    assert_eq!(t.done.len(), 2);
    assert_eq!(burst_at(&t, sizes[0]), 10, "restarted from the initial window");
    assert_eq!(t.server.stats().idle_restarts, 1);
    // Just below the RTO (at least 200 ms): no restart.
    let t = exchange(&sizes, Duration::from_ms(5), Duration::from_ms(150));
    let b = burst_at(&t, sizes[0]);
    assert_eq!(b, 100, "RTO {}", t.server.rto());
    assert_eq!(t.server.stats().idle_restarts, 0);
}

/// `tcp_cwnd_restart`'s halving: a window idle for more than `n` RTOs (and at most `n + 1`) is
/// halved `n` times, down to (never below) the initial window. With
/// `slow_start_after_idle = false` (the `dc-newreno` profile's setting) the window persists
/// however long the idleness.
#[test]
fn an_idle_window_is_halved_per_rto_down_to_the_initial_window_unless_turned_off() {
    let mss = 1448;
    // The first response grows the window to 210 segments (slow start from 10, every
    // segment ACKed in time, nothing lost); the second is large enough to show the window.
    let sizes = [200 * mss, 400 * mss];
    let grown = exchange(&sizes[..1], Duration::from_ms(5), Duration::ZERO).server.cwnd() / mss;
    assert!(grown >= 200, "the first response ends with a window of {grown} segments");
    let rto = exchange(&sizes[..1], Duration::from_ms(5), Duration::ZERO).server.rto();
    for (idle_rtos, expect) in [(1.5, grown / 2), (2.5, grown / 4), (3.5, grown / 8), (9.5, 10)] {
        let gap = Duration::from_ps((rto.as_ps() as f64 * idle_rtos) as u64);
        // The server's idleness runs from its last data segment: the response's last
        // segment, its ACK and the next request add two one-way delays to the client's gap.
        let gap = gap - Duration::from_ms(10);
        let t = exchange(&sizes, Duration::from_ms(5), gap);
        assert_eq!(t.done.len(), 2);
        let b = burst_at(&t, sizes[0]) as u64;
        assert_eq!(b, expect.max(10), "{idle_rtos} RTOs idle");
        assert_eq!(t.server.stats().idle_restarts, 1, "{idle_rtos} RTOs idle");
        // Nothing was lost, so ssthresh is still infinite: max(ssthresh, ¾ cwnd) keeps it (the
        // finite case is the sender's unit test).
        assert_eq!(t.server.ssthresh(), u64::MAX, "{idle_rtos} RTOs idle");
    }
    let off = TcpConfig { slow_start_after_idle: false, ..TcpConfig::linux() };
    let t = exchange_with(off, &sizes, Duration::from_ms(5), Duration::from_ms(5000));
    assert_eq!(burst_at(&t, sizes[0]) as u64, grown, "the window persists");
    assert_eq!(t.server.stats().idle_restarts, 0);
    assert!(!TcpConfig::dc_newreno().slow_start_after_idle);
}

#[test]
fn reuse_needs_a_handshake_and_a_request() {
    let c = TcpConfig { reuse: Reuse::GoHttp, ..TcpConfig::linux() };
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("reuse") && e.contains("handshake"), "{e}");
    let c = TcpConfig { handshake: true, request_bytes: 0, ..c };
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("request_bytes"), "{e}");
    assert!(TcpConfig { handshake: true, request_bytes: 100, ..c }.validate().is_ok());
    assert_eq!(Reuse::from_name("go-http"), Some(Reuse::GoHttp));
    assert_eq!(Reuse::from_name("none"), Some(Reuse::None));
}
