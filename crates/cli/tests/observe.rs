//! Observability and timing options of `dcsim run`: the PFC log (`--pfc-log`, `pfc.csv`),
//! queue-length monitoring (`--queue-lengths`, `qlen.csv`, `qlen_hist.csv`) and the
//! serialization mode (`[simulation] serialization`).

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn dcsim(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dcsim")).args(args).current_dir(dir).output().expect("run")
}

fn ok(o: &Output) {
    assert!(o.status.success(), "stderr: {}", String::from_utf8_lossy(&o.stderr));
}

/// The value of counter `name` in `dir/counters.csv`.
fn counter(dir: &Path, name: &str) -> u64 {
    let text = fs::read_to_string(dir.join("counters.csv")).expect("counters.csv");
    let line = text.lines().find(|l| l.starts_with(&format!("{name},"))).expect(name);
    line.split(',').nth(1).unwrap().parse().expect("integer counter")
}

/// A 32-to-1 incast of 200 KB flows without congestion control on a leaf-spine (hosts 0..33,
/// leaves 34 and 35, spine 36) with 2 MiB switch buffers: the receiver's ToR port is overrun
/// and PFC pauses upstream.
fn incast(extra: &str) -> String {
    let mut s = String::from(
        "[simulation]\nstop_time = \"50ms\"\n\n[topology]\nkind = \"leaf-spine\"\nleaves = 2\n\
         spines = 1\nhosts_per_leaf = 17\n\n[cc]\nname = \"none\"\n\n\
         [switch]\nbuffer = \"2MiB\"\n",
    );
    s.push_str(extra);
    for src in 1..=32 {
        s.push_str(&format!("\n[[flows.list]]\nsrc = {src}\ndst = 0\nsize = \"200KB\"\n"));
    }
    s
}

#[test]
fn pfc_log_matches_the_counters_and_the_thread_count_does_not_matter() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("incast.toml"), incast("")).unwrap();
    let mut files = Vec::new();
    for threads in ["1", "3"] {
        let out = format!("out{threads}");
        let o = dcsim(
            dir.path(),
            &[
                "run",
                "incast.toml",
                "--out",
                &out,
                "--threads",
                threads,
                "--pfc-log",
                "--queue-lengths",
            ],
        );
        ok(&o);
        let out = dir.path().join(out);
        let pfc = fs::read_to_string(out.join("pfc.csv")).unwrap();
        let mut lines = pfc.lines();
        assert_eq!(lines.next(), Some("time_ns,switch,port,peer,priority,event"));
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        let pauses = rows.iter().filter(|r| r[5] == "pause").count() as u64;
        let resumes = rows.iter().filter(|r| r[5] == "resume").count() as u64;
        assert!(pauses > 0, "a 32-to-1 incast without congestion control pauses");
        assert_eq!(pauses, counter(&out, "pfc_pauses"));
        assert_eq!(resumes, counter(&out, "pfc_resumes"));
        // In time order; every switch that pauses is a leaf or the spine (ids 34..=36).
        let times: Vec<f64> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        assert!(rows.iter().all(|r| (34..=36).contains(&r[1].parse::<u32>().unwrap())));
        files.push(
            ["fct.csv", "counters.csv", "pfc.csv", "qlen.csv", "qlen_hist.csv"]
                .map(|f| fs::read(out.join(f)).unwrap()),
        );
    }
    assert!(files[0] == files[1], "outputs differ between 1 and 3 threads");
}

