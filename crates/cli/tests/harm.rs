//! End-to-end tests of `dcsim harm` (the ccafct FCT-harm experiment, spec A4).
//!
//! The default tests run reduced experiments (100 workload flows, two RTTs, two seeds; or
//! 20 flows with a 2 s warm-up for the CLI checks) so that they take seconds in a debug build,
//! and check:
//! 1. Prague's harm exceeds CUBIC's in every RTT × statistic cell;
//! 2. Prague's geometric-mean harm is at least 0.5 for RTT ≤ 80 ms;
//! 3. the solo FCT rises with RTT;
//! 4. Prague in its own queue (DualPI2's L queue; fq_codel with 1024 flow queues) does far less
//!    harm than in the single CoDel queue;
//!
//! and the command's behaviour: the files and their headers, byte-identical results for any
//! `--jobs`, and bad options rejected with status 2, naming the option, writing nothing.
//!
//! The `#[ignore]`d tests run the full-size experiment (900 flows, five RTTs); run them in a
//! release build: `cargo test --release -p dcsim-cli --test harm -- --ignored`.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use dcsim_analysis::HARM_CSV_COLUMNS;

mod common;
use common::Case;

/// One row of harm.csv.
#[derive(Debug, Clone)]
struct Row {
    rtt_ms: f64,
    cca: String,
    seed: u64,
    flows: usize,
    unfinished: usize,
    /// geomean, median, p95 (ms).
    fct: [f64; 3],
    /// Their harms (`None` for solo).
    harm: [Option<f64>; 3],
    workload_goodput: Option<f64>,
    competitor_goodput: Option<f64>,
    drops: Option<u64>,
    marks: Option<u64>,
}

const STATS: [&str; 3] = ["geomean", "median", "p95"];

fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

fn parse_harm_csv(text: &str) -> Vec<Row> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(HARM_CSV_COLUMNS.join(",").as_str()), "harm.csv header");
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), HARM_CSV_COLUMNS.len(), "{l}");
            let num = |s: &str| s.parse::<f64>().unwrap_or_else(|e| panic!("{s:?} in {l}: {e}"));
            let opt = |s: &str| (!s.is_empty()).then(|| num(s));
            let count = |s: &str| (!s.is_empty()).then(|| s.parse::<u64>().unwrap());
            Row {
                rtt_ms: num(f[0]),
                cca: f[1].to_string(),
                seed: f[2].parse().unwrap(),
                flows: f[3].parse().unwrap(),
                unfinished: f[4].parse().unwrap(),
                fct: [num(f[5]), num(f[7]), num(f[9])],
                harm: [opt(f[6]), opt(f[8]), opt(f[10])],
                workload_goodput: opt(f[11]),
                competitor_goodput: opt(f[12]),
                drops: count(f[13]),
                marks: count(f[14]),
            }
        })
        .collect()
}

/// Mean over seeds of `f` for the rows of (`rtt`, `cca`).
fn mean(rows: &[Row], rtt: f64, cca: &str, f: impl Fn(&Row) -> f64) -> f64 {
    let v: Vec<f64> = rows.iter().filter(|r| r.rtt_ms == rtt && r.cca == cca).map(f).collect();
    assert!(!v.is_empty(), "no rows for {rtt} ms, {cca}");
    v.iter().sum::<f64>() / v.len() as f64
}

fn harm_of(rows: &[Row], rtt: f64, cca: &str, stat: usize) -> f64 {
    mean(rows, rtt, cca, |r| r.harm[stat].expect("a competitor row has harms"))
}

fn solo_fct(rows: &[Row], rtt: f64, stat: usize) -> f64 {
    mean(rows, rtt, "-", |r| r.fct[stat])
}

/// Runs `dcsim harm` with `args` into `out` and returns stdout and the rows of harm.csv.
fn run_harm(case: &Case, out: &str, args: &[&str]) -> (String, Vec<Row>) {
    let mut all = vec!["harm", "--out", out];
    all.extend_from_slice(args);
    let stdout = case.ok(&all);
    let rows = parse_harm_csv(&read(&case.path(out).join("harm.csv")));
    (stdout, rows)
}

