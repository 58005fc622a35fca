//! `[[events]]`, `[routing]` and `[nic] rto` end to end: a run with a failed spine link writes
//! `drops_link_down` and `timeouts` in `counters.csv`; without a timeout the affected flows are
//! in `unfinished.csv` (reason `running`); a flow that gives up has reason
//! `retries-exhausted`; `validate` describes the events and the timeout in effect (`auto`: on
//! only where RoCE packets can be lost); `import-ns3` writes `rto = "off"`; every bad value is a
//! located error with exit status 2 and nothing written.

mod common;

use common::Case;

/// Hosts 0–31 on leaves 32–35 (8 each), spines 36–37, 100 Gb/s, 1 µs, 0.1% loss on every
/// link; 16-to-1 incasts of 200 KB to host 0 from 33 µs on, and a spine link of the receiver's
/// leaf failing at 50 µs.
const BASE: &str = r#"[simulation]
stop_time = "100ms"

[topology]
kind = "leaf-spine"
leaves = 4
spines = 2
hosts_per_leaf = 8
fabric_rate = "100Gbps"
error_rate_per_link = 0.001

[cc]
name = "hpcc"

[flows]
incast = { senders = 16, size = "200KB", fraction = 0.3, duration = "200us", receiver = 0 }

[[events]]
at = "50us"
action = "link-down"
link = [32, 36]

[routing]
convergence = "2us"
"#;

fn counters(text: &str) -> std::collections::HashMap<String, u64> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let (k, v) = l.split_once(',')?;
            Some((k.to_string(), v.parse::<f64>().ok()? as u64))
        })
        .collect()
}

#[test]
fn a_failed_spine_link_is_repaired_by_the_default_timeout() {
    let c = Case::new();
    c.write("s.toml", BASE);
    let v = c.ok(&["validate", "s.toml"]);
    assert!(v.contains("link events: 1 (down at 50 µs: 32-36); routing converges 2 µs"), "{v}");
    assert!(v.contains("RoCE retransmission timeout: 4 ms (auto"), "{v}");
    c.ok(&["run", "s.toml", "--out", "out"]);
    let k = counters(&std::fs::read_to_string(c.path("out/counters.csv")).unwrap());
    assert!(k["drops_link_down"] > 0, "{k:?}");
    assert!(k["timeouts"] > 0, "{k:?}");
    assert_eq!(k["flows_failed"], 0);
    assert_eq!(k["flows_unfinished"], 0);
    assert!(!c.path("out/unfinished.csv").exists());
    // The same on three threads.
    c.ok(&["run", "s.toml", "--out", "out3", "--threads", "3"]);
    for f in ["fct.csv", "counters.csv"] {
        let a = std::fs::read(c.path("out").join(f)).unwrap();
        let b = std::fs::read(c.path("out3").join(f)).unwrap();
        assert!(a == b, "{f} differs between 1 and 3 threads");
    }
}

#[test]
fn without_a_timeout_the_affected_flows_are_reported_running() {
    let c = Case::new();
    c.write("s.toml", &format!("{BASE}\n[nic]\nrto = \"off\"\n"));
    let v = c.ok(&["validate", "s.toml"]);
    assert!(v.contains("RoCE retransmission timeout: off"), "{v}");
    c.ok(&["run", "s.toml", "--out", "out"]);
    let un = std::fs::read_to_string(c.path("out/unfinished.csv")).unwrap();
    let mut lines = un.lines();
    assert_eq!(
        lines.next().unwrap(),
        "flow_id,src,dst,size_bytes,start_ns,ideal_fct_ns,ref_ideal_fct_ns,dport,reason,gave_up_ns"
    );
    let rows: Vec<&str> = lines.collect();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r.ends_with(",running,")), "{un}");
    let k = counters(&std::fs::read_to_string(c.path("out/counters.csv")).unwrap());
    assert!(k["drops_link_down"] > 0);
    assert!(!k.contains_key("timeouts"), "no timeout, no timeouts row: {k:?}");
}

#[test]
fn a_flow_that_exhausts_its_retries_is_reported_with_the_reason() {
    let c = Case::new();
    // Host 0's own link fails for good: the incast to it cannot finish.
    let s = BASE.replace("link = [32, 36]", "link = [0, 32]");
    c.write("s.toml", &format!("{s}\n[nic]\nrto = \"100us\"\nrto_retries = 2\nrto_backoff = 2\n"));
    c.ok(&["run", "s.toml", "--out", "out"]);
    let un = std::fs::read_to_string(c.path("out/unfinished.csv")).unwrap();
    assert!(un.lines().skip(1).any(|r| r.contains(",retries-exhausted,")), "{un}");
    let k = counters(&std::fs::read_to_string(c.path("out/counters.csv")).unwrap());
    assert!(k["flows_failed"] > 0, "{k:?}");
}

