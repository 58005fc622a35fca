//! Builders for the standard datacenter topologies.
//!
//! Every builder numbers the **hosts first** (node ids `0..hosts`), then the switches tier by
//! tier from the hosts upwards, and declares the links in this order: one link per host (in
//! host order), then each tier's uplinks (lower switch by lower switch, upper ends ascending).
//! The reference traffic generator assumes that hosts are nodes `0..n-1`, and this order makes
//! [`paper_fat_tree`] identical, link for link, to the reference's `mix/fat.txt`.
//!
//! Builders check their arguments (zero counts, zero rates, an odd `k`, sizes beyond
//! [`MAX_NODES`]) and return [`TopologyError::InvalidArgument`]; they never panic.

use dcsim_core::ids::NodeId;
use dcsim_core::network::{LinkSpec, NodeKind};
use dcsim_core::units::{BitsPerSec, Duration};

use crate::error::TopologyError;
use crate::topology::Topology;

/// The largest node count a builder accepts (2^24), so that absurd sizes are reported as an
/// error rather than exhausting memory.
pub const MAX_NODES: usize = 1 << 24;

/// Parameters of a generic three-tier Clos network (ToR / aggregation / core), the shape both
/// [`paper_fat_tree`] and [`fat_tree`] are instances of.
///
/// Node numbering: hosts `0..H` (host `h` on ToR `h / hosts_per_tor`), then the ToRs pod by
/// pod, then the aggregation switches pod by pod, then the cores. Inside a pod every ToR links
/// to every aggregation switch; aggregation switch `i` of every pod links to cores
/// `i * cores_per_agg .. (i + 1) * cores_per_agg`, so there are
/// `aggs_per_pod * cores_per_agg` cores.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct ClosParams {
    /// Number of pods.
    pub pods: usize,
    /// ToR (edge) switches per pod.
    pub tors_per_pod: usize,
    /// Aggregation switches per pod.
    pub aggs_per_pod: usize,
    /// Hosts under each ToR.
    pub hosts_per_tor: usize,
    /// Core uplinks of each aggregation switch.
    pub cores_per_agg: usize,
    /// Rate of the host–ToR links.
    pub host_rate: BitsPerSec,
    /// Rate of the ToR–aggregation and aggregation–core links.
    pub fabric_rate: BitsPerSec,
    /// One-way propagation delay of every link.
    pub delay: Duration,
}

impl ClosParams {
    /// The HPCC/PINT paper topology (the reference's `mix/fat.txt`): 5 pods of 4 ToRs and 4
    /// aggregation switches, 16 hosts per ToR, 4 cores per aggregation switch (16 cores),
    /// 100 Gb/s host links, 400 Gb/s fabric, 1 µs per link.
    pub const PAPER: ClosParams = ClosParams {
        pods: 5,
        tors_per_pod: 4,
        aggs_per_pod: 4,
        hosts_per_tor: 16,
        cores_per_agg: 4,
        host_rate: BitsPerSec::gbps(100),
        fabric_rate: BitsPerSec::gbps(400),
        delay: Duration::from_us(1),
    };
}

impl Default for ClosParams {
    /// [`ClosParams::PAPER`].
    fn default() -> Self {
        ClosParams::PAPER
    }
}

/// Parameters of [`fat_tree`] besides `k`.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct FatTreeParams {
    /// Oversubscription factor: each edge switch has `k/2 * oversubscription` hosts (1 = the
    /// classic full-bisection fat tree with `k³/4` hosts).
    pub oversubscription: usize,
    /// Rate of the host–edge links.
    pub host_rate: BitsPerSec,
    /// Rate of the edge–aggregation and aggregation–core links.
    pub fabric_rate: BitsPerSec,
    /// One-way propagation delay of every link.
    pub delay: Duration,
}

impl Default for FatTreeParams {
    /// No oversubscription, 100 Gb/s everywhere, 1 µs per link.
    fn default() -> Self {
        FatTreeParams {
            oversubscription: 1,
            host_rate: BitsPerSec::gbps(100),
            fabric_rate: BitsPerSec::gbps(100),
            delay: Duration::from_us(1),
        }
    }
}