/// The reduced experiment of the shape tests: 100 flows per run, 10 and 80 ms, two seeds. The
/// timeout is twice ccafct's: seed 1 draws a 14.6 MB flow 4.5 s before the end of the window,
/// which beside Prague at 80 ms needs 58–68 s (with the model's changes of 2026-11-28), about
/// what the default 60 s leaves it.
const REDUCED: [&str; 10] =
    ["--flows", "100", "--rtt", "10ms,80ms", "--seeds", "2", "--jobs", "2", "--timeout", "120s"];

#[test]
fn reduced_experiment_has_the_shape_of_the_seed_and_writes_every_output() {
    let case = Case::new();
    let (stdout, rows) = run_harm(&case, "out", &REDUCED);
    let dir = case.path("out");

    // Rows: by RTT, then solo, cubic, prague, then seed.
    let order: Vec<(f64, &str, u64)> =
        rows.iter().map(|r| (r.rtt_ms, r.cca.as_str(), r.seed)).collect();
    let mut expected = Vec::new();
    for rtt in [10.0, 80.0] {
        for cca in ["-", "cubic", "prague"] {
            for seed in [1, 2] {
                expected.push((rtt, cca, seed));
            }
        }
    }
    assert_eq!(order, expected);
    for r in &rows {
        assert_eq!((r.flows, r.unfinished), (100, 0), "{r:?}");
        assert!(r.fct.iter().all(|&v| v > 0.0), "{r:?}");
        assert!(r.workload_goodput.unwrap() > 0.0, "{r:?}");
        let solo = r.cca == "-";
        assert_eq!(r.harm.iter().all(Option::is_none), solo, "{r:?}");
        assert_eq!(r.competitor_goodput.is_none(), solo, "{r:?}");
        // CoDel drops the Not-ECT workload; nothing ECN-capable runs in the solo run.
        assert!(r.drops.unwrap() > 0, "CoDel drops the Not-ECT workload: {r:?}");
        if solo {
            assert_eq!(r.marks, Some(0), "the workload is Not-ECT: {r:?}");
        } else {
            assert!(r.marks.unwrap() > 0, "the ECN-capable competitor is marked: {r:?}");
            assert!(r.competitor_goodput.unwrap() > 0.0, "{r:?}");
        }
    }

    // (1) Prague's harm exceeds CUBIC's in every RTT × statistic cell.
    for rtt in [10.0, 80.0] {
        for (s, name) in STATS.iter().enumerate() {
            let (c, p) = (harm_of(&rows, rtt, "cubic", s), harm_of(&rows, rtt, "prague", s));
            assert!(p > c, "{rtt} ms {name}: prague harm {p:.3} <= cubic harm {c:.3}");
        }
    }
    // (2) Prague's geometric-mean harm is at least 0.5 for RTT <= 80 ms.
    for rtt in [10.0, 80.0] {
        let p = harm_of(&rows, rtt, "prague", 0);
        assert!(p >= 0.5, "{rtt} ms: prague geomean harm {p:.3} < 0.5");
    }
    // (3) The solo FCT rises with RTT.
    let (a, b) = (solo_fct(&rows, 10.0, 0), solo_fct(&rows, 80.0, 0));
    assert!(b > a, "solo geomean FCT {a:.1} ms at 10 ms, {b:.1} ms at 80 ms");

    // stdout: the table with confidence intervals, then one timing line.
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("RTT   CCA     Seeds  GeoMean (Harm)"), "{stdout}");
    assert!(lines[2].starts_with("10ms  -       2      "), "{stdout}");
    assert_eq!(lines.len(), 2 + 6 + 1, "{stdout}");
    assert!(lines[8].starts_with("12 runs (2 RTTs x 3 x 2 seeds) in "), "{stdout}");
    assert!(lines[8].contains("M events/s; wrote out"), "{stdout}");

    // harm-summary.csv: one row per (RTT, cca).
    let summary = read(&dir.join("harm-summary.csv"));
    let head = summary.lines().next().unwrap();
    assert!(
        head.starts_with(
            "rtt_ms,cca,seeds,flows,unfinished,geomean_ms_mean,geomean_ms_ci95,geomean_harm_mean"
        ),
        "{head}"
    );
    assert!(head.ends_with("marks_mean,marks_ci95,reused_mean,reused_ci95"), "{head}");
    assert_eq!(summary.lines().count(), 1 + 6);

    // Per run: fct.csv of the workload flows, counters.csv.
    for rtt in [10, 80] {
        for cca in ["solo", "cubic", "prague"] {
            for seed in [1, 2] {
                let run = dir.join("runs").join(format!("rtt{rtt}-{cca}-s{seed}"));
                let fct = read(&run.join("fct.csv"));
                let mut fl = fct.lines();
                assert_eq!(
                    fl.next(),
                    Some(
                        "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,\
                         ref_ideal_fct_ns,dport"
                    )
                );
                let flows: Vec<&str> = fl.collect();
                assert_eq!(flows.len(), 100, "{}", run.display());
                // Workload server 0 to workload client 2, on ccafct's HTTP port.
                assert!(flows[0].starts_with("0,0,2,"), "{}", flows[0]);
                assert!(flows.iter().all(|l| l.ends_with(",8188")), "{}", run.display());
                assert!(!run.join("unfinished.csv").exists());
                let counters = read(&run.join("counters.csv"));
                assert!(counters.starts_with("name,value\nevents,"), "{counters}");
                for key in ["aqm_drops,", "ecn_marks,", "flows_done,100\n", "workload_period_ns,"] {
                    assert!(counters.contains(key), "{key} in {}", run.display());
                }
                assert_eq!(counters.contains("competitor_bytes_delivered,"), cca != "solo");
            }
        }
    }
    for f in ["rtt_harm.png", "rtt_harm.svg", "rtt_fct.png", "rtt_fct.svg"] {
        let p = dir.join("plots").join(f);
        assert!(fs::metadata(&p).map(|m| m.len() > 1000).unwrap_or(false), "{}", p.display());
    }
}

