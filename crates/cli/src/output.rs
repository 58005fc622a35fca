//! Result files: `fct.csv`, `unfinished.csv` and `counters.csv`, and when asked for `pfc.csv`,
//! `qlen.csv` and `qlen_hist.csv`, rendered in memory and written atomically (a hidden
//! temporary file in the same folder, then a rename); a command's files as a set
//! ([`Staged`]: all written before any is renamed into place).
//!
//! Times are picoseconds internally and printed in nanoseconds with up to three decimals
//! ([`format_ps_as_ns`]); slowdowns with six decimals. The last column of `fct.csv` and
//! `unfinished.csv` is the flow's destination port (`dport`: 100 background, 200 incast by
//! convention), so that analysis can tell the two apart. New columns are only ever appended.

use std::path::{Path, PathBuf};

use dcsim_core::qmon::{PortQueue, THRESHOLDS};
use dcsim_core::{
    BarrierWait, Counters, FlowResult, PfcEvent, RunSummary, ShardWindow, WindowTrace,
};

use crate::error::CliError;
use crate::units::format_ps_as_ns;

/// Header of `fct.csv`.
pub const FCT_HEADER: [&str; 10] = [
    "flow_id",
    "src",
    "dst",
    "size_bytes",
    "start_ns",
    "fct_ns",
    "ideal_fct_ns",
    "slowdown",
    "ref_ideal_fct_ns",
    "dport",
];

/// Header of `unfinished.csv`. `reason`: `running` (the run stopped before the flow
/// completed; it may not even have started) or `retries-exhausted` (the RoCE sender gave up
/// after its retransmission timeouts, at `gave_up_ns`).
pub const UNFINISHED_HEADER: [&str; 10] = [
    "flow_id",
    "src",
    "dst",
    "size_bytes",
    "start_ns",
    "ideal_fct_ns",
    "ref_ideal_fct_ns",
    "dport",
    "reason",
    "gave_up_ns",
];

fn csv_text<'a, R: AsRef<[String]>>(
    header: impl AsRef<[&'a str]>,
    rows: impl Iterator<Item = R>,
) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    // Writing to a Vec cannot fail, and every record has the header's length.
    w.write_record(header.as_ref()).expect("in-memory CSV");
    for r in rows {
        w.write_record(r.as_ref()).expect("in-memory CSV");
    }
    let bytes = w.into_inner().expect("in-memory CSV");
    String::from_utf8(bytes).expect("CSV of ASCII fields")
}

fn sorted(results: &[FlowResult]) -> Vec<&FlowResult> {
    let mut v: Vec<&FlowResult> = results.iter().collect();
    v.sort_by_key(|r| r.id);
    v
}

/// The destination port of flow `r` from `dports` (indexed by flow id).
fn dport(dports: &[u16], r: &FlowResult) -> String {
    dports.get(r.id.idx()).map_or_else(String::new, u16::to_string)
}

/// `fct.csv`: one row per completed flow, by flow id. `dports[i]` is flow `i`'s destination
/// port (the scenario's flows, indexed by id).
pub fn fct_csv(results: &[FlowResult], dports: &[u16]) -> String {
    let rows = sorted(results).into_iter().filter_map(|r| {
        let fct = r.fct?;
        let slowdown = r.slowdown().map_or_else(String::new, |s| format!("{s:.6}"));
        Some([
            r.id.to_string(),
            r.src.to_string(),
            r.dst.to_string(),
            r.size.to_string(),
            format_ps_as_ns(r.start.as_ps()),
            format_ps_as_ns(fct.as_ps()),
            format_ps_as_ns(r.ideal_fct.as_ps()),
            slowdown,
            format_ps_as_ns(r.ref_ideal_fct.as_ps()),
            dport(dports, r),
        ])
    });
    csv_text(FCT_HEADER, rows)
}

/// `unfinished.csv`: one row per flow that did not complete, by flow id; `None` if every flow
/// completed. `dports` as for [`fct_csv`].
pub fn unfinished_csv(results: &[FlowResult], dports: &[u16]) -> Option<String> {
    if results.iter().all(|r| r.fct.is_some()) {
        return None;
    }
    let rows = sorted(results).into_iter().filter(|r| r.fct.is_none()).map(|r| {
        [
            r.id.to_string(),
            r.src.to_string(),
            r.dst.to_string(),
            r.size.to_string(),
            format_ps_as_ns(r.start.as_ps()),
            format_ps_as_ns(r.ideal_fct.as_ps()),
            format_ps_as_ns(r.ref_ideal_fct.as_ps()),
            dport(dports, r),
            if r.gave_up.is_some() { "retries-exhausted" } else { "running" }.to_string(),
            r.gave_up.map_or_else(String::new, |t| format_ps_as_ns(t.as_ps())),
        ]
    });
    Some(csv_text(UNFINISHED_HEADER, rows))
}

/// Every counter as `(name, value)`, followed by `end_time_ns`, `flows_done` and
/// `flows_unfinished`. The counters after [`Counters::BASE`] (queue disciplines, TCP) are
/// listed only where non-zero; [`counter_rows_all`] lists them all.
pub fn counter_rows(c: &Counters, s: &RunSummary) -> Vec<(&'static str, String)> {
    counter_rows_with(c, s, false)
}

/// Like [`counter_rows`], but every counter, for runs that use TCP or queue disciplines (so
/// that their `counters.csv` always has the same rows).
pub fn counter_rows_all(c: &Counters, s: &RunSummary) -> Vec<(&'static str, String)> {
    counter_rows_with(c, s, true)
}

/// Like [`counter_rows`], but also listing the counters named in `always` when zero (e.g. a
/// run with link events lists `drops_link_down`).
pub fn counter_rows_listing(
    c: &Counters,
    s: &RunSummary,
    always: &[&str],
) -> Vec<(&'static str, String)> {
    counter_rows_filtered(c, s, |i, name, v| i < Counters::BASE || v != 0 || always.contains(&name))
}

fn counter_rows_with(c: &Counters, s: &RunSummary, all: bool) -> Vec<(&'static str, String)> {
    counter_rows_filtered(c, s, |i, _, v| all || i < Counters::BASE || v != 0)
}

