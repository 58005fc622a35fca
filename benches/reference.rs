//! Whole-scenario benchmarks on the inputs the speed targets are stated for, through the same
//! path as `dcsim run` (scenario loading, `schemes::run_with_scheme`):
//!
//! - `calibration_{hpcc,dcqcn,none}`: the reference's calibration scenario
//!   (`../shared/reference/calibration/small-ws30`: 64 hosts, 1952 web-search flows at 30%),
//!   imported from its `config-hpcc.txt` / `config-dcqcn.txt` as `dcsim import-ns3` does;
//!   `none` is the HPCC import with congestion control off. The import's `serialization =
//!   "ns3"`, PFC log and `ecmp_seed = "node"` are switched back to exact serialization, no log
//!   and the run's ECMP seeding, so the cases measure the same runs as before import-ns3
//!   wrote them. Skipped, with a message, when the
//!   calibration folder is absent (set `DCSIM_SHARED` to the `shared` folder if it is not
//!   beside the checkout).
//! - `calibration_hpcc_queue_lengths` and `calibration_hpcc_monitored`: the HPCC calibration
//!   with the queue histograms on (as `dcsim run --queue-lengths`), and with every monitor on
//!   (the histograms, the reference's sampler at 100 ns over the whole run, the PFC log): the
//!   monitors' cost is their events/s against `calibration_hpcc`'s.
//! - `fattree2ms_hpcc_{1,2}thread(s)`: the HPCC paper's 320-host fat tree with 2 ms of web-search
//!   arrivals at 30% (a sixth of `examples/perf/fattree-12ms.toml`), on one and two threads.
//! - `harm40ms_tcp_cubic_prague`: TCP through `fq_codel` — the FCT-harm setting at 40 ms RTT,
//!   CUBIC workload flows against a Prague bulk flow (TCP's events/s and frames/s beside RoCE's).
//!   Every link has the path's delay.
//! - `harm40ms_ccafct_solo`: `examples/harm/base.toml`, the solo run of `dcsim harm` at 40 ms:
//!   900 CUBIC flows on ccafct's dumbbell (1 µs, 10 Gb/s host links; a 50 Mb/s bottleneck
//!   with all of the delay), where events come ~70 µs apart. Since 2026-11-29 its flows
//!   reuse connections as ccafct's Go client (`reuse = "go-http"`), so its events are not
//!   those of earlier sessions' figures.
//!
//! Only the simulation is timed (`RunOutput::wall`, as in the run summary), not the loading.
//! Two groups report the same runs in two units: `reference_events` in simulated events per
//! second of wall time, `reference_frames` in frames put on a link (packet-hops) per second.
//! A calibration run takes ~8 s here, so a full pass takes ~15 min; filter, e.g.
//! `cargo bench --bench reference -- events/calibration_hpcc` (only the selected cases run).

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dcsim_cli::scenario::{self, Source, ValidScenario};
use dcsim_cli::schemes::RunOutput;

const FATTREE_2MS: &str = include_str!("../examples/perf/fattree-2ms.toml");
const HARM_SOLO_40MS: &str = include_str!("../examples/harm/base.toml");

/// TCP beside RoCE's figures: the ccafct FCT-harm setting at 40 ms RTT (a 50 Mb/s dumbbell with
/// `fq_codel flows 1` both ways), 150 CUBIC workload flows of lognormal sizes against one
/// Prague bulk flow, for 10 s of workload.
const HARM_40MS: &str = r#"
[simulation]
stop_time = "60s"
seed = 1
[topology]
kind = "dumbbell"
left_hosts = 2
right_hosts = 2
host_rate = "10Gbps"
bottleneck_rate = "50Mbps"
delay = "6666us"
[[group]]
name = "workload"
cca = "cubic"
tcp = { ecn = "off", handshake = true }
[[group]]
name = "competitor"
cca = "prague"
tcp = { ecn = "accurate" }
[[queue]]
at = "bottleneck"
kind = "fq_codel"
flows = 1
[flows]
group = "workload"
lognormal = { src = 0, dst = 2, flows = 50, start = "2s", mean_gap = "200ms" }
[[flows.list]]
src = 1
dst = 3
size = "120MB"
group = "competitor"
"#;

/// One benchmarked scenario: how to load it afresh for every run.
struct Case {
    name: String,
    path: PathBuf,
    toml: String,
    threads: usize,
}

impl Case {
    fn load(&self) -> ValidScenario {
        let base = self.path.parent().expect("a file path").to_path_buf();
        let src = Source::with_base_dir(self.path.clone(), self.toml.clone(), base);
        scenario::validate(&src, None).unwrap_or_else(|e| panic!("{}: {e}", self.name))
    }

    fn run(&self) -> RunOutput {
        self.load().run(self.threads, Vec::new()).expect("a valid scenario runs")
    }
}