#[test]
fn queue_lengths_of_a_two_to_one_burst_follow_the_closed_form() {
    // Hosts 0 and 1 each send 1 MB at 100 Gb/s from t = 0 to host 2 through one switch port
    // at 100 Gb/s: the port's backlog grows at 100 Gb/s while both arrive (for 80 µs), to
    // one flow's worth of bytes, then drains at 100 Gb/s: a triangle of height ~1 MB (wire
    // bytes) over 160 µs. No PFC: the buffer holds it.
    let dir = tempfile::tempdir().unwrap();
    let scenario = "[simulation]\nstop_time = \"10ms\"\n\n[topology]\nkind = \"leaf-spine\"\n\
         leaves = 1\nspines = 1\nhosts_per_leaf = 3\n\n[cc]\nname = \"none\"\n\n\
         [switch]\nbuffer = \"64MiB\"\n\n[output]\nqueue_lengths = true\n\n\
         [[flows.list]]\nsrc = 0\ndst = 2\nsize = \"1MB\"\n\n\
         [[flows.list]]\nsrc = 1\ndst = 2\nsize = \"1MB\"\n";
    fs::write(dir.path().join("burst.toml"), scenario).unwrap();
    ok(&dcsim(dir.path(), &["run", "burst.toml", "--out", "out"]));
    let out = dir.path().join("out");
    assert_eq!(counter(&out, "pfc_pauses"), 0);
    let qlen = fs::read_to_string(out.join("qlen.csv")).unwrap();
    let header: Vec<&str> = qlen.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    // The leaf (node 3) port 2 faces host 2.
    let row: Vec<&str> =
        qlen.lines().find(|l| l.starts_with("3,2,")).expect("row").split(',').collect();
    let num = |name: &str| row[col(name)].parse::<f64>().unwrap();
    let wire = 1_000_000.0 * 1048.0 / 1000.0; // one flow's frames (1000-byte payload + 48)
    let max = num("max_bytes");
    assert!((max - wire).abs() <= 2.0 * 1048.0, "peak backlog {max} vs {wire}");
    // Time-weighted mean of a triangle over the run: height/2 × busy fraction.
    let busy = num("frac_above_0B");
    let mean = num("mean_bytes");
    assert!((mean / busy - wire / 2.0).abs() / (wire / 2.0) < 0.02, "mean {mean} busy {busy}");
    // Above 100 KB for (1 - 0.1 × 1000/1048) of the busy period, by the triangle's symmetry.
    let above = num("frac_above_100KB") / busy;
    let want = 1.0 - 100_000.0 / wire;
    assert!((above - want).abs() < 0.02, "{above} vs {want}");
    // The histogram's bins add up to the run's length.
    let hist = fs::read_to_string(out.join("qlen_hist.csv")).unwrap();
    let total: f64 = hist
        .lines()
        .skip(1)
        .filter(|l| l.starts_with("3,2,"))
        .map(|l| l.split(',').nth(4).unwrap().parse::<f64>().unwrap())
        .sum();
    let end: f64 = {
        let text = fs::read_to_string(out.join("counters.csv")).unwrap();
        let l = text.lines().find(|l| l.starts_with("end_time_ns,")).unwrap();
        l.split(',').nth(1).unwrap().parse().unwrap()
    };
    assert!((total - end).abs() < 1e-3 * end, "{total} vs {end}");
}

/// A port still sending when the stop time cuts the run counts only the bits it sent: a 1 Gb/s
/// bottleneck saturated from the first frame's arrival reads that share of the run (it read
/// 1.006 before 2026-11-29: the frame on the wire at the stop was counted whole).
#[test]
fn a_port_busy_at_the_stop_counts_only_the_bits_sent() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = "[simulation]\nstop_time = \"100us\"\n\n[topology]\nkind = \"dumbbell\"\n\
         left_hosts = 1\nright_hosts = 1\nhost_rate = \"10Gbps\"\nbottleneck_rate = \"1Gbps\"\n\
         delay = \"1us\"\n\n[cc]\nname = \"none\"\n\n[output]\nqueue_lengths = true\n\n\
         [[flows.list]]\nsrc = 0\ndst = 1\nsize = \"1MB\"\n";
    fs::write(dir.path().join("u.toml"), scenario).unwrap();
    ok(&dcsim(dir.path(), &["run", "u.toml", "--out", "out"]));
    let qlen = fs::read_to_string(dir.path().join("out/qlen.csv")).unwrap();
    let header: Vec<&str> = qlen.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "utilisation").unwrap();
    let util: Vec<f64> =
        qlen.lines().skip(1).map(|l| l.split(',').nth(col).unwrap().parse().unwrap()).collect();
    // The bottleneck port (the left switch's towards the right) starts its first frame when
    // that frame has crossed the host link: 1048 B at 10 Gb/s and 1 µs, 1.8384 µs; from then
    // on it always has the next frame.
    let busy = (100.0 - 1.8384) / 100.0;
    let top = util.iter().copied().fold(0.0, f64::max);
    assert!(top <= 1.0, "{util:?}");
    assert!((top - busy).abs() < 2e-4, "{top} vs {busy}");
}