/// `cca`'s harm in the single CoDel queue and with `extra` options, at 10 ms, per statistic.
/// 300 flows: with 100, Prague's median alone moved by 0.17 when HyStart's rounds were aligned
/// to Linux's (the claim then held by 0.29 instead of 0.46); with 300 it moves by 0.04.
fn harm_with(cca: &str, extra: &[&str]) -> ([f64; 3], [f64; 3]) {
    let case = Case::new();
    let base = ["--flows", "300", "--rtt", "10ms", "--cca", cca, "--jobs", "2"];
    let (_, single) = run_harm(&case, "single", &base);
    let mut args = base.to_vec();
    args.extend_from_slice(extra);
    let (_, own) = run_harm(&case, "own", &args);
    let h = |rows: &[Row]| std::array::from_fn(|s| harm_of(rows, 10.0, cca, s));
    (h(&single), h(&own))
}

fn prague_harm_with(extra: &[&str]) -> ([f64; 3], [f64; 3]) {
    harm_with("prague", extra)
}

/// How far Prague's harm must fall below its value in the single CoDel queue for claim (4):
/// by at least 0.3 (on harm's 0–1 scale) in every statistic.
const FAR_BELOW: f64 = 0.3;

/// Claim (4) where the single queue's harm is itself small (160 ms, whose median harm is about
/// 0.3): "well below" is then a fall by `FAR_BELOW` or to a quarter of it at most.
fn well_below(own: f64, single: f64) -> bool {
    own <= single - FAR_BELOW || own <= single / 4.0
}

/// Claim (4)'s test at 10 ms: in every statistic, `own` (the harm with some change) at least
/// `FAR_BELOW` under `single` (the harm without it); `what` names the change in the message.
fn assert_far_below(single: [f64; 3], own: [f64; 3], cca: &str, what: &str) {
    for (s, name) in STATS.iter().enumerate() {
        assert!(
            own[s] <= single[s] - FAR_BELOW,
            "{name}: {cca} harm {:.3} with {what}, {:.3} without",
            own[s],
            single[s]
        );
    }
}