/// The HPCC/PINT paper's fat tree, identical to the reference's `mix/fat.txt`: 320 hosts
/// (nodes 0–319, host `h` under ToR `320 + h/16`), 20 ToRs (320–339, pod `p` = ToRs
/// `320 + 4p ..`), 20 aggregation switches (340–359, pod `p` = `340 + 4p ..`), 16 cores
/// (360–375; aggregation switch `i` of each pod reaches cores `360 + 4i .. 360 + 4i + 3`);
/// 100 Gb/s host links, 400 Gb/s fabric, 1 µs per link; 480 links.
///
/// At 100 Gb/s with a 1000-byte payload its maximum base RTT is 12 240 ns and its maximum BDP
/// 153 000 bytes (spec §6.1).
pub fn paper_fat_tree() -> Topology {
    three_tier_clos(&ClosParams::PAPER).expect("the paper parameters are valid")
}

/// A k-ary fat tree (Al-Fares et al.): `k` pods of `k/2` edge and `k/2` aggregation switches,
/// `(k/2)²` cores, each aggregation switch linked to `k/2` cores, and `k/2 * oversubscription`
/// hosts per edge switch (`k³/4 * oversubscription` hosts).
///
/// Node numbering as in [`ClosParams`]: hosts, then edge switches pod by pod, then
/// aggregation switches pod by pod, then cores.
///
/// # Errors
/// [`TopologyError::InvalidArgument`] if `k` is odd or below 2, the oversubscription factor or
/// a rate is zero, or the network would exceed [`MAX_NODES`].
pub fn fat_tree(k: usize, params: &FatTreeParams) -> Result<Topology, TopologyError> {
    const B: &str = "fat_tree";
    if k < 2 || k % 2 == 1 {
        return Err(invalid(B, format!("k = {k} must be even and at least 2")));
    }
    if params.oversubscription == 0 {
        return Err(invalid(B, "oversubscription factor must be at least 1".into()));
    }
    let half = k / 2;
    let hosts_per_tor = half.checked_mul(params.oversubscription).ok_or_else(|| too_big(B))?;
    three_tier_clos_named(
        B,
        &ClosParams {
            pods: k,
            tors_per_pod: half,
            aggs_per_pod: half,
            hosts_per_tor,
            cores_per_agg: half,
            host_rate: params.host_rate,
            fabric_rate: params.fabric_rate,
            delay: params.delay,
        },
    )
}

/// A generic three-tier Clos network; see [`ClosParams`] for the shape and node numbering.
///
/// # Errors
/// [`TopologyError::InvalidArgument`] if a count or rate is zero or the network would exceed
/// [`MAX_NODES`].
pub fn three_tier_clos(p: &ClosParams) -> Result<Topology, TopologyError> {
    three_tier_clos_named("three_tier_clos", p)
}

fn three_tier_clos_named(b: &'static str, p: &ClosParams) -> Result<Topology, TopologyError> {
    positive(b, "pods", p.pods)?;
    positive(b, "tors_per_pod", p.tors_per_pod)?;
    positive(b, "aggs_per_pod", p.aggs_per_pod)?;
    positive(b, "hosts_per_tor", p.hosts_per_tor)?;
    positive(b, "cores_per_agg", p.cores_per_agg)?;
    nonzero_rate(b, "host_rate", p.host_rate)?;
    nonzero_rate(b, "fabric_rate", p.fabric_rate)?;

    let tors = mul(b, p.pods, p.tors_per_pod)?;
    let aggs = mul(b, p.pods, p.aggs_per_pod)?;
    let hosts = mul(b, tors, p.hosts_per_tor)?;
    let cores = mul(b, p.aggs_per_pod, p.cores_per_agg)?;
    let nodes = sum(b, &[hosts, tors, aggs, cores])?;
    let links = sum(b, &[hosts, mul(b, tors, p.aggs_per_pod)?, mul(b, aggs, p.cores_per_agg)?])?;

    let tor0 = hosts;
    let agg0 = tor0 + tors;
    let core0 = agg0 + aggs;
    let mut t = Builder::new(hosts, nodes - hosts, links);
    for h in 0..hosts {
        t.link(h, tor0 + h / p.hosts_per_tor, p.host_rate, p.delay);
    }
    for tor in 0..tors {
        let pod = tor / p.tors_per_pod;
        for a in 0..p.aggs_per_pod {
            t.link(tor0 + tor, agg0 + pod * p.aggs_per_pod + a, p.fabric_rate, p.delay);
        }
    }
    for agg in 0..aggs {
        let i = agg % p.aggs_per_pod;
        for c in 0..p.cores_per_agg {
            t.link(agg0 + agg, core0 + i * p.cores_per_agg + c, p.fabric_rate, p.delay);
        }
    }
    Ok(t.finish())
}

