//! How far a long `dcsim run` has got: a progress bar on a terminal, a status line every
//! [`STATUS_EVERY`] otherwise (a log file, a batch job), nothing with `--quiet`.

use std::io::{IsTerminal, Write};
use std::time::Duration as WallDuration;

use dcsim_core::units::Duration;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::schemes::{Progress, ProgressFn};
use crate::units::HumanDuration;

/// How often a status line is printed when stderr is not a terminal.
pub const STATUS_EVERY: WallDuration = WallDuration::from_secs(10);

/// The reporter for a run: a bar on a terminal, status lines otherwise.
pub(crate) fn reporter() -> ProgressFn {
    if std::io::stderr().is_terminal() {
        bar()
    } else {
        status_lines(Box::new(std::io::stderr()), STATUS_EVERY)
    }
}

/// A bar over the stop time, with the simulated time, the event rate and the time left.
fn bar() -> ProgressFn {
    let bar = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    Box::new(move |p: &Progress| {
        if p.done {
            bar.finish_and_clear();
            return;
        }
        bar.set_position((fraction(p) * 1000.0) as u64);
        bar.set_message(describe(p));
    })
}

/// A line to `out` at most every `every` of wall-clock time (and none for a run shorter
/// than that).
pub(crate) fn status_lines(mut out: Box<dyn Write + Send>, every: WallDuration) -> ProgressFn {
    let mut next = every;
    Box::new(move |p: &Progress| {
        if p.done || p.wall < next {
            return;
        }
        while next <= p.wall {
            next += every;
        }
        let _ = writeln!(out, "dcsim run: {}", describe(p));
    })
}

/// The fraction of the stop time simulated.
fn fraction(p: &Progress) -> f64 {
    if p.stop.as_ps() == 0 {
        1.0
    } else {
        (p.now.as_ps() as f64 / p.stop.as_ps() as f64).clamp(0.0, 1.0)
    }
}

/// `12.3 ms of 100 ms simulated (12.3%), 45600000 events, 5.1 M events/s, at most 1m12s left`.
pub(crate) fn describe(p: &Progress) -> String {
    let f = fraction(p);
    let wall = p.wall.as_secs_f64();
    let rate = if wall > 0.0 { p.events as f64 / wall } else { 0.0 };
    // The run may end before its stop time (when every flow is done), so this is a bound.
    let left = if f > 0.0 && wall > 0.0 {
        format!(", at most {} left", clock(wall * (1.0 - f) / f))
    } else {
        String::new()
    };
    format!(
        "{} of {} simulated ({:.1}%), {} events, {:.2} M events/s{left}",
        HumanDuration(Duration::from_ps(p.now.as_ps())),
        HumanDuration(Duration::from_ps(p.stop.as_ps())),
        f * 100.0,
        p.events,
        rate / 1e6,
    )
}

/// `1h02m03s`, `2m05s`, `42s`.
fn clock(secs: f64) -> String {
    let s = secs.round().min(1e9) as u64;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, m, s) => format!("{h}h{m:02}m{s:02}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dcsim_core::units::Time;
    use std::sync::{Arc, Mutex};

    /// A writer into a shared buffer.
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn at(now_ms: u64, wall_s: u64, done: bool) -> Progress {
        Progress {
            now: Time::from_ns(now_ms * 1_000_000),
            stop: Time::from_ns(100_000_000),
            events: wall_s * 5_000_000,
            wall: WallDuration::from_secs(wall_s),
            done,
        }
    }

    #[test]
    fn status_lines_come_every_interval_with_rate_and_time_left() {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let mut f = status_lines(Box::new(Shared(buf.clone())), WallDuration::from_secs(10));
        for (ms, s) in [(1, 3), (4, 9), (10, 10), (12, 12), (25, 25), (30, 31)] {
            f(&at(ms, s, false));
        }
        f(&at(40, 45, true));
        let text = String::from_utf8(buf.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(
            lines[0],
            "dcsim run: 10 ms of 100 ms simulated (10.0%), 50000000 events, 5.00 M events/s, \
             at most 1m30s left"
        );
        assert!(lines[1].starts_with("dcsim run: 25 ms of 100 ms simulated (25.0%)"));
        assert!(lines[2].contains("at most 1m12s left"), "{}", lines[2]);
    }

    #[test]
    fn clocks() {
        assert_eq!(clock(42.4), "42s");
        assert_eq!(clock(125.0), "2m05s");
        assert_eq!(clock(3723.0), "1h02m03s");
    }
}