#[test]
fn auto_leaves_a_lossless_fabric_without_a_timeout() {
    let c = Case::new();
    let lossless = BASE
        .replace("error_rate_per_link = 0.001\n", "")
        .replace("[[events]]\nat = \"50us\"\naction = \"link-down\"\nlink = [32, 36]\n", "");
    c.write("s.toml", &lossless);
    let v = c.ok(&["validate", "s.toml"]);
    assert!(v.contains("RoCE retransmission timeout: off"), "{v}");
    assert!(!v.contains("link events"), "{v}");
    // PFC off: packets can be lost, so auto turns the timeout on.
    c.write("p.toml", &format!("{lossless}\n[switch]\npfc = false\n"));
    let v = c.ok(&["validate", "p.toml"]);
    assert!(v.contains("RoCE retransmission timeout: 4 ms (auto"), "{v}");
}

#[test]
fn bad_events_and_timeouts_are_located_errors() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "action = \"link-down\"",
            "action = \"link-flap\"",
            &[
                "s.toml:20:10: field `events[0].action`",
                "unknown action \"link-flap\"",
                "link-down, link-up",
            ],
        ),
        (
            "link = [32, 36]",
            "link = [32, 33]",
            &["s.toml:21:8: field `events[0].link`", "no link between nodes 32 and 33"],
        ),
        (
            "link = [32, 36]",
            "link = [32, 99]",
            &["field `events[0].link[1]`", "node 99 does not exist (node ids are 0..=37)"],
        ),
        ("link = [32, 36]", "link = [32]", &["field `events[0].link`", "names 1 nodes"]),
        (
            "link = [32, 36]",
            "link = [-1, 36]",
            &["field `events[0].link[0]`", "node -1 does not exist"],
        ),
        ("at = \"50us\"\n", "", &["field `events[0].at`", "is required"]),
        ("at = \"50us\"", "at = \"-5us\"", &["field `events[0].at`"]),
        ("at = \"50us\"", "at = 20", &["field `events[0].at`", "needs a unit"]),
        ("at = \"50us\"", "when = \"50us\"", &["unknown field `when`"]),
        ("convergence = \"2us\"", "convergence = \"soon\"", &["field `routing.convergence`"]),
    ];
    for (from, to, want) in cases {
        let c = Case::new();
        assert!(BASE.contains(from), "{from}");
        c.write("s.toml", &BASE.replacen(from, to, 1));
        let err = c.fails(&["run", "s.toml", "--out", "out"], &["out"]);
        for w in *want {
            assert!(err.contains(w), "{to}: expected `{w}` in {err}");
        }
        c.fails(&["validate", "s.toml"], &[]);
    }
    let nic: &[(&str, &[&str])] = &[
        ("rto = \"0s\"", &["field `nic.rto`", "must be greater than zero"]),
        ("rto = \"later\"", &["field `nic.rto`", "(or \"off\", or \"auto\")"]),
        ("rto = 5", &["field `nic.rto`", "needs a unit"]),
        ("rto = \"2000s\"", &["field `nic.rto`", "longer than the limit of 1000 s"]),
        ("rto_backoff = 0", &["field `nic.rto_backoff`", "outside 1..=16"]),
        ("rto_backoff = 17", &["field `nic.rto_backoff`"]),
        ("rto_retries = -1", &["field `nic.rto_retries`", "negative"]),
        (
            "rto = \"off\"\nrto_retries = 3",
            &["field `nic.rto_retries`", "no effect with rto = \"off\""],
        ),
    ];
    for (text, want) in nic {
        let c = Case::new();
        c.write("s.toml", &format!("{BASE}\n[nic]\n{text}\n"));
        let err = c.fails(&["run", "s.toml", "--out", "out"], &["out"]);
        assert!(err.contains("s.toml:") && err.contains(": field `nic.rto"), "{text}: {err}");
        for w in *want {
            assert!(err.contains(w), "{text}: expected `{w}` in {err}");
        }
    }
}