/// A two-tier leaf-spine fabric: `leaves * hosts_per_leaf` hosts (node ids `0..H`, host `h`
/// under leaf `H + h / hosts_per_leaf`), then the leaves (`H .. H + leaves`), then the spines
/// (`H + leaves ..`). Every leaf has one link to every spine.
///
/// `leaf_spine(4, 2, 16, 100G, 400G, 1 µs)` is the calibration topology
/// `small-ws30/topology.txt`, link for link.
///
/// # Errors
/// [`TopologyError::InvalidArgument`] if a count or rate is zero or the network would exceed
/// [`MAX_NODES`].
pub fn leaf_spine(
    leaves: usize,
    spines: usize,
    hosts_per_leaf: usize,
    host_rate: BitsPerSec,
    fabric_rate: BitsPerSec,
    delay: Duration,
) -> Result<Topology, TopologyError> {
    const B: &str = "leaf_spine";
    positive(B, "leaves", leaves)?;
    positive(B, "spines", spines)?;
    positive(B, "hosts_per_leaf", hosts_per_leaf)?;
    nonzero_rate(B, "host_rate", host_rate)?;
    nonzero_rate(B, "fabric_rate", fabric_rate)?;
    let hosts = mul(B, leaves, hosts_per_leaf)?;
    let nodes = sum(B, &[hosts, leaves, spines])?;
    let links = sum(B, &[hosts, mul(B, leaves, spines)?])?;

    let leaf0 = hosts;
    let spine0 = hosts + leaves;
    let mut t = Builder::new(hosts, nodes - hosts, links);
    for h in 0..hosts {
        t.link(h, leaf0 + h / hosts_per_leaf, host_rate, delay);
    }
    for l in 0..leaves {
        for s in 0..spines {
            t.link(leaf0 + l, spine0 + s, fabric_rate, delay);
        }
    }
    Ok(t.finish())
}

/// A dumbbell: `left_hosts` hosts (ids `0..left_hosts`) on switch `L = left_hosts +
/// right_hosts`, `right_hosts` hosts (ids `left_hosts..L`) on switch `L + 1`, and one
/// bottleneck link between the two switches (declared last).
///
/// # Errors
/// [`TopologyError::InvalidArgument`] if a count or rate is zero or the network would exceed
/// [`MAX_NODES`].
pub fn dumbbell(
    left_hosts: usize,
    right_hosts: usize,
    host_rate: BitsPerSec,
    bottleneck_rate: BitsPerSec,
    delay: Duration,
) -> Result<Topology, TopologyError> {
    dumbbell_of("dumbbell", left_hosts, right_hosts, (host_rate, delay), (bottleneck_rate, delay))
}