#[test]
fn serialization_modes_set_link_timing_and_the_ideal_fct() {
    // One 1000-byte flow (a 1048-byte frame) across a 400 Gb/s leaf-spine: 20.96 ns per hop
    // exactly, 20 ns as the reference computes it. Alone on an idle path a flow completes in
    // exactly its ideal FCT, in either mode.
    let mut fcts = Vec::new();
    for mode in ["exact", "ns3"] {
        let rates = "host_rate = \"400Gbps\"\nfabric_rate = \"400Gbps\"\n";
        let row = lone_flow_row(mode, rates, "", 1000);
        assert_eq!(row[5], row[6], "{mode}: fct equals the ideal FCT alone on the path");
        fcts.push(row[5].parse::<f64>().unwrap());
    }
    // Four data hops (host, leaf, spine, leaf), then the ACK's four: the 1048-byte frame is
    // 0.96 ns shorter per hop in ns3 mode, the 60-byte ACK (1.2 ns exact) 0.2 ns shorter.
    let diff = fcts[0] - fcts[1];
    assert!((diff - (4.0 * 0.96 + 4.0 * 0.2)).abs() < 1e-6, "{fcts:?}");
}

#[test]
fn ns3_mode_paces_a_flow_with_the_truncated_serialization_time() {
    // 100 frames of 1048 B at 100 Gb/s: 83.84 ns each exactly, 83 ns as the reference computes
    // both the link's serialization and the NIC's pacing gap (spec §0). A lone flow keeps its
    // link busy back to back and finishes in exactly its ideal FCT in both modes; with the
    // pacing gap left exact in ns3 mode it would idle 0.84 ns after every frame.
    for mode in ["exact", "ns3"] {
        let row = lone_flow_row(mode, "", "[cc]\nname = \"dcqcn\"\n", 100_000);
        assert_eq!(row[5], row[6], "{mode}: a lone flow completes in its ideal FCT");
    }
}

/// The `fct.csv` row of one flow of `size` bytes from host 0 to host 1 on a two-leaf,
/// one-host-per-leaf leaf-spine (with `topology` keys added) in serialization `mode`, with
/// `rest` (e.g. a `[cc]` table) added to the scenario.
fn lone_flow_row(mode: &str, topology: &str, rest: &str, size: u64) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let s = format!(
        "[simulation]\nstop_time = \"1ms\"\nserialization = \"{mode}\"\n\n[topology]\n\
         kind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 1\n{topology}\n\
         {rest}\n[[flows.list]]\nsrc = 0\ndst = 1\nsize = {size}\n"
    );
    fs::write(dir.path().join("s.toml"), s).unwrap();
    ok(&dcsim(dir.path(), &["run", "s.toml", "--out", "out"]));
    let fct = fs::read_to_string(dir.path().join("out").join("fct.csv")).unwrap();
    fct.lines().nth(1).unwrap().split(',').map(String::from).collect()
}

