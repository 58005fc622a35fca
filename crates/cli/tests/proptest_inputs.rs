//! Property test: scenarios whose values are drawn across each field's whole type range (not
//! only the valid ranges) — integers from `i64::MIN` to `i64::MAX`, floats including NaN and
//! infinities, quantity strings with numbers up to `u64::MAX` and with bad units, values of
//! the wrong type — always validate in bounded time and memory to `Ok` or an error located in
//! the file (`FILE:LINE:COL: field ...`, or `FILE: ...` for a missing section), and the
//! accepted small ones run (with a short stop time) without panicking.
//!
//! A second property draws the later sections (`[[queue]]`, `[[events]]`, `[routing]`, the
//! RoCE `rto`, `[output]`, `[[rpc]]`, the switch's admission) mostly valid on one of four small
//! valid fabrics, so that most cases run their odd values (a link failing at time 0, a CoDel
//! target of 1 ps, a one-packet limit) to the end. It checks that each run's data bytes balance
//! and that its outputs do not depend on the shards and threads.
//!
//! A third property runs `dcsim sweep` on drawn sweep files (axes, `[set]`, `lines`, `buckets`)
//! over a small base.
//!
//! Every generated `[flows]` sets `max_flows` (drawn from 1..=20 000 or out of range) so that
//! a case never generates millions of flows: the default limit's behaviour is covered by
//! `tests/limits.rs`.

use std::time::{Duration, Instant};

use dcsim_cli::scenario::{validate, Source};
use dcsim_cli::schemes::Parallelism;
use dcsim_cli::CliError;
use dcsim_core::ids::NodeId;
use dcsim_core::units::Time;
use proptest::prelude::*;

mod common;

use common::{peak_memory_mib, proptest_config, reset_peak_memory};

/// How long one validation may take (a debug build on a loaded machine).
const VALIDATE_BOUND: Duration = Duration::from_secs(20);
/// The peak resident memory the whole test may reach, MiB.
const MEMORY_BOUND_MIB: f64 = 3072.0;

fn toml_float(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{x:?}")
    }
}

/// An integer from the whole `i64` range, or one of the edge values.
fn any_int() -> impl Strategy<Value = i64> {
    prop_oneof![
        any::<i64>(),
        prop::sample::select(vec![
            0,
            1,
            2,
            3,
            4,
            7,
            8,
            64,
            65_535,
            65_536,
            100_000,
            1 << 24,
            (1 << 24) + 1,
            i64::from(u32::MAX),
            -1,
            i64::MAX,
            i64::MIN,
        ]),
    ]
}

/// A float from the whole `f64` range (NaN and the infinities included), or an edge value.
fn any_float() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        prop::sample::select(vec![
            0.0,
            -0.0,
            1e-11,
            0.3,
            0.5,
            0.999_999,
            1.0,
            1.5,
            -0.5,
            1e300,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ]),
    ]
}

/// The number part of a quantity string: any `u64`, an edge value, a decimal, or garbage.
fn number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<u64>().prop_map(|n| n.to_string()),
        prop::sample::select(vec![
            "0",
            "1",
            "3",
            "100",
            "999999999",
            "4611686",
            "4611686.018427387904",
            "4611686.018427387905",
            "18446744073709551615",
            "18446744073709551616",
            "0.5",
            "1.25",
            "-1",
            "1e3",
            "NaN",
            "",
            "99999999999999999999999999999999999999999",
        ])
        .prop_map(str::to_string),
    ]
}

/// A quantity as TOML drawn from the whole range: a string with a unit (good or bad), or a
/// bare value of any type.
fn wild_qty(units: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (number_text(), prop::sample::select(units)).prop_map(|(n, u)| format!("\"{n}{u}\"")),
        1 => any_int().prop_map(|i| i.to_string()),
        1 => any_float().prop_map(toml_float),
        1 => prop::sample::select(vec!["true", "[1]", "{ a = 1 }", "\"\""]).prop_map(str::to_string),
    ]
}

/// A quantity: mostly one of `valid` (so that whole scenarios often validate and run), else
/// drawn from the whole range.
fn qty(units: &'static [&'static str], valid: &'static [&'static str]) -> BoxedStrategy<String> {
    prop_oneof![
        12 => prop::sample::select(valid).prop_map(str::to_string),
        1 => wild_qty(units),
    ]
    .boxed()
}

const TIME: &[&str] = &["ps", "ns", "us", "ms", "s", "µs", "", "min", "h"];
const RATE: &[&str] = &["bps", "Kbps", "Mbps", "Gbps", "Tbps", "G", "Bps", ""];
const SIZE: &[&str] = &["", "B", "KB", "MB", "GB", "KiB", "MiB", "GiB", "TB"];
const TIMES: &[&str] =
    &["\"0s\"", "\"100ns\"", "\"1us\"", "\"10us\"", "\"1ms\"", "\"3ms\"", "\"1s\""];
const RATES: &[&str] =
    &["\"1bps\"", "\"1Mbps\"", "\"1Gbps\"", "\"25Gbps\"", "\"100Gbps\"", "\"400G\""];
const SIZES: &[&str] = &["1", "1000", "\"1KB\"", "\"64KiB\"", "\"1MB\"", "\"32MiB\"", "\"1GB\""];

fn time() -> BoxedStrategy<String> {
    qty(TIME, TIMES)
}
fn rate() -> BoxedStrategy<String> {
    qty(RATE, RATES)
}
fn size() -> BoxedStrategy<String> {
    qty(SIZE, SIZES)
}

/// A float: mostly a fraction in (0, 1), else any.
fn fraction() -> BoxedStrategy<String> {
    prop_oneof![12 => (0.001f64..0.999).prop_map(toml_float), 1 => any_float().prop_map(toml_float)]
        .boxed()
}