/// A dumbbell whose bottleneck has its own propagation delay: `left_hosts` hosts (ids
/// `0..left_hosts`) on switch `L = left_hosts + right_hosts`, `right_hosts` hosts (ids
/// `left_hosts..L`) on switch `L + 1`, every host link at `host_rate` with delay `host_delay`,
/// and one bottleneck link between the two switches at `bottleneck_rate` with delay
/// `bottleneck_delay` (declared last). Nodes and links are numbered as in [`dumbbell`]; the
/// one-way propagation delay between a left and a right host is
/// `2 · host_delay + bottleneck_delay`.
///
/// This is the path of the FCT-harm experiment (ccafct): fast, short host links and a slow
/// bottleneck that carries the whole path delay.
///
/// # Errors
/// [`TopologyError::InvalidArgument`] if a count or rate is zero or the network would exceed
/// [`MAX_NODES`].
pub fn dumbbell_asym(
    left_hosts: usize,
    right_hosts: usize,
    host_rate: BitsPerSec,
    host_delay: Duration,
    bottleneck_rate: BitsPerSec,
    bottleneck_delay: Duration,
) -> Result<Topology, TopologyError> {
    let (host, bottleneck) = ((host_rate, host_delay), (bottleneck_rate, bottleneck_delay));
    dumbbell_of("dumbbell_asym", left_hosts, right_hosts, host, bottleneck)
}

/// The dumbbell of [`dumbbell`] and [`dumbbell_asym`], named `b` in errors, with (rate, delay)
/// of the host links and of the bottleneck.
fn dumbbell_of(
    b: &'static str,
    left_hosts: usize,
    right_hosts: usize,
    (host_rate, host_delay): (BitsPerSec, Duration),
    (bottleneck_rate, bottleneck_delay): (BitsPerSec, Duration),
) -> Result<Topology, TopologyError> {
    positive(b, "left_hosts", left_hosts)?;
    positive(b, "right_hosts", right_hosts)?;
    nonzero_rate(b, "host_rate", host_rate)?;
    nonzero_rate(b, "bottleneck_rate", bottleneck_rate)?;
    let hosts = sum(b, &[left_hosts, right_hosts])?;
    sum(b, &[hosts, 2])?;
    let left = hosts;
    let right = hosts + 1;
    let mut t = Builder::new(hosts, 2, hosts + 1);
    for h in 0..hosts {
        t.link(h, if h < left_hosts { left } else { right }, host_rate, host_delay);
    }
    t.link(left, right, bottleneck_rate, bottleneck_delay);
    Ok(t.finish())
}

/// A star for incast: `senders` senders (ids `0..senders`) and one receiver (id `senders`, the
/// last host) on a single switch (id `senders + 1`), all links at `host_rate`.
///
/// # Errors
/// [`TopologyError::InvalidArgument`] if `senders` or the rate is zero or the network would
/// exceed [`MAX_NODES`].
pub fn star(
    senders: usize,
    host_rate: BitsPerSec,
    delay: Duration,
) -> Result<Topology, TopologyError> {
    const B: &str = "star";
    positive(B, "senders", senders)?;
    nonzero_rate(B, "host_rate", host_rate)?;
    let hosts = sum(B, &[senders, 1])?;
    sum(B, &[hosts, 1])?;
    let sw = hosts;
    let mut t = Builder::new(hosts, 1, hosts);
    for h in 0..hosts {
        t.link(h, sw, host_rate, delay);
    }
    Ok(t.finish())
}

/// Parameters of [`alibaba_2pod`]; the defaults ([`Alibaba2PodParams::TESTBED`]) are the
/// buffer-sizing study's testbed.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Alibaba2PodParams {
    /// Number of PoDs.
    pub pods: usize,
    /// ToR switches per PoD.
    pub tors_per_pod: usize,
    /// Aggregation switches per PoD.
    pub aggs_per_pod: usize,
    /// Core switches (every aggregation switch links to every core).
    pub cores: usize,
    /// Servers in total, split evenly over the PoDs (a multiple of `pods`).
    pub servers: usize,
    /// NICs per server: 1, or 2 (dual homing: the two NICs on two ToRs of the server's PoD).
    pub nics_per_server: usize,
    /// Rate of the NIC–ToR links.
    pub host_rate: BitsPerSec,
    /// Rate of the ToR–aggregation and aggregation–core links.
    pub fabric_rate: BitsPerSec,
    /// One-way propagation delay of every link.
    pub delay: Duration,
}