fn counter_rows_filtered(
    c: &Counters,
    s: &RunSummary,
    keep: impl Fn(usize, &str, u64) -> bool,
) -> Vec<(&'static str, String)> {
    let mut rows: Vec<(&'static str, String)> = c
        .named()
        .into_iter()
        .enumerate()
        .filter(|&(i, (n, v))| keep(i, n, v))
        .map(|(_, (n, v))| (n, v.to_string()))
        .collect();
    rows.push(("end_time_ns", format_ps_as_ns(s.end_time.as_ps())));
    rows.push(("flows_done", s.flows_done.to_string()));
    rows.push(("flows_unfinished", s.flows_unfinished.to_string()));
    rows
}

/// `pfc.csv`: one row per PFC frame a switch sent, in time order (`Simulation::pfc_log`):
/// `time_ns,switch,port,peer,priority,event` with `event` = `pause` or `resume`. Its pause and
/// resume rows count exactly `pfc_pauses` and `pfc_resumes` of `counters.csv`.
pub fn pfc_csv(events: &[PfcEvent]) -> String {
    let rows = events.iter().map(|e| {
        [
            format_ps_as_ns(e.time.as_ps()),
            e.switch.0.to_string(),
            e.port.0.to_string(),
            e.peer.0.to_string(),
            e.priority.to_string(),
            if e.pause { "pause" } else { "resume" }.to_string(),
        ]
    });
    csv_text(["time_ns", "switch", "port", "peer", "priority", "event"], rows)
}

/// Header of `windows.csv` (`dcsim run --window-trace`).
pub const WINDOWS_HEADER: [&str; 7] =
    ["window_end_ns", "shard", "thread", "start_ns", "took_ns", "events", "crossings_in"];

/// Header of `barriers.csv` (`dcsim run --window-trace`).
pub const BARRIERS_HEADER: [&str; 4] = ["window_end_ns", "thread", "arrived_ns", "left_ns"];

/// Streams `windows.csv` and `barriers.csv` of a window trace (`dcsim run --window-trace`)
/// while the run goes ([`CsvStream`]): one row per shard and window, and one per thread and
/// barrier, each sorted by window end, then shard or thread. The run hands its records over
/// step by step ([`crate::schemes::SimInput::window_sink`]); a step's windows all end after
/// the previous step's, so sorting each step's records sorts the files.
#[derive(Debug)]
pub struct WindowTraceWriter {
    windows: CsvStream,
    barriers: CsvStream,
}

impl WindowTraceWriter {
    /// Starts `dir/windows.csv` and `dir/barriers.csv`.
    ///
    /// # Errors
    /// A temporary file cannot be created.
    pub fn create(dir: &Path) -> Result<WindowTraceWriter, CliError> {
        Ok(WindowTraceWriter {
            windows: CsvStream::create(dir, "windows.csv", &WINDOWS_HEADER)?,
            barriers: CsvStream::create(dir, "barriers.csv", &BARRIERS_HEADER)?,
        })
    }

    /// Appends a step's records.
    pub fn write(&mut self, mut trace: WindowTrace) {
        trace.shards.sort_unstable_by_key(|w| (w.end, w.shard));
        for w in &trace.shards {
            self.windows.write(window_row(w));
        }
        trace.barriers.sort_unstable_by_key(|w| (w.end, w.thread));
        for w in &trace.barriers {
            self.barriers.write(barrier_row(w));
        }
    }

    /// Hands both files to `set` ([`CsvStream::finish_into`]).
    ///
    /// # Errors
    /// Any write error met on the way, naming the file (the temporary files are removed).
    pub fn finish_into(self, set: &mut Staged) -> Result<(), CliError> {
        let WindowTraceWriter { windows, barriers } = self;
        windows.finish_into(set)?;
        barriers.finish_into(set)
    }
}

/// A `windows.csv` row.
fn window_row(w: &ShardWindow) -> [String; 7] {
    [
        format_ps_as_ns(w.end.as_ps()),
        w.shard.to_string(),
        w.thread.to_string(),
        w.start_ns.to_string(),
        w.took_ns.to_string(),
        w.events.to_string(),
        w.crossings_in.to_string(),
    ]
}

/// A `barriers.csv` row.
fn barrier_row(w: &BarrierWait) -> [String; 4] {
    [
        format_ps_as_ns(w.end.as_ps()),
        w.thread.to_string(),
        w.arrived_ns.to_string(),
        w.left_ns.to_string(),
    ]
}

/// The statistics columns of `qlen.csv` and `qlen_class.csv`, after their identifying ones.
const QLEN_STATS_HEADER: [&str; 10] = [
    "mean_bytes",
    "p50_bytes",
    "p90_bytes",
    "p99_bytes",
    "p999_bytes",
    "max_bytes",
    "frac_above_0B",
    "frac_above_10KB",
    "frac_above_100KB",
    "frac_above_1MB",
];

/// A backlog's [`QLEN_STATS_HEADER`] columns.
fn qlen_stats_cols(s: &dcsim_core::qmon::QueueStats) -> [String; 10] {
    let frac = |d: dcsim_core::units::Duration| {
        if s.time.as_ps() == 0 {
            "0".to_string()
        } else {
            format!("{:.6}", d.as_ps() as f64 / s.time.as_ps() as f64)
        }
    };
    [
        format!("{:.3}", s.mean),
        s.p50.to_string(),
        s.p90.to_string(),
        s.p99.to_string(),
        s.p999.to_string(),
        s.max.to_string(),
        frac(s.above[0]),
        frac(s.above[1]),
        frac(s.above[2]),
        frac(s.above[3]),
    ]
}

/// `qlen.csv`: one row per switch egress port, by switch and port: the backlog (bytes queued
/// over all classes, time-weighted over the run) — mean, p50, p90, p99, p99.9, max — and the
/// fraction of the run's time it was above 0 B, 10 KB, 100 KB and 1 MB; and the fraction of
/// the run's time the port was transmitting (`utilisation`).
pub fn qlen_csv(queues: &[PortQueue]) -> String {
    let rows = queues.iter().map(|q| {
        let mut r = vec![q.node.0.to_string(), q.port.0.to_string(), q.peer.0.to_string()];
        r.push(q.rate.0.to_string());
        r.extend(qlen_stats_cols(&q.stats));
        r.push(format!("{:.6}", q.utilisation()));
        r
    });
    let mut header = vec!["switch", "port", "peer", "rate_bps"];
    header.extend(QLEN_STATS_HEADER);
    header.push("utilisation");
    csv_text(header, rows)
}

/// `qlen_class.csv`: one row per (switch egress port, priority class) that held bytes at some
/// time, by switch, port and class: the class's backlog (bytes of that class queued at the
/// port, time-weighted over the run), with `qlen.csv`'s statistics columns.
pub fn qlen_class_csv(queues: &[dcsim_core::qmon::ClassQueue]) -> String {
    let rows = queues.iter().map(|q| {
        let mut r = vec![q.node.0.to_string(), q.port.0.to_string(), q.peer.0.to_string()];
        r.extend([q.rate.0.to_string(), q.class.to_string()]);
        r.extend(qlen_stats_cols(&q.stats));
        r
    });
    let mut header = vec!["switch", "port", "peer", "rate_bps", "class"];
    header.extend(QLEN_STATS_HEADER);
    csv_text(header, rows)
}

// The `frac_above_*` column names of `qlen.csv` spell out the monitor's thresholds.
const _: () = assert!(
    THRESHOLDS.len() == 4
        && THRESHOLDS[0] == 0
        && THRESHOLDS[1] == 10_000
        && THRESHOLDS[2] == 100_000
        && THRESHOLDS[3] == 1_000_000
);

/// `qlen_hist.csv`: the non-empty bins of every port's time-weighted backlog histogram:
/// `switch,port,lower_bytes,upper_bytes,time_ns` (a bin holds levels `lower <= b < upper`).
pub fn qlen_hist_csv(queues: &[PortQueue]) -> String {
    let rows = queues.iter().flat_map(|q| {
        q.stats.bins.iter().map(move |&(lo, hi, t)| {
            [
                q.node.0.to_string(),
                q.port.0.to_string(),
                lo.to_string(),
                hi.to_string(),
                format_ps_as_ns(t.as_ps()),
            ]
        })
    });
    csv_text(["switch", "port", "lower_bytes", "upper_bytes", "time_ns"], rows)
}

/// `qlen_class_hist.csv`: the non-empty bins of every (port, class) backlog histogram of
/// [`qlen_class_csv`]: `switch,port,class,lower_bytes,upper_bytes,time_ns`.
pub fn qlen_class_hist_csv(queues: &[dcsim_core::qmon::ClassQueue]) -> String {
    let rows = queues.iter().flat_map(|q| {
        q.stats.bins.iter().map(move |&(lo, hi, t)| {
            [
                q.node.0.to_string(),
                q.port.0.to_string(),
                q.class.to_string(),
                lo.to_string(),
                hi.to_string(),
                format_ps_as_ns(t.as_ps()),
            ]
        })
    });
    csv_text(["switch", "port", "class", "lower_bytes", "upper_bytes", "time_ns"], rows)
}

/// `qlen_mon.csv`: the periodic samples of every port's backlog of classes 1–7 (the
/// reference's `QLEN_MON_*`): `switch,port,lower_bytes,upper_bytes,samples` for every non-empty
/// bin (`lower <= b < upper`), by switch and port.
pub fn qlen_mon_csv(samples: &[dcsim_core::qmon::PortSamples]) -> String {
    let rows = samples.iter().flat_map(|p| {
        p.counts.iter().enumerate().filter(|(_, &n)| n > 0).map(move |(b, &n)| {
            let lo = (b as u64).saturating_mul(p.bin);
            [
                p.node.0.to_string(),
                p.port.0.to_string(),
                lo.to_string(),
                lo.saturating_add(p.bin).to_string(),
                n.to_string(),
            ]
        })
    });
    csv_text(["switch", "port", "lower_bytes", "upper_bytes", "samples"], rows)
}

/// `counters.csv`: `name,value` rows ([`counter_rows`]).
pub fn counters_csv(c: &Counters, s: &RunSummary) -> String {
    csv_text(["name", "value"], counter_rows(c, s).into_iter().map(|(n, v)| [n.to_string(), v]))
}

/// `counters.csv` with the counters named in `always` even when zero
/// ([`counter_rows_listing`]).
pub fn counters_csv_listing(c: &Counters, s: &RunSummary, always: &[&str]) -> String {
    let rows = counter_rows_listing(c, s, always).into_iter().map(|(n, v)| [n.to_string(), v]);
    csv_text(["name", "value"], rows)
}

/// `counters.csv` with every counter ([`counter_rows_all`]).
pub fn counters_csv_all(c: &Counters, s: &RunSummary) -> String {
    let rows = counter_rows_all(c, s).into_iter().map(|(n, v)| [n.to_string(), v]);
    csv_text(["name", "value"], rows)
}

/// Header of `qct.csv`.
pub const QCT_HEADER: [&str; 12] = [
    "app",
    "client",
    "server",
    "conn",
    "seq",
    "size_bytes",
    "response_bytes",
    "submit_ns",
    "qct_ns",
    "ideal_qct_ns",
    "slowdown",
    "measured",
];

/// Measured-query totals of one named application (all its clients).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AppTotals {
    /// The application's name.
    pub name: String,
    /// Measured queries completed.
    pub queries: u64,
    /// Their summed QCT, picoseconds.
    pub qct_ps: u128,
    /// Their summed slowdown.
    pub slowdown: f64,
    /// Queries completed during warm-up or after.
    pub unmeasured: u64,
    /// Length of the measurement window (first measured submission time to the last
    /// submission time), picoseconds.
    pub window_ps: u64,
}