#[test]
fn bad_observation_and_timing_settings_are_located_errors() {
    let dir = tempfile::tempdir().unwrap();
    let base = "[topology]\nkind = \"leaf-spine\"\nleaves = 1\nspines = 1\nhosts_per_leaf = 2\n\n\
                [[flows.list]]\nsrc = 0\ndst = 1\nsize = 1000\n";
    for (extra, want) in [
        (
            "[simulation]\nserialization = \"ps\"\n",
            "t.toml:13:17: field `simulation.serialization`: unknown serialization mode \"ps\" (valid: exact, ns3)",
        ),
        ("[output]\nqueue_lenghts = true\n", "t.toml:13:1"),
        ("[output]\npfc_log = 1\n", "t.toml:13:11"),
        (
            "[output]\nqlen_mon = { start = \"2ms\", end = \"1ms\" }\n",
            "t.toml:13:35: field `output.qlen_mon.end`: the window ends (1 ms) before it starts (2 ms)",
        ),
        ("[output]\nqlen_mon = { start = \"1ms\" }\n", "field `output.qlen_mon.end`: is required"),
        (
            "[output]\nqlen_mon = { end = \"1ms\", interval = \"0s\" }\n",
            "field `output.qlen_mon.interval`: must be greater than zero",
        ),
        ("[output]\nqlen_mon = { end = \"1ms\", bin = 0 }\n", "field `output.qlen_mon.bin`"),
        (
            "[output]\nqlen_mon = { end = \"1ms\", bin = \"1B\" }\n",
            "field `output.qlen_mon.bin`: bins of 1 B would need 33554433 bins per port",
        ),
        ("[output]\nqlen_mon = { end = \"1ms\", ports = [1] }\n", "unknown field `ports`"),
        // Nodes: hosts 0 and 1, leaf 2 (ports 0..3), spine 3.
        (
            "[output]\nqueue_lengths = true\nqlen_ports = { switch = 2, port = 9 }\n",
            "t.toml:14:35: field `output.qlen_ports.port`: 9 is not a port of switch 2 (ports are 0..3)",
        ),
        (
            "[output]\nqlen_ports = { switch = 0 }\n",
            "field `output.qlen_ports.switch`: node 0 is not a switch",
        ),
        (
            "[output]\nqlen_ports = { link = [2, 7] }\n",
            "field `output.qlen_ports.link`: 7 is not a node of this topology (nodes are 0..4)",
        ),
        (
            "[output]\nqlen_ports = { link = [2, 2] }\n",
            "field `output.qlen_ports.link`: there is no link from 2 to 2",
        ),
        ("[output]\nqlen_ports = { at = \"spine\" }\n", "unknown port set \"spine\" (valid:"),
        (
            "[output]\nqlen_ports = { at = \"all\", class = 3 }\n",
            "field `output.qlen_ports.class`: unknown key (valid: at, link, switch, port)",
        ),
        (
            "[output]\nqlen_ports = [{ at = \"all\" }, 5]\n",
            "field `output.qlen_ports[1]`: expected a table",
        ),
        ("[output]\nqlen_ports = []\n", "field `output.qlen_ports`: expected a port selection"),
        ("[output]\nqlen_ports = { switch = 2, link = [2, 0] }\n", "give exactly one of `at`"),
        ("[output]\nqlen_classes = \"yes\"\n", "t.toml:13:16"),
    ] {
        fs::write(dir.path().join("t.toml"), format!("{base}\n{extra}")).unwrap();
        let o = dcsim(dir.path(), &["run", "t.toml", "--out", "out"]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(want), "{extra}: {stderr}");
        assert!(!dir.path().join("out").exists());
    }
}

/// 16 NewReno senders (`dc-newreno`, no ECN) of 2 MB each into one receiver on a 25 Gb/s
/// star (hosts 0..16, receiver 16, switch 17; the switch's port 16 faces the receiver), no PFC.
fn tcp_incast(switch: &str) -> String {
    let mut s = String::from(
        "[simulation]\nstop_time = \"200ms\"\n\n[topology]\nkind = \"star\"\nsenders = 16\n\
         host_rate = \"25Gbps\"\n\n[switch]\necn = false\npfc = false\n",
    );
    s.push_str(switch);
    s.push_str(
        "\n[output]\nqueue_lengths = true\n\n[[group]]\nname = \"tcp\"\ncca = \"newreno\"\n\
         tcp = { profile = \"dc-newreno\" }\n\n[flows]\ngroup = \"tcp\"\n",
    );
    for src in 0..16 {
        s.push_str(&format!("\n[[flows.list]]\nsrc = {src}\ndst = 16\nsize = \"2MB\"\n"));
    }
    s
}

/// The peak backlog (bytes) of switch 17's port 16 in `out/qlen.csv`.
fn receiver_port_peak(out: &Path) -> f64 {
    let qlen = fs::read_to_string(out.join("qlen.csv")).unwrap();
    let header: Vec<&str> = qlen.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "max_bytes").unwrap();
    let row: Vec<&str> =
        qlen.lines().find(|l| l.starts_with("17,16,")).expect("row").split(',').collect();
    row[col].parse().unwrap()
}