/// An integer: mostly in `range`, else any.
fn int_in(range: std::ops::RangeInclusive<i64>) -> BoxedStrategy<String> {
    prop_oneof![12 => range.prop_map(|i| i.to_string()), 1 => any_int().prop_map(|i| i.to_string())]
        .boxed()
}

/// A valid-looking small count most of the time, any integer otherwise.
fn count() -> impl Strategy<Value = String> {
    prop_oneof![12 => (1i64..=4).prop_map(|i| i.to_string()), 1 => any_int().prop_map(|i| i.to_string())]
}

/// `key = value` lines, each present or not.
fn lines(fields: Vec<(&'static str, BoxedStrategy<String>)>) -> BoxedStrategy<String> {
    let parts: Vec<BoxedStrategy<String>> = fields
        .into_iter()
        .map(|(k, v)| {
            prop::option::weighted(0.6, v)
                .prop_map(move |v| match v {
                    Some(v) => format!("{k} = {v}\n"),
                    None => String::new(),
                })
                .boxed()
        })
        .collect();
    parts.prop_map(|p| p.concat()).boxed()
}

fn simulation() -> BoxedStrategy<String> {
    lines(vec![
        ("stop_time", time().boxed()),
        ("seed", int_in(0..=1000)),
        (
            "serialization",
            prop_oneof![
                12 => prop::sample::select(vec!["\"exact\"", "\"ns3\""]),
                1 => prop::sample::select(vec!["\"bogus\"", "1"]),
            ]
            .prop_map(str::to_string)
            .boxed(),
        ),
    ])
    .prop_map(|b| format!("[simulation]\n{b}"))
    .boxed()
}

fn topology() -> BoxedStrategy<String> {
    let kind = prop::sample::select(vec![
        ("star", vec!["senders"]),
        ("leaf-spine", vec!["leaves", "spines", "hosts_per_leaf"]),
        ("dumbbell", vec!["left_hosts", "right_hosts"]),
        ("fat-tree", vec!["k"]),
        ("alibaba-2pod", vec![]),
    ]);
    let kind = prop_oneof![20 => kind, 1 => Just(("bogus", vec!["senders"]))];
    (
        kind,
        prop::collection::vec(count(), 3),
        lines(vec![
            ("host_rate", rate().boxed()),
            ("delay", time().boxed()),
            ("error_rate_per_link", fraction()),
        ]),
    )
        .prop_map(|((kind, keys), counts, rest)| {
            let mut t = format!("[topology]\nkind = \"{kind}\"\n");
            for (k, c) in keys.iter().zip(&counts) {
                // `k` must be even for a fat tree; keep the small ones so.
                let c = if *k == "k" && c.len() == 1 { "4".to_string() } else { c.clone() };
                t += &format!("{k} = {c}\n");
            }
            t + &rest
        })
        .boxed()
}

fn flows() -> BoxedStrategy<String> {
    let host = || prop_oneof![12 => (0i64..=4).prop_map(|i| i.to_string()), 1 => any_int().prop_map(|i| i.to_string())];
    let flow = (host(), host(), size(), prop::option::of(time()), prop::option::of(int_in(1..=7)))
        .prop_map(|(s, d, size, start, pg)| {
            let mut f = format!("[[flows.list]]\nsrc = {s}\ndst = {d}\nsize = {size}\n");
            if let Some(t) = start {
                f += &format!("start = {t}\n");
            }
            if let Some(pg) = pg {
                f += &format!("pg = {pg}\n");
            }
            f
        });
    let cdf = prop_oneof![
        12 => prop::sample::select(vec!["\"websearch\"", "\"hadoop\"", "\"googlerpc2008\""]),
        1 => prop::sample::select(vec!["\"nope.txt\"", "3"]),
    ];
    let workload = (cdf, fraction(), time(), prop::option::of(time()), any::<bool>()).prop_map(
        |(cdf, load, duration, start, drop_last)| {
            let start = start.map_or(String::new(), |s| format!(", start = {s}"));
            format!(
                "workload = {{ cdf = {cdf}, load = {load}, duration = {duration}{start}, \
                 drop_last = {drop_last} }}\n"
            )
        },
    );
    let incast = (count(), size(), fraction(), time()).prop_map(|(n, size, f, d)| {
        format!("incast = {{ senders = {n}, size = {size}, fraction = {f}, duration = {d} }}\n")
    });
    let lognormal = (int_in(1..=50), time(), size(), size()).prop_map(|(n, gap, p5, p95)| {
        format!(
            "lognormal = {{ src = 0, dst = 1, flows = {n}, mean_gap = {gap}, p5 = {p5}, \
             p95 = {p95}, start = \"0s\" }}\n"
        )
    });
    let max_flows = prop_oneof![
        24 => (1i64..=20_000).prop_map(|i| i.to_string()),
        1 => (i64::MIN..=0).prop_map(|i| i.to_string()),
        1 => Just("\"many\"".to_string()),
    ];
    (
        prop::collection::vec(flow, 0..3),
        prop::option::weighted(0.4, workload),
        prop::option::weighted(0.2, incast),
        prop::option::weighted(0.15, lognormal),
        max_flows,
    )
        .prop_map(|(list, w, i, l, max)| {
            let mut f = format!("[flows]\nmax_flows = {max}\n");
            f += &w.unwrap_or_default();
            f += &i.unwrap_or_default();
            f += &l.unwrap_or_default();
            f + &list.concat()
        })
        .boxed()
}

fn switch_and_nic() -> BoxedStrategy<String> {
    (
        lines(vec![
            ("buffer", size().boxed()),
            ("reserve", size().boxed()),
            ("headroom_bdp_multiple", int_in(0..=8)),
            ("pfc", any::<bool>().prop_map(|b| b.to_string()).boxed()),
            ("pfc_alpha", fraction()),
        ]),
        lines(vec![
            ("mtu", size().boxed()),
            ("ack_interval", size().boxed()),
            ("nack_interval", time().boxed()),
            (
                "rto",
                prop_oneof![
                    3 => time(),
                    1 => prop::sample::select(vec!["\"off\"", "\"auto\""]).prop_map(str::to_string),
                ]
                .boxed(),
            ),
            ("rto_retries", int_in(0..=10)),
            ("rto_backoff", int_in(1..=16)),
        ]),
        prop_oneof![
            20 => prop::sample::select(vec![
                "none", "hpcc", "hpcc-pint", "dcqcn", "dcqcn-w", "timely", "timely-w", "dctcp",
            ]),
            1 => Just("bogus"),
        ],
        prop::option::of(fraction()),
    )
        .prop_map(|(sw, nic, cc, eta)| {
            let mut t = format!("[switch]\n{sw}[nic]\n{nic}[cc]\nname = \"{cc}\"\n");
            if let (Some(eta), "hpcc") = (eta, cc) {
                t += &format!("eta = {eta}\n");
            }
            t
        })
        .boxed()
}

/// A TCP flow group that every flow of `[flows]` joins, and an RPC application over it.
fn group_and_rpc() -> BoxedStrategy<String> {
    let group = (
        prop::sample::select(vec!["newreno", "cubic", "dctcp", "prague", "hpcc"]),
        int_in(1..=1400),
        size(),
        any::<bool>(),
    )
        .prop_map(|(cca, mss, request, handshake)| {
            format!(
                "[[group]]\nname = \"g\"\ncca = \"{cca}\"\npg = 2\n\
                 tcp = {{ mss = {mss}, request_bytes = {request}, handshake = {handshake} }}\n"
            )
        });
    let rpc = (
        prop_oneof![
            (1i64..=4).prop_map(|n| format!("outstanding = {n}")),
            fraction().prop_map(|l| format!("load = {l}")),
        ],
        size(),
        size(),
        int_in(1..=4),
    )
        .prop_map(|(arrivals, query, response, connections)| {
            format!(
                "[[rpc]]\nclients = [0]\nservers = [1]\ngroup = \"g\"\n{arrivals}\n\
                 query = {query}\nresponse = {response}\nconnections = {connections}\n"
            )
        });
    (group, prop::option::weighted(0.6, rpc)).prop_map(|(g, r)| g + &r.unwrap_or_default()).boxed()
}

/// A port selection of `[[queue]]` and `[output] qlen_ports` (keys inside a table).
fn port_selection() -> BoxedStrategy<String> {
    let node = || int_in(0..=12);
    prop_oneof![
        4 => prop::sample::select(vec!["bottleneck", "all", "host-facing", "fabric", "bogus"])
            .prop_map(|a| format!("at = \"{a}\"")),
        2 => (node(), node()).prop_map(|(a, b)| format!("link = [{a}, {b}]")),
        2 => (node(), prop::option::of(int_in(0..=8))).prop_map(|(n, p)| match p {
            Some(p) => format!("switch = {n}, port = {p}"),
            None => format!("switch = {n}"),
        }),
    ]
    .boxed()
}

/// `[[queue]]` rules, `[[events]]` (link failures), `[routing]` and `[output]`.
fn extras() -> BoxedStrategy<String> {
    let param = prop_oneof![
        (Just("target"), time()),
        (Just("interval"), time()),
        (Just("tupdate"), time()),
        (Just("step_thresh"), time()),
        (Just("ce_threshold"), time()),
        (Just("limit"), int_in(1..=20_000)),
        (Just("limit_packets"), int_in(1..=20_000)),
        (Just("limit_bytes"), size()),
        (Just("memory_limit"), size()),
        (Just("flows"), int_in(1..=1024)),
        (Just("quantum"), size()),
        (Just("mtu"), size()),
        (Just("kmin"), size()),
        (Just("kmax"), size()),
        (Just("pmax"), fraction()),
        (Just("alpha"), fraction()),
        (Just("beta"), fraction()),
        (Just("coupling_factor"), int_in(0..=4)),
        (Just("drop_batch_size"), int_in(1..=64)),
        (Just("ecn"), any::<bool>().prop_map(|b| b.to_string()).boxed()),
        (Just("exact_sqrt"), any::<bool>().prop_map(|b| b.to_string()).boxed()),
    ];
    let queue = (
        port_selection(),
        prop_oneof![
            12 => prop::sample::select(vec!["fifo", "red", "codel", "fq_codel", "dualpi2"]),
            1 => Just("bogus"),
        ],
        prop::option::of(prop::collection::vec(int_in(1..=7), 0..3)),
        prop::collection::vec(param, 0..6),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(at, kind, classes, params, foreign)| {
            // Mostly the kind's own parameters (so that rules often validate), sometimes any.
            let own: &[&str] = match kind {
                "fifo" => &["limit_bytes", "limit_packets"],
                "red" => &["kmin", "kmax", "pmax", "ecn"],
                "codel" => {
                    &["target", "interval", "limit", "mtu", "ecn", "ce_threshold", "exact_sqrt"]
                }
                "fq_codel" => &[
                    "target",
                    "interval",
                    "limit",
                    "mtu",
                    "ecn",
                    "ce_threshold",
                    "exact_sqrt",
                    "flows",
                    "quantum",
                    "memory_limit",
                    "drop_batch_size",
                ],
                "dualpi2" => &[
                    "limit",
                    "memory_limit",
                    "target",
                    "tupdate",
                    "alpha",
                    "beta",
                    "step_thresh",
                    "coupling_factor",
                    "mtu",
                ],
                _ => &[],
            };
            let params = params.into_iter().filter(|(k, _)| foreign || own.contains(k));
            let mut q =
                format!("[[queue]]\n{}\nkind = \"{kind}\"\n", at.replace(", port", "\nport"));
            if let Some(c) = classes {
                q += &format!("classes = [{}]\n", c.join(", "));
            }
            // A key drawn twice is a TOML error: keep the first.
            let mut seen = Vec::new();
            for (k, v) in params {
                if !seen.contains(&k) {
                    q += &format!("{k} = {v}\n");
                    seen.push(k);
                }
            }
            q
        });
    let event = (
        time(),
        prop_oneof![
            12 => prop::sample::select(vec!["link-down", "link-up"]),
            1 => Just("reboot"),
        ],
        int_in(0..=12),
        int_in(0..=12),
    )
        .prop_map(|(at, action, a, b)| {
            format!("[[events]]\nat = {at}\naction = \"{action}\"\nlink = [{a}, {b}]\n")
        });
    let qlen_mon = (time(), time(), time(), size()).prop_map(|(start, end, interval, bin)| {
        format!("{{ start = {start}, end = {end}, interval = {interval}, bin = {bin} }}")
    });
    let output = lines(vec![
        ("pfc_log", any::<bool>().prop_map(|b| b.to_string()).boxed()),
        ("queue_lengths", any::<bool>().prop_map(|b| b.to_string()).boxed()),
        ("qlen_classes", any::<bool>().prop_map(|b| b.to_string()).boxed()),
        ("qlen_mon", qlen_mon.boxed()),
        ("qlen_ports", port_selection().prop_map(|p| format!("{{ {p} }}")).boxed()),
    ]);
    (
        prop::collection::vec(queue, 0..3),
        prop::collection::vec(event, 0..3),
        prop::option::weighted(0.3, time()),
        prop::option::weighted(0.4, output),
    )
        .prop_map(|(queues, events, convergence, output)| {
            let mut t = queues.concat() + &events.concat();
            if let Some(c) = convergence {
                t += &format!("[routing]\nconvergence = {c}\n");
            }
            if let Some(o) = output {
                t += &format!("[output]\n{o}");
            }
            t
        })
        .boxed()
}

fn scenario() -> impl Strategy<Value = String> {
    (
        prop::option::weighted(0.8, simulation()),
        prop::option::weighted(0.98, topology()),
        prop::option::weighted(0.98, flows()),
        prop::option::weighted(0.5, switch_and_nic()),
        prop::option::weighted(0.25, group_and_rpc()),
        prop::option::weighted(0.4, extras()),
    )
        .prop_map(|(s, t, f, x, g, e)| {
            // Every flow joins the group when there is one.
            let f = match (&g, f) {
                (Some(_), Some(f)) => Some(f.replacen("[flows]\n", "[flows]\ngroup = \"g\"\n", 1)),
                (_, f) => f,
            };
            [s, t, f, x, g, e].into_iter().flatten().collect::<Vec<_>>().join("\n")
        })
}

/// Whether `e` is located: in the scenario (`p.toml:LINE:COL: ...`, or `p.toml: ...` for what
/// has no position, such as a missing section) with the field where there is one.
fn assert_located(text: &str, e: &CliError) {
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "multi-line error: {msg}");
    match e {
        CliError::Field { file, at, field, .. } => {
            assert!(file.ends_with("p.toml"), "{msg}");
            assert!(at.line >= 1 && at.col >= 1 && !field.is_empty(), "{msg}");
            assert!(at.line <= text.lines().count().max(1), "{msg}\n{text}");
        }
        CliError::Toml { file, at, .. } => {
            assert!(file.ends_with("p.toml") && at.line >= 1 && at.col >= 1, "{msg}");
        }
        CliError::Scenario { file, .. } => assert!(file.ends_with("p.toml"), "{msg}"),
        other => panic!("not a located scenario error: {other}\n{text}"),
    }
}