#[test]
fn import_ns3_turns_the_timeout_off_and_maps_link_down() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/reference/calibration/small-ws30");
    if !dir.is_dir() {
        eprintln!("skipped: {} not found", dir.display());
        return;
    }
    let c = Case::new();
    for f in ["topology.txt", "flow.txt"] {
        c.write(&format!("ref/{f}"), &std::fs::read_to_string(dir.join(f)).unwrap());
    }
    let cfg = std::fs::read_to_string(dir.join("config-hpcc.txt")).unwrap();
    c.write("ref/config.txt", &cfg);
    c.ok(&["import-ns3", "ref/config.txt", "--out", "s.toml"]);
    let s = std::fs::read_to_string(c.path("s.toml")).unwrap();
    let line = s.lines().find(|l| l.starts_with("rto = ")).expect("an rto line");
    assert!(line.starts_with("rto = \"off\""), "{line}");
    assert!(line.contains("the reference has no retransmission timeout"), "{line}");
    assert!(!s.contains("[[events]]"), "LINK_DOWN 0 0 0 fails nothing");

    // LINK_DOWN t a b: the a-b link fails at 2 s + t µs, routes recomputed at once.
    assert!(cfg.contains("LINK_DOWN 0 0 0"));
    c.write("ref/config.txt", &cfg.replace("LINK_DOWN 0 0 0", "LINK_DOWN 150 64 68"));
    c.ok(&["import-ns3", "ref/config.txt", "--out", "d.toml"]);
    let s = std::fs::read_to_string(c.path("d.toml")).unwrap();
    for want in [
        "[[events]]",
        "at = \"2000150us\"",
        "action = \"link-down\"",
        "link = [64, 68]",
        "convergence = \"0s\"",
    ] {
        assert!(s.contains(want), "expected `{want}` in\n{s}");
    }
    let v = c.ok(&["validate", "d.toml"]);
    assert!(v.contains("link events: 1 (down at 2000150 µs: 64-68)"), "{v}");

    // A link that does not exist: the scenario is written (so that the error's line points
    // into it) and a note names the config the setting came from.
    c.write("ref/config.txt", &cfg.replace("LINK_DOWN 0 0 0", "LINK_DOWN 150 2 3"));
    let o = c.run(&["import-ns3", "ref/config.txt", "--out", "e.toml"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("note: e.toml was imported from ref/config.txt and written"), "{err}");
    assert!(err.contains("error: e.toml:") && err.contains("events[0].link"), "{err}");
}

#[test]
fn a_sweep_sets_the_events_array_and_prints_each_cell_as_it_finishes() {
    let c = Case::new();
    c.write("base.toml", BASE);
    c.write(
        "sweep.toml",
        "base = \"base.toml\"\n\n[axes]\nevents = [[], [{ at = \"50us\", action = \"link-down\", \
         link = [32, 36] }]]\n",
    );
    let o = c.run(&["sweep", "sweep.toml", "--out", "out", "--jobs", "1"]);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("finished 1/2: [0] "), "{stderr}");
    assert!(stderr.contains("finished 2/2: [1] "), "{stderr}");
    let cells: Vec<_> =
        std::fs::read_dir(c.path("out/cells")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(cells.len(), 2);
    let mut with = 0;
    for cell in cells {
        let k = counters(&std::fs::read_to_string(cell.join("counters.csv")).unwrap());
        if k.get("drops_link_down").is_some_and(|&d| d > 0) {
            with += 1;
        }
    }
    assert_eq!(with, 1, "one cell has the failure");
}

#[test]
fn late_events_and_a_timeout_shorter_than_a_round_trip_are_warned_about() {
    let c = Case::new();
    let s = BASE.replace("at = \"50us\"", "at = \"200ms\"");
    c.write("s.toml", &format!("{s}\n[nic]\nrto = \"2us\"\n"));
    let v = c.ok(&["validate", "s.toml"]);
    assert!(v.contains("1 link event at or after the stop time (100 ms) will not happen"), "{v}");
    assert!(v.contains("field `nic.rto`: 2 µs is shorter than the longest base round trip"), "{v}");
    let o = c.run(&["run", "s.toml", "--out", "out", "--quiet"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("warning: s.toml:"), "{stderr}");
    assert!(stderr.contains("will not happen"), "{stderr}");
}

#[test]
fn auto_counts_a_dropping_queue_discipline_on_a_roce_class_as_lossy() {
    let c = Case::new();
    let lossless = BASE
        .replace("error_rate_per_link = 0.001\n", "")
        .replace("[[events]]\nat = \"50us\"\naction = \"link-down\"\nlink = [32, 36]\n", "");
    c.write("s.toml", &format!("{lossless}\n[[queue]]\nswitch = 32\nkind = \"codel\"\n"));
    let v = c.ok(&["validate", "s.toml"]);
    assert!(v.contains("RoCE retransmission timeout: 4 ms (auto"), "{v}");
    // RED marking ECN-capable RoCE packets never drops them.
    c.write("r.toml", &format!("{lossless}\n[[queue]]\nswitch = 32\nkind = \"red\"\n"));
    let v = c.ok(&["validate", "r.toml"]);
    assert!(v.contains("RoCE retransmission timeout: off"), "{v}");
}

#[test]
fn routing_tables_of_many_event_times_are_bounded() {
    let c = Case::new();
    // A k = 48 fat tree's table has 2880 × 1153 cells: 100 tables pass the limit of 2^28.
    let mut s = String::from(
        "[simulation]\nstop_time = \"10ms\"\n\n[topology]\nkind = \"fat-tree\"\nk = 48\n\n\
         [[flows.list]]\nsrc = 0\ndst = 5\nsize = 1000\n",
    );
    for i in 0..100 {
        let action = if i % 2 == 0 { "link-down" } else { "link-up" };
        s.push_str(&format!(
            "\n[[events]]\nat = \"{}us\"\naction = \"{action}\"\nlink = [0, 27648]\n",
            i + 1
        ));
    }
    c.write("s.toml", &s);
    let err = c.fails(&["validate", "s.toml"], &[]);
    assert!(err.contains("routing tables of"), "{err}");
    assert!(err.contains("field `events["), "{err}");
}
