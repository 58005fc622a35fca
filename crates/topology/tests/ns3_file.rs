//! The reference topology file: the calibration file, parse errors with line numbers, and the
//! write/parse round trip.

use dcsim_core::ids::NodeId;
use dcsim_core::network::NodeKind;
use dcsim_core::units::{BitsPerSec, Duration};
use dcsim_topology::*;

const CALIBRATION: &str = "../../../shared/reference/calibration/small-ws30/topology.txt";

fn calibration_text() -> Option<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CALIBRATION);
    match std::fs::read_to_string(&path) {
        Ok(t) => Some(t),
        Err(e) => {
            eprintln!("skipping: cannot read {}: {e}", path.display());
            None
        }
    }
}

#[test]
fn calibration_topology_metrics() {
    let Some(text) = calibration_text() else {
        return;
    };
    let topo = parse_ns3(&text).unwrap();
    assert_eq!((topo.node_count(), topo.switch_count(), topo.link_count()), (70, 6, 72));
    let net = topo.validate().unwrap();
    let routes = compute_routes(&net);
    let m = network_metrics(&net, &routes, 1000);
    assert_eq!(m.max_rtt, Duration::from_ns(8200));
    assert_eq!(m.max_bdp, 102_500);
    // It is exactly the 4-leaf, 2-spine leaf-spine builder (0.001ms == 1000ns).
    let built =
        leaf_spine(4, 2, 16, BitsPerSec::gbps(100), BitsPerSec::gbps(400), Duration::from_us(1))
            .unwrap();
    assert_eq!((&topo.kinds, &topo.links), (&built.kinds, &built.links));
    assert_eq!(topo.link_lines, (3..=74).collect::<Vec<_>>());
}

fn perr(text: &str) -> String {
    parse_ns3(text).expect_err("must not parse").to_string()
}

#[test]
fn parse_errors_name_the_line() {
    assert_eq!(
        perr(""),
        "topology file is empty: expected 'N S L' (node, switch and link counts) on line 1"
    );
    assert_eq!(perr("\n  \n"), perr(""));
    assert_eq!(
        perr("3 1\n2\n"),
        "line 1: expected 'N S L' (node, switch and link counts), found '3 1'"
    );
    assert_eq!(
        perr("3 x 1\n2\n"),
        "line 1: expected 'N S L' (node, switch and link counts), found '3 x 1'"
    );
    assert_eq!(perr("3 4 1\n"), "line 1: 4 switches declared but only 3 nodes");
    assert_eq!(
        perr("99999999999 1 1\n"),
        "line 1: 99999999999 nodes declared, more than the limit of 16777216"
    );
    assert_eq!(perr("3 2 2\n2\n"), "line 2: expected 2 switch ids, found 1");
    assert_eq!(perr("3 1 2\n"), "line 2: expected 1 switch ids, found 0");
    assert_eq!(
        perr("3 1 2\n3\n"),
        "line 2: switch id 3 is out of range (the header declares 3 nodes, so ids are below 3)"
    );
    assert_eq!(perr("3 2 2\n2 2\n"), "line 2: switch id 2 is listed twice");
    assert_eq!(perr("3 1 2\nS2\n"), "line 2: bad node id 'S2'");
    assert!(perr("3 1 2\n2\n0 2 100Gbp 1000ns 0\n").starts_with("line 3: bad rate '100Gbp'"));
    assert!(perr("3 1 2\n2\n0 2 100Gbps 1000 0\n").starts_with("line 3: bad delay '1000'"));
    assert!(perr("3 1 2\n2\n0 2 100Gbps 1us none\n").starts_with("line 3: bad error rate 'none'"));
    assert_eq!(perr("3 1 2\n2\n0 -2 100Gbps 1us 0\n"), "line 3: bad node id '-2'");
    assert_eq!(
        perr("3 1 2\n2\n0 2 100Gbps 1us\n"),
        "line 3: expected 'a b rate delay err' (5 fields), found 4 fields: '0 2 100Gbps 1us'"
    );
    assert_eq!(
        perr("3 1 2\n2\n0 2 100Gbps 1us 0 extra\n"),
        "line 3: expected 'a b rate delay err' (5 fields), found 6 fields: '0 2 100Gbps 1us 0 extra'"
    );
    // Blank lines are skipped but counted.
    assert!(perr("3 1 2\n\n2\n\n0 2 100Gbps 1us 0\n1 2 1Gbs 1us 0\n")
        .starts_with("line 6: bad rate '1Gbs'"));
}