#[test]
fn egress_admission_caps_a_tcp_incast_queue() {
    // With egress admission and a 256 KiB cap, the lossy TCP class's queue at the receiver's
    // port never holds more than the cap (the spec's bound is cap + 1 MTU; admission checks
    // the packet's own bytes, so it is never exceeded at all), the excess is dropped, and
    // every flow still completes.
    let dir = tempfile::tempdir().unwrap();
    let cap = 256.0 * 1024.0;
    fs::write(
        dir.path().join("capped.toml"),
        tcp_incast("lossy_admission = \"egress\"\negress_cap = \"256KiB\"\n"),
    )
    .unwrap();
    let o = dcsim(dir.path(), &["validate", "capped.toml"]);
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(
            "Lossy classes: egress admission, queue limit min(262144B, 1 x free buffer)."
        ),
        "{text}"
    );
    ok(&dcsim(dir.path(), &["run", "capped.toml", "--out", "capped"]));
    let out = dir.path().join("capped");
    let peak = receiver_port_peak(&out);
    assert!(peak <= cap, "peak backlog {peak} B above the {cap} B cap");
    assert!(peak > cap - 2.0 * 1500.0, "the queue reaches the cap: {peak}");
    assert!(counter(&out, "mmu_drops") > 0, "16 NewReno flows overflow 256 KiB");
    let fct = fs::read_to_string(out.join("fct.csv")).unwrap();
    assert_eq!(fct.lines().count(), 1 + 16, "every flow completes:\n{fct}");

    // The same incast with the default (ingress) admission: one ingress port's dynamic
    // threshold bounds only what each sender has queued, so the receiver's queue grows far
    // beyond 256 KiB.
    fs::write(dir.path().join("ingress.toml"), tcp_incast("")).unwrap();
    ok(&dcsim(dir.path(), &["run", "ingress.toml", "--out", "ingress"]));
    let peak = receiver_port_peak(&dir.path().join("ingress"));
    assert!(peak > 2.0 * cap, "ingress admission peak {peak}");
}

#[test]
fn the_queue_monitor_samples_every_port_over_its_window() {
    let dir = tempfile::tempdir().unwrap();
    let extra =
        "\n[output]\nqueue_lengths = true\nqlen_mon = { start = \"10us\", end = \"1ms\" }\n";
    fs::write(dir.path().join("s.toml"), incast(extra)).unwrap();
    ok(&dcsim(dir.path(), &["run", "s.toml", "--out", "out"]));
    let mon = fs::read_to_string(dir.path().join("out/qlen_mon.csv")).unwrap();
    assert_eq!(mon.lines().next(), Some("switch,port,lower_bytes,upper_bytes,samples"));
    let mut per_port = std::collections::BTreeMap::<(u32, u32), u64>::new();
    let mut deepest = 0u64;
    for l in mon.lines().skip(1) {
        let f: Vec<u64> = l.split(',').map(|x| x.parse().unwrap()).collect();
        assert_eq!(f[3] - f[2], 1000, "1000-byte bins");
        *per_port.entry((f[0] as u32, f[1] as u32)).or_default() += f[4];
        deepest = deepest.max(f[2]);
    }
    // Every switch port (leaf 34: 18 ports, leaf 35: 18, spine 36: 2) takes every sample:
    // 10 µs, 10.1 µs, ..., 1 ms.
    assert_eq!(per_port.len(), 38);
    assert!(per_port.values().all(|&n| n == 9_901), "{per_port:?}");
    // The incast overruns the receiver's port, as qlen.csv says too.
    assert!(deepest > 500_000, "deepest sampled backlog {deepest}");
    let qlen = fs::read_to_string(dir.path().join("out/qlen.csv")).unwrap();
    assert!(qlen.lines().count() > 1);
    // Without the monitor, a stale qlen_mon.csv is removed.
    fs::write(dir.path().join("s.toml"), incast("")).unwrap();
    ok(&dcsim(dir.path(), &["run", "s.toml", "--out", "out"]));
    assert!(!dir.path().join("out/qlen_mon.csv").exists());
}

#[test]
fn a_queue_monitor_after_the_stop_time_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "\n[output]\nqlen_mon = { start = \"60ms\", end = \"70ms\" }\n";
    fs::write(dir.path().join("s.toml"), incast(extra)).unwrap();
    let o = dcsim(dir.path(), &["validate", "s.toml"]);
    ok(&o);
    let v = String::from_utf8_lossy(&o.stdout);
    assert!(
        v.contains(
            "field `output.qlen_mon`: the window starts at 60 ms, after the stop time (50 ms)"
        ),
        "{v}"
    );
}

/// One row of a CSV file, split.
fn rows(path: &Path) -> Vec<Vec<String>> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().skip(1).map(|l| l.split(',').map(str::to_string).collect()).collect()
}