impl AppTotals {
    /// Measured queries per second of the measurement window.
    pub fn qps(&self) -> f64 {
        if self.window_ps == 0 {
            return 0.0;
        }
        self.queries as f64 / (self.window_ps as f64 * 1e-12)
    }
    /// Mean QCT in microseconds.
    pub fn mean_qct_us(&self) -> f64 {
        if self.queries == 0 {
            return 0.0;
        }
        self.qct_ps as f64 / self.queries as f64 / 1e6
    }
}

/// A CSV output written as a run goes: rows go to a hidden temporary file (`.NAME.tmp`) in the
/// output folder, which is renamed into place with the run's other outputs when it is over
/// ([`CsvStream::finish_into`]), so the rows need not be kept in memory. Write errors are kept
/// until then. Dropped before that (the run failed or panicked), it removes its temporary file.
#[derive(Debug)]
pub struct CsvStream {
    tmp: PathBuf,
    path: PathBuf,
    /// The open file; `None` once handed on.
    w: Option<csv::Writer<std::io::BufWriter<std::fs::File>>>,
    error: Option<std::io::Error>,
}

impl CsvStream {
    /// Starts `dir/name` with its header row.
    ///
    /// # Errors
    /// The temporary file cannot be created.
    pub fn create(dir: &Path, name: &str, header: &[&str]) -> Result<CsvStream, CliError> {
        let tmp = dir.join(format!(".{name}.tmp"));
        let file =
            create_held(&tmp).map_err(|source| CliError::Write { path: tmp.clone(), source })?;
        let mut stream = CsvStream {
            tmp,
            path: dir.join(name),
            w: Some(csv::Writer::from_writer(std::io::BufWriter::new(file))),
            error: None,
        };
        stream.write(header);
        Ok(stream)
    }

    /// Appends a row (after a write error, nothing: the error is reported by
    /// [`CsvStream::finish_into`]).
    pub fn write<I>(&mut self, row: I)
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        if self.error.is_some() {
            return;
        }
        if let Some(Err(e)) = self.w.as_mut().map(|w| w.write_record(row)) {
            self.error = Some(e.into());
        }
    }

    /// Flushes the file and hands it to `set`, which puts it in place with the run's other
    /// outputs ([`Staged::commit`]).
    ///
    /// # Errors
    /// Any write error met on the way, naming the file (the temporary file is removed).
    pub fn finish_into(mut self, set: &mut Staged) -> Result<(), CliError> {
        let w = self.w.take().expect("a writer not yet handed on");
        let flushed = w.into_inner().map_err(|e| e.into_error()).and_then(|mut b| {
            std::io::Write::flush(&mut b)?;
            b.into_inner().map(drop).map_err(|e| e.into_error())
        });
        if let Some(source) = self.error.take().or(flushed.err()) {
            PENDING.discard(&self.tmp);
            return Err(CliError::Write { path: std::mem::take(&mut self.path), source });
        }
        set.adopt(std::mem::take(&mut self.tmp), std::mem::take(&mut self.path))
    }
}

impl Drop for CsvStream {
    fn drop(&mut self) {
        // Still open: not handed on (a failed run, a panic).
        if self.w.take().is_some() {
            PENDING.discard(&self.tmp);
        }
    }
}

/// Streams `qct.csv` while a run goes ([`CsvStream`]), so that completed queries need not be
/// kept, and sums each application's measured queries.
#[derive(Debug)]
pub struct QctWriter {
    file: CsvStream,
    /// Each app's index into `totals`.
    app_name: Vec<usize>,
    /// Each connection's (client, server) hosts.
    conns: Vec<(u32, u32)>,
    totals: Vec<AppTotals>,
}

impl QctWriter {
    /// Starts `dir/qct.csv` for the applications of `apps` in a run that stops at `end`.
    ///
    /// # Errors
    /// The temporary file cannot be created.
    pub fn create(
        dir: &Path,
        apps: &dcsim_core::apps::Apps,
        end: dcsim_core::units::Time,
    ) -> Result<QctWriter, CliError> {
        let mut totals: Vec<AppTotals> = Vec::new();
        let mut app_name = Vec::new();
        for a in &apps.apps {
            let i = match totals.iter().position(|t| t.name == a.name) {
                Some(i) => i,
                None => {
                    totals.push(AppTotals { name: a.name.clone(), ..AppTotals::default() });
                    totals.len() - 1
                }
            };
            let window = a.stop.min(end).as_ps().saturating_sub(a.measure_from.as_ps());
            totals[i].window_ps = totals[i].window_ps.max(window);
            app_name.push(i);
        }
        let conns = apps.connections.iter().map(|c| (c.client.0, c.server.0)).collect();
        let file = CsvStream::create(dir, "qct.csv", &QCT_HEADER)?;
        Ok(QctWriter { file, app_name, conns, totals })
    }

    /// Appends completed queries.
    pub fn write(&mut self, queries: &[dcsim_core::apps::QueryRecord]) {
        for q in queries {
            let t = &mut self.totals[self.app_name[q.app as usize]];
            if q.measured {
                t.queries += 1;
                t.qct_ps += u128::from(q.qct.as_ps());
                t.slowdown += q.slowdown();
            } else {
                t.unmeasured += 1;
            }
            let (c, s) = self.conns[q.conn as usize];
            self.file.write([
                t.name.clone(),
                c.to_string(),
                s.to_string(),
                q.conn.to_string(),
                q.seq.to_string(),
                q.size.to_string(),
                q.response.to_string(),
                format_ps_as_ns(q.submit.as_ps()),
                format_ps_as_ns(q.qct.as_ps()),
                format_ps_as_ns(q.ideal.as_ps()),
                format!("{:.6}", q.slowdown()),
                u8::from(q.measured).to_string(),
            ]);
        }
    }