impl Alibaba2PodParams {
    /// The testbed of the buffer-sizing study: 2 PoDs of 2 ToRs and 2 aggregation switches,
    /// 2 cores, 8 servers with 2 NICs each (16 host nodes), 25 Gb/s NICs, 100 Gb/s fabric,
    /// 1 µs per link.
    pub const TESTBED: Alibaba2PodParams = Alibaba2PodParams {
        pods: 2,
        tors_per_pod: 2,
        aggs_per_pod: 2,
        cores: 2,
        servers: 8,
        nics_per_server: 2,
        host_rate: BitsPerSec::gbps(25),
        fabric_rate: BitsPerSec::gbps(100),
        delay: Duration::from_us(1),
    };

    /// Servers per PoD (`servers / pods`).
    pub fn servers_per_pod(&self) -> usize {
        self.servers.checked_div(self.pods).unwrap_or(0)
    }

    /// The host node of NIC `nic` of server `server`: `server * nics_per_server + nic` (for a
    /// server and NIC of the topology these parameters build).
    pub fn host_of(&self, server: usize, nic: usize) -> NodeId {
        NodeId::from_idx(server * self.nics_per_server + nic)
    }

    /// The node id of ToR `tor` of PoD `pod` (ToRs follow the hosts, PoD by PoD).
    pub fn tor_of(&self, pod: usize, tor: usize) -> NodeId {
        NodeId::from_idx(self.servers * self.nics_per_server + pod * self.tors_per_pod + tor)
    }

    /// The PoD of server `server` (`server / servers_per_pod`).
    pub fn pod_of(&self, server: usize) -> usize {
        server.checked_div(self.servers_per_pod()).unwrap_or(0)
    }

    /// The ToR (index within its PoD) that NIC `nic` of server `server` attaches to:
    /// `(j * nics_per_server + nic) mod tors_per_pod`, where `j = server mod servers_per_pod`
    /// is the server's index within its PoD. The PoD's NICs are dealt round robin over its
    /// ToRs, so with `nics_per_server <= tors_per_pod` a server's NICs are on distinct ToRs;
    /// in the testbed NIC `i` is on ToR `i`, and with one NIC per server, server `s` is on
    /// ToR `s mod 2` of its PoD.
    pub fn tor_index_of(&self, server: usize, nic: usize) -> usize {
        let j = server.checked_rem(self.servers_per_pod()).unwrap_or(0);
        (j * self.nics_per_server + nic).checked_rem(self.tors_per_pod).unwrap_or(0)
    }
}

impl Default for Alibaba2PodParams {
    /// [`Alibaba2PodParams::TESTBED`].
    fn default() -> Self {
        Alibaba2PodParams::TESTBED
    }
}