#[test]
fn monitored_ports_and_per_class_histograms_add_up_to_the_port_backlog() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "\n[output]\nqueue_lengths = true\nqlen_classes = true\n\
                 qlen_ports = { at = \"host-facing\" }\n\
                 qlen_mon = { start = \"0s\", end = \"1ms\", interval = \"1us\" }\n";
    fs::write(dir.path().join("s.toml"), incast(extra)).unwrap();
    let mut files = Vec::new();
    for threads in ["1", "3"] {
        let out = dir.path().join(format!("out{threads}"));
        let o = dcsim(
            dir.path(),
            &["run", "s.toml", "--out", out.to_str().unwrap(), "--threads", threads, "--pfc-log"],
        );
        ok(&o);
        files.push(
            ["qlen.csv", "qlen_hist.csv", "qlen_class.csv", "qlen_class_hist.csv", "qlen_mon.csv"]
                .map(|f| fs::read(out.join(f)).unwrap()),
        );
    }
    assert!(files[0] == files[1], "monitor outputs differ between 1 and 3 threads");
    let out = dir.path().join("out1");

    // Only the host-facing ports (hosts are 0..=33; leaves 34 and 35 have 17 each).
    let ports = rows(&out.join("qlen.csv"));
    assert_eq!(ports.len(), 34);
    assert!(ports.iter().all(|r| r[2].parse::<u32>().unwrap() < 34), "{ports:?}");
    let sampled: std::collections::BTreeSet<(String, String)> =
        rows(&out.join("qlen_mon.csv")).into_iter().map(|r| (r[0].clone(), r[1].clone())).collect();
    let listed: std::collections::BTreeSet<(String, String)> =
        ports.iter().map(|r| (r[0].clone(), r[1].clone())).collect();
    assert_eq!(sampled, listed, "the sampler watches the same ports");

    // Per class: every class that held bytes, each covering the whole run; the classes'
    // time-weighted means add up to the port's, and no class exceeds the port's maximum.
    let classes = rows(&out.join("qlen_class.csv"));
    let hist = rows(&out.join("qlen_class_hist.csv"));
    let port_hist = rows(&out.join("qlen_hist.csv"));
    let span = |rows: &[Vec<String>], sw: &str, port: &str, class: Option<&str>| -> f64 {
        rows.iter()
            .filter(|r| r[0] == sw && r[1] == port && class.is_none_or(|c| r[2] == c))
            .map(|r| r.last().unwrap().parse::<f64>().unwrap())
            .sum()
    };
    let mut busy = 0;
    for p in &ports {
        let (sw, port) = (&p[0], &p[1]);
        let mine: Vec<&Vec<String>> =
            classes.iter().filter(|c| &c[0] == sw && &c[1] == port).collect();
        let port_mean: f64 = p[4].parse().unwrap();
        let port_max: u64 = p[9].parse().unwrap();
        if port_max == 0 {
            assert!(mine.is_empty(), "an idle port has no class rows");
            continue;
        }
        busy += 1;
        let sum: f64 = mine.iter().map(|c| c[5].parse::<f64>().unwrap()).sum();
        assert!((sum - port_mean).abs() <= 0.001 * mine.len() as f64 + 1e-9, "{sw}:{port}");
        let run = span(&port_hist, sw, port, None);
        for c in &mine {
            assert!(c[10].parse::<u64>().unwrap() <= port_max);
            let t = span(&hist, sw, port, Some(&c[4]));
            assert!((t - run).abs() < 1e-3, "class {} of {sw}:{port} covers {t} of {run} ns", c[4]);
        }
    }
    assert!(busy > 0);
    // The data (and, as in the reference, the ACKs) travel in class 3; the senders' leaf sends
    // its PFC pauses to the hosts in class 0.
    assert!(classes.iter().any(|c| c[4] == "3"));
    assert!(classes.iter().all(|c| c[4] == "3" || c[4] == "0"), "{classes:?}");

    // Without the options, stale class files are removed.
    fs::write(dir.path().join("s.toml"), incast("")).unwrap();
    ok(&dcsim(dir.path(), &["run", "s.toml", "--out", out.to_str().unwrap()]));
    for f in ["qlen_class.csv", "qlen_class_hist.csv", "qlen.csv"] {
        assert!(!out.join(f).exists(), "{f}");
    }
}

