//! # dcsim-topology
//!
//! Everything between "a datacenter network" and the simulator's
//! [`Network`](dcsim_core::network::Network) + [`RoutingTable`](dcsim_core::network::RoutingTable):
//!
//! 1. **Describe** a network as an unvalidated [`Topology`]: with a builder
//!    ([`paper_fat_tree`], [`fat_tree`], [`three_tier_clos`], [`leaf_spine`], [`dumbbell`],
//!    [`star`], [`alibaba_2pod`]) or by reading the reference simulator's topology file ([`parse_ns3`]; the
//!    reverse is [`write_ns3`]). Builders number the hosts first (nodes `0..hosts`), as the
//!    reference traffic generator assumes.
//! 2. **Validate** it with [`Topology::validate`], which rejects unknown nodes, self loops,
//!    duplicate links, zero rates, bad loss probabilities, hosts with more or fewer than one
//!    link and hosts that cannot reach the others, with a [`TopologyError`] that names the
//!    nodes and, for files, the line.
//! 3. **Route** it with [`compute_routes`]: shortest-path ECMP next hops toward every host,
//!    in ascending neighbour id.
//! 4. **Measure** it with [`network_metrics`]: the reference's maximum base RTT and BDP
//!    (spec §6.1), which HPCC and PINT are configured with.
//!
//! This crate does no I/O (file *text* comes in and goes out as strings) and names no
//! congestion-control scheme.
//!
//! ```
//! use dcsim_topology::{compute_routes, network_metrics, paper_fat_tree, parse_ns3};
//!
//! // The HPCC paper's fat tree: 320 hosts, 56 switches.
//! let topo = paper_fat_tree();
//! assert_eq!((topo.host_count(), topo.switch_count()), (320, 56));
//! let net = topo.validate().unwrap();
//! let routes = compute_routes(&net);
//! let m = network_metrics(&net, &routes, 1000);
//! assert_eq!(m.max_rtt.as_ns(), 12_240);
//! assert_eq!(m.max_bdp, 153_000);
//!
//! // A reference topology file; errors name the line.
//! let text = "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 0.001ms 0\n";
//! let net = parse_ns3(text).unwrap().validate().unwrap();
//! assert_eq!(net.hosts().len(), 2);
//! let err = parse_ns3("3 1 2\n2\n0 2 100Gbp 1000ns 0\n").unwrap_err();
//! assert!(err.to_string().starts_with("line 3: bad rate '100Gbp'"));
//! ```
#![warn(missing_docs)]

pub mod builders;
pub mod error;
pub mod ns3;
pub mod routing;
mod topology;

pub use builders::{
    alibaba_2pod, dumbbell, dumbbell_asym, fat_tree, leaf_spine, paper_fat_tree, star,
    three_tier_clos, Alibaba2PodParams, ClosParams, FatTreeParams,
};
pub use error::{FilePos, LinkRef, TopologyError};
pub use ns3::{parse_ns3, write_ns3};
pub use routing::{compute_routes, compute_routes_within, network_metrics, NetworkMetrics};
pub use topology::Topology;