/// The buffer-sizing study's two-PoD testbed (`alibaba-2pod`), with every size a parameter
/// ([`Alibaba2PodParams`]; the defaults are the testbed).
///
/// Shape: `pods` PoDs, each with `tors_per_pod` ToRs and `aggs_per_pod` aggregation switches
/// in full mesh (every ToR linked to every aggregation switch of its PoD); `cores` core
/// switches, **every aggregation switch linked to every core** (the testbed's description does
/// not say how the cores are wired: this is an assumption); `servers` servers split evenly over
/// the PoDs (server `s` is in PoD `s / (servers / pods)`), each with `nics_per_server` NICs.
/// NIC–ToR links run at `host_rate`, the fabric at `fabric_rate`, every link has `delay`.
///
/// **Multi-homing.** Each NIC is a host node of its own, with exactly one link; a server is
/// the group of its NICs. With two NICs (dual homing, the default) the NICs of a server attach
/// to two different ToRs of its PoD: in the testbed NIC `i` to ToR `i`
/// ([`Alibaba2PodParams::tor_index_of`] gives the general rule). With `nics_per_server = 1`
/// each server has one NIC, on ToR `s mod 2` of its PoD in the testbed (round robin over the
/// ToRs).
///
/// **Numbering (stable, for applications that map servers to hosts).** Hosts get the lowest
/// ids: **NIC `i` of server `s` is host node `s * nics_per_server + i`**
/// ([`Alibaba2PodParams::host_of`]), so hosts are `0..servers * nics_per_server`. Then the
/// ToRs PoD by PoD (ToR `t` of PoD `p` is `H + p * tors_per_pod + t`, with `H` the host
/// count), then the aggregation switches PoD by PoD, then the cores. Links are declared in the
/// same order: one per host (in host order), then the ToR–aggregation links (ToR by ToR,
/// aggregation switches ascending), then the aggregation–core links (aggregation switch by
/// aggregation switch, cores ascending).
///
/// The testbed has 16 hosts, 10 switches and 32 links (16 host links, 8 ToR–aggregation,
/// 8 aggregation–core). Between PoDs a path has 6 links (host, ToR, aggregation, core,
/// aggregation, ToR, host): a base RTT of 12 µs of propagation, plus 960 ns of serialization
/// of one 1000-byte payload (2 × 320 ns at 25 Gb/s and 4 × 80 ns at 100 Gb/s) in the
/// reference's `pair_metrics`.
///
/// ```
/// use dcsim_topology::builders::{alibaba_2pod, Alibaba2PodParams};
/// let p = Alibaba2PodParams::default();
/// let t = alibaba_2pod(&p).unwrap();
/// assert_eq!((t.host_count(), t.switch_count(), t.link_count()), (16, 10, 32));
/// assert_eq!(p.host_of(5, 1).0, 11); // server 5, NIC 1
/// ```
///
/// # Errors
/// [`TopologyError::InvalidArgument`] if a count or rate is zero, `servers` is not a multiple
/// of `pods`, `nics_per_server` is not 1 or 2, a server has more NICs than its PoD has ToRs
/// (`nics_per_server > tors_per_pod`), or the network would exceed [`MAX_NODES`].
pub fn alibaba_2pod(p: &Alibaba2PodParams) -> Result<Topology, TopologyError> {
    const B: &str = "alibaba_2pod";
    positive(B, "pods", p.pods)?;
    positive(B, "tors_per_pod", p.tors_per_pod)?;
    positive(B, "aggs_per_pod", p.aggs_per_pod)?;
    positive(B, "cores", p.cores)?;
    positive(B, "servers", p.servers)?;
    nonzero_rate(B, "host_rate", p.host_rate)?;
    nonzero_rate(B, "fabric_rate", p.fabric_rate)?;
    if !(1..=2).contains(&p.nics_per_server) {
        return Err(invalid(B, format!("nics_per_server = {} must be 1 or 2", p.nics_per_server)));
    }
    if !p.servers.is_multiple_of(p.pods) {
        return Err(invalid(
            B,
            format!(
                "servers = {} must be a multiple of pods = {} (servers are split evenly)",
                p.servers, p.pods
            ),
        ));
    }
    if p.nics_per_server > p.tors_per_pod {
        return Err(invalid(
            B,
            format!(
                "nics_per_server = {} needs at least as many ToRs per PoD, found tors_per_pod = {}",
                p.nics_per_server, p.tors_per_pod
            ),
        ));
    }
    let hosts = mul(B, p.servers, p.nics_per_server)?;
    let tors = mul(B, p.pods, p.tors_per_pod)?;
    let aggs = mul(B, p.pods, p.aggs_per_pod)?;
    let nodes = sum(B, &[hosts, tors, aggs, p.cores])?;
    let links = sum(B, &[hosts, mul(B, tors, p.aggs_per_pod)?, mul(B, aggs, p.cores)?])?;

    let tor0 = hosts;
    let agg0 = tor0 + tors;
    let core0 = agg0 + aggs;
    let mut t = Builder::new(hosts, nodes - hosts, links);
    for s in 0..p.servers {
        for nic in 0..p.nics_per_server {
            let tor = p.tor_of(p.pod_of(s), p.tor_index_of(s, nic));
            t.link(p.host_of(s, nic).idx(), tor.idx(), p.host_rate, p.delay);
        }
    }
    for tor in 0..tors {
        let pod = tor / p.tors_per_pod;
        for a in 0..p.aggs_per_pod {
            t.link(tor0 + tor, agg0 + pod * p.aggs_per_pod + a, p.fabric_rate, p.delay);
        }
    }
    for agg in 0..aggs {
        for c in 0..p.cores {
            t.link(agg0 + agg, core0 + c, p.fabric_rate, p.delay);
        }
    }
    Ok(t.finish())
}