#[test]
fn dualpi2_protects_the_workload_from_prague() {
    // (4) In DualPI2, Prague's ECT(1) packets go to the L queue and the Not-ECT workload to the
    // C queue: Prague's harm falls far below its value in the single CoDel queue.
    let (single, own) = prague_harm_with(&["--aqm", "dualpi2"]);
    assert_far_below(single, own, "prague", "dualpi2 (fq_codel flows 1)");
}

#[test]
fn fq_codel_1024_protects_the_workload_from_prague() {
    // (4) With 1024 flow queues Prague has a queue of its own and the workload flows theirs:
    // Prague's harm falls far below its value in the single CoDel queue.
    let (single, own) = prague_harm_with(&["--fq-flows", "1024"]);
    assert_far_below(single, own, "prague", "fq_codel flows 1024 (flows 1)");
}

#[test]
fn ce_threshold_for_ect1_protects_the_workload_from_prague() {
    // (6) fq_codel's `ce_threshold 1ms ce_threshold_selector 0x1/0x1` gives Prague's ECT(1)
    // packets a step mark at 1 ms of sojourn in the single queue: Prague keeps the queue
    // below CoDel's 5 ms target, CoDel stops dropping the workload, and the harm falls far below
    // its value without the threshold.
    let (single, own) = prague_harm_with(&["--ce-threshold", "1ms"]);
    assert_far_below(single, own, "prague", "ce_threshold 1 ms");
}

#[test]
fn bbr_ignores_codels_marks_and_does_the_most_harm_unless_isolated() {
    // BBR v1 does not respond to the CE marks its ECT(0) packets get, and keeps about a BDP
    // queued: CoDel finds the queue above its target for good and marks and drops ever faster,
    // so the Not-ECT workload loses the most. In a flow queue of its own (fq_codel flows 1024)
    // the competitor's algorithm no longer matters.
    let (single, own) = harm_with("bbr", &["--fq-flows", "1024"]);
    for (s, name) in STATS.iter().enumerate() {
        assert!(single[s] >= 0.9, "{name}: bbr harm {:.3} in fq_codel flows 1", single[s]);
    }
    assert_far_below(single, own, "bbr", "fq_codel flows 1024 (flows 1)");
}

#[test]
fn the_ecn_asymmetry_decides_pragues_harm_and_workload_ecn_turns_drops_into_marks() {
    // Spec risk 1: the experiment rests on the competitor being ECN-capable and the workload
    // not. A Not-ECT Prague (`--competitor-ecn off`) responds to losses like Reno: CoDel drops
    // its packets as well, its count stays low, and the harm falls to about CUBIC's.
    let case = Case::new();
    let base = ["--flows", "300", "--rtt", "10ms", "--cca", "prague", "--jobs", "2"];
    let with = |out: &str, extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        run_harm(&case, out, &args).1
    };
    let single = with("single", &[]);
    let off = with("off", &["--competitor-ecn", "off"]);
    let harms = |rows: &[Row]| std::array::from_fn(|s| harm_of(rows, 10.0, "prague", s));
    assert_far_below(harms(&single), harms(&off), "prague", "--competitor-ecn off");
    let row = |rows: &[Row], cca: &str| rows.iter().find(|r| r.cca == cca).unwrap().clone();
    assert_eq!(row(&off, "prague").marks, Some(0), "nothing is ECN-capable");

    // ECN-capable workload flows (`--workload-ecn accurate`) have their data marked, not
    // dropped: alone, CoDel drops only what is Not-ECT (handshakes, pure ACKs).
    let ecn = with("ecn", &["--workload-ecn", "accurate"]);
    let (plain, marked) = (row(&single, "-"), row(&ecn, "-"));
    assert_eq!(plain.marks, Some(0));
    assert!(plain.drops.unwrap() > 50, "{plain:?}");
    assert!(marked.marks.unwrap() > 50, "{marked:?}");
    assert!(marked.drops.unwrap() * 20 < plain.drops.unwrap(), "{marked:?} against {plain:?}");
    // Beside Prague as well: the workload is marked at Prague's rate instead of dropped.
    let (p_plain, p_marked) = (row(&single, "prague"), row(&ecn, "prague"));
    assert!(p_marked.drops.unwrap() * 20 < p_plain.drops.unwrap(), "{p_marked:?}, {p_plain:?}");
    assert!(p_marked.marks > p_plain.marks, "{p_marked:?}, {p_plain:?}");
}

