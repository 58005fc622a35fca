//! One test per validation error: the error names the nodes and the file line (or link index).

use dcsim_core::ids::{LinkId, NodeId};
use dcsim_core::network::{LinkSpec, NodeKind};
use dcsim_core::units::{BitsPerSec, Duration};
use dcsim_topology::*;

fn err_of(text: &str) -> TopologyError {
    parse_ns3(text).expect("syntax is fine").validate().expect_err("validation must fail")
}

fn msg(text: &str) -> String {
    err_of(text).to_string()
}

fn link(a: u32, b: u32) -> LinkSpec {
    LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate: BitsPerSec::gbps(100),
        delay: Duration::from_us(1),
        loss: 0.0,
    }
}

const H: NodeKind = NodeKind::Host;
const S: NodeKind = NodeKind::Switch;

#[test]
fn unknown_node() {
    let text = "3 1 2\n2\n0 2 100Gbps 1us 0\n1 7 100Gbps 1us 0\n";
    assert_eq!(msg(text), "line 4: link names node 7, but there are only 3 nodes");
}

#[test]
fn self_loop() {
    let text = "3 1 3\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n2 2 100Gbps 1us 0\n";
    assert_eq!(msg(text), "line 5: link connects node 2 to itself");
}

#[test]
fn duplicate_link_names_both_lines() {
    let text = "4 2 4\n2 3\n0 2 100Gbps 1us 0\n\n1 3 100Gbps 1us 0\n2 3 100Gbps 1us 0\n3 2 400Gbps 1us 0\n";
    assert_eq!(
        err_of(text),
        TopologyError::DuplicateLink {
            at: LinkRef::Line(7),
            first: LinkRef::Line(6),
            a: NodeId(3),
            b: NodeId(2),
        }
    );
    assert_eq!(
        msg(text),
        "line 7: duplicate link between nodes 3 and 2 (first declared on line 6)"
    );
}

#[test]
fn duplicate_link_in_code_names_link_indices() {
    let t = Topology::new(vec![H, H, S, S], vec![link(0, 2), link(1, 3), link(2, 3), link(2, 3)]);
    assert_eq!(
        t.validate().unwrap_err().to_string(),
        "link 3: duplicate link between nodes 2 and 3 (first declared as link 2)"
    );
}

#[test]
fn zero_bandwidth() {
    let text = "3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 0Gbps 1us 0\n";
    assert_eq!(msg(text), "line 4: link between nodes 1 and 2 has zero bandwidth");
}

#[test]
fn loss_outside_unit_interval() {
    let text = "3 1 2\n2\n0 2 100Gbps 1us 1.5\n1 2 100Gbps 1us 0\n";
    assert_eq!(
        msg(text),
        "line 3: link between nodes 0 and 2 has loss probability 1.5, outside [0, 1]"
    );
    let text = "3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us -0.1\n";
    assert_eq!(
        msg(text),
        "line 4: link between nodes 1 and 2 has loss probability -0.1, outside [0, 1]"
    );
    let text = "3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us NaN\n";
    assert!(matches!(err_of(text), TopologyError::BadLoss { at: LinkRef::Line(4), .. }));
    // The bounds themselves are fine.
    let ok = "3 1 2\n2\n0 2 100Gbps 1us 1\n1 2 100Gbps 1us 0.0\n";
    parse_ns3(ok).unwrap().validate().unwrap();
}

#[test]
fn host_with_two_links() {
    let text =
        "4 2 4\n2 3\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n2 3 100Gbps 1us 0\n0 3 100Gbps 1us 0\n";
    assert_eq!(
        msg(text),
        "host 0 has more than one link (line 3 and line 6); a host has exactly one NIC link"
    );
}

#[test]
fn host_without_link() {
    let text = "4 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n";
    assert_eq!(msg(text), "host 3 has no link (disconnected host)");
}

#[test]
fn host_unreachable_through_switches() {
    // Hosts 0, 1 on switch 4; hosts 2, 3 on switch 5; the switches are not connected.
    let t =
        Topology::new(vec![H, H, H, H, S, S], vec![link(0, 4), link(1, 4), link(2, 5), link(3, 5)]);
    assert_eq!(
        t.validate().unwrap_err(),
        TopologyError::DisconnectedHost { node: NodeId(2), from: NodeId(0) }
    );
    assert_eq!(
        t.validate().unwrap_err().to_string(),
        "host 2 cannot reach host 0 through the switches (disconnected host)"
    );
}

#[test]
fn hosts_are_not_transit_nodes() {
    // Hosts 1 and 2 are linked only to each other: an island that host 0 cannot reach.
    let t = Topology::new(vec![H, H, H, S], vec![link(0, 3), link(1, 2)]);
    assert_eq!(
        t.validate().unwrap_err(),
        TopologyError::DisconnectedHost { node: NodeId(1), from: NodeId(0) }
    );
    // Two hosts directly connected form a valid network.
    Topology::new(vec![H, H], vec![link(0, 1)]).validate().unwrap();
}

#[test]
fn no_hosts() {
    let t = Topology::new(vec![S, S], vec![link(0, 1)]);
    assert_eq!(
        t.validate().unwrap_err().to_string(),
        "the topology has no hosts (every node is a switch)"
    );
}

#[test]
fn errors_in_code_name_link_indices() {
    let t = Topology::new(vec![H, S], vec![link(0, 1), link(1, 1)]);
    assert_eq!(
        t.validate().unwrap_err(),
        TopologyError::SelfLoop { at: LinkRef::Link(LinkId(1)), node: NodeId(1) }
    );
    assert_eq!(t.validate().unwrap_err().to_string(), "link 1: link connects node 1 to itself");
}

#[test]
fn valid_network_keeps_port_order() {
    let t = parse_ns3("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 400Gbps 2us 0.01\n").unwrap();
    let net = t.validate().unwrap();
    assert_eq!(net.hosts(), &[NodeId(0), NodeId(1)]);
    let p = net.ports(NodeId(2));
    assert_eq!((p[0].peer, p[1].peer), (NodeId(0), NodeId(1)));
    assert_eq!(p[1].rate, BitsPerSec::gbps(400));
    assert_eq!(p[1].delay, Duration::from_us(2));
    assert_eq!(p[1].loss, 0.01);
}