proptest! {
    // 1000 cases by default (a few seconds); `PROPTEST_CASES=N` for a longer search.
    #![proptest_config(proptest_config(1000, 200))]

    #[test]
    fn validate_returns_ok_or_a_located_error_and_small_runs_do_not_panic(text in scenario()) {
        reset_peak_memory();
        let t0 = Instant::now();
        let result = validate(&Source::new("p.toml", text.clone()), None);
        let took = t0.elapsed();
        prop_assert!(took < VALIDATE_BOUND, "validate took {took:?}:\n{text}");
        if let Some(m) = peak_memory_mib() {
            prop_assert!(m < MEMORY_BOUND_MIB, "peak memory {m:.0} MiB:\n{text}");
        }
        match result {
            Err(e) => assert_located(&text, &e),
            Ok(mut v) => {
                // Every warning is located the same way.
                for w in &v.warnings {
                    prop_assert!(w.to_string().starts_with("p.toml"), "{w}");
                }
                let small = v.net.node_count() <= 64 && v.flows.len() <= 200;
                if small {
                    v.cfg.stop_time = v.cfg.stop_time.min(Time::from_ns(20_000));
                    // The simulator's own checks must agree with the CLI's: no SimError.
                    let r = v.run(1, Vec::new());
                    prop_assert!(r.is_ok(), "{:?}\n{text}", r.err());
                    if let Some(m) = peak_memory_mib() {
                        prop_assert!(m < MEMORY_BOUND_MIB, "peak memory {m:.0} MiB in the run:\n{text}");
                    }
                }
            }
        }
    }
}