/// Every file under `dir`, as relative path → contents.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.insert(rel, fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn results_do_not_depend_on_jobs_and_one_seed_prints_ccafcts_table() {
    let case = Case::new();
    let small = ["--flows", "20", "--rtt", "10ms", "--warmup", "2s"];
    let one = |jobs: &str| {
        let out = format!("j{jobs}");
        let mut args = small.to_vec();
        args.extend_from_slice(&["--jobs", jobs, "--seeds", "2"]);
        run_harm(&case, &out, &args);
        tree(&case.path(&out))
    };
    let (a, b) = (one("1"), one("2"));
    let csvs = |t: &BTreeMap<String, Vec<u8>>| {
        t.iter()
            .filter(|(k, _)| k.ends_with(".csv"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<BTreeMap<_, _>>()
    };
    let (a, b) = (csvs(&a), csvs(&b));
    assert_eq!(a.len(), 2 + 3 * 2 * 2, "harm.csv, harm-summary.csv, 6 runs x 2: {:?}", a.keys());
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (k, v) in &a {
        assert!(v == &b[k], "{k} differs between --jobs 1 and --jobs 2");
    }

    // One seed: ccafct's table, exactly as harm.csv says.
    let (stdout, rows) = run_harm(&case, "s1", &small);
    assert_eq!(rows.len(), 3);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("RTT   CCA     GeoMean (Harm)"), "{stdout}");
    assert!(lines[0].ends_with("P95 (Harm)"), "{stdout}");
    assert_eq!(lines.len(), 2 + 3 + 1, "{stdout}");
    for (l, r) in lines[2..5].iter().zip(&rows) {
        let fields: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(fields[0], format!("{}ms", r.rtt_ms), "{l}");
        assert_eq!(fields[1], r.cca, "{l}");
        assert_eq!(fields[2], format!("{:.1}ms", r.fct[0]), "{l}");
        if let Some(h) = r.harm[0].filter(|&h| h != 0.0) {
            assert_eq!(fields[3], format!("({h:.3})"), "{l}");
        }
    }
    assert!(!case.path("s1").join("harm-summary.csv").exists());

    // `ccafct`, the spec's name for the command, is the same command.
    let mut args = vec!["ccafct", "--out", "alias"];
    args.extend_from_slice(&small);
    let table = |out: &str| out.lines().take(5).map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(table(&case.ok(&args)), table(&stdout), "ccafct prints harm's table");
    assert!(
        csvs(&tree(&case.path("alias"))) == csvs(&tree(&case.path("s1"))),
        "ccafct writes what harm writes"
    );

    // Again into j1, with one seed: runs/ holds this run's folders only (the second seed's
    // were left beside a harm.csv without them); a folder of other files is kept.
    std::fs::create_dir_all(case.path("j1/runs/mine")).unwrap();
    std::fs::write(case.path("j1/runs/mine/notes.txt"), "x").unwrap();
    run_harm(&case, "j1", &small);
    let mut runs: Vec<String> = std::fs::read_dir(case.path("j1/runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    runs.sort();
    assert_eq!(runs, ["mine", "rtt10-cubic-s1", "rtt10-prague-s1", "rtt10-solo-s1"]);
    assert!(!case.path("j1/harm-summary.csv").exists());
}

#[test]
fn bad_options_exit_2_name_the_option_and_write_nothing() {
    let case = Case::new();
    case.write("file", "not a folder");
    let cases: &[(&[&str], &str)] = &[
        (&["--rtt", "0ms"], "--rtt: 0ms is too short"),
        (&["--rtt", "10ms,4us"], "--rtt: 4us is too short"),
        (&["--rtt", "11s"], "--rtt: 11s is above the largest RTT accepted, 10 s"),
        (&["--rtt", "10"], "--rtt: `10` needs a unit"),
        (&["--rtt", "10ms,20ms,10ms"], "--rtt: 10ms is given twice"),
        (
            &["--cca", "cubic,bbr2"],
            "--cca: unknown congestion control \"bbr2\"; known: newreno, cubic, dctcp, prague, bbr",
        ),
        (&["--cca", "prague,prague"], "--cca: prague is given twice"),
        (&["--seeds", "0"], "--seeds: must be in 1..=1000, got 0"),
        (&["--flows", "0"], "--flows: must be in 1..=1000000, got 0"),
        (&["--fq-flows", "0"], "--fq-flows: must be in 1..=65536, got 0"),
        (&["--fq-flows", "65537"], "--fq-flows: must be in 1..=65536, got 65537"),
        (
            &["--aqm", "dualpi2", "--fq-flows", "1024"],
            "--fq-flows: 1024 given, but it only applies to --aqm fq_codel",
        ),
        (&["--aqm", "red"], "--aqm: unknown queue discipline \"red\"; known: fq_codel, dualpi2"),
        (&["--bandwidth", "0Mbps"], "--bandwidth: 0Mbps is outside 1 Mb/s up to"),
        (&["--bandwidth", "999kbps"], "--bandwidth: 999kbps is outside"),
        (&["--bandwidth", "10Gbps"], "--bandwidth: 10Gbps is outside"),
        (&["--bandwidth", "fast"], "--bandwidth: `fast` does not start with a number"),
        (&["--rmem-max", "64KiB"], "--rmem-max: must not be below rmem (131072 B), got 65536 B"),
        (&["--rmem-max", "3GiB"], "--rmem-max: must not exceed 2147483648 B"),
        (&["--rmem-max", "big"], "--rmem-max: `big` does not start with a number"),
        (&["--warmup", "2h"], "--warmup: "),
        (&["--timeout", "3601s"], "--timeout: 3601s is above an hour"),
        (
            &["--reuse", "keepalive"],
            "--reuse: unknown connection reuse \"keepalive\"; known: none, go-http",
        ),
        (
            &["--workload-ecn", "on"],
            "--workload-ecn: unknown ECN mode \"on\"; known: off, classic, accurate",
        ),
        (
            &["--cca", "cubic,dctcp", "--competitor-ecn", "classic"],
            "--competitor-ecn: dctcp needs the accurate CE count",
        ),
        (&["--ce-threshold", "0ms"], "--ce-threshold: 0ms is outside (0, 10 s]"),
        (&["--ce-threshold", "11s"], "--ce-threshold: 11s is outside (0, 10 s]"),
        (
            &["--ce-selector", "any"],
            "--ce-selector: any given, but it only applies with --ce-threshold",
        ),
        (
            &["--ce-threshold", "1ms", "--ce-selector", "ect0"],
            "--ce-selector: unknown selector \"ect0\"; known: ect1, any",
        ),
        (
            &["--aqm", "dualpi2", "--ce-threshold", "1ms"],
            "--ce-threshold: 1ms given, but it only applies to --aqm fq_codel",
        ),
        (&["--jobs", "0"], "--jobs"),
        (&["--seeds", "two"], "--seeds"),
    ];
    for (extra, message) in cases {
        let mut args = vec!["harm", "--out", "out"];
        args.extend_from_slice(extra);
        let stderr = case.fails(&args, &["out"]);
        assert!(stderr.contains(message), "dcsim {args:?}: expected {message:?} in {stderr}");
    }
    let stderr = case.fails(&["harm", "--out", "file", "--flows", "1"], &[]);
    assert!(stderr.contains("cannot write file: exists and is not a directory"), "{stderr}");
}

/// An output that cannot be written once the runs are done (a run's folder that is a file, a
/// run's `fct.csv` that is a folder) leaves none of the outputs: the figures and the earlier
/// runs' files had gone in place before the failure.
#[test]
fn an_output_that_cannot_be_written_leaves_no_other() {
    let quick = ["--flows", "2", "--rtt", "10ms", "--cca", "cubic", "--warmup", "1s"];
    let listing = |case: &Case, out: &str| -> Vec<String> {
        let mut all = Vec::new();
        let mut dirs = vec![case.path(out)];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    dirs.push(p.clone());
                }
                all.push(p.strip_prefix(case.path(out)).unwrap().display().to_string());
            }
        }
        all.sort();
        all
    };
    // The solo run's folder is a file.
    let case = Case::new();
    case.write("a/runs/rtt10-solo-s1", "not a folder");
    let mut args = vec!["harm", "--out", "a"];
    args.extend_from_slice(&quick);
    let stderr = case.fails(&args, &[]);
    assert!(stderr.contains("rtt10-solo-s1: exists and is not a directory"), "{stderr}");
    assert_eq!(listing(&case, "a"), ["runs", "runs/rtt10-solo-s1"]);
    // The competitor run's fct.csv is a folder: the solo run's files are not left either.
    let case = Case::new();
    std::fs::create_dir_all(case.path("b/runs/rtt10-cubic-s1/fct.csv")).unwrap();
    args[2] = "b";
    let stderr = case.fails(&args, &[]);
    assert!(stderr.contains("fct.csv"), "{stderr}");
    assert_eq!(listing(&case, "b"), ["runs", "runs/rtt10-cubic-s1", "runs/rtt10-cubic-s1/fct.csv"]);
}