fn shared_dir() -> PathBuf {
    match std::env::var_os("DCSIM_SHARED") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"),
    }
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let cal = shared_dir().join("reference/calibration/small-ws30");
    if cal.is_dir() {
        for scheme in ["hpcc", "dcqcn"] {
            let config = cal.join(format!("config-{scheme}.txt"));
            let Ok(text) = std::fs::read_to_string(&config) else {
                eprintln!("reference bench: cannot read {}; skipping it", config.display());
                continue;
            };
            // Where `dcsim import-ns3 --out` would put the scenario: paths in it are absolute.
            let path = std::env::temp_dir().join(format!("dcsim-bench-{scheme}.toml"));
            let imported = dcsim_cli::ns3import::convert(&config, &text, &path)
                .unwrap_or_else(|e| panic!("{}: {e}", config.display()));
            let as_before = |t: &str| {
                t.replace("serialization = \"ns3\"", "serialization = \"exact\"")
                    .replace("pfc_log = true", "pfc_log = false")
                    .replace("ecmp_seed = \"node\"", "ecmp_seed = \"run\"")
                    .replace("flow_start = \"after-queued\"", "flow_start = \"first\"")
            };
            if scheme == "hpcc" {
                cases.push(Case {
                    name: "calibration_none".into(),
                    path: path.clone(),
                    toml: as_before(&imported.toml_without_cc),
                    threads: 1,
                });
            }
            if scheme == "hpcc" {
                // The same run with every monitor on: the PFC log, the time-weighted queue
                // histograms and the periodic sampler (100 ns over the whole run).
                let monitored = as_before(&imported.toml).replace(
                    "pfc_log = false",
                    "pfc_log = true\nqueue_lengths = true\nqlen_mon = { end = \"4s\" }",
                );
                assert!(monitored.contains("qlen_mon"), "the import has an [output] table");
                cases.push(Case {
                    name: "calibration_hpcc_monitored".into(),
                    path: path.clone(),
                    toml: monitored,
                    threads: 1,
                });
                // The monitor meant to be left on, as `dcsim run --queue-lengths` turns it on:
                // the time-weighted histograms alone.
                let histograms = as_before(&imported.toml)
                    .replace("pfc_log = false", "pfc_log = false\nqueue_lengths = true");
                cases.push(Case {
                    name: "calibration_hpcc_queue_lengths".into(),
                    path: path.clone(),
                    toml: histograms,
                    threads: 1,
                });
            }
            cases.push(Case {
                name: format!("calibration_{scheme}"),
                path,
                toml: as_before(&imported.toml),
                threads: 1,
            });
        }
    } else {
        eprintln!(
            "reference bench: no calibration data at {} (set DCSIM_SHARED); skipping those cases",
            cal.display()
        );
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fattree-2ms.toml");
    for (threads, suffix) in [(1, "1thread"), (2, "2threads")] {
        cases.push(Case {
            name: format!("fattree2ms_hpcc_{suffix}"),
            path: path.clone(),
            toml: FATTREE_2MS.into(),
            threads,
        });
    }
    cases.push(Case {
        name: "harm40ms_tcp_cubic_prague".into(),
        path: Path::new(env!("CARGO_MANIFEST_DIR")).join("harm-40ms.toml"),
        toml: HARM_40MS.into(),
        threads: 1,
    });
    cases.push(Case {
        name: "harm40ms_ccafct_solo".into(),
        path: Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/harm/base.toml"),
        toml: HARM_SOLO_40MS.into(),
        threads: 1,
    });
    cases
}

/// The benchmark-name filters on the command line (`cargo bench --bench reference -- FILTER`):
/// the arguments that are not options.
fn filters() -> Vec<String> {
    std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect()
}

fn bench(c: &mut Criterion) {
    // Only the cases a filter selects are probed and registered (a calibration run takes
    // seconds); without a matching filter, all of them.
    // Matched as criterion matches them, as regular expressions (`'…/calibration_hpcc$'`);
    // one that does not parse selects nothing here.
    let filters: Vec<regex::Regex> =
        filters().iter().filter_map(|f| regex::Regex::new(f).ok()).collect();
    let wanted = |name: &str| {
        ["reference_events", "reference_frames"]
            .iter()
            .any(|g| filters.iter().any(|f| f.is_match(&format!("{g}/{name}"))))
    };
    let mut cases = cases();
    if cases.iter().any(|c| wanted(&c.name)) {
        cases.retain(|c| wanted(&c.name));
    }
    // One run of each to learn its size (and to check that every case loads and runs).
    let sizes: Vec<(u64, u64)> = cases
        .iter()
        .map(|case| {
            let out = case.run();
            let (events, frames) = (out.summary.events, out.counters.frames_transmitted);
            eprintln!(
                "{}: {} flows, {events} events, {frames} frames per run, {:.2} s",
                case.name,
                out.results.len(),
                out.wall.as_secs_f64()
            );
            (events, frames)
        })
        .collect();
    for (group, unit) in [("reference_events", 0), ("reference_frames", 1)] {
        let mut g = c.benchmark_group(group);
        g.sample_size(10);
        g.warm_up_time(Duration::from_millis(1));
        for (case, &(events, frames)) in cases.iter().zip(&sizes) {
            g.throughput(Throughput::Elements(if unit == 0 { events } else { frames }));
            g.bench_function(&case.name, |b| {
                b.iter_custom(|iters| (0..iters).map(|_| case.run().wall).sum())
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