    /// Per application name: measured totals.
    pub fn totals(&self) -> &[AppTotals] {
        &self.totals
    }

    /// Flushes the file and hands it to `set`, which puts it in place with the run's other
    /// outputs ([`Staged::commit`]). Returns the totals per application name.
    ///
    /// # Errors
    /// Any write error met on the way, naming the file (the temporary file is removed).
    pub fn finish_into(mut self, set: &mut Staged) -> Result<Vec<AppTotals>, CliError> {
        self.file.finish_into(set)?;
        Ok(std::mem::take(&mut self.totals))
    }

    /// Removes the temporary file (the run failed).
    pub fn abandon(self) {
        drop(self);
    }
}

/// Whether `a` and `b` name the same existing file (through links; on Unix the same device
/// and inode, so a hard link counts too).
pub fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (ma.dev(), ma.ino()) == (mb.dev(), mb.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = (ma, mb);
        matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
    }
}

/// An output file given by option `option` must not be one of the command's `inputs`:
/// `import-ns3 c.txt --out topology.txt`, `gen s.toml --out s.toml` and `compare-ns3 ... --csv
/// ref.txt` had replaced their own input and exited 0.
///
/// # Errors
/// [`CliError::BadOption`] naming the input.
pub fn refuse_input_as_output(
    option: &'static str,
    out: &Path,
    inputs: &[PathBuf],
) -> Result<(), CliError> {
    match inputs.iter().find(|i| same_file(out, i)) {
        Some(i) => Err(CliError::BadOption {
            option,
            message: format!(
                "{} is an input of the command ({}): writing it would replace it; give another file",
                out.display(),
                i.display()
            ),
        }),
        None => Ok(()),
    }
}

/// An existing output folder must be a folder this process can write in: checked before a
/// command runs, so that a long run does not end in a failed write.
///
/// # Errors
/// [`CliError::Write`] if `dir`, or a folder above it, exists and is not a directory; if
/// `dir` is a symbolic link to nothing; or if `dir` exists and a file cannot be created in it.
pub fn check_out_dir(dir: &Path) -> Result<(), CliError> {
    if let Some(b) = file_in_the_way(dir) {
        return Err(not_a_directory(b));
    }
    let fail = |source| CliError::Write { path: dir.to_path_buf(), source };
    if dir.is_symlink() && !dir.exists() {
        return Err(fail(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "is a symbolic link to nothing",
        )));
    }
    if dir.is_dir() {
        // A file created and removed at once: a folder without write permission fails here.
        let probe = dir.join(".dcsim-write-check.tmp");
        create_held(&probe).map_err(fail)?;
        let removed = std::fs::remove_file(&probe);
        PENDING.discard(&probe);
        removed.map_err(fail)?;
    }
    Ok(())
}

/// The first of `dir` and the folders above it that exists and is not a directory.
fn file_in_the_way(dir: &Path) -> Option<&Path> {
    dir.ancestors().find(|a| !a.as_os_str().is_empty() && a.exists() && !a.is_dir())
}

/// The error for a file where an output folder should be.
fn not_a_directory(path: &Path) -> CliError {
    CliError::Write {
        path: path.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "exists and is not a directory",
        ),
    }
}

/// Creates the output folder `dir` and its parents. Where a file stands in the way (`--out` a
/// file, or under one) the error names that file and says so, rather than the operating
/// system's bare "File exists".
///
/// # Errors
/// [`CliError::Write`].
///
/// The folders it makes (`dir` and any missing parents) are noted in [`PENDING`]: an
/// interrupt, or a command that fails, removes those of them that are still empty, so that a
/// run stopped before its first output leaves no empty folder behind.
pub fn create_out_dir(dir: &Path) -> Result<(), CliError> {
    PENDING.make_folders(dir).map_err(|source| match file_in_the_way(dir) {
        Some(b) => not_a_directory(b),
        None => CliError::Write { path: dir.to_path_buf(), source },
    })
}

/// Files written as a set: each is written whole to a hidden temporary file first, and
/// only once all are written are they put in place (and stale ones removed), after a check
/// that no destination is a directory. So a failed write (a full disk, a folder where an
/// output should go) leaves every earlier output of the folder as it was, instead of a new
/// `fct.csv` beside an old `counters.csv`. Only a rename failing after others succeeded (a
/// folder's permissions changed meanwhile) can leave the set half in place. Temporary files
/// not committed are removed when the set is dropped.
///
/// A destination that is a symbolic link to a regular file is written through: the
/// temporary file goes beside the file the link names, and the rename replaces that file (as
/// a new file: its mode and other hard links are not kept). One that is not a regular file
/// (a device such as `/dev/null`, a FIFO), or a link to a descriptor (`/dev/stdout`, also when
/// the shell sends it to a file), is written into at the commit, before the renames, never
/// replaced (`gen --out /dev/full` replaced the device with a regular file).
#[derive(Debug)]
pub struct Staged {
    dir: PathBuf,
    /// The files to put in place, in the order staged.
    files: Vec<Put>,
    /// Files to remove at the commit (outputs this run does not write).
    stale: Vec<PathBuf>,
}

/// How one staged file goes in place.
#[derive(Debug)]
enum Put {
    /// Renamed from `tmp` over `dest` (the regular file `shown` names, through any links).
    Rename { tmp: PathBuf, dest: PathBuf, shown: PathBuf },
    /// Written into `dest`, a device or FIFO, at the commit.
    Direct { dest: PathBuf, bytes: Vec<u8> },
}

impl Put {
    fn dest(&self) -> &Path {
        match self {
            Put::Rename { dest, .. } | Put::Direct { dest, .. } => dest,
        }
    }
}

/// What an output path is.
enum Dest {
    /// A regular file, or nothing yet: the file to replace (symbolic links followed).
    File(PathBuf),
    /// A device, FIFO or socket, or a link to a descriptor: written into, never replaced.
    Special,
}

/// What `path` is as an output's destination.
///
/// # Errors
/// A directory, or a symbolic link to nothing.
fn destination(path: &Path) -> std::io::Result<Dest> {
    use std::io::{Error, ErrorKind};
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Dest::File(path.to_path_buf())),
        Err(e) => return Err(e),
        Ok(m) if m.file_type().is_symlink() => match std::fs::metadata(path) {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(Error::new(ErrorKind::NotFound, "is a symbolic link to nothing"))
            }
            other => other?,
        },
        Ok(m) => m,
    };
    if meta.is_dir() {
        Err(Error::new(ErrorKind::AlreadyExists, "is a directory, where an output file goes"))
    } else if meta.is_file() && descriptor(path).is_none() {
        Ok(Dest::File(if path.is_symlink() { std::fs::canonicalize(path)? } else { path.into() }))
    } else {
        Ok(Dest::Special)
    }
}

/// Which open file a path names, if it is one of the links to a descriptor (`/dev/stdout`,
/// `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`): `Some(1)` for this process's standard output,
/// `Some(2)` for its standard error, `Some(0)` for any other. Such a path reaches whatever the
/// shell opened, a regular file included, which must be written into (at the descriptor's
/// own offset), not replaced: a rename would leave the descriptor on a file no name leads to.
fn descriptor(path: &Path) -> Option<u32> {
    let fd = |rest: &Path| match rest.to_str() {
        Some("1") => 1,
        Some("2") => 2,
        _ => 0,
    };
    if path == Path::new("/dev/stdout") {
        Some(1)
    } else if path == Path::new("/dev/stderr") {
        Some(2)
    } else if let Ok(rest) = path.strip_prefix("/dev/fd") {
        Some(fd(rest))
    } else if let Ok(rest) = path.strip_prefix("/proc/self/fd") {
        Some(fd(rest))
    } else if path.starts_with("/proc") && path.components().any(|c| c.as_os_str() == "fd") {
        Some(0)
    } else {
        None
    }
}