// ---------------------------------------------------------------------------------------------
// Full size (release build: `cargo test --release -p dcsim-cli --test harm -- --ignored`).
// ---------------------------------------------------------------------------------------------

const RTTS: [f64; 5] = [10.0, 20.0, 40.0, 80.0, 160.0];

/// The default experiment (900 flows, 10–160 ms, cubic and prague) over `seeds` seeds.
fn full_size(seeds: &str, extra: &[&str]) -> Vec<Row> {
    let case = Case::new();
    let mut args = vec!["--seeds", seeds];
    args.extend_from_slice(extra);
    let (stdout, rows) = run_harm(&case, "out", &args);
    println!("{stdout}");
    rows
}

#[test]
#[ignore = "full size: 15 runs of 900 flows per seed (about 10 s per seed in release on 2 cores), \
            then DualPI2 and ce_threshold runs of one seed"]
fn full_size_default_experiment_has_the_shape_of_the_seed() {
    let rows = full_size("3", &[]);
    assert!(rows.iter().all(|r| r.unfinished == 0), "every flow finishes");
    for rtt in RTTS {
        // Spec A4 test 1: harm(prague) > harm(cubic) in all 15 cells.
        for (s, name) in STATS.iter().enumerate() {
            let (c, p) = (harm_of(&rows, rtt, "cubic", s), harm_of(&rows, rtt, "prague", s));
            assert!(p > c, "{rtt} ms {name}: prague {p:.3} <= cubic {c:.3}");
        }
        // Test 2: Prague geomean harm >= 0.5 for RTT <= 80 ms.
        if rtt <= 80.0 {
            let p = harm_of(&rows, rtt, "prague", 0);
            assert!(p >= 0.5, "{rtt} ms: prague geomean harm {p:.3}");
        }
    }
    // Test 2: and higher at 10 ms than at 160 ms.
    assert!(harm_of(&rows, 10.0, "prague", 0) > harm_of(&rows, 160.0, "prague", 0));
    // Test 4: solo geomean FCT rises strictly with RTT.
    for w in RTTS.windows(2) {
        let (a, b) = (solo_fct(&rows, w[0], 0), solo_fct(&rows, w[1], 0));
        assert!(b > a, "solo geomean {a:.1} ms at {} ms, {b:.1} ms at {} ms", w[0], w[1]);
    }
    // Test 6 (sensitivity) with DualPI2: Prague's harm falls well below its fq_codel value.
    let dual = full_size("1", &["--aqm", "dualpi2", "--cca", "prague"]);
    for rtt in RTTS {
        for (s, name) in STATS.iter().enumerate() {
            let (single, own) =
                (harm_of(&rows, rtt, "prague", s), harm_of(&dual, rtt, "prague", s));
            assert!(
                well_below(own, single),
                "{rtt} ms {name}: dualpi2 {own:.3}, flows 1 {single:.3}"
            );
        }
    }
    // Test 6 with fq_codel's ce_threshold 1 ms for ECT(1).
    let ce = full_size("1", &["--ce-threshold", "1ms", "--cca", "prague"]);
    for rtt in RTTS {
        for (s, name) in STATS.iter().enumerate() {
            let (single, own) = (harm_of(&rows, rtt, "prague", s), harm_of(&ce, rtt, "prague", s));
            assert!(
                well_below(own, single),
                "{rtt} ms {name}: ce_threshold 1 ms {own:.3}, without {single:.3}"
            );
        }
    }
}

