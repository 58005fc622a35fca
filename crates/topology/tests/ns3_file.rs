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