/// A small valid topology of [`small_fabric`]: its `[topology]` keys, and what it has.
#[derive(Clone, Debug)]
struct SmallTopology {
    table: &'static str,
    hosts: u32,
    /// Servers of `[[rpc]]` (machines of `nics_per_server` host NICs).
    servers: u32,
    switches: Vec<u32>,
    /// Node pairs, one per link.
    links: Vec<(u32, u32)>,
}

/// A leaf-spine, a k = 4 fat tree, a dumbbell and the two-PoD testbed with dual-homed servers,
/// each as validation builds it.
fn small_topologies() -> Vec<SmallTopology> {
    [
        ("kind = \"leaf-spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n", 1),
        ("kind = \"fat-tree\"\nk = 4\n", 1),
        ("kind = \"dumbbell\"\nleft_hosts = 2\nright_hosts = 2\nbottleneck_rate = \"10Gbps\"\n", 1),
        ("kind = \"alibaba-2pod\"\nservers = 4\n", 2),
    ]
    .into_iter()
    .map(|(table, nics)| {
        let text =
            format!("[topology]\n{table}[flows]\n[[flows.list]]\nsrc = 0\ndst = 2\nsize = 1\n");
        let v = validate(&Source::new("t.toml", text), None).expect("a valid small topology");
        let net = &v.net;
        let hosts = net.hosts().len() as u32;
        let switches = (0..net.node_count() as u32).filter(|&n| !net.is_host(NodeId(n))).collect();
        let links = net.links().iter().map(|l| (l.a.0, l.b.0)).collect();
        SmallTopology { table, hosts, servers: hosts / nics, switches, links }
    })
    .collect()
}