#[test]
#[ignore = "full size; fails at 160 ms by CUBIC's geomean harm alone (0.047 over these three \
            seeds, 0.050 ± 0.015 over five, where at least 0.05 is asked; Prague's FCT ratio \
            passes with 2.15), see docs/harm.md"]
fn full_size_cubic_harm_and_prague_slowdown_are_in_the_specs_ranges() {
    let rows = full_size("3", &[]);
    for rtt in RTTS {
        // Spec A4 test 3: CUBIC geomean harm in [0.05, 0.6].
        let c = harm_of(&rows, rtt, "cubic", 0);
        assert!((0.05..=0.6).contains(&c), "{rtt} ms: cubic geomean harm {c:.3}");
        // Test 5: FCT_prague / FCT_solo >= 2 (the seed: 6.6 ... 2.5).
        let ratio = mean(&rows, rtt, "prague", |r| r.fct[0]) / solo_fct(&rows, rtt, 0);
        assert!(ratio >= 2.0, "{rtt} ms: prague / solo geomean FCT {ratio:.2}");
    }
}

#[test]
#[ignore = "full size: 10 runs of 900 flows (about 10 s in release on 2 cores)"]
fn full_size_fq_codel_1024_protects_the_workload_from_prague() {
    let rows = full_size("1", &["--cca", "prague"]);
    let fq = full_size("1", &["--cca", "prague", "--fq-flows", "1024"]);
    for rtt in RTTS {
        for (s, name) in STATS.iter().enumerate() {
            let (single, own) = (harm_of(&rows, rtt, "prague", s), harm_of(&fq, rtt, "prague", s));
            assert!(
                well_below(own, single),
                "{rtt} ms {name}: flows 1024 {own:.3}, flows 1 {single:.3}"
            );
        }
    }
}