/// Every error from a file points at a line, the column where the offending token starts and
/// the field; its detail is the message without the `line N: ` prefix.
#[test]
fn errors_point_at_line_column_and_field() {
    let pos = |text: &str| {
        let e = match parse_ns3(text) {
            Err(e) => e,
            Ok(t) => t.validate().expect_err("must fail"),
        };
        let p = e.file_position(text).map(|p| format!("{}:{} {}", p.line, p.col, p.field));
        (p.unwrap_or_default(), e.detail())
    };
    let cases: &[(&str, &str, &str)] = &[
        ("3 x 1\n2\n", "1:3 header", "expected 'N S L' (node, switch and link counts), found '3 x 1'"),
        ("3 1\n2\n", "1:1 header", "expected 'N S L' (node, switch and link counts), found '3 1'"),
        ("3 4 1\n", "1:3 header.switches", "4 switches declared but only 3 nodes"),
        ("99999999999 1 1\n", "1:1 header.nodes", "99999999999 nodes declared, more than the limit of 16777216"),
        ("3 2 2\n 2\n", "2:1 switch_ids", "expected 2 switch ids, found 1"),
        ("3 1 2\n2 3\n", "2:3 switch_ids", "expected 1 switch ids, found 2"),
        ("3 2 2\n2  S2\n", "2:4 switch_ids[1]", "bad node id 'S2'"),
        ("3 2 2\n1 3\n", "2:3 switch_ids[1]", "switch id 3 is out of range (the header declares 3 nodes, so ids are below 3)"),
        ("3 2 2\n2 2\n", "2:3 switch_ids[1]", "switch id 2 is listed twice"),
        ("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2  100Gbp 1us 0\n", "4:6 link[1].rate", "bad rate '100Gbp' (expected e.g. 100Gbps, 400Gb/s, 10Mbps, 1Kbps, 64bps)"),
        ("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100.001Tbps 1us 0\n", "4:5 link[1].rate", "bad rate '100.001Tbps' (expected e.g. 100Gbps, 400Gb/s, 10Mbps, 1Kbps, 64bps)"),
        ("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100000.001Gbps 1us 0\n", "4:5 link[1].rate", "rate '100000.001Gbps' is above the largest rate supported, 100 Tbps"),
        ("3 1 2\n2\n0 2 90000000Gbps 1us 0\n", "3:5 link[0].rate", "rate '90000000Gbps' is above the largest rate supported, 100 Tbps"),
        ("3 1 2\n2\n0 2 100Gbps 1000 0\n", "3:13 link[0].delay", "bad delay '1000' (expected e.g. 1000ns, 1us, 0.001ms, 2s)"),
        ("3 1 2\n2\n0 2 100Gbps 10000000s 0\n", "3:13 link[0].delay", "delay '10000000s' is longer than the limit of 2^62 ps (4611686.018427387904 s, about 53 days)"),
        ("3 1 2\n2\n0 2 100Gbps 1us x\n", "3:17 link[0].error_rate", "bad error rate 'x' (expected a probability such as 0 or 0.001)"),
        ("3 1 2\n2\n0 -2 100Gbps 1us 0\n", "3:3 link[0].b", "bad node id '-2'"),
        ("3 1 2\n2\nx 2 100Gbps 1us 0\n", "3:1 link[0].a", "bad node id 'x'"),
        ("3 1 2\n2\n0 2 100Gbps 1us 0 extra\n", "3:19 link[0]", "expected 'a b rate delay err' (5 fields), found 6 fields: '0 2 100Gbps 1us 0 extra'"),
        ("3 1 2\n2\n0 2 100Gbps 1us\n", "3:1 link[0]", "expected 'a b rate delay err' (5 fields), found 4 fields: '0 2 100Gbps 1us'"),
        ("3 1 3\n2\n0 2 100Gbps 1us 0\n", "4:1 link[1]", "file ends after 1 of the 3 declared links"),
        ("3 1 1\n2\n0 2 100Gbps 1us 0\n  1 2 100Gbps 1us 0\n", "4:3 header.links", "unexpected content after the 1 declared links: '1 2 100Gbps 1us 0'"),
        // Without switches there is no switch-id line; blank lines do not count.
        ("2 0 1\n\n0 1 10Gbps 2us 0 1\n", "3:18 link[0]", "expected 'a b rate delay err' (5 fields), found 6 fields: '0 1 10Gbps 2us 0 1'"),
        // Graph validation.
        ("3 1 2\n2\n0 2 100Gbps 1us 0\n1 7 100Gbps 1us 0\n", "4:3 link[1].b", "link names node 7, but there are only 3 nodes"),
        ("3 1 2\n2\n0 2 100Gbps 1us 0\n2 2 100Gbps 1us 0\n", "4:3 link[1].b", "link connects node 2 to itself"),
        ("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 0Gbps 1us 0\n", "4:5 link[1].rate", "link between nodes 1 and 2 has zero bandwidth"),
        ("3 1 2\n2\n0 2 100Gbps 1us 1.5\n1 2 100Gbps 1us 0\n", "3:17 link[0].error_rate", "link between nodes 0 and 2 has loss probability 1.5, outside [0, 1]"),
        ("4 2 4\n2 3\n0 2 100Gbps 1us 0\n1 3 100Gbps 1us 0\n2 3 100Gbps 1us 0\n3 2 400Gbps 1us 0\n", "6:1 link[3]", "duplicate link between nodes 3 and 2 (first declared on line 5)"),
        ("4 2 4\n2 3\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n2 3 100Gbps 1us 0\n3 0 100Gbps 1us 0\n", "6:3 link[3].b", "host 0 has more than one link (line 3 and line 6); a host has exactly one NIC link"),
        // Errors about the whole topology have no position.
        ("4 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n", "", "host 3 has no link (disconnected host)"),
        ("", "", "topology file is empty: expected 'N S L' (node, switch and link counts) on line 1"),
    ];
    for &(text, at, detail) in cases {
        assert_eq!(pos(text), (at.to_string(), detail.to_string()), "{text:?}");
    }
}