/// A node pair: mostly a link of `links` (either way round), else any pair.
fn small_link(links: &[(u32, u32)]) -> BoxedStrategy<String> {
    prop_oneof![
        8 => (prop::sample::select(links.to_vec()), any::<bool>())
            .prop_map(|((a, b), swap)| if swap { format!("[{b}, {a}]") } else { format!("[{a}, {b}]") }),
        1 => (int_in(0..=40), int_in(0..=40)).prop_map(|(a, b)| format!("[{a}, {b}]")),
    ]
    .boxed()
}

/// A time within the small fabric's run, or one drawn as in [`time`].
fn early_time() -> BoxedStrategy<String> {
    prop_oneof![
        8 => prop::sample::select(vec!["\"0s\"", "\"1us\"", "\"3us\"", "\"10us\"", "\"25us\"", "\"60us\""])
            .prop_map(str::to_string),
        1 => time(),
    ]
    .boxed()
}

/// A valid small fabric (one of [`small_topologies`], 100 µs) with a few flows, RoCE or TCP,
/// and the extras drawn mostly valid for it: `[[queue]]` rules, link failures and recoveries,
/// `[routing]`, the RoCE timeout, the monitors, the switch's admission, `[[rpc]]`
/// applications. Most cases run, so the run-time paths of these features see odd values (a
/// failure at time 0, a CoDel target of 1 ps, a one-packet limit, …).
fn small_fabric() -> BoxedStrategy<String> {
    prop::sample::select(small_topologies()).prop_flat_map(|t| fabric_on(&t)).boxed()
}