/// ccafct's Go client reuses connections (`--reuse go-http`, the default): at a long RTT a flow
/// still dialing often takes another's connection as it frees, skips its handshake and starts
/// from a grown window, so the workload alone finishes sooner than with a connection per flow
/// (`--reuse none`), which reuses nothing.
#[test]
fn connection_reuse_shortens_the_solo_fcts_at_a_long_rtt() {
    let case = Case::new();
    let args = ["--flows", "100", "--rtt", "160ms", "--cca", "cubic", "--jobs", "2"];
    let (_, go) = run_harm(&case, "go", &args);
    let mut none_args = args.to_vec();
    none_args.extend_from_slice(&["--reuse", "none"]);
    let (_, none) = run_harm(&case, "none", &none_args);
    let reused = |out: &str| {
        let text = read(&case.path(out).join("runs/rtt160-solo-s1/counters.csv"));
        let line = text.lines().find(|l| l.starts_with("tcp_reused_connections,")).unwrap();
        line.split(',').nth(1).unwrap().parse::<u64>().unwrap()
    };
    assert_eq!(reused("none"), 0);
    let n = reused("go");
    // harm.csv's `reused` column is the runs' counter.
    let csv = read(&case.path("go").join("harm.csv"));
    let solo = csv.lines().nth(1).unwrap();
    assert!(solo.starts_with("160,-,1,"), "{solo}");
    assert_eq!(solo.rsplit(',').next().unwrap(), n.to_string());
    assert!((20..100).contains(&n), "{n} of 100 flows took another's connection");
    // The geometric mean and the median (the P95, flows that take CoDel's drops, barely moves).
    for (s, name) in STATS.iter().enumerate().take(2) {
        let (a, b) = (solo_fct(&go, 160.0, s), solo_fct(&none, 160.0, s));
        assert!(a < 0.96 * b, "{name}: {a:.1} ms with reuse, {b:.1} ms without");
    }
}