/// Accumulates nodes and links; hosts first, then switches.
struct Builder {
    topo: Topology,
}

impl Builder {
    fn new(hosts: usize, switches: usize, links: usize) -> Builder {
        let mut kinds = Vec::with_capacity(hosts + switches);
        kinds.resize(hosts, NodeKind::Host);
        kinds.resize(hosts + switches, NodeKind::Switch);
        Builder { topo: Topology::new(kinds, Vec::with_capacity(links)) }
    }

    fn link(&mut self, a: usize, b: usize, rate: BitsPerSec, delay: Duration) {
        self.topo.links.push(LinkSpec {
            a: NodeId::from_idx(a),
            b: NodeId::from_idx(b),
            rate,
            delay,
            loss: 0.0,
        });
    }

    fn finish(self) -> Topology {
        self.topo
    }
}

fn invalid(builder: &'static str, detail: String) -> TopologyError {
    TopologyError::InvalidArgument { builder, detail }
}

fn too_big(builder: &'static str) -> TopologyError {
    TopologyError::TooLarge { builder, limit: MAX_NODES }
}

fn positive(b: &'static str, name: &str, v: usize) -> Result<(), TopologyError> {
    if v == 0 {
        Err(invalid(b, format!("{name} must be at least 1")))
    } else {
        Ok(())
    }
}

fn nonzero_rate(b: &'static str, name: &str, r: BitsPerSec) -> Result<(), TopologyError> {
    if r.0 == 0 {
        Err(invalid(b, format!("{name} must be positive (got 0 bps)")))
    } else {
        Ok(())
    }
}

/// `x * y`, at most [`MAX_NODES`].
fn mul(b: &'static str, x: usize, y: usize) -> Result<usize, TopologyError> {
    x.checked_mul(y).filter(|&v| v <= MAX_NODES).ok_or_else(|| too_big(b))
}

/// The sum, at most [`MAX_NODES`].
fn sum(b: &'static str, xs: &[usize]) -> Result<usize, TopologyError> {
    xs.iter()
        .try_fold(0usize, |acc, &x| acc.checked_add(x))
        .filter(|&v| v <= MAX_NODES)
        .ok_or_else(|| too_big(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dumbbell_asym_has_its_own_bottleneck_delay() {
        let (hr, hd) = (BitsPerSec::gbps(10), Duration::from_us(1));
        let (br, bd) = (BitsPerSec::mbps(50), Duration::from_us(4_998));
        let t = dumbbell_asym(2, 3, hr, hd, br, bd).unwrap();
        assert_eq!((t.host_count(), t.switch_count()), (5, 2));
        assert_eq!(t.links.len(), 6);
        for (h, l) in t.links[..5].iter().enumerate() {
            let sw = if h < 2 { 5 } else { 6 };
            assert_eq!((l.a, l.b, l.rate, l.delay), (NodeId::from_idx(h), NodeId(sw), hr, hd));
        }
        let last = t.links[5];
        assert_eq!((last.a, last.b, last.rate, last.delay), (NodeId(5), NodeId(6), br, bd));
        // Same shape as `dumbbell` when the delays agree.
        let same = dumbbell_asym(2, 3, hr, hd, br, hd).unwrap();
        assert_eq!(same.links, dumbbell(2, 3, hr, br, hd).unwrap().links);
        assert!(same.validate().is_ok());
        let e = dumbbell_asym(0, 1, hr, hd, br, bd).unwrap_err();
        assert!(e.to_string().contains("left_hosts must be at least 1"), "{e}");
        let e = dumbbell_asym(1, 1, hr, hd, BitsPerSec(0), bd).unwrap_err();
        assert!(e.to_string().contains("bottleneck_rate"), "{e}");
    }
}