fn fabric_on(topo: &SmallTopology) -> BoxedStrategy<String> {
    let (hosts, servers, table) = (topo.hosts, topo.servers, topo.table);
    let flow = (
        0..hosts,
        1..hosts,
        prop::sample::select(vec![1u64, 1000, 4000, 100_000, 1_000_000]),
        early_time(),
    )
        .prop_map(move |(s, d, size, start)| {
            let dst = (s + d) % hosts;
            format!("[[flows.list]]\nsrc = {s}\ndst = {dst}\nsize = {size}\nstart = {start}\n")
        });
    let queue = (
        prop_oneof![
            4 => prop::sample::select(vec!["at = \"bottleneck\"", "at = \"all\"",
                "at = \"host-facing\"", "at = \"fabric\""]).prop_map(str::to_string),
            2 => small_link(&topo.links).prop_map(|l| format!("link = {l}")),
            2 => (prop::sample::select(topo.switches.clone()), prop::option::of(0u32..5)).prop_map(|(n, p)| match p {
                Some(p) => format!("switch = {n}\nport = {p}"),
                None => format!("switch = {n}"),
            }),
        ],
        prop::sample::select(vec![
            "kind = \"fifo\"\nlimit_packets = 1\n",
            "kind = \"fifo\"\nlimit_bytes = \"3KB\"\n",
            "kind = \"red\"\nkmin = 0\nkmax = 1\npmax = 1.0\n",
            "kind = \"red\"\necn = false\nkmin = \"10KB\"\nkmax = \"20KB\"\n",
            "kind = \"codel\"\ntarget = \"1ps\"\ninterval = \"2ps\"\n",
            "kind = \"codel\"\ntarget = \"1us\"\ninterval = \"10us\"\nlimit = 2\necn = true\n",
            "kind = \"codel\"\nce_threshold = \"1ns\"\nexact_sqrt = true\n",
            "kind = \"fq_codel\"\nflows = 1\nquantum = 1\nmemory_limit = \"2KB\"\n",
            "kind = \"fq_codel\"\nflows = 65536\ndrop_batch_size = 1\nlimit = 1\n",
            "kind = \"fq_codel\"\ntarget = \"1us\"\ninterval = \"5us\"\n",
            "kind = \"dualpi2\"\ntarget = \"1us\"\ntupdate = \"1us\"\nlimit = 3\n",
            "kind = \"dualpi2\"\nstep_thresh = \"1ps\"\ncoupling_factor = 0\ndrop_early = true\n",
            "kind = \"dualpi2\"\nmtu = 64\nmemory_limit = \"1KB\"\n",
        ]),
        prop::option::of(prop::sample::select(vec!["[3]", "[1, 2, 3]", "[7]"])),
    )
        .prop_map(|(at, kind, classes)| {
            let classes = classes.map_or(String::new(), |c| format!("classes = {c}\n"));
            format!("[[queue]]\n{at}\n{kind}{classes}")
        });
    let event =
        (early_time(), any::<bool>(), small_link(&topo.links)).prop_map(|(at, down, link)| {
            let action = if down { "link-down" } else { "link-up" };
            format!("[[events]]\nat = {at}\naction = \"{action}\"\nlink = {link}\n")
        });
    let tcp_key = prop::sample::select(vec![
        "profile = \"dc-newreno\"",
        "mss = 1",
        "mss = 100",
        "iw = 1",
        "iw = 1000",
        "sack = false",
        "recovery = \"newreno\"",
        "loss_detection = \"dupthresh\"",
        "dupthresh = 1",
        "prr = false",
        "tlp = false",
        "delack_segments = 1",
        "delack_timeout = \"1us\"",
        "quickack = 0",
        "rto_mode = \"rfc6298\"",
        "min_rto = \"1us\"",
        "max_rto = \"1us\"",
        "initial_rto = \"1us\"",
        "timer_min = \"0s\"",
        "pacing = \"on\"",
        "pacing = \"off\"",
        "ecn = \"classic\"",
        "ecn = \"accurate\"",
        "handshake = true",
        "abc = 2",
    ]);
    let group = (
        prop::sample::select(vec!["newreno", "cubic", "dctcp", "prague", "hpcc"]),
        prop::collection::vec(tcp_key, 0..4),
    )
        .prop_map(|(cca, keys)| {
            // A key drawn twice is a TOML error: keep the first.
            let mut seen: Vec<&str> = Vec::new();
            for k in keys {
                let name = k.split(' ').next().unwrap_or(k);
                if !seen.iter().any(|s| s.split(' ').next() == Some(name)) {
                    seen.push(k);
                }
            }
            format!(
                "[[group]]\nname = \"g\"\ncca = \"{cca}\"\npg = 2\ntcp = {{ {} }}\n",
                seen.join(", ")
            )
        });
    let nic = lines(vec![
        (
            "rto",
            prop::sample::select(vec!["\"off\"", "\"auto\"", "\"1us\"", "\"20us\""])
                .prop_map(str::to_string)
                .boxed(),
        ),
        ("rto_retries", int_in(0..=3)),
        ("rto_backoff", int_in(1..=3)),
        (
            "mtu",
            prop::sample::select(vec!["1", "64", "1000", "9000"]).prop_map(str::to_string).boxed(),
        ),
    ]);
    let switch = lines(vec![
        ("pfc", any::<bool>().prop_map(|b| b.to_string()).boxed()),
        ("ecn", any::<bool>().prop_map(|b| b.to_string()).boxed()),
        (
            "reserve",
            prop::sample::select(vec!["0", "\"64B\"", "\"1MB\""]).prop_map(str::to_string).boxed(),
        ),
        ("headroom_bdp_multiple", int_in(0..=3)),
        (
            "pfc_alpha",
            prop::sample::select(vec!["0.001", "0.11", "999.0"]).prop_map(str::to_string).boxed(),
        ),
        (
            "lossy_admission",
            prop::sample::select(vec![
                "\"egress\"\negress_cap = \"1B\"",
                "\"egress\"\negress_alpha = 0.01",
                "\"egress\"\negress_cap = \"8KB\"\negress_alpha = 999.0",
                "\"ingress\"",
            ])
            .prop_map(str::to_string)
            .boxed(),
        ),
        (
            "buffer",
            prop::sample::select(vec!["\"2KB\"", "\"64KB\"", "\"32MiB\""])
                .prop_map(str::to_string)
                .boxed(),
        ),
    ]);
    let output = lines(vec![
        ("pfc_log", any::<bool>().prop_map(|b| b.to_string()).boxed()),
        ("queue_lengths", any::<bool>().prop_map(|b| b.to_string()).boxed()),
        ("qlen_classes", any::<bool>().prop_map(|b| b.to_string()).boxed()),
        (
            "qlen_mon",
            prop::sample::select(vec![
                ("0s", "0s"),
                ("0s", "100us"),
                ("10us", "20us"),
                ("1us", "1s"),
            ])
            .prop_map(|(s, e)| format!("{{ start = \"{s}\", end = \"{e}\", interval = \"1us\" }}"))
            .boxed(),
        ),
    ]);
    let rpc = (
        0..servers,
        1..servers,
        1u32..=3,
        prop_oneof![
            (1u32..=3).prop_map(|n| format!("outstanding = {n}")),
            prop::sample::select(vec!["load = 0.1", "load = 0.5", "load = 0.95"])
                .prop_map(str::to_string),
        ],
        prop::sample::select(vec!["1", "1000", "\"64KiB\""]),
        prop::sample::select(vec!["1", "64", "100000"]),
        prop::sample::select(vec![
            "",
            "warmup = \"5us\"\n",
            "stop = \"20us\"\n",
            "connection = \"random\"\n",
        ]),
    )
        .prop_map(move |(client, d, connections, arrivals, query, response, more)| {
            let server = (client + d) % servers;
            format!(
                "[[rpc]]\nclients = [{client}]\nservers = [{server}]\nconnections = {connections}\n\
                 {arrivals}\nquery = {query}\nresponse = {response}\n{more}"
            )
        });
    (
        prop::sample::select(vec!["\"10Gbps\"", "\"25Gbps\"", "\"100Gbps\""]),
        prop::sample::select(vec![
            "hpcc",
            "hpcc-pint",
            "dcqcn",
            "dcqcn-w",
            "timely",
            "timely-w",
            "dctcp",
            "none",
        ]),
        prop::collection::vec(flow, 1..4),
        prop::option::weighted(0.4, group),
        prop::collection::vec(queue, 0..3),
        prop::collection::vec(event, 0..4),
        prop::option::weighted(0.4, early_time()),
        (
            nic,
            switch,
            output,
            prop::option::weighted(0.3, rpc),
            prop::sample::select(vec!["exact", "ns3"]),
            prop::sample::select(vec!["0", "0.01", "0.3"]),
        ),
    )
        .prop_map(
            move |(
                rate,
                cc,
                flows,
                group,
                queues,
                events,
                convergence,
                (nic, switch, output, rpc, ser, loss),
            )| {
                let mut t = format!(
                    "[simulation]\nstop_time = \"100us\"\nserialization = \"{ser}\"\n\
                     [topology]\n{table}host_rate = {rate}\ndelay = \"1us\"\n\
                     error_rate_per_link = {loss}\n[cc]\nname = \"{cc}\"\n[flows]\n"
                );
                if group.is_some() {
                    t += "group = \"g\"\n";
                }
                t += &flows.concat();
                if let Some(r) = rpc {
                    // Over the group's TCP when there is one, else RoCE queue pairs of `[cc]`.
                    t += &r;
                    if group.is_some() {
                        t += "group = \"g\"\n";
                    }
                }
                t += &group.unwrap_or_default();
                t += &queues.concat();
                t += &events.concat();
                if let Some(c) = convergence {
                    t += &format!("[routing]\nconvergence = {c}\n");
                }
                t + &format!("[nic]\n{nic}[switch]\n{switch}[output]\n{output}")
            },
        )
        .boxed()
}

