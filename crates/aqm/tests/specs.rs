//! The plugin specs and `config_from_params` agree: every listed parameter is read, the
//! defaults are the documented ones, unknown names are reported with the known ones.

use dcsim_aqm::{config_from_params, spec, Bytes, Qdisc, QdiscConfig, QueueDisc, SPECS};
use dcsim_types::params::{kind_matches, Params, Value};

#[test]
fn names_are_the_scenario_names() {
    let names: Vec<&str> = SPECS.iter().map(|s| s.name).collect();
    assert_eq!(names, ["fifo", "red", "codel", "fq_codel", "dualpi2"]);
    for s in SPECS {
        assert_eq!(spec(s.name), Some(s));
        let mut params = s.param_names();
        params.sort_unstable();
        params.dedup();
        assert_eq!(params.len(), s.params.len(), "{}: duplicate parameter", s.name);
        assert!(s.params.iter().all(|p| !p.doc.is_empty() && !p.default.is_empty()));
    }
}

#[test]
fn defaults_build_every_discipline() {
    for s in SPECS {
        let cfg = config_from_params(s.name, &Params::default()).unwrap();
        assert_eq!(cfg.name(), s.name);
        assert_eq!(cfg.validate(), Ok(()));
        let q = Qdisc::new(&cfg);
        assert!(q.is_empty() && q.backlog_bytes() == 0 && q.peek().is_none());
    }
}

#[test]
fn unknown_names_list_the_known_ones() {
    let e = config_from_params("pie", &Params::default()).unwrap_err();
    assert_eq!(e.field, "qdisc");
    assert!(
        e.message.contains("\"pie\"") && e.message.contains("fifo, red, codel, fq_codel, dualpi2"),
        "{e}"
    );
    assert!(spec("pie").is_none());
}

/// A valid non-default value for every parameter of every spec; each must change the config.
fn table() -> Vec<(&'static str, &'static str, Value)> {
    use Value::*;
    let ms = |x| Duration(dcsim_aqm::Duration::from_ms(x));
    vec![
        ("fifo", "limit_bytes", Size(Bytes(1000))),
        ("fifo", "limit_packets", Integer(5)),
        ("red", "kmin", Size(Bytes(1))),
        ("red", "kmax", Size(Bytes(2_000_000))),
        ("red", "pmax", Number(0.5)),
        ("red", "ecn", Bool(false)),
        ("codel", "target", ms(2)),
        ("codel", "interval", ms(50)),
        ("codel", "limit", Integer(5)),
        ("codel", "mtu", Size(Bytes(100))),
        ("codel", "ecn", Bool(true)),
        ("codel", "ce_threshold", ms(1)),
        ("codel", "ce_threshold_selector", Choice("ect1")),
        ("codel", "exact_sqrt", Bool(true)),
        ("fq_codel", "flows", Integer(8)),
        ("fq_codel", "quantum", Size(Bytes(300))),
        ("fq_codel", "limit", Integer(100)),
        ("fq_codel", "memory_limit", Size(Bytes(1 << 20))),
        ("fq_codel", "drop_batch_size", Integer(4)),
        ("fq_codel", "target", ms(2)),
        ("fq_codel", "interval", ms(50)),
        ("fq_codel", "mtu", Size(Bytes(100))),
        ("fq_codel", "ecn", Bool(false)),
        ("fq_codel", "ce_threshold", ms(1)),
        ("fq_codel", "ce_threshold_selector", Choice("ect1")),
        ("fq_codel", "exact_sqrt", Bool(true)),
        ("dualpi2", "limit", Integer(50)),
        ("dualpi2", "memory_limit", Size(Bytes(10_000))),
        ("dualpi2", "target", ms(5)),
        ("dualpi2", "tupdate", ms(10)),
        ("dualpi2", "alpha", Number(0.3)),
        ("dualpi2", "beta", Number(2.0)),
        ("dualpi2", "step_thresh", ms(2)),
        ("dualpi2", "step_packets", Integer(5)),
        ("dualpi2", "min_qlen_step", Integer(2)),
        ("dualpi2", "coupling_factor", Integer(3)),
        ("dualpi2", "drop_overload", Bool(false)),
        ("dualpi2", "drop_early", Bool(true)),
        ("dualpi2", "c_protection", Integer(20)),
        ("dualpi2", "ecn_mask", Choice("any_ect")),
        ("dualpi2", "mtu", Size(Bytes(1500))),
    ]
}

#[test]
fn every_listed_parameter_is_read() {
    let table = table();
    for s in SPECS {
        for p in s.params {
            let row = table.iter().find(|(n, k, _)| *n == s.name && *k == p.name);
            let (_, _, v) =
                row.unwrap_or_else(|| panic!("{}.{} has no test value", s.name, p.name));
            assert!(kind_matches(p.kind, v), "{}.{}: {v:?} is not a {}", s.name, p.name, p.kind);
            // A parameter that acts only beside another (the CE threshold's selector, which
            // alone is refused as having no effect) is compared with that other alone.
            let with: Vec<(&'static str, Value)> = match p.name {
                "ce_threshold_selector" => {
                    vec![("ce_threshold", Value::Duration(dcsim_aqm::Duration::from_ms(1)))]
                }
                _ => Vec::new(),
            };
            let default =
                config_from_params(s.name, &Params::from_values(s.params, with.clone())).unwrap();
            let mut values = with;
            values.push((p.name, *v));
            let given = config_from_params(s.name, &Params::from_values(s.params, values))
                .unwrap_or_else(|e| panic!("{}.{}: {e}", s.name, p.name));
            assert_ne!(given, default, "{}.{} was ignored", s.name, p.name);
        }
    }
    assert_eq!(table.len(), SPECS.iter().map(|s| s.params.len()).sum::<usize>());
}

#[test]
fn config_round_trips_through_the_enum() {
    let cfg = config_from_params(
        "fq_codel",
        &Params::from_values(spec("fq_codel").unwrap().params, vec![("flows", Value::Integer(1))]),
    )
    .unwrap();
    match cfg {
        QdiscConfig::FqCodel(p) => assert_eq!(p.flows, 1),
        other => panic!("{other:?}"),
    }
}