/// Writes `bytes` into `dest`, a device, FIFO or descriptor link: this process's standard
/// output or error through its own handle (so that its position and the command's later
/// lines stay in order), anything else opened for writing without truncating or creating.
fn write_into(dest: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    match descriptor(dest) {
        Some(1) => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)?;
            out.flush()
        }
        Some(2) => std::io::stderr().lock().write_all(bytes),
        _ => std::fs::OpenOptions::new().append(true).open(dest)?.write_all(bytes),
    }
}

/// The temporary files and folders this process has made and not yet put in place or
/// removed, so that an interrupt ([`crate::interrupt`]) can remove them before the process
/// ends: without it, Ctrl-C during a run left `.qct.csv.tmp` (which grows through the run) and,
/// during the writing, the other outputs' temporary files behind.
///
/// It is process-wide, as signals are: every [`Staged`] set, [`QctWriter`] and [`Drafts`]
/// folder registers here, each in its own thread of a sweep. A file is created and registered
/// under the lock, and a set's renames are done under it, so an interrupt finds each
/// temporary file either registered or not yet made, and a set either wholly in place or not
/// at all.
///
/// It also notes the output folders the process made ([`create_out_dir`]); those are removed
/// only while empty, after the temporary files.
#[derive(Debug, Default)]
pub struct Pending {
    held: std::sync::Mutex<Held>,
}

/// What a [`Pending`] holds.
#[derive(Debug, Default)]
struct Held {
    /// Temporary files and folders, removed with what they hold.
    temporary: Vec<PathBuf>,
    /// Output folders this process made, each after its parent: removed, the deepest first,
    /// only while empty.
    folders: Vec<PathBuf>,
}

impl Held {
    /// Removes every temporary file and folder, then every made folder that is empty; how
    /// many temporary outputs were there.
    fn remove_all(&mut self) -> usize {
        let removed = self.temporary.drain(..).filter(|p| remove_any(p)).count();
        self.remove_empty_folders();
        removed
    }

    /// Removes the made folders that are empty (a folder emptied by the removal of its own
    /// empty subfolder included), and forgets them all.
    fn remove_empty_folders(&mut self) {
        for dir in self.folders.drain(..).rev() {
            // Fails, harmlessly, where the folder holds anything.
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// This process's [`Pending`] temporary files.
pub static PENDING: Pending = Pending::new();

impl Pending {
    /// An empty registry.
    #[must_use]
    pub const fn new() -> Pending {
        Pending { held: std::sync::Mutex::new(Held { temporary: Vec::new(), folders: Vec::new() }) }
    }

    /// The registry, locked (a thread that panicked while holding it left it consistent:
    /// every change is a single push or removal).
    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Makes `path` with `make` and registers it, both under the lock.
    fn make<T>(
        &self,
        path: &Path,
        make: impl FnOnce(&Path) -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        let mut held = self.lock();
        let made = make(path)?;
        if !held.temporary.iter().any(|p| p == path) {
            held.temporary.push(path.to_path_buf());
        }
        Ok(made)
    }

    /// Makes folder `dir` and its missing parents, and notes those it made (each after its
    /// parent), under the lock. A folder made and not noted would be left behind, empty, by an
    /// interrupt between the two.
    fn make_folders(&self, dir: &Path) -> std::io::Result<()> {
        let mut held = self.lock();
        let mut missing: Vec<PathBuf> = dir
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && std::fs::symlink_metadata(a).is_err())
            .map(Path::to_path_buf)
            .collect();
        std::fs::create_dir_all(dir)?;
        missing.reverse();
        held.folders.extend(missing);
        Ok(())
    }

    /// Removes `path` (a file, or a folder with what it holds), if it is there, and forgets
    /// it.
    fn discard(&self, path: &Path) {
        let mut held = self.lock();
        remove_any(path);
        held.temporary.retain(|p| p != path);
    }

    /// Whether `path` is registered, as a temporary output or as a folder made.
    #[must_use]
    pub fn holds(&self, path: &Path) -> bool {
        let held = self.lock();
        held.temporary.iter().chain(&held.folders).any(|p| p == path)
    }

    /// Removes every registered file and folder, and the folders made that are then empty,
    /// and returns how many temporary outputs were there, keeping the registry locked until
    /// `then` has run with that count (an interrupt ends the process in `then`, so no thread
    /// makes or renames a temporary file after the removal).
    pub fn remove_all_then<R>(&self, then: impl FnOnce(usize) -> R) -> R {
        let mut held = self.lock();
        let removed = held.remove_all();
        then(removed)
    }

    /// Removes the output folders this process made that are empty: a command that failed
    /// leaves no empty folder it made behind (`main`, before it exits with status 2). The
    /// temporary files are not touched: each is removed by its owner as the error unwinds.
    pub fn remove_empty_folders(&self) {
        self.lock().remove_empty_folders();
    }
}

/// Removes a file or a folder (with its contents); whether something was there to remove.
fn remove_any(path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path).is_ok(),
        Ok(_) => std::fs::remove_file(path).is_ok(),
        Err(_) => false,
    }
}

/// [`create_fresh`], registered in [`PENDING`] until put in place or discarded.
fn create_held(tmp: &Path) -> std::io::Result<std::fs::File> {
    PENDING.make(tmp, create_fresh)
}