proptest! {
    // 300 cases by default; `PROPTEST_CASES=N` for a longer search.
    #![proptest_config(proptest_config(300, 200))]

    /// Queue disciplines, link failures, the RoCE timeout and the monitors on a small fabric:
    /// `Ok` or a located error, and the accepted runs end without a panic, their data bytes
    /// balanced (sent = delivered + dropped + still in flight), with the same outputs from
    /// 2–4 shards on one thread or two (shards dealt to threads by time every window, every
    /// third window, or never) as from one shard.
    #[test]
    fn extras_on_a_small_fabric_validate_and_run(
        text in small_fabric(),
        threads in 1usize..=2,
        shards in 2usize..=4,
        rebalance in prop_oneof![Just(0u64), Just(1), Just(3)],
        pin_threads in any::<bool>(),
    ) {
        reset_peak_memory();
        match validate(&Source::new("p.toml", text.clone()), None) {
            Err(e) => assert_located(&text, &e),
            Ok(v) => {
                let r = v.run(1, Vec::new());
                prop_assert!(r.is_ok(), "{:?}\n{text}", r.err());
                let out = r.expect("checked");
                // The same outputs from several shards, on one thread or two.
                let v = validate(&Source::new("p.toml", text.clone()), None).expect("valid again");
                let parallel = Parallelism {
                    threads,
                    shards,
                    partitioner: Default::default(),
                    trace_windows: false,
                    rebalance,
                    pin_threads,
                };
                let par = v.run_parallel(parallel, Vec::new(), None, None).expect("runs");
                let what = format!(
                    "{shards} shards on {threads} threads, rebalance {rebalance}, pinned \
                     {pin_threads}:\n{text}"
                );
                prop_assert_eq!(&par.results, &out.results, "flow results, {}", what);
                prop_assert_eq!(&par.counters, &out.counters, "counters, {}", what);
                prop_assert_eq!(&par.summary, &out.summary, "summary, {}", what);
                prop_assert_eq!(&par.pfc_log, &out.pfc_log, "PFC log, {}", what);
                prop_assert_eq!(&par.queries, &out.queries, "queries, {}", what);
                prop_assert_eq!(&par.queues, &out.queues, "queue lengths, {}", what);
                prop_assert_eq!(&par.class_queues, &out.class_queues, "class queues, {}", what);
                prop_assert_eq!(&par.samples, &out.samples, "qlen_mon samples, {}", what);
                prop_assert_eq!(par.data_bytes_in_flight, out.data_bytes_in_flight, "{}", what);
                let c = &out.counters;
                prop_assert_eq!(
                    c.data_bytes_sent,
                    c.data_bytes_delivered + c.data_bytes_dropped + out.data_bytes_in_flight,
                    "data bytes sent = delivered + dropped + in flight:\n{}", text
                );
                prop_assert!(c.frames_transmitted >= c.data_packets_sent, "{text}");
                prop_assert!(c.queries_completed <= c.queries_submitted, "queries:\n{}", text);
            }
        }
        if let Some(m) = peak_memory_mib() {
            prop_assert!(m < MEMORY_BOUND_MIB, "peak memory {m:.0} MiB:\n{text}");
        }
    }
}

/// A value of a sweep axis or `[set]` key: mostly valid for `key`, else drawn as in the
/// scenario property.
fn sweep_value(key: &'static str) -> BoxedStrategy<String> {
    match key {
        "scheme" => prop::sample::select(vec![
            "\"hpcc\"",
            "\"dcqcn\"",
            "\"timely-w\"",
            "\"none\"",
            "{ name = \"hpcc\", eta = 0.99 }",
            "{ name = \"dctcp\", eta = 0.5 }",
            "\"bogus\"",
            "{ eta = 1 }",
            "3",
        ])
        .prop_map(str::to_string)
        .boxed(),
        "workload" => {
            prop::sample::select(vec!["\"websearch\"", "\"hadoop\"", "\"nope.txt\"", "1"])
                .prop_map(str::to_string)
                .boxed()
        }
        "load" => fraction(),
        "seed" => int_in(0..=5),
        "variant" => prop::sample::select(vec![
            "{ name = \"small\", \"switch.buffer\" = \"64KB\" }",
            "{ name = \"lossy\", \"switch.pfc\" = false, \"cc.name\" = \"none\" }",
            "{ \"switch.pfc\" = false }",
            "{ name = \"x\", \"no.such\" = 1 }",
            "{ name = \"\" }",
        ])
        .prop_map(str::to_string)
        .boxed(),
        "\"switch.buffer\"" | "\"nic.mtu\"" => size(),
        "\"simulation.stop_time\"" | "\"flows.workload.duration\"" => time(),
        "\"topology.host_rate\"" => rate(),
        "\"topology.leaves\"" => count().boxed(),
        "\"cc.eta\"" => fraction(),
        _ => prop_oneof![time(), size(), fraction(), int_in(0..=5)].boxed(),
    }
}