#[test]
fn too_few_links_and_trailing_garbage() {
    assert_eq!(
        perr("3 1 3\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n"),
        "line 5: file ends after 2 of the 3 declared links"
    );
    assert_eq!(
        perr("3 1 1\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n"),
        "line 4: unexpected content after the 1 declared links: '1 2 100Gbps 1us 0'"
    );
    // Trailing blank lines and CRLF line ends are fine.
    let t = parse_ns3("3 1 2\r\n2\r\n0 2 100Gbps 1us 0\r\n1 2 100Gbps 1us 0\r\n\r\n\n").unwrap();
    assert_eq!(t.link_lines, vec![3, 4]);
    t.validate().unwrap();
}

#[test]
fn hosts_only_file() {
    let t = parse_ns3("2 0 1\n0 1 10Gbps 2us 0\n").unwrap();
    assert_eq!(t.kinds, vec![NodeKind::Host, NodeKind::Host]);
    t.validate().unwrap();
    // Written back with an empty switch line.
    let text = write_ns3(&t);
    assert_eq!(text, "2 0 1\n\n0 1 10Gbps 2000ns 0\n");
    let back = parse_ns3(&text).unwrap();
    assert_eq!((back.kinds, back.links, back.link_lines), (t.kinds, t.links, vec![3]));
}

#[test]
fn write_parse_round_trip() {
    let mut topos = vec![
        paper_fat_tree(),
        fat_tree(4, &FatTreeParams { oversubscription: 2, ..Default::default() }).unwrap(),
        dumbbell(2, 3, BitsPerSec::gbps(25), BitsPerSec::mbps(2500), Duration::from_ns(1234))
            .unwrap(),
        star(4, BitsPerSec(123_456_789), Duration::ZERO).unwrap(),
    ];
    topos[3].links[2].loss = 0.001;
    topos[2].links[0].loss = 1e-7;
    for t in &topos {
        let text = write_ns3(t);
        let back = parse_ns3(&text).unwrap();
        assert_eq!((&back.kinds, &back.links), (&t.kinds, &t.links), "{text}");
        assert_eq!(back.link_lines, (3..3 + t.link_count()).collect::<Vec<_>>());
        assert_eq!(write_ns3(&back), text);
    }
    assert_eq!(
        write_ns3(&star(1, BitsPerSec::gbps(100), Duration::from_us(1)).unwrap()),
        "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n"
    );
    assert_eq!(topos[0].links[0].a, NodeId(0));
}