/// Creates `tmp`, a hidden temporary file, afresh: whatever is left at that name (a file of an
/// interrupted run, or a symbolic link or FIFO put there) is removed first, and the file is
/// created only if nothing is there, so a link is never followed (a link left as
/// `.fct.csv.tmp` had the outputs written into the file it named) and a FIFO never blocks.
fn create_fresh(tmp: &Path) -> std::io::Result<std::fs::File> {
    match std::fs::remove_file(tmp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    std::fs::OpenOptions::new().write(true).create_new(true).open(tmp)
}

/// The hidden temporary file beside `dest`: `.NAME.tmp`.
fn tmp_beside(dest: &Path) -> PathBuf {
    let name = dest.file_name().map_or_else(Default::default, |n| n.to_string_lossy());
    dest.with_file_name(format!(".{name}.tmp"))
}

impl Staged {
    /// An empty set of outputs for folder `dir` (which must exist before the first write).
    #[must_use]
    pub fn new(dir: &Path) -> Staged {
        Staged { dir: dir.to_path_buf(), files: Vec::new(), stale: Vec::new() }
    }

    /// Writes `contents` to a hidden temporary file (`.name.tmp`), to be renamed to
    /// `dir/name` at the commit (kept in memory instead when `dir/name` is written into).
    ///
    /// # Errors
    /// `dir/name` is a directory or a broken link, or the temporary file cannot be written
    /// (it is removed).
    pub fn write(&mut self, name: &str, contents: impl AsRef<[u8]>) -> Result<(), CliError> {
        let contents = contents.as_ref();
        self.stage(
            self.dir.join(name),
            |tmp| std::io::Write::write_all(&mut create_held(tmp)?, contents),
            || Ok(contents.to_vec()),
        )
    }

    /// Takes over a temporary file written elsewhere (in `dir`), to be put in place at
    /// `path` at the commit; moved beside the file a link names if `path` is one.
    ///
    /// # Errors
    /// As [`Staged::write`] (the temporary file is removed).
    pub fn adopt(&mut self, tmp: PathBuf, path: PathBuf) -> Result<(), CliError> {
        let staged = self.stage(
            path,
            |to| {
                if *to == tmp {
                    return Ok(());
                }
                std::io::copy(&mut std::fs::File::open(&tmp)?, &mut create_held(to)?).map(|_| ())
            },
            || std::fs::read(&tmp),
        );
        // The file is kept only as the temporary file of its own rename.
        let kept = staged.is_ok()
            && matches!(self.files.last(), Some(Put::Rename { tmp: t, .. }) if *t == tmp);
        if !kept {
            PENDING.discard(&tmp);
        }
        staged
    }

    /// Stages the file `shown` names: `to_tmp` writes its temporary file (given the path),
    /// `bytes` gives its contents for a destination that is written into.
    fn stage(
        &mut self,
        shown: PathBuf,
        to_tmp: impl FnOnce(&Path) -> std::io::Result<()>,
        bytes: impl FnOnce() -> std::io::Result<Vec<u8>>,
    ) -> Result<(), CliError> {
        let fail = |path: &Path, source| CliError::Write { path: path.to_path_buf(), source };
        match destination(&shown).map_err(|e| fail(&shown, e))? {
            // Two outputs that are one file (links to it) would share a temporary file.
            Dest::File(dest) if self.files.iter().any(|p| p.dest() == dest) => {
                return Err(fail(
                    &shown,
                    std::io::Error::new(
                        std::io::ErrorKind::AlreadyExists,
                        "names the same file as another output of this command",
                    ),
                ));
            }
            Dest::File(dest) => {
                let tmp = tmp_beside(&dest);
                to_tmp(&tmp).map_err(|e| {
                    PENDING.discard(&tmp);
                    fail(&tmp, e)
                })?;
                self.files.push(Put::Rename { tmp, dest, shown });
            }
            Dest::Special => {
                let bytes = bytes().map_err(|e| fail(&shown, e))?;
                self.files.push(Put::Direct { dest: shown, bytes });
            }
        }
        Ok(())
    }

    /// Marks `dir/name` for removal at the commit, if it exists (an output of an earlier run
    /// that this one does not write).
    pub fn remove(&mut self, name: &str) {
        self.stale.push(self.dir.join(name));
    }

    /// Puts every staged file in place (those written into first, as the likelier to fail,
    /// then the renames) and removes the stale ones. Returns the files written, in the order
    /// staged.
    ///
    /// # Errors
    /// A destination (or a stale output) that is a directory, found before anything is
    /// put in place; or an I/O error of a write, a rename or a removal, naming the path.
    pub fn commit(mut self) -> Result<Vec<PathBuf>, CliError> {
        let dests = self.files.iter().map(Put::dest);
        if let Some(d) = dests.chain(self.stale.iter().map(PathBuf::as_path)).find(|d| d.is_dir()) {
            return Err(CliError::Write {
                path: d.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "is a directory, where an output file goes",
                ),
            });
        }
        let written = self
            .files
            .iter()
            .map(|p| match p {
                Put::Rename { shown, .. } => shown.clone(),
                Put::Direct { dest, .. } => dest.clone(),
            })
            .collect();
        for put in &self.files {
            if let Put::Direct { dest, bytes } = put {
                write_into(dest, bytes)
                    .map_err(|source| CliError::Write { path: dest.clone(), source })?;
            }
        }
        let files = std::mem::take(&mut self.files);
        let mut pending = files.into_iter();
        // The renames and removals under the registry's lock: an interrupt then finds the set
        // all in place or none of it.
        let mut held = PENDING.lock();
        while let Some(put) = pending.next() {
            let Put::Rename { tmp, dest, shown } = put else { continue };
            let renamed = std::fs::rename(&tmp, &dest);
            if renamed.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            held.temporary.retain(|p| *p != tmp);
            if let Err(source) = renamed {
                drop(held);
                self.files.extend(pending);
                return Err(CliError::Write { path: shown, source });
            }
        }
        for path in std::mem::take(&mut self.stale) {
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => return Err(CliError::Write { path, source }),
            }
        }
        drop(held);
        Ok(written)
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        for put in &self.files {
            if let Put::Rename { tmp, .. } = put {
                PENDING.discard(tmp);
            }
        }
    }
}

/// A hidden folder (`.NAME.tmp`) in which a command draws its figures before they go in place
/// with its tables: [`Drafts::stage`] hands each drawn file to a [`Staged`] set, whose commit
/// puts figures and tables in place together. The folder, and whatever is left in it, is
/// removed when the `Drafts` is dropped, so a failed drawing leaves no partial figure set and
/// nothing hidden behind.
#[derive(Debug)]
pub struct Drafts {
    path: PathBuf,
}

impl Drafts {
    /// A fresh hidden folder `dir/.name.tmp` (`dir` must exist); anything an interrupted run
    /// left there is removed first (a link at that name is removed, not followed).
    ///
    /// # Errors
    /// The folder cannot be made.
    pub fn new(dir: &Path, name: &str) -> Result<Drafts, CliError> {
        let path = dir.join(format!(".{name}.tmp"));
        let fail = |source| CliError::Write { path: path.clone(), source };
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path).map_err(fail)?,
            Ok(_) => std::fs::remove_file(&path).map_err(fail)?,
            Err(_) => {}
        }
        PENDING.make(&path, |p| std::fs::create_dir(p)).map_err(fail)?;
        Ok(Drafts { path })
    }

    /// The folder to draw into.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stages each drawn file (in [`Drafts::path`]) to go in place under the same name in
    /// `to`, in `set`.
    ///
    /// # Errors
    /// As [`Staged::adopt`].
    pub fn stage(&self, files: &[PathBuf], to: &Path, set: &mut Staged) -> Result<(), CliError> {
        for f in files {
            let name = f.file_name().expect("a drawn figure has a file name");
            set.adopt(f.clone(), to.join(name))?;
        }
        Ok(())
    }
}

impl Drop for Drafts {
    fn drop(&mut self) {
        PENDING.discard(&self.path);
    }
}

