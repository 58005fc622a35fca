//! Inputs that used to hang, allocate without bound, overflow silently or be accepted without a
//! word: each now gives a located error (exit status 2) or a warning, within a time and memory
//! bound — a regression makes the test fail, not time out.
//!
//! The inputs are those of the issue "Faults, in the network and in the input".

mod common;

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::Case;

/// Seconds a command may take (a debug build on a loaded machine; the commands here take
/// milliseconds).
const TIME_BOUND: u64 = 60;
/// Virtual memory the command may use, KiB (`ulimit -v`): an unbounded allocation aborts.
const MEMORY_BOUND_KIB: u64 = 4 << 20;

/// Runs `dcsim args` in the case's folder under [`TIME_BOUND`] and [`MEMORY_BOUND_KIB`],
/// failing the test (after killing it) if it runs longer.
fn run_bounded(c: &Case, args: &[&str]) -> Output {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("ulimit -v {MEMORY_BOUND_KIB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_dcsim"))
        .args(args)
        .current_dir(c.path("."))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start dcsim");
    let t0 = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if t0.elapsed() > Duration::from_secs(TIME_BOUND) {
            let _ = child.kill();
            let o = child.wait_with_output().expect("output");
            panic!(
                "dcsim {args:?} ran longer than {TIME_BOUND} s; stderr: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `dcsim validate s.toml` on `scenario`, expected to fail with status 2; returns stderr.
fn rejected(scenario: &str) -> String {
    let c = Case::new();
    c.write("s.toml", scenario);
    let o = run_bounded(&c, &["validate", "s.toml"]);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "stderr: {stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(o.stdout.is_empty());
    stderr
}

/// `dcsim validate s.toml` on `scenario`, expected to succeed; returns (stdout, stderr).
fn accepted(scenario: &str) -> (String, String) {
    let c = Case::new();
    c.write("s.toml", scenario);
    let o = run_bounded(&c, &["validate", "s.toml"]);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "stderr: {stderr}");
    (String::from_utf8_lossy(&o.stdout).into_owned(), stderr)
}

fn assert_has(text: &str, parts: &[&str]) {
    for p in parts {
        assert!(text.contains(p), "expected `{p}` in:\n{text}");
    }
}

/// Eight hosts on two leaves; the topology's extra keys and the rest of the scenario follow.
fn scenario(topology: &str, rest: &str) -> String {
    format!(
        "[simulation]\nstop_time = \"10ms\"\n\n[topology]\nkind = \"leaf-spine\"\nleaves = 2\n\
         spines = 1\nhosts_per_leaf = 4\n{topology}\n{rest}"
    )
}

const ONE_FLOW: &str = "[[flows.list]]\nsrc = 0\ndst = 5\nsize = \"1MB\"\n";

// ---------------------------------------------------------------------------------------------
// Hangs: the generator's loop ends for every accepted input.
// ---------------------------------------------------------------------------------------------

#[test]
fn tiny_load_without_drop_last_returns() {
    let s = scenario(
        "",
        "[flows]\nworkload = { cdf = \"websearch\", load = 1e-11, duration = \"10ms\", \
         drop_last = false }\n",
    );
    let (out, _) = accepted(&s);
    assert_has(&out, &["0 flows, realized load 0.0000"]);
}

#[test]
fn one_bps_hosts_without_drop_last_return() {
    let s = scenario(
        "host_rate = \"1bps\"\nfabric_rate = \"1bps\"",
        "[flows]\nworkload = { cdf = \"websearch\", load = 0.3, duration = \"10ms\", \
         drop_last = false }\n",
    );
    let (out, _) = accepted(&s);
    assert_has(&out, &["0 flows, realized load 0.0000"]);
}

// ---------------------------------------------------------------------------------------------
// Unbounded memory: times beyond the limit, windows that would hold too many flows.
// ---------------------------------------------------------------------------------------------

#[test]
fn workload_start_beyond_the_time_range() {
    let e = rejected(&scenario(
        "",
        "[flows]\nworkload = { cdf = \"websearch\", load = 0.3, duration = \"1ms\", \
         start = \"18000000s\" }\n",
    ));
    assert_has(
        &e,
        &["error: s.toml:11:71: field `flows.workload.start`: `18000000s` is beyond the time \
           limit of 2^62 ps (4611686.018427387904 s, about 53 days)"],
    );
}

#[test]
fn absurd_window_is_refused_before_generating() {
    let e = rejected(&scenario(
        "",
        "[flows]\nworkload = { cdf = \"websearch\", load = 0.999999, duration = \"1000000s\" }\n",
    ));
    assert_has(
        &e,
        &[
            "error: s.toml:11:61: field `flows.workload.duration`: about 5.844e10 flows \
             expected (8 hosts, each a flow every 136.9 µs on average, for 1000000 s), more \
             than the limit of 50000000 flows",
            "raise the limit with `[flows] max_flows`",
        ],
    );
    // The same without the last-candidate drop, and with a lower limit of the user's.
    let e = rejected(&scenario(
        "",
        "[flows]\nmax_flows = 100\nworkload = { cdf = \"websearch\", load = 0.5, \
         duration = \"100ms\", drop_last = false }\n",
    ));
    assert_has(&e, &["field `flows.workload.duration`", "more than the limit of 100 flows"]);
    // Incast, and the limit counting explicit flows.
    let e = rejected(&scenario(
        "",
        &format!(
            "[flows]\nmax_flows = 1\nincast = {{ senders = 4, size = \"1KB\", fraction = 0.5, \
             duration = \"10ms\" }}\n{ONE_FLOW}"
        ),
    ));
    assert_has(&e, &["field `flows.incast.duration`", "(besides 1 other flows)", "limit of 1 "]);
    let e = rejected(&scenario("", "[flows]\nmax_flows = 0\nlist = []\n"));
    assert_has(&e, &["field `flows.max_flows`: 0 must be at least 1"]);
}

/// A limit raised beyond what memory holds: the expected count is checked against what the
/// machine can allocate before generating (here beyond any machine's address space), and the
/// error names the generator's field instead of the process aborting on an allocation.
#[test]
fn a_raised_limit_beyond_memory_is_refused_before_generating() {
    let e = rejected(&scenario(
        "",
        "[flows]\nmax_flows = 1000000000000\n\
         workload = { cdf = \"websearch\", load = 0.999999, duration = \"4000000s\" }\n",
    ));
    assert_has(
        &e,
        &["error: s.toml:12:61: field `flows.workload.duration`: about 2.337e11 flows \
             expected would take about 222918.5 GiB to simulate (up to 1024 bytes per flow), \
             more memory than this machine can allocate; generate fewer flows"],
    );
}

// ---------------------------------------------------------------------------------------------
// Silent overflow: every time x rate and size x count is checked.
// ---------------------------------------------------------------------------------------------

#[test]
fn link_delays_beyond_the_time_range() {
    let e = rejected(&scenario("delay = \"10000000s\"", ONE_FLOW));
    assert_has(
        &e,
        &["error: s.toml:9:9: field `topology.delay`: `10000000s` is beyond the time limit"],
    );
    // Within the limit each, but not as a round trip over four links.
    let e = rejected(&scenario("delay = \"2000000s\"", ONE_FLOW));
    assert_has(
        &e,
        &["error: s.toml:9:9: field `topology.delay`: the longest path's base round trip would \
           be about 1.600000e7 s (2 × 8.000000e6 s of propagation over up to 4 links"],
    );
    // A topology file's delay is located in the file.
    let c = Case::new();
    c.write("topo.txt", "3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 10000000s 0\n");
    c.write(
        "s.toml",
        "[topology]\nkind = \"file\"\npath = \"topo.txt\"\n[[flows.list]]\nsrc = 0\ndst = 1\n\
         size = 1\n",
    );
    let o = run_bounded(&c, &["validate", "s.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert_has(
        &String::from_utf8_lossy(&o.stderr),
        &["error: topo.txt:4:13: field `link[1].delay`: delay '10000000s' is longer than the \
           limit of 2^62 ps"],
    );
}

#[test]
fn flows_whose_ideal_fct_cannot_be_represented() {
    let huge = ONE_FLOW.replace("\"1MB\"", "\"18446744073709551615\"");
    let e = rejected(&scenario("", &huge));
    assert_has(
        &e,
        &["error: s.toml:13:8: field `flows.list[0].size`: a flow of 18446744073709551615 B \
           could take longer than the time limit of 2^62 ps (4611686.018427387904 s, about 53 \
           days) to complete: at most 28481262465411000 B fit in 1000-byte segments on this \
           network (whose slowest path link is 100Gbps, longest path 4 links and 4 µs one way)"],
    );
    // A 1 bit/s fabric: 1 MB is already too much; 100 KB is fine.
    let e = rejected(&scenario("fabric_rate = \"1bps\"", ONE_FLOW));
    assert_has(
        &e,
        &["field `flows.list[0].size`: a flow of 1000000 B", "slowest path link is 1bps"],
    );
    accepted(&scenario("fabric_rate = \"1bps\"", &ONE_FLOW.replace("1MB", "100KB")));
    // In a flow file, at the size's column.
    let c = Case::new();
    c.write("flows.txt", "1\n0 5 3 100 18446744073709551615 0\n");
    c.write("s.toml", &scenario("", "[flows]\nfile = \"flows.txt\"\n"));
    let o = run_bounded(&c, &["validate", "s.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert_has(
        &String::from_utf8_lossy(&o.stderr),
        &["error: flows.txt:2:11: field `flow[0].size`: a flow of 18446744073709551615 B"],
    );
    // A generator: blamed on the field that sets its sizes.
    let e = rejected(&scenario(
        "fabric_rate = \"1bps\"",
        "[flows]\nincast = { senders = 2, size = \"1GB\", fraction = 0.001, duration = \"1000s\" }\n",
    ));
    assert_has(&e, &["field `flows.incast.size`: a flow of 1000000000 B"]);
    // Beyond any flow, whether or not the window draws one (2^64 − 1 B passed when no incast
    // event fell in it), and a CDF point beyond it (1e300 B was taken, its mean saturated).
    let e = rejected(&scenario(
        "",
        "[flows]\nincast = { senders = 2, size = \"18446744073709551615B\", fraction = 0.5, \
         duration = \"4611686s\" }\n",
    ));
    assert_has(&e, &["field `flows.incast.size`: 18446744073709551615 B is more than 2^62 bytes"]);
    let c = Case::new();
    c.write("c.txt", "0 0\n1e300 100\n");
    c.write(
        "s.toml",
        &scenario(
            "",
            "[flows]\nworkload = { cdf = \"c.txt\", load = 0.5, duration = \"100us\" }\n",
        ),
    );
    let o = run_bounded(&c, &["validate", "s.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert_has(
        &String::from_utf8_lossy(&o.stderr),
        &["error: c.txt:2:1: field `point[1].size`: bad CDF: size must be at most 2^62 bytes (4.6 EB), found 1e300"],
    );
}

#[test]
fn huge_headroom_multiple() {
    let e = rejected(&scenario(
        "",
        &format!("{ONE_FLOW}[switch]\nheadroom_bdp_multiple = 9223372036854775807\n"),
    ));
    assert_has(
        &e,
        &["field `switch.headroom_bdp_multiple`: switch 8 would set aside \
           922337203685477580700000 bytes of PFC headroom (5 ports), more than 64 bits"],
    );
    let e = rejected(&scenario(
        "",
        &format!("{ONE_FLOW}[switch]\nreserve = \"18446744073709551615B\"\n"),
    ));
    assert_has(&e, &["field `switch.reserve`: switch 8 would set aside"]);
}

// ---------------------------------------------------------------------------------------------
// Silent acceptance: warnings on stderr, and in `validate`'s description.
// ---------------------------------------------------------------------------------------------

/// `dcsim run s.toml --out out ARGS` on `scenario`, expected to succeed; returns stderr.
fn run_warns(scenario: &str, args: &[&str]) -> String {
    let c = Case::new();
    c.write("s.toml", scenario);
    let mut all = vec!["run", "s.toml", "--out", "out"];
    all.extend_from_slice(args);
    let o = run_bounded(&c, &all);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "stderr: {stderr}");
    assert!(c.path("out/fct.csv").exists());
    stderr
}

/// A queue's byte limit below the largest data frame drops every full frame at its ports
/// (accepted silently before: the flows never finished). RoCE frames count where RoCE flows
/// run, each TCP group's full segment where it is defined.
#[test]
fn queue_byte_limits_below_a_frame() {
    let queue = |kind: &str, limit: &str| {
        format!("[[queue]]\nkind = \"{kind}\"\nat = \"host-facing\"\n{limit}\n")
    };
    // RoCE: 1000 B of payload and 48 B of headers.
    let s = scenario("", &format!("{}{ONE_FLOW}", queue("fifo", "limit_bytes = 1047")));
    let w = "warning: s.toml:13:15: field `queue[0].limit_bytes`: 1047 B is less than the largest \
             data frame of this scenario (1048 B): fifo drops every such frame at its ports";
    assert_has(&accepted(&s).0, &[w]);
    let s = scenario("", &format!("{}{ONE_FLOW}", queue("fifo", "limit_bytes = 1048")));
    assert!(!accepted(&s).0.contains("warning"), "a frame that fits is kept");
    // The switches' own cap on a lossy egress queue alike.
    let s = scenario(
        "",
        &format!(
            "[switch]\npfc = false\nlossy_admission = \"egress\"\negress_cap = \"1000B\"\n{ONE_FLOW}"
        ),
    );
    let w = "field `switch.egress_cap`: 1000 B is less than the largest data frame in a lossy \
             class (1048 B): every such frame is dropped";
    assert_has(&accepted(&s).0, &[w]);
    // Lossless RoCE frames never meet the cap: no warning with PFC on.
    let s = scenario(
        "",
        &format!("[switch]\nlossy_admission = \"egress\"\negress_cap = \"1000B\"\n{ONE_FLOW}"),
    );
    assert!(!accepted(&s).0.contains("warning"), "{}", accepted(&s).0);
    // A TCP group no flow uses does not count (a sweep's RoCE cells of a base that defines
    // TCP groups).
    let unused = "[[group]]\nname = \"t\"\ncca = \"cubic\"\n";
    let s = scenario("", &format!("{unused}{}{ONE_FLOW}", queue("fifo", "limit_bytes = 1100")));
    assert!(!accepted(&s).0.contains("warning"), "{}", accepted(&s).0);
    // A TCP group's 1514-byte frames, with fq_codel's and dualpi2's `memory_limit`.
    let tcp = "[[group]]\nname = \"t\"\ncca = \"cubic\"\n[flows]\ngroup = \"t\"\n";
    for kind in ["fq_codel", "dualpi2"] {
        let s = scenario("", &format!("{tcp}{}{ONE_FLOW}", queue(kind, "memory_limit = 1500")));
        let w = format!(
            "field `queue[0].memory_limit`: 1500 B is less than the largest data frame of this \
             scenario (1514 B): {kind} drops every such frame"
        );
        assert_has(&accepted(&s).0, &[&w]);
    }
}

/// A `[[queue]]` on classes no traffic uses changes nothing, and says so; a class given twice
/// is an error.
#[test]
fn queues_on_unused_classes_are_warned_about() {
    let queue = |classes: &str| {
        format!("[[queue]]\nkind = \"codel\"\nat = \"host-facing\"\nclasses = {classes}\n")
    };
    // The flow is in RoCE's class 3.
    let s = scenario("", &format!("{}{ONE_FLOW}", queue("[5, 6]")));
    let w = "field `queue[0].classes`: codel applies to classes 5, 6 only, and no flow or \
             connection uses them (the traffic is in class 3): it changes nothing";
    assert_has(&accepted(&s).0, &[w]);
    let s = scenario("", &format!("{}{ONE_FLOW}", queue("[3, 5]")));
    assert!(!accepted(&s).0.contains("warning"), "{}", accepted(&s).0);
    let e = rejected(&scenario("", &format!("{}{ONE_FLOW}", queue("[3, 3]"))));
    assert_has(&e, &["field `queue[0].classes`: class 3 is given twice"]);
}

/// A RoCE flow smaller than `ack_interval` that does not end on a `chunk` multiple is never
/// ACKed in full (spec §2.3): delivered, never finished, without a word before.
#[test]
fn flows_below_the_ack_interval() {
    let flow = |size: &str| {
        format!("[nic]\nack_interval = \"2000B\"\n[[flows.list]]\nsrc = 0\ndst = 5\nsize = \"{size}\"\n")
    };
    let s = scenario("", &flow("1500B"));
    let w = "field `nic.ack_interval`: 1 RoCE flow (of 1) smaller than ack_interval (2000 B) and \
             not ending on a multiple of chunk (4000 B) will never be ACKed in full";
    assert_has(&accepted(&s).0, &[w]);
    let e = run_warns(&s, &[]);
    assert_has(&e, &[w]);
    for fine in ["2000B", "4000B"] {
        assert!(!accepted(&scenario("", &flow(fine))).0.contains("warning"), "{fine}");
    }
}

/// A window that closes before the receiver's first ACK (ACKs below `ack_interval` only at
/// chunk multiples): a flow stalls for certain, an `[[rpc]]` connection may. Both ran silently
/// before; the run confirms the flow's stall and that the warning's "fine" side finishes.
#[test]
fn windows_that_close_before_the_first_ack() {
    let nic = |chunk: &str, window: &str| {
        format!("[nic]\nack_interval = \"2MB\"\nchunk = \"{chunk}\"\nwindow = \"{window}\"\n")
    };
    let flow = "[[flows.list]]\nsrc = 0\ndst = 5\nsize = \"3MB\"\n";
    // 3333-byte chunks never fall on 1000-byte packet ends before 2 MB: the first ACK is at
    // 2 MB, beyond a one-BDP window.
    let stuck = scenario("", &format!("[cc]\nname = \"hpcc\"\n{}{flow}", nic("3333B", "fixed")));
    let w = "field `nic.ack_interval`: 1 RoCE flow (of 1) will stall: the window (";
    let tail = "lets out fewer bytes than the receiver takes to send its first ACK (2000000 B: \
                ack_interval 2000000 B, chunk 3333 B, mtu 1000 B)";
    assert_has(&accepted(&stuck).0, &[w, tail]);
    let c = Case::new();
    c.write("s.toml", &stuck);
    let o = run_bounded(&c, &["run", "s.toml", "--out", "o"]);
    assert_eq!(o.status.code(), Some(0));
    assert_has(&String::from_utf8_lossy(&o.stdout), &["flows: 0 done, 1 unfinished"]);
    // 4000-byte chunks are ACKed every four packets, inside the window: no warning, finished.
    let fine = scenario("", &format!("[cc]\nname = \"hpcc\"\n{}{flow}", nic("4000B", "fixed")));
    assert!(!accepted(&fine).0.contains("warning"), "{}", accepted(&fine).0);
    c.write("s.toml", &fine);
    let o = run_bounded(&c, &["run", "s.toml", "--out", "o"]);
    assert_has(&String::from_utf8_lossy(&o.stdout), &["flows: 1 done, 0 unfinished"]);
    // Without a window nothing waits for ACKs.
    let none = scenario("", &format!("[cc]\nname = \"hpcc\"\n{}{flow}", nic("3333B", "none")));
    assert!(!accepted(&none).0.contains("warning"), "{}", accepted(&none).0);
    // An RPC connection: the stream's chunk ACKs depend on the message sizes.
    let rpc = "[[rpc]]\nname = \"a\"\nclients = [0]\nservers = [5]\nconnections = 1\n\
               outstanding = 1\nquery = \"1500B\"\nresponse = \"64B\"\n";
    let s = scenario("", &format!("[cc]\nname = \"hpcc\"\n{}{rpc}", nic("3333B", "variable")));
    let w = "field `nic.ack_interval`: 1 RoCE connection (of 1) may stall: a window (";
    let tail = "is below ack_interval (2000000 B), and until a stream has carried that many bytes \
                its receiver ACKs only where a message ends on a multiple of chunk (3333 B) (a \
                variable window is smaller still once the rate falls)";
    assert_has(&accepted(&s).0, &[w, tail]);
    // With 1-byte chunks every packet is ACKed: no warning.
    let s = scenario("", &format!("[cc]\nname = \"hpcc\"\n{}{rpc}", nic("1B", "variable")));
    assert!(!accepted(&s).0.contains("warning"), "{}", accepted(&s).0);
    // With a retransmission timeout the flow moves on one window per timeout.
    let slow = stuck.replace("[nic]\n", "[nic]\nrto = \"1ms\"\n");
    assert_has(
        &accepted(&slow).0,
        &["1 RoCE flow (of 1) will advance one window per retransmission timeout"],
    );
}

/// The largest `--threads` runs with a bounded shard count (two per thread, at most 4096,
/// then one per switch at most) and gives the one-thread results: it asked the partitioner for
/// 8.6 billion shards and aborted on the allocation.
#[test]
fn the_largest_thread_count_is_bounded() {
    let c = Case::new();
    c.write("s.toml", &scenario("", ONE_FLOW));
    for (out, threads) in [("one", "1"), ("many", "4294967295")] {
        let o = run_bounded(&c, &["run", "s.toml", "--out", out, "--threads", threads]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let read = |p: &str| std::fs::read(c.path(p)).unwrap();
    assert_eq!(read("one/fct.csv"), read("many/fct.csv"));
}

#[test]
fn flows_after_the_stop_time() {
    let s = scenario("", &format!("{ONE_FLOW}start = \"20ms\"\n"));
    let w = "warning: s.toml:2:13: field `simulation.stop_time`: 1 flow (of 1) starts at or after \
             the stop time (10 ms) and will not run (the first, flow 0, at 20 ms)";
    let (out, stderr) = accepted(&s);
    assert_has(&out, &[w]);
    assert!(stderr.is_empty(), "validate puts its warnings in the description: {stderr}");
    assert_has(&run_warns(&s, &[]), &[w]);
    // Without a stop time in the file the warning names the file only.
    let e = run_warns(&s.replace("stop_time = \"10ms\"", ""), &[]);
    assert!(e.is_empty(), "{e}");
    let late = s.replace("stop_time = \"10ms\"", "").replace("20ms", "5s");
    assert_has(&run_warns(&late, &[]), &["warning: s.toml: 1 flow (of 1) starts at or after"]);
}

/// Warnings added after an adversarial sweep: generators that gave no flow, RoCE timeout keys
/// that `rto = "auto"` leaves without effect, and an HPCC-over-TCP minimum rate at or above the
/// slowest link (eta then changes nothing: the law cannot slow a flow below that link).
#[test]
fn no_flows_unused_timeout_keys_and_a_minimum_rate_at_the_bottleneck() {
    let s = scenario(
        "",
        "[flows]\nincast = { senders = 2, size = \"1KB\", fraction = 1e-300, duration = \"1ms\" }\n",
    );
    let (out, _) = accepted(&s);
    assert_has(
        &out,
        &["warning: s.toml:10:1: field `flows`: no flows to simulate: the generators gave none"],
    );
    assert_has(&out, &["Incast: 2 senders x 1000 B at 1e-300 of capacity"]);
    // No generator at all: the warning does not blame one.
    let (out, _) = accepted(&scenario("", "[flows]\nlist = []\n"));
    assert_has(
        &out,
        &["field `flows`: no flows to simulate: the scenario lists none, and has no generator"],
    );
    let s = scenario("", &format!("{ONE_FLOW}[nic]\nrto_retries = 3\n"));
    let (out, _) = accepted(&s);
    assert_has(
        &out,
        &["field `nic.rto_retries`: has no effect: rto = \"auto\" left the RoCE timeout off"],
    );
    let hpcc = |rates: &str, min: &str| {
        scenario(
            rates,
            &format!(
                "[[group]]\nname = \"h\"\ncca = {{ name = \"hpcc\"{min} }}\n\
                 {ONE_FLOW}group = \"h\"\n"
            ),
        )
    };
    let slow = "host_rate = \"1Gbps\"\nfabric_rate = \"1Gbps\"";
    let (out, _) = accepted(&hpcc(slow, ""));
    assert_has(
        &out,
        &["field `group[0].cca`: HPCC's min_rate (1Gbps) is not below the slowest link of the \
           routed paths (1Gbps)"],
    );
    for (rates, min) in [(slow, ", min_rate = \"10Mbps\""), ("", "")] {
        let (out, _) = accepted(&hpcc(rates, min));
        assert!(!out.contains("min_rate"), "{out}");
    }
}

/// Lognormal flows whose start times, the start plus the sum of the gaps, pass the time limit
/// (`dcsim gen` wrote them, saturated, into a flow file no run accepts).
#[test]
fn lognormal_starts_past_the_time_limit() {
    let flows = |gap: &str| {
        scenario(
            "",
            &format!(
                "[flows]\nlognormal = {{ src = 0, dst = 5, flows = 3, start = \"0s\", \
                 mean_gap = \"{gap}\" }}\n"
            ),
        )
    };
    let e = rejected(&flows("4611686s"));
    assert_has(
        &e,
        &["field `flows.lognormal.mean_gap`: flow ", "would start later than the limit"],
    );
    accepted(&flows("1ms"));
}

/// An integer beyond 64 bits, which the TOML parser refuses before any field is known: the
/// error names the field by the value's place (it gave only the line and column).
#[test]
fn integers_beyond_64_bits_name_their_field() {
    let e = rejected(&scenario(
        "",
        "[flows]\nlist = [{ src = 0, dst = 5, size = 99999999999999999999 }]\n",
    ));
    assert_has(&e, &["field `flows.list[0].size`: number too large to fit in target type"]);
}

/// A workload's or incast's arrival window that ends past the time limit (`validate` and
/// `gen` took it, and `run` then refused flow 0 without naming a field).
#[test]
fn arrival_windows_past_the_time_limit() {
    let late = "4611686018427387000ps";
    for (table, rest) in [
        ("workload", "cdf = \"websearch\", load = 0.3"),
        ("incast", "senders = 2, size = \"1KB\", fraction = 0.1"),
    ] {
        let window = |start: &str| {
            scenario(
                "",
                &format!(
                    "[flows]\n{table} = {{ {rest}, duration = \"1ms\", start = \"{start}\" }}\n"
                ),
            )
        };
        let e = rejected(&window(late));
        assert_has(&e, &[&format!("field `flows.{table}.start`: the arrival window, 1 ms from")]);
        assert_has(&e, &["ends later than the limit of 2^62 ps"]);
        accepted(&window("1ms"));
    }
    // An incast without a start of its own starts with the workload's window: the error then
    // points at the incast's duration.
    let e = rejected(&scenario(
        "",
        "[flows]\nworkload = { cdf = \"websearch\", load = 0.3, duration = \"1ns\", \
         start = \"4611686017000000000ps\" }\n\
         incast = { senders = 2, size = \"1KB\", fraction = 0.1, duration = \"2ms\" }\n",
    ));
    assert_has(&e, &["field `flows.incast.duration`: the arrival window, 2 ms from"]);
}

/// The `[cc]` scheme's rate floor at or above the slowest link, where RoCE flows run: the
/// controller cannot slow them below that link, so it has no effect there. Blamed on
/// `cc.min_rate` where written, else on `cc.name` (the default, 1 Gb/s); not given for a
/// floor below the link, for `none`, or when every flow is TCP.
#[test]
fn a_roce_schemes_minimum_rate_at_the_bottleneck() {
    let slow = "host_rate = \"1Gbps\"\nfabric_rate = \"1Gbps\"";
    let with = |rates: &str, cc: &str, rest: &str| scenario(rates, &format!("{cc}{rest}"));
    let (out, _) = accepted(&with(slow, "[cc]\nname = \"hpcc\"\n", ONE_FLOW));
    assert_has(
        &out,
        &["field `cc.name`: hpcc's min_rate (1Gbps) is not below the slowest link of the routed \
           paths (1Gbps)"],
    );
    let fast_floor = "[cc]\nname = \"dcqcn\"\nmin_rate = \"200Gbps\"\n";
    let (out, _) = accepted(&with("", fast_floor, ONE_FLOW));
    assert_has(
        &out,
        &["s.toml:12:12: field `cc.min_rate`: dcqcn's min_rate (200Gbps) is not below the \
           slowest link of the routed paths (100Gbps)"],
    );
    let tcp_only = "[[group]]\nname = \"t\"\ncca = \"cubic\"\n[[flows.list]]\nsrc = 0\n\
                    dst = 5\nsize = \"1MB\"\ngroup = \"t\"\n";
    for (rates, cc, rest) in [
        (slow, "[cc]\nname = \"timely\"\nmin_rate = \"100Mbps\"\n", ONE_FLOW),
        (slow, "", ONE_FLOW),
        (slow, "[cc]\nname = \"hpcc\"\n", tcp_only),
    ] {
        let (out, _) = accepted(&with(rates, cc, rest));
        assert!(!out.contains("min_rate"), "{out}");
    }
}

/// `[output] qlen_ports` with no queue monitor on: warned at the key by `validate` and by
/// `run`, but not once `run --queue-lengths` (or `[output] queue_lengths`) turns one on.
#[test]
fn queue_ports_without_a_monitor() {
    let ports = "[output]\nqlen_ports = { at = \"host-facing\" }\n";
    let w = "s.toml:15:14: field `output.qlen_ports`: selects ports for the queue monitors, but \
             none is on";
    let s = scenario("", &format!("{ONE_FLOW}{ports}"));
    assert_has(&accepted(&s).0, &[w]);
    assert_has(&run_warns(&s, &[]), &[w]);
    assert!(!run_warns(&s, &["--queue-lengths"]).contains("qlen_ports"));
    let on = scenario("", &format!("{ONE_FLOW}{ports}queue_lengths = true\n"));
    assert!(!accepted(&on).0.contains("qlen_ports"));
}

#[test]
fn realized_load_far_below_the_requested_one() {
    let s = scenario(
        "",
        "[flows]\nworkload = { cdf = \"websearch\", load = 0.3, duration = \"1ms\", seed = 3 }\n",
    );
    let (out, _) = accepted(&s);
    assert_has(
        &out,
        &[
            "warning: s.toml:11:40: field `flows.workload.load`: the generated flows realize a \
             load of 0.",
            "below the requested 0.3",
            "a host expects only 2.2 flows in the window (1 ms), so a few flow sizes decide the \
             load, and `drop_last = true` drops each host's last arrival",
            "lengthen `duration` or set `drop_last = false`",
        ],
    );
    // A tiny load makes no flow at all, and says why.
    let (out, _) = accepted(&s.replace("0.3", "1e-9"));
    assert_has(
        &out,
        &["realize a load of 0.0000, 100% below the requested 0.000000001 (0 flows): no flow \
           arrived: the window (1 ms) is short next to a host's mean gap between flows"],
    );
    // A long window realizes the load: no warning about it.
    let (out, _) = accepted(&s.replace("1ms", "200ms"));
    assert!(!out.contains("realize a load"), "{out}");
}

#[test]
fn buffer_smaller_than_a_frame_and_the_headroom() {
    let (out, _) = accepted(&scenario("", &format!("{ONE_FLOW}[switch]\nbuffer = 1\n")));
    assert_has(
        &out,
        &["warning: s.toml:15:10: field `switch.buffer`: the switch buffer (1 B) is smaller \
           than one full-size data frame (1048 B) plus the PFC headroom (300000 B) and reserve \
           (20480 B) of switch 8 (5 ports): its shared buffer is empty"],
    );
    let (out, _) = accepted(&scenario("", &format!("{ONE_FLOW}[nic]\nmtu = \"1GB\"\n")));
    assert_has(
        &out,
        &["warning: s.toml:15:7: field `nic.mtu`: the switch buffer (33554432 B) is smaller \
           than one full-size data frame (1000000048 B)"],
    );
    // A reserve or headroom the scenario writes, that alone leaves no room for a frame, is
    // blamed (it named no field and advised only a larger buffer).
    let (out, _) = accepted(&scenario("", &format!("{ONE_FLOW}[switch]\nreserve = \"1TB\"\n")));
    assert_has(
        &out,
        &[
            "field `switch.reserve`: the switch buffer (33554432 B)",
            "raise `switch.buffer` or \
           lower `switch.reserve`",
        ],
    );
    let s = format!("{ONE_FLOW}[switch]\nheadroom_bdp_multiple = 1000\n");
    assert_has(
        &accepted(&scenario("", &s)).0,
        &["field `switch.headroom_bdp_multiple`: the switch buffer"],
    );
    // TCP traffic only: its full segment is the frame.
    let tcp = "[[group]]\nname = \"t\"\ncca = \"cubic\"\n[flows]\ngroup = \"t\"\n";
    let (out, _) = accepted(&scenario("", &format!("{tcp}{ONE_FLOW}[switch]\nbuffer = 1\n")));
    assert_has(&out, &["than one full-size data frame (1514 B)"]);
    // ... and `nic.mtu`, which sets only RoCE frames, is not blamed even where written.
    let s = format!("{tcp}{ONE_FLOW}[nic]\nmtu = 1000\n[switch]\nbuffer = 1000\n");
    let (out, _) = accepted(&scenario("", &s));
    assert_has(&out, &["field `switch.buffer`: the switch buffer (1000 B)"]);
    assert!(!out.contains("nic.mtu"), "{out}");
    let (out, _) = accepted(&scenario("", ONE_FLOW));
    assert!(!out.contains("warning"), "{out}");
}

#[test]
fn threads_beyond_the_shards_and_a_short_lookahead() {
    // Two leaves and a spine: three switches, so at most three shards.
    let s = scenario("", ONE_FLOW);
    assert_has(
        &run_warns(&s, &["--threads", "1000"]),
        &["warning: s.toml: --threads 1000: the network splits into at most 3 shards (one \
           switch with its hosts each, or several), so the run uses at most 3 threads"],
    );
    // Two threads ask for four shards by default; only three can be made, but each thread
    // still has one: nothing to warn about.
    // (A machine that lends this process one CPU adds only the warning about that.)
    let two = run_warns(&s, &["--threads", "2"]);
    assert!(two.lines().all(|l| l.contains("this process may use only")), "{two}");
    assert_has(
        &run_warns(&s, &["--shards", "5"]),
        &["warning: s.toml: --shards 5: the network splits into at most 3 shards (one switch \
           with its hosts each, or several), so the run uses at most 3 shards"],
    );
    // Three shards can be made (the warning said two until 2026-11-26, for a run of three).
    assert!(run_warns(&s, &["--shards", "3"]).is_empty());
    assert_has(
        &run_warns(&s, &["--shards", "2", "--threads", "3"]),
        &["warning: s.toml: --threads 3: the run has at most 2 shards and uses at most one \
           thread per shard, so it uses at most 2 threads"],
    );
    assert!(run_warns(&s, &["--shards", "2"]).is_empty());
    let short = scenario("delay = \"10ns\"", ONE_FLOW);
    assert_has(
        &run_warns(&short, &["--threads", "2"]),
        &["warning: s.toml: --threads 2: the lookahead (the shortest delay of a link between \
           shards) is 10 ns, under 100 ns; the shards synchronize that often, so this run is \
           likely slower than with --threads 1 (a heuristic)"],
    );
    // One thread: no lookahead to warn about (10 ns links do leave the PFC headroom short:
    // `short_pfc_headroom_is_warned_about_and_turns_the_auto_timeout_on`).
    let one = run_warns(&short, &[]);
    assert!(!one.contains("lookahead"), "{one}");
    assert!(one.contains("PFC headroom"), "{one}");
    assert!(one.lines().all(|l| l.contains("PFC headroom")), "{one}");
    // A slow fabric: a 1 µs lookahead is less than one frame's time on its fastest link.
    let slow = scenario("host_rate = \"1Gbps\"\nfabric_rate = \"1Gbps\"", ONE_FLOW);
    assert_has(
        &run_warns(&slow, &["--threads", "2"]),
        &["is 1 µs, under the 8.384 µs a 1Gbps link takes to send one 1048-byte frame"],
    );
}

/// A partitioner that makes fewer shards than asked for says so in the run summary (it ran
/// silently with fewer before 2026-11-29): `rack` deals the spine onto a rack's shard, so two
/// leaves and a spine give two shards of the three asked for, where `load` makes three.
#[test]
fn fewer_shards_than_asked_are_noted() {
    let c = Case::new();
    c.write("s.toml", &scenario("", ONE_FLOW));
    let summary = |partition: &str| {
        let o = run_bounded(
            &c,
            &["run", "s.toml", "--out", "out", "--shards", "3", "--partition", partition],
        );
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let rack = summary("rack");
    assert_has(
        &rack,
        &[
            "shards: 2,",
            "note: 3 shards asked for, 2 made: the rack partitioner placed the network's \
             switches (each with its hosts) in fewer",
        ],
    );
    let load = summary("load");
    assert_has(&load, &["shards: 3,"]);
    assert!(!load.contains("asked for"), "{load}");
}

/// More threads than the CPUs this process may use are warned about: the threads wait for each
/// other every window, so one without a CPU holds all (under `taskset -c 0`, two threads ran 45
/// times slower than one, silently). The bound is the test's own machine: a leaf-spine of 20
/// switches lets up to 20 threads have shards.
#[test]
fn threads_beyond_the_cpus_are_warned_about() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    // More switches than CPUs, so that every thread asked for has shards.
    let s = format!(
        "[simulation]\nstop_time = \"1ms\"\n\n[topology]\nkind = \"leaf-spine\"\nleaves = {}\n\
         spines = 2\nhosts_per_leaf = 2\n{ONE_FLOW}",
        cpus + 2
    );
    let out = run_warns(&s, &["--threads", &cpus.to_string()]);
    assert!(!out.contains("this process may use only"), "{out}");
    let over = (cpus + 1).to_string();
    let s_ = if cpus == 1 { "" } else { "s" };
    assert_has(
        &run_warns(&s, &["--threads", &over]),
        &[&format!("--threads {over}: this process may use only {cpus} CPU{s_}")],
    );
}

#[test]
fn sweep_prints_each_cells_warnings_once() {
    let c = Case::new();
    c.write("base.toml", &scenario("", &format!("{ONE_FLOW}start = \"20ms\"\n")));
    c.write(
        "sweep.toml",
        "base = \"base.toml\"\n[axes]\n\"simulation.stop_time\" = [\"10ms\", \"30ms\"]\n",
    );
    for args in [&["sweep", "sweep.toml", "--dry-run"][..], &["sweep", "sweep.toml", "--out", "o"]]
    {
        let o = run_bounded(&c, args);
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(0), "{stderr}");
        let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("warning: ")).collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        assert_has(
            lines[0],
            &["warning: sweep.toml: cell 10ms (\"simulation.stop_time\" = \"10ms\"): field \
               `simulation.stop_time`: 1 flow (of 1) starts at or after the stop time (10 ms)"],
        );
    }
}

#[test]
fn topologies_too_large_to_route() {
    // Within the size limit, but 15000 destination leaves × a BFS over 225001 nodes and link
    // ends each: refused before routing.
    let e = rejected(&scenario("", ONE_FLOW).replace("leaves = 2", "leaves = 15000"));
    assert_has(
        &e,
        &["error: s.toml:5:8: field `topology.kind`: routing this network takes 3375015000 \
           steps (one breadth-first search over every node and both ends of every link per \
           switch that hosts hang from), more than the limit of 268435456"],
    );
    // Too large to build at all.
    let e = rejected(&scenario("", ONE_FLOW).replace("leaves = 2", "leaves = 1000000"));
    assert_has(
        &e,
        &["error: s.toml:5:8: field `topology.kind`: the topology has 5000001 nodes and 5000000 \
           links, more than the limit of 4194304 in all"],
    );
    // Beyond even the builders' guard (2^24): the same limit named, at the same field (it
    // said "more than 16777216 nodes or links" at `topology`).
    let e = rejected(&scenario("", ONE_FLOW).replace("leaves = 2", "leaves = 10000000"));
    assert_has(
        &e,
        &["error: s.toml:5:8: field `topology.kind`: the topology would have more than 4194304 \
           nodes and links in all (the limit)"],
    );
}

#[test]
fn queries_whose_ideal_qct_cannot_be_represented() {
    // A 1 TiB query in 1-byte segments on 1 Gb/s links: 2^40 frames of about 2 KB.
    let s = scenario(
        "host_rate = \"1Gbps\"\nfabric_rate = \"1Gbps\"",
        "[[group]]\nname = \"t\"\ncca = \"newreno\"\ntcp = { mss = 1 }\n\
         [[rpc]]\nclients = [0]\nservers = [5]\ngroup = \"t\"\noutstanding = 1\nquery = \"1024GiB\"\n",
    );
    let e = rejected(&s);
    assert_has(
        &e,
        &["error: s.toml:20:9: field `rpc[0].query`: a query of 1099511627776 B and its response \
           of 64 B: a flow of 1099511627840 B could take longer than the time limit"],
    );
    accepted(&s.replace("1024GiB", "1MB"));
}

/// Settings that would do nothing where they are written are refused or warned about (each
/// ran silently; found by a helper's adversarial inputs, 2026-11-29).
#[test]
fn settings_that_would_do_nothing() {
    // Connection reuse pools a client's listed flows; an application keeps its own.
    let group =
        |tcp: &str| format!("[[group]]\nname = \"t\"\ncca = \"cubic\"\ntcp = {{ {tcp} }}\n");
    let rpc =
        "[[rpc]]\nclients = [0]\nservers = [5]\ngroup = \"t\"\noutstanding = 1\nquery = 100\n\
               response = \"10KB\"\n";
    let reuse = group("handshake = true, reuse = \"go-http\"");
    let e = rejected(&scenario("", &format!("{reuse}{rpc}")));
    assert_has(&e, &["field `rpc[0].group`: group \"t\" has reuse = \"go-http\""]);
    accepted(&scenario("", &format!("{}{rpc}", group("handshake = true"))));
    // Warned (not refused, so that a sweep's base may keep them while an axis turns what they
    // need off): a request without a handshake, a receive buffer without a receive window,
    // classic HyStart's settings with HyStart off.
    let warns = |g: &str, expect: &str| {
        let (out, _) = accepted(&scenario("", &format!("{g}{ONE_FLOW}")));
        assert_has(&out, &[expect]);
    };
    let quiet = |g: &str| {
        let (out, _) = accepted(&scenario("", &format!("{g}{ONE_FLOW}")));
        assert!(!out.contains("warning"), "{out}");
    };
    warns(
        &group("request_bytes = 1400"),
        "field `group[0].tcp.request_bytes`: has no effect: the request goes with the handshake",
    );
    quiet(&group("handshake = true, request_bytes = 1400"));
    warns(
        &group("rwnd = false, rmem_max = \"1GiB\""),
        "field `group[0].tcp.rmem_max`: has no effect: no receive window is modelled",
    );
    let cubic = "[[group]]\nname = \"t\"\ncca = { name = \"cubic\", hystart = \"off\", \
                 hystart_low_window = 8 }\n";
    warns(
        cubic,
        "field `group[0].cca.hystart_low_window`: has no effect: it is classic HyStart's, and \
         hystart = \"off\"",
    );
    quiet(&cubic.replace("\"off\"", "\"classic\""));
    // A CE threshold's selector without the threshold.
    let q = "[[queue]]\nkind = \"fq_codel\"\nswitch = 8\nce_threshold_selector = \"ect1\"\n";
    let e = rejected(&scenario("", &format!("{ONE_FLOW}{q}")));
    assert_has(
        &e,
        &["ce_threshold_selector`: ce_threshold_selector has no effect without ce_threshold"],
    );
    // Warned: DCTCP or Prague on classic ECN.
    for (cca, name) in [("dctcp", "DCTCP"), ("prague", "Prague")] {
        let g =
            format!("[[group]]\nname = \"t\"\ncca = \"{cca}\"\ntcp = {{ ecn = \"classic\" }}\n");
        let (out, _) = accepted(&scenario("", &format!("{g}[flows]\ngroup = \"t\"\n{ONE_FLOW}")));
        assert_has(&out, &[&format!("field `group[0].tcp.ecn`: {name} with classic ECN")]);
        let (out, _) = accepted(&scenario(
            "",
            &format!("{}[flows]\ngroup = \"t\"\n{ONE_FLOW}", g.replace("classic", "accurate")),
        ));
        assert!(!out.contains("warning"), "{out}");
    }
}

/// With `serialization = "ns3"` (whole nanoseconds, truncated) a RoCE data frame that takes
/// under 1 ns took 0: a NIC sent its flows without end at one instant, and a 1 µs run with a
/// 1-byte MTU at 400 Gbps peaked at 7 GiB (found by the input property test). Such a frame is
/// a located error at `nic.mtu` (or at the mode, for a default MTU); exact serialization,
/// which never gives 0, still accepts it, and an MTU just large enough runs.
#[test]
fn ns3_frames_that_take_no_time() {
    let ns3 = |topology: &str, rest: &str| {
        scenario(topology, rest)
            .replace("stop_time = \"10ms\"", "stop_time = \"20us\"\nserialization = \"ns3\"")
    };
    let fast = "host_rate = \"400Gbps\"\nfabric_rate = \"400Gbps\"";
    let e = rejected(&ns3(fast, &format!("[nic]\nmtu = 1\n{ONE_FLOW}")));
    assert_has(
        &e,
        &["s.toml:13:7: field `nic.mtu`: with serialization = \"ns3\" (whole nanoseconds, \
           truncated) a full data frame of 49 bytes takes 0 ns at 400Gbps, the fastest host \
           link: a NIC would send without end at one instant; make nic.mtu at least 3, or use \
           serialization = \"exact\""],
    );
    let e = rejected(&ns3("host_rate = \"50Tbps\"", ONE_FLOW));
    assert_has(
        &e,
        &[
            "s.toml:3:17: field `simulation.serialization`: ",
            "a full data frame of 1048 bytes takes 0 ns at 50000Gbps",
            "at least 6203",
        ],
    );
    accepted(&scenario(fast, &format!("[nic]\nmtu = 1\n{ONE_FLOW}")));
    let c = Case::new();
    c.write("s.toml", &ns3(fast, &format!("[nic]\nmtu = 3\n{ONE_FLOW}")));
    let o = run_bounded(&c, &["run", "s.toml", "--out", "out"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
}

/// `qlen_mon`'s bins per port with the largest buffer in 1-byte bins: refused; the count wrapped
/// to 0 bins, which the check let through (found by the input property test with overflow
/// checks on).
#[test]
fn queue_monitor_bins_of_the_largest_buffer() {
    let e = rejected(&scenario(
        "",
        &format!(
            "{ONE_FLOW}[switch]\nbuffer = \"18446744073709551615\"\n[output]\n\
             qlen_mon = {{ end = \"1us\", bin = 1 }}\n"
        ),
    ));
    assert_has(
        &e,
        &["field `output.qlen_mon.bin`: bins of 1 B would need 18446744073709551615 bins"],
    );
}

/// The largest MTU: its frame, with headers, must have a 32-bit size (`mtu = 4294967295`
/// wrapped its frame to 47 bytes in release builds and overflowed in debug ones; found by the
/// input property test with overflow checks on).
#[test]
fn an_mtu_whose_frames_do_not_fit_in_32_bits() {
    let e = rejected(&scenario("", &format!("{ONE_FLOW}[nic]\nmtu = 4294967295\n")));
    assert_has(
        &e,
        &["field `nic.mtu`: 4294967295B is above the largest MTU supported, 4294966271 B"],
    );
}

/// A port whose PFC headroom (three one-way BDPs, the reference's formula) cannot hold what
/// arrives around a pause — two BDPs, two frames and the pause frame — drops lossless frames:
/// validate says so, with the multiple that covers the worst case (a randomized audit found
/// 10 Gb/s incasts that dropped thousands of frames and, with jumbo frames, flows that stalled
/// for good, silently). `rto = "auto"` stays off: see `events::roce_can_lose`.
#[test]
fn short_pfc_headroom_is_warned_about() {
    let star = |extra: &str| {
        format!(
            "[simulation]\nstop_time = \"200ms\"\n\n[topology]\nkind = \"star\"\nsenders = 3\n\
             host_rate = \"10Gbps\"\ndelay = \"1us\"\n\n[switch]\nbuffer = \"1MiB\"\n{extra}\n\
             [flows]\nlist = [\n  {{ src = 0, dst = 3, size = 2000000 }},\n  \
             {{ src = 1, dst = 3, size = 2000000 }},\n  {{ src = 2, dst = 3, size = 2000000 }},\n]\n"
        )
    };
    let (out, _) = accepted(&star(""));
    assert_has(
        &out,
        &[
            "RoCE retransmission timeout: off",
            "warning: s.toml: switch 4 port 0 (and 3 more ports): its PFC headroom (3750 B: \
             headroom_bdp_multiple 3 × the link's one-way BDP of 1250 B) is less than the 4639 \
             B that can arrive once it decides to pause (two BDPs, two 1048-byte frames and the \
             pause frame)",
            "no RoCE timeout is on",
            "headroom_bdp_multiple = 5 covers every port even when the frame that triggers the \
             pause is one more",
        ],
    );
    // The run it warns of: lossless frames dropped at three BDPs, none at five.
    let c = Case::new();
    c.write("s.toml", &star(""));
    let o = run_bounded(&c, &["run", "s.toml", "--out", "out"]);
    assert_eq!(o.status.code(), Some(0));
    let drops = |dir: &str| {
        let text = std::fs::read_to_string(c.path(&format!("{dir}/counters.csv"))).unwrap();
        let l = text.lines().find(|l| l.starts_with("mmu_drops,")).unwrap().to_string();
        l.split(',').nth(1).unwrap().parse::<u64>().unwrap()
    };
    assert!(drops("out") > 0);
    let five = star("headroom_bdp_multiple = 5\n");
    let (out, _) = accepted(&five);
    assert!(!out.contains("warning"), "{out}");
    assert_has(&out, &["RoCE retransmission timeout: off"]);
    c.write("s.toml", &five);
    let o = run_bounded(&c, &["run", "s.toml", "--out", "out5"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(drops("out5"), 0);
    // Only ports that lossless RoCE traffic can reach count: with one flow, hosts 1 and 2 send
    // nothing, so of the switch's four ports two are short.
    let one_flow = star("").replace(
        "  { src = 1, dst = 3, size = 2000000 },\n  { src = 2, dst = 3, size = 2000000 },\n",
        "",
    );
    let (out, _) = accepted(&one_flow);
    assert_has(&out, &["switch 4 port 0 (and 1 more port): its PFC headroom"]);
    // Written at its key; with a timeout, what recovers the drops.
    let (out, _) = accepted(&star("headroom_bdp_multiple = 2\n[nic]\nrto = \"1ms\"\n"));
    assert_has(
        &out,
        &[
            "warning: s.toml:12:25: field `switch.headroom_bdp_multiple`: switch 4 port 0",
            "RoCE's retransmission timeout recovers them (`[nic] rto`)",
        ],
    );
    // Links without delay have no BDP to scale.
    let (out, _) = accepted(&star("").replace("delay = \"1us\"", "delay = \"0ns\""));
    assert_has(&out, &["a link without delay has no BDP to scale"]);
    // Without PFC there is no headroom to be short of.
    let (out, _) = accepted(&star("pfc = false\n"));
    assert!(!out.contains("PFC headroom"), "{out}");
}

/// With `back_to_chunk` the sender takes every ACK back to a chunk boundary (as the
/// reference does), so a flow that is not whole chunks never finishes: warned at the key.
#[test]
fn back_to_chunk_flows_of_partial_chunks_are_warned_about() {
    let whole = scenario("", &format!("{ONE_FLOW}[nic]\nback_to_chunk = true\n"));
    let s = whole.replace("size = \"1MB\"", "size = \"1000500B\"");
    let (out, _) = accepted(&s);
    assert_has(
        &out,
        &["field `nic.back_to_chunk`: 1 RoCE flow (of 1) not a multiple of chunk (4000 B) will \
           never finish"],
    );
    // 1 MB is 250 chunks.
    let (out, _) = accepted(&whole);
    assert!(!out.contains("back_to_chunk"), "{out}");
}

// ---------------------------------------------------------------------------------------------
// Messages in the scenario's words, not Rust's.
// ---------------------------------------------------------------------------------------------

/// A value of the wrong type is named as a scenario's author would (a table, an integer, a
/// number, a flow), never by a Rust type (`struct RawTopology`, `i64`); and a section written
/// as an array of tables (`[[flows]]`) is refused as such, not read field by field.
#[test]
fn wrong_types_are_named_in_the_scenarios_words() {
    let cases: [(String, &[&str]); 7] = [
        (
            "[[flows]]\nfile = \"f.csv\"\n".to_string(),
            &["field `flows[0]`", "invalid type: sequence, expected a table", "not an array `[[section]]`"],
        ),
        ("topology = 3\n".to_string(), &["s.toml:1:12: field `topology`", "expected a table"]),
        (
            "[simulation]\nstop_time = \"1ms\"\n[topology]\nkind = \"leaf-spine\"\nleaves = \"x\"\n"
                .to_string(),
            &["field `topology.leaves`", "invalid type: string \"x\", expected an integer"],
        ),
        (
            "[simulation]\nseed = -1\n".to_string(),
            &["field `simulation.seed`", "expected a non-negative integer"],
        ),
        (
            scenario("", "[switch]\npfc_alpha = \"x\"\n"),
            &["field `switch.pfc_alpha`", "expected a number"],
        ),
        (
            scenario("", "[flows]\nlist = [5]\n"),
            &["field `flows.list[0]`", "expected a flow: a table with src, dst and size"],
        ),
        (
            scenario("", "[switch]\necn_map = [1]\n"),
            &["field `switch.ecn_map[0]`", "expected an `ecn_map` entry"],
        ),
    ];
    for (text, parts) in &cases {
        let e = rejected(text);
        assert_has(&e, parts);
        for rust in ["struct ", "i64", "u64", "f64", "Raw"] {
            assert!(!e.contains(rust), "`{rust}` in: {e}");
        }
    }
}

/// A scenario whose inline flow list the machine cannot parse (about 60 bytes of memory per
/// byte of TOML at the peak) is refused before the parse, naming the file and the flow file as
/// the way out, instead of aborting on an allocation: here 8 MiB of inline flows under a
/// 384 MiB address-space limit, which the parse (~470 MB) would exceed.
#[test]
fn an_inline_flow_list_beyond_memory_is_refused_before_parsing() {
    let c = Case::new();
    let mut text = scenario("", "[flows]\nlist = [\n");
    let mut i = 0u64;
    while text.len() < 8 << 20 {
        text.push_str(&format!(
            "  {{ src = {}, dst = {}, size = \"{}B\", start = \"{i}ns\" }},\n",
            i % 4,
            4 + i % 4,
            1000 + i
        ));
        i += 1;
    }
    text.push_str("]\n");
    c.write("big.toml", &text);
    let bin = env!("CARGO_BIN_EXE_dcsim");
    let o = Command::new("sh")
        .args(["-c", "ulimit -v 393216 && exec \"$0\" validate big.toml", bin])
        .current_dir(c.path("."))
        .output()
        .expect("run dcsim");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "stderr: {stderr}");
    assert_has(
        &stderr,
        &[
            "error: big.toml: 8.0 MiB of TOML would take about 0.5 GiB to parse",
            "more memory than this machine can allocate; give a long flow list as a flow file",
        ],
    );
}