#[test]
fn analyze_plot_and_sweep_pool_queue_lengths() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("s.toml"), incast("\n[output]\nqueue_lengths = true\n")).unwrap();
    ok(&dcsim(d, &["run", "s.toml", "--out", "small"]));
    fs::write(
        d.join("b.toml"),
        incast("\n[output]\nqueue_lengths = true\n").replace("2MiB", "8MiB"),
    )
    .unwrap();
    ok(&dcsim(d, &["run", "b.toml", "--out", "big"]));

    let o = dcsim(
        d,
        &[
            "analyze",
            "small/fct.csv",
            "small/qlen_hist.csv:2MiB",
            "big/qlen_hist.csv:8MiB",
            "--out",
            "an",
        ],
    );
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("slowdown by flow size") && text.contains("queue lengths"), "{text}");
    assert!(text.contains("2MiB: small/qlen_hist.csv (queue lengths of 38 ports)"), "{text}");
    let summary = rows(&d.join("an/qlen_summary.csv"));
    assert_eq!(summary.len(), 2);
    assert!(d.join("an/buckets.csv").exists());
    // Checked against qlen.csv, which the engine computes from the exact backlog: every port
    // covers the same time, so the pooled busy fraction is the ports' mean `frac_above_0B`,
    // and no pooled percentile exceeds the largest port maximum.
    for (run, s) in [("small", &summary[0]), ("big", &summary[1])] {
        let ports = rows(&d.join(run).join("qlen.csv"));
        assert_eq!(s[1], ports.len().to_string());
        let busy: f64 =
            ports.iter().map(|p| p[10].parse::<f64>().unwrap()).sum::<f64>() / ports.len() as f64;
        assert!((s[2].parse::<f64>().unwrap() - busy).abs() < 1e-5, "{run}: {} vs {busy}", s[2]);
        let max = ports.iter().map(|p| p[9].parse::<u64>().unwrap()).max().unwrap();
        let p9999: u64 = s[8].parse().unwrap();
        assert!(p9999 <= max && p9999 > 0, "{run}: p99.99 {p9999}, max {max}");
    }
    // A deeper buffer lets the incast queue grow further before PFC pauses.
    let p9999 = |s: &Vec<String>| s[8].parse::<u64>().unwrap();
    assert!(p9999(&summary[1]) > p9999(&summary[0]), "{summary:?}");
    // A run's two files share its folder's name; two files of one kind may not.
    ok(&dcsim(d, &["analyze", "small/fct.csv", "small/qlen_hist.csv"]));
    let o = dcsim(d, &["analyze", "small/fct.csv", "small/fct.csv"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("two fct.csv inputs are named \"small\""), "{err}");
    // Queue lengths only, into the same folder: the flow tables of the analysis before are
    // removed, not left beside the new one.
    ok(&dcsim(d, &["analyze", "small/qlen_hist.csv", "--out", "an"]));
    assert!(d.join("an/qlen_summary.csv").exists());
    assert!(!d.join("an/buckets.csv").exists() && !d.join("an/summary.csv").exists());

    // plot: only the queue CDF for queue-only inputs.
    let o = dcsim(d, &["plot", "small/qlen_hist.csv", "big/qlen_hist.csv", "--out", "figs"]);
    ok(&o);
    let mut figs: Vec<String> = fs::read_dir(d.join("figs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    figs.sort();
    assert_eq!(figs, ["fct_qlen_cdf.png", "fct_qlen_cdf.svg"]);

    // sweep: qlen_summary.csv and one queue CDF per figure.
    fs::write(
        d.join("sweep.toml"),
        "base = \"s.toml\"\nlines = [\"switch.buffer\"]\n\n[axes]\n\"switch.buffer\" = [\"2MiB\", \"8MiB\"]\n",
    )
    .unwrap();
    ok(&dcsim(d, &["sweep", "sweep.toml", "--out", "sw", "--jobs", "1"]));
    let cells = rows(&d.join("sw/qlen_summary.csv"));
    assert_eq!(cells.len(), 2);
    let head = fs::read_to_string(d.join("sw/qlen_summary.csv")).unwrap();
    assert!(
        head.starts_with("index,cell,switch.buffer,ports,busy_frac,mean_bytes,p50_bytes"),
        "{head}"
    );
    // The cells are the runs above: the same pooled figures.
    assert_eq!(cells[0][3..], summary[0][1..]);
    assert_eq!(cells[1][3..], summary[1][1..]);
    assert!(d.join("sw/plots/sweep_qlen_cdf.png").exists());
    // The same sweep again without queue lengths: no stale qlen_summary.csv is left beside
    // the new summary.csv.
    fs::write(d.join("s.toml"), incast("")).unwrap();
    ok(&dcsim(d, &["sweep", "sweep.toml", "--out", "sw", "--jobs", "1"]));
    assert!(d.join("sw/summary.csv").exists());
    assert!(!d.join("sw/qlen_summary.csv").exists());
    assert!(!d.join("sw/cells/switch.buffer2MiB/qlen_hist.csv").exists());
}