/// Writes `contents` to `dir/name` atomically: a hidden temporary file (`.name.tmp`), then a
/// rename; through a symbolic link, and into a device or FIFO directly ([`Staged`]).
///
/// # Errors
/// Any I/O error, naming the path.
pub fn write_atomic(
    dir: &Path,
    name: &str,
    contents: impl AsRef<[u8]>,
) -> Result<PathBuf, CliError> {
    let mut set = Staged::new(dir);
    set.write(name, contents)?;
    Ok(set.commit()?.swap_remove(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dcsim_core::ids::{FlowId, NodeId};
    use dcsim_core::units::{Duration, Time};

    fn result(id: u32, fct: Option<u64>) -> FlowResult {
        FlowResult {
            id: FlowId(id),
            src: NodeId(0),
            dst: NodeId(5),
            size: 1000,
            start: Time::from_ps(1_500),
            fct: fct.map(Duration::from_ps),
            ideal_fct: Duration::from_ps(83_840),
            ref_ideal_fct: Duration::from_ns(12_240),
            gave_up: None,
        }
    }

    #[test]
    fn fct_rows_are_sorted_and_formatted() {
        let rs = [result(1, None), result(2, Some(167_680)), result(0, Some(83_840))];
        let dports = [100, 200, 100];
        let text = fct_csv(&rs, &dports);
        assert_eq!(
            text,
            "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,ref_ideal_fct_ns,dport\n\
             0,0,5,1000,1.5,83.84,83.84,1.000000,12240,100\n\
             2,0,5,1000,1.5,167.68,83.84,2.000000,12240,100\n"
        );
        let un = unfinished_csv(&rs, &dports).unwrap();
        assert_eq!(
            un,
            "flow_id,src,dst,size_bytes,start_ns,ideal_fct_ns,ref_ideal_fct_ns,dport,reason,\
             gave_up_ns\n\
             1,0,5,1000,1.5,83.84,12240,200,running,\n"
        );
        let mut gave_up = rs;
        gave_up[0].gave_up = Some(Time::from_ns(2_500));
        let un = unfinished_csv(&gave_up, &dports).unwrap();
        assert!(un.ends_with("\n1,0,5,1000,1.5,83.84,12240,200,retries-exhausted,2500\n"), "{un}");
        assert_eq!(unfinished_csv(&rs[1..], &dports), None);
    }

    #[test]
    fn counters_have_every_field() {
        let s = RunSummary {
            end_time: Time::from_ns(7),
            events: 3,
            flows_done: 1,
            flows_unfinished: 2,
        };
        let text = counters_csv(&Counters { events: 3, ..Counters::default() }, &s);
        assert!(text.starts_with("name,value\nevents,3\n"), "{text}");
        assert!(text.ends_with("end_time_ns,7\nflows_done,1\nflows_unfinished,2\n"), "{text}");
        assert_eq!(text.lines().count(), 1 + 15 + 3);
    }

    #[test]
    fn atomic_write_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = write_atomic(dir.path(), "x.csv", "a\n").unwrap();
        assert_eq!(std::fs::read_to_string(p).unwrap(), "a\n");
        let names: Vec<_> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("x.csv")]);
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn staged_files_appear_together_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("old.csv"), "old").unwrap();
        // Dropped before the commit: nothing written, nothing removed, no temporary left.
        let mut set = Staged::new(d);
        set.write("a.csv", "a").unwrap();
        set.remove("old.csv");
        drop(set);
        assert_eq!(names(d), ["old.csv"]);
        // A folder where an output goes: refused when staged, before any rename; and a stale
        // output that has become a folder, at the commit, before any rename.
        std::fs::create_dir(d.join("b.csv")).unwrap();
        let mut set = Staged::new(d);
        set.write("a.csv", "a").unwrap();
        let e = set.write("b.csv", "b").unwrap_err().to_string();
        assert!(e.contains("b.csv") && e.contains("is a directory"), "{e}");
        set.remove("b.csv");
        let e = set.commit().unwrap_err().to_string();
        assert!(e.contains("b.csv") && e.contains("is a directory"), "{e}");
        assert_eq!(names(d), ["b.csv", "old.csv"]);
        // Committed: in place, in the order staged, and the stale file gone.
        std::fs::remove_dir(d.join("b.csv")).unwrap();
        let mut set = Staged::new(d);
        set.write("b.csv", "b").unwrap();
        set.write("a.csv", b"a").unwrap();
        set.remove("old.csv");
        set.remove("never.csv");
        let written = set.commit().unwrap();
        assert_eq!(written, [d.join("b.csv"), d.join("a.csv")]);
        assert_eq!(names(d), ["a.csv", "b.csv"]);
        assert_eq!(std::fs::read_to_string(d.join("a.csv")).unwrap(), "a");
    }

    /// Figures drawn in a `Drafts` folder go in place with the set's tables, or none of them
    /// does; the hidden folder is gone either way, and a leftover one (or a link at its name)
    /// is replaced, not followed.
    #[test]
    fn drafted_figures_go_in_place_with_the_tables() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let hidden = d.join(".plots.tmp");
        std::fs::create_dir(&hidden).unwrap();
        std::fs::write(hidden.join("stale.png"), "old").unwrap();
        let drafts = Drafts::new(d, "plots").unwrap();
        assert!(!drafts.path().join("stale.png").exists(), "a leftover folder is emptied");
        let fig = drafts.path().join("a.png");
        std::fs::write(&fig, "figure").unwrap();
        let mut set = Staged::new(d);
        set.write("t.csv", "table").unwrap();
        drafts.stage(std::slice::from_ref(&fig), d, &mut set).unwrap();
        assert!(!d.join("a.png").exists() && !d.join("t.csv").exists(), "nothing before commit");
        set.commit().unwrap();
        drop(drafts);
        assert_eq!(std::fs::read_to_string(d.join("a.png")).unwrap(), "figure");
        assert_eq!(std::fs::read_to_string(d.join("t.csv")).unwrap(), "table");
        assert!(!hidden.exists(), "the hidden folder is removed");

        // A figure that cannot go in place (a folder at its name): neither it nor the table.
        let drafts = Drafts::new(d, "plots").unwrap();
        let fig = drafts.path().join("b.png");
        std::fs::write(&fig, "figure").unwrap();
        std::fs::create_dir(d.join("b.png")).unwrap();
        let mut set = Staged::new(d);
        set.write("u.csv", "table").unwrap();
        assert!(drafts.stage(std::slice::from_ref(&fig), d, &mut set).is_err());
        drop(set);
        drop(drafts);
        assert!(!d.join("u.csv").exists() && !hidden.exists());

        // A link at the hidden name is removed, not followed.
        let elsewhere = tempfile::tempdir().unwrap();
        symlink(elsewhere.path(), &hidden).unwrap();
        let drafts = Drafts::new(d, "plots").unwrap();
        std::fs::write(drafts.path().join("c.png"), "x").unwrap();
        drop(drafts);
        assert!(!hidden.exists());
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }

    /// Outputs are written through symbolic links, and into devices and FIFOs without
    /// replacing them (`gen --out /dev/full` replaced the device with a regular file).
    #[test]
    fn links_and_devices_are_written_through_not_replaced() {
        use std::os::unix::fs::{symlink, FileTypeExt};
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("elsewhere")).unwrap();
        std::fs::write(d.join("elsewhere/target.csv"), "old").unwrap();
        symlink("elsewhere/target.csv", d.join("link.csv")).unwrap();
        let p = write_atomic(d, "link.csv", "new").unwrap();
        assert_eq!(p, d.join("link.csv"));
        assert!(d.join("link.csv").is_symlink(), "the link is kept");
        assert_eq!(std::fs::read_to_string(d.join("elsewhere/target.csv")).unwrap(), "new");
        // A temporary file adopted for a link is moved beside the file the link names.
        std::fs::write(d.join(".q.tmp"), "adopted").unwrap();
        let mut set = Staged::new(d);
        set.adopt(d.join(".q.tmp"), d.join("link.csv")).unwrap();
        set.commit().unwrap();
        assert_eq!(std::fs::read_to_string(d.join("elsewhere/target.csv")).unwrap(), "adopted");
        assert_eq!(names(d), ["elsewhere", "link.csv"], "no temporary left");
        assert_eq!(names(&d.join("elsewhere")), ["target.csv"]);
        // A link to nothing is refused, naming it.
        symlink("nowhere/x", d.join("dangling.csv")).unwrap();
        let e = write_atomic(d, "dangling.csv", "x").unwrap_err().to_string();
        assert!(e.contains("dangling.csv") && e.contains("symbolic link to nothing"), "{e}");
        // A FIFO is written into (a reader gets the bytes) and stays a FIFO.
        let fifo = d.join("fifo.csv");
        if std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
            let reader = {
                let fifo = fifo.clone();
                std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
            };
            write_atomic(d, "fifo.csv", "through").unwrap();
            assert_eq!(reader.join().unwrap(), "through");
            assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        } else {
            eprintln!("skipped the FIFO case: no mkfifo");
        }
    }

    /// Links to descriptors are written into through the process's own handles (a rename
    /// over `/dev/stdout` sent to a file replaced the file under the shell's descriptor; an
    /// open that truncated lost what `>>` had there).
    #[test]
    fn descriptor_links_are_recognised() {
        let fd = |p: &str| descriptor(Path::new(p));
        assert_eq!(fd("/dev/stdout"), Some(1));
        assert_eq!(fd("/dev/fd/1"), Some(1));
        assert_eq!(fd("/proc/self/fd/2"), Some(2));
        assert_eq!(fd("/dev/stderr"), Some(2));
        assert_eq!(fd("/dev/fd/7"), Some(0));
        assert_eq!(fd("/proc/123/fd/1"), Some(0));
        assert_eq!(fd("/dev/shm/out.csv"), None, "a regular file under /dev is replaced");
        assert_eq!(fd("out/fct.csv"), None);
    }

    /// What an interrupted run, or anyone, left at a temporary file's name is replaced, never
    /// followed: a link left as `.fct.csv.tmp` had the outputs written into the file it named,
    /// and the output became that link.
    #[test]
    fn temporary_names_are_created_afresh() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("victim.txt"), "keep").unwrap();
        symlink("victim.txt", d.join(".a.csv.tmp")).unwrap();
        write_atomic(d, "a.csv", "new").unwrap();
        assert_eq!(std::fs::read_to_string(d.join("victim.txt")).unwrap(), "keep");
        assert!(!d.join("a.csv").is_symlink());
        assert_eq!(std::fs::read_to_string(d.join("a.csv")).unwrap(), "new");
        assert_eq!(names(d), ["a.csv", "victim.txt"]);
        // Two outputs that are one file are refused, not left sharing a temporary file.
        symlink("victim.txt", d.join("b.csv")).unwrap();
        symlink("victim.txt", d.join("c.csv")).unwrap();
        let mut set = Staged::new(d);
        set.write("b.csv", "b").unwrap();
        let e = set.write("c.csv", "c").unwrap_err().to_string();
        assert!(e.contains("c.csv") && e.contains("same file as another output"), "{e}");
    }

    /// Writing into a device comes before the renames: when it fails (a full device), the
    /// folder's other outputs are left as they were.
    #[test]
    fn a_failed_write_into_a_device_leaves_the_renames_undone() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("a.csv"), "old").unwrap();
        symlink("/dev/full", d.join("full.csv")).unwrap();
        let mut set = Staged::new(d);
        set.write("a.csv", "new").unwrap();
        set.write("full.csv", "x").unwrap();
        let e = set.commit().unwrap_err().to_string();
        assert!(e.contains("full.csv"), "{e}");
        assert_eq!(std::fs::read_to_string(d.join("a.csv")).unwrap(), "old");
        assert_eq!(names(d), ["a.csv", "full.csv"], "no temporary left");
        assert!(d.join("full.csv").is_symlink());
    }

    /// A registry removes what it holds, files and folders, and forgets what was discarded.
    #[test]
    fn a_registry_removes_what_it_holds() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let reg = Pending::new();
        let (a, b, f) = (d.join(".a.tmp"), d.join(".b.tmp"), d.join(".f.tmp"));
        reg.make(&a, create_fresh).unwrap();
        reg.make(&b, create_fresh).unwrap();
        reg.make(&f, |p| std::fs::create_dir(p)).unwrap();
        std::fs::write(f.join("x.png"), "x").unwrap();
        assert!(reg.holds(&a) && reg.holds(&b) && reg.holds(&f));
        reg.discard(&b);
        assert!(!reg.holds(&b) && !b.exists());
        // One already gone counts as nothing removed.
        std::fs::remove_file(&a).unwrap();
        std::fs::write(d.join("kept.csv"), "k").unwrap();
        assert_eq!(reg.remove_all_then(|n| n), 1);
        assert!(!f.exists() && !reg.holds(&a) && !reg.holds(&f));
        assert_eq!(names(d), ["kept.csv"]);
        // A failed making registers nothing.
        assert!(reg.make(&d.join("no/such/dir/.c.tmp"), create_fresh).is_err());
        assert_eq!(reg.remove_all_then(|n| n), 0);
    }

    /// The output folders a registry made go only while empty, the deepest first, after the
    /// temporary files in them; folders that were there before it are never noted.
    #[test]
    fn a_registry_removes_the_folders_it_made_while_empty() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let reg = Pending::new();
        let (out, cells) = (d.join("out"), d.join("out/cells"));
        reg.make_folders(&cells.join("a")).unwrap();
        reg.make_folders(&cells.join("b")).unwrap();
        assert!(reg.holds(&out) && reg.holds(&cells) && reg.holds(&cells.join("b")));
        reg.make_folders(&out).unwrap();
        reg.make_folders(d).unwrap();
        assert!(!reg.holds(d), "a folder that was there is not noted");
        // Cell a finished; cell b holds only a temporary file.
        std::fs::write(cells.join("a/fct.csv"), "f").unwrap();
        reg.make(&cells.join("b/.qct.csv.tmp"), create_fresh).unwrap();
        assert_eq!(reg.remove_all_then(|n| n), 1);
        assert!(cells.join("a/fct.csv").exists() && !cells.join("b").exists());
        assert!(!reg.holds(&out), "forgotten, kept or not");

        // Emptied: the whole chain goes, deepest first.
        std::fs::remove_dir_all(&out).unwrap();
        reg.make_folders(&cells.join("c")).unwrap();
        reg.remove_empty_folders();
        assert!(!out.exists());
        // A file in the way makes nothing and notes nothing.
        std::fs::write(d.join("file"), "x").unwrap();
        assert!(reg.make_folders(&d.join("file/sub")).is_err());
        assert!(!reg.holds(&d.join("file/sub")));
        assert_eq!(names(d), ["file"]);
    }

    /// Every temporary output is in the process's registry from its making until it is put
    /// in place or removed, so that an interrupt finds it (`crate::interrupt`).
    #[test]
    fn temporary_outputs_are_registered_until_in_place_or_removed() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let tmp = d.join(".a.csv.tmp");
        let mut set = Staged::new(d);
        set.write("a.csv", "a").unwrap();
        assert!(tmp.exists() && PENDING.holds(&tmp));
        set.commit().unwrap();
        assert!(!PENDING.holds(&tmp) && d.join("a.csv").exists());
        let mut set = Staged::new(d);
        set.write("a.csv", "b").unwrap();
        assert!(PENDING.holds(&tmp));
        drop(set);
        assert!(!PENDING.holds(&tmp) && !tmp.exists());

        // The streaming query file: held from its creation, then by the set that adopts it.
        let apps = dcsim_core::apps::Apps::default();
        let q = QctWriter::create(d, &apps, Time::from_ps(1)).unwrap();
        let qtmp = d.join(".qct.csv.tmp");
        assert!(PENDING.holds(&qtmp));
        let mut set = Staged::new(d);
        q.finish_into(&mut set).unwrap();
        assert!(PENDING.holds(&qtmp));
        set.commit().unwrap();
        assert!(!PENDING.holds(&qtmp) && d.join("qct.csv").exists());
        let q = QctWriter::create(d, &apps, Time::from_ps(1)).unwrap();
        q.abandon();
        assert!(!PENDING.holds(&qtmp) && !qtmp.exists());
        // Dropped unfinished (a run that failed on the way, or panicked): removed as well.
        let q = QctWriter::create(d, &apps, Time::from_ps(1)).unwrap();
        assert!(qtmp.exists());
        drop(q);
        assert!(!PENDING.holds(&qtmp) && !qtmp.exists());

        // A figures' folder, until dropped; a figure adopted from it is held beside its
        // destination, and the copy in the folder is not.
        let drafts = Drafts::new(d, "plots").unwrap();
        let folder = drafts.path().to_path_buf();
        assert!(PENDING.holds(&folder));
        let fig = folder.join("f.png");
        std::fs::write(&fig, "figure").unwrap();
        let mut set = Staged::new(d);
        drafts.stage(std::slice::from_ref(&fig), d, &mut set).unwrap();
        assert!(PENDING.holds(&d.join(".f.png.tmp")) && !PENDING.holds(&fig));
        set.commit().unwrap();
        drop(drafts);
        assert!(!PENDING.holds(&folder) && !PENDING.holds(&d.join(".f.png.tmp")));
        assert_eq!(names(d), ["a.csv", "f.png", "qct.csv"]);

        // The write check of an output folder leaves nothing held.
        check_out_dir(d).unwrap();
        assert!(!PENDING.holds(&d.join(".dcsim-write-check.tmp")));
    }
}