/// A sweep file over a small valid base: one to three axes (known ones, dotted paths and bogus
/// keys) with one to three values each, sometimes a `[set]`, `lines` and `buckets`.
fn sweep_file() -> BoxedStrategy<String> {
    let key = prop::sample::select(vec![
        "scheme",
        "workload",
        "load",
        "seed",
        "variant",
        "\"switch.buffer\"",
        "\"nic.mtu\"",
        "\"simulation.stop_time\"",
        "\"flows.workload.duration\"",
        "\"topology.host_rate\"",
        "\"topology.leaves\"",
        "\"cc.eta\"",
    ]);
    let key = prop_oneof![
        12 => key,
        1 => prop::sample::select(vec!["\"no.such\"", "\"simulation\"", "bogus"]),
    ];
    let axis = key.prop_flat_map(|k| {
        prop::collection::vec(sweep_value(k), 1..=3).prop_map(move |v| (k, v.join(", ")))
    });
    let set = key_value_set();
    (
        prop::collection::vec(axis, 1..=3),
        prop::option::weighted(0.3, set),
        prop::option::of(prop::sample::select(vec![
            "lines = [\"scheme\"]",
            "lines = [\"load\", \"seed\"]",
            "lines = [\"nope\"]",
            "buckets = \"quantile:1\"",
            "buckets = \"sizes:10K,100K\"",
            "buckets = \"bogus\"",
        ])),
    )
        .prop_map(|(axes, set, extra)| {
            let mut t = format!("base = \"base.toml\"\n{}\n", extra.unwrap_or_default());
            if let Some((k, v)) = set {
                t += &format!("[set]\n{k} = {v}\n");
            }
            t += "[axes]\n";
            let mut seen = Vec::new();
            for (k, v) in axes {
                // A key written twice is a TOML error: keep the first.
                if !seen.contains(&k) {
                    seen.push(k);
                    t += &format!("{k} = [{v}]\n");
                }
            }
            t
        })
        .boxed()
}

/// One `[set]` entry.
fn key_value_set() -> BoxedStrategy<(&'static str, String)> {
    prop::sample::select(vec![
        "\"switch.buffer\"",
        "\"simulation.stop_time\"",
        "\"cc.eta\"",
        "load",
    ])
    .prop_flat_map(|k| sweep_value(k).prop_map(move |v| (k, v)))
    .boxed()
}

/// The base of [`sweep_file`]: a leaf-spine with 1 ms of web search arrivals, run for 40 µs.
const SWEEP_BASE: &str = "[simulation]\nstop_time = \"40us\"\n[topology]\nkind = \"leaf-spine\"\n\
leaves = 2\nspines = 2\nhosts_per_leaf = 2\n[flows]\nmax_flows = 1000\n\
workload = { cdf = \"websearch\", load = 0.3, duration = \"1ms\" }\n[cc]\nname = \"hpcc\"\n";

proptest! {
    // 64 cases by default (each runs the binary); `PROPTEST_CASES=N` for a longer search.
    #![proptest_config(proptest_config(64, 100))]

    /// `dcsim sweep --dry-run` on drawn sweep files: exit 0, or 2 with one error line that names
    /// the sweep file (its own errors located, a cell's naming the cell) or the base; never a
    /// panic. Accepted sweeps of at most four cells also run.
    #[test]
    fn sweep_files_validate_and_small_sweeps_run(sweep in sweep_file()) {
        let dir = tempfile::tempdir().expect("a temporary folder");
        std::fs::write(dir.path().join("base.toml"), SWEEP_BASE).expect("write");
        let file = dir.path().join("sweep.toml");
        std::fs::write(&file, &sweep).expect("write");
        let run = |extra: &[&str]| {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_dcsim"))
                .arg("sweep")
                .arg(&file)
                .args(extra)
                .arg("--out")
                .arg(dir.path().join("out"))
                .output()
                .expect("dcsim runs");
            (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(),
             String::from_utf8_lossy(&out.stderr).into_owned())
        };
        let (code, stdout, stderr) = run(&["--dry-run"]);
        prop_assert!(!stderr.contains("panicked"), "{stderr}\n{sweep}");
        match code {
            Some(0) => {
                let cells = stdout.lines().filter(|l| l.starts_with("  [")).count();
                if cells <= 4 {
                    let (code, _, stderr) = run(&["--jobs", "1"]);
                    prop_assert!(matches!(code, Some(0 | 2)) && !stderr.contains("panicked"),
                        "{code:?}: {stderr}\n{sweep}");
                }
            }
            Some(2) => {
                let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error: ")).collect();
                prop_assert_eq!(errors.len(), 1, "{}\n{}", stderr, sweep);
                let file_name = file.display().to_string();
                let base_name = dir.path().join("base.toml").display().to_string();
                prop_assert!(
                    errors[0].starts_with(&format!("error: {file_name}"))
                        || errors[0].starts_with(&format!("error: {base_name}")),
                    "an error that names neither file: {}\n{}", errors[0], sweep
                );
            }
            other => prop_assert!(false, "exit {other:?}: {stderr}\n{sweep}"),
        }
    }
}
