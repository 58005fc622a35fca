//! The wired network the simulator runs on: nodes, full-duplex links and per-node ports,
//! plus the routing table the switches forward with.
//!
//! Builders, file readers and graph validation live in the `dcsim-topology` crate; this module
//! only holds the result and checks the structural facts the simulator relies on.

use crate::ids::{LinkId, NodeId, PortNo};
use crate::units::{BitsPerSec, Duration};

/// What a node is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum NodeKind {
    /// An end host with one RDMA NIC (exactly one link).
    Host,
    /// A shared-buffer switch.
    Switch,
}

/// One full-duplex link between two nodes.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct LinkSpec {
    /// One end.
    pub a: NodeId,
    /// The other end.
    pub b: NodeId,
    /// Rate in each direction.
    pub rate: BitsPerSec,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Probability that a frame arriving over this link is corrupted and dropped (0 = none).
    pub loss: f64,
}

/// One port of a node: the local end of a link.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Port {
    /// The link behind the port.
    pub link: LinkId,
    /// The node at the other end.
    pub peer: NodeId,
    /// The port number at the other end.
    pub peer_port: PortNo,
    /// Link rate.
    pub rate: BitsPerSec,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Frame loss probability on arrival at this port.
    pub loss: f64,
}

/// A structural problem found by [`Network::new`]. Graph-level checks with node names
/// (duplicates, disconnected hosts) are done by `dcsim-topology` before it gets here.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum NetworkError {
    /// A link names a node id that does not exist.
    #[error("link {link} names node {node}, but there are only {count} nodes")]
    UnknownNode {
        /// The link.
        link: LinkId,
        /// The missing node.
        node: NodeId,
        /// Number of nodes.
        count: usize,
    },
    /// A link from a node to itself.
    #[error("link {link} connects node {node} to itself")]
    SelfLoop {
        /// The link.
        link: LinkId,
        /// The node.
        node: NodeId,
    },
    /// A link with a rate of zero.
    #[error("link {link} ({a}-{b}) has zero bandwidth")]
    ZeroRate {
        /// The link.
        link: LinkId,
        /// One end.
        a: NodeId,
        /// Other end.
        b: NodeId,
    },
    /// A link faster than [`crate::units::MAX_RATE`] (100 Tbps), at which a minimum-size
    /// frame would take no time on the wire.
    #[error(
        "link {link} ({a}-{b}) has rate {rate} bps, above the largest rate supported, {}",
        crate::units::MAX_RATE_TEXT
    )]
    RateTooHigh {
        /// The link.
        link: LinkId,
        /// One end.
        a: NodeId,
        /// Other end.
        b: NodeId,
        /// The rate, in bits per second.
        rate: u64,
    },
    /// A propagation delay beyond [`crate::units::TIME_LIMIT`] (2^62 ps), past which a
    /// frame's arrival time (now plus its serialization plus the delay) could overflow.
    #[error(
        "link {link} ({a}-{b}) has delay {delay}, beyond the time limit of {}",
        crate::units::TIME_LIMIT_TEXT
    )]
    DelayTooLong {
        /// The link.
        link: LinkId,
        /// One end.
        a: NodeId,
        /// Other end.
        b: NodeId,
        /// The delay.
        delay: crate::units::Duration,
    },
    /// A loss probability outside [0, 1].
    #[error("link {link} ({a}-{b}) has loss probability {loss}, outside [0, 1]")]
    BadLoss {
        /// The link.
        link: LinkId,
        /// One end.
        a: NodeId,
        /// Other end.
        b: NodeId,
        /// The value.
        loss: f64,
    },
    /// A host must have exactly one link.
    #[error("host {node} has {links} links; a host has exactly one NIC link")]
    HostLinks {
        /// The host.
        node: NodeId,
        /// Its link count.
        links: usize,
    },
    /// More ports on one node than a `PortNo` can number.
    #[error("node {node} has more than 65535 ports")]
    TooManyPorts {
        /// The node.
        node: NodeId,
    },
}

/// Nodes, links and the port tables derived from them.
#[derive(Clone, Debug)]
pub struct Network {
    kinds: Vec<NodeKind>,
    links: Vec<LinkSpec>,
    ports: Vec<Vec<Port>>,
    host_index: Vec<u32>,
    hosts: Vec<NodeId>,
}

/// Marker in `host_index` for a switch.
const NOT_A_HOST: u32 = u32::MAX;

impl Network {
    /// Builds the port tables: a node's ports are numbered from 0 in the order its links appear.
    pub fn new(kinds: Vec<NodeKind>, links: Vec<LinkSpec>) -> Result<Network, NetworkError> {
        let n = kinds.len();
        let mut ports: Vec<Vec<Port>> = vec![Vec::new(); n];
        for (i, l) in links.iter().enumerate() {
            let link = LinkId::from_idx(i);
            for node in [l.a, l.b] {
                if node.idx() >= n {
                    return Err(NetworkError::UnknownNode { link, node, count: n });
                }
            }
            if l.a == l.b {
                return Err(NetworkError::SelfLoop { link, node: l.a });
            }
            if l.rate.0 == 0 {
                return Err(NetworkError::ZeroRate { link, a: l.a, b: l.b });
            }
            if l.rate > crate::units::MAX_RATE {
                return Err(NetworkError::RateTooHigh { link, a: l.a, b: l.b, rate: l.rate.0 });
            }
            if !(0.0..=1.0).contains(&l.loss) {
                return Err(NetworkError::BadLoss { link, a: l.a, b: l.b, loss: l.loss });
            }
            if l.delay > crate::units::TIME_LIMIT {
                return Err(NetworkError::DelayTooLong { link, a: l.a, b: l.b, delay: l.delay });
            }
            let pa = ports[l.a.idx()].len();
            let pb = ports[l.b.idx()].len();
            if pa >= u16::MAX as usize {
                return Err(NetworkError::TooManyPorts { node: l.a });
            }
            if pb >= u16::MAX as usize {
                return Err(NetworkError::TooManyPorts { node: l.b });
            }
            ports[l.a.idx()].push(Port {
                link,
                peer: l.b,
                peer_port: PortNo(pb as u16),
                rate: l.rate,
                delay: l.delay,
                loss: l.loss,
            });
            ports[l.b.idx()].push(Port {
                link,
                peer: l.a,
                peer_port: PortNo(pa as u16),
                rate: l.rate,
                delay: l.delay,
                loss: l.loss,
            });
        }
        let mut host_index = vec![NOT_A_HOST; n];
        let mut hosts = Vec::new();
        for (i, k) in kinds.iter().enumerate() {
            if *k == NodeKind::Host {
                let node = NodeId::from_idx(i);
                if ports[i].len() != 1 {
                    return Err(NetworkError::HostLinks { node, links: ports[i].len() });
                }
                host_index[i] = hosts.len() as u32;
                hosts.push(node);
            }
        }
        Ok(Network { kinds, links, ports, host_index, hosts })
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.kinds.len()
    }
    /// What node `n` is.
    pub fn kind(&self, n: NodeId) -> NodeKind {
        self.kinds[n.idx()]
    }
    /// All node kinds, indexed by node id.
    pub fn kinds(&self) -> &[NodeKind] {
        &self.kinds
    }
    /// All links in declaration order.
    pub fn links(&self) -> &[LinkSpec] {
        &self.links
    }
    /// The ports of node `n`.
    pub fn ports(&self, n: NodeId) -> &[Port] {
        &self.ports[n.idx()]
    }
    /// One port.
    pub fn port(&self, n: NodeId, p: PortNo) -> &Port {
        &self.ports[n.idx()][p.idx()]
    }
    /// The hosts in ascending node id.
    pub fn hosts(&self) -> &[NodeId] {
        &self.hosts
    }
    /// Dense index of host `n` among the hosts, or `None` for a switch or unknown id.
    pub fn host_index(&self, n: NodeId) -> Option<usize> {
        match self.host_index.get(n.idx()) {
            Some(&i) if i != NOT_A_HOST => Some(i as usize),
            _ => None,
        }
    }
    /// Whether `n` is a host of this network.
    pub fn is_host(&self, n: NodeId) -> bool {
        self.host_index(n).is_some()
    }
    /// The NIC rate of host `n` (its only link's rate).
    pub fn nic_rate(&self, host: NodeId) -> BitsPerSec {
        self.ports[host.idx()][0].rate
    }
}

/// Equal-cost next hops from every node towards every host.
///
/// Built by `dcsim-topology`'s routing (a BFS per destination switch) or by hand; the
/// simulator only looks entries up. An empty entry means "no route" (the packet is dropped and
/// counted).
///
/// # Layout
/// Entries live in a matrix of *rows* (nodes that forward) by *columns* (groups of destination
/// hosts routed alike), each cell naming an interned set of ports. A table built by hand
/// ([`RoutingTable::from_fn`]) has a row for every node and a column for every host. A table
/// built by [`RoutingTable::shortest_paths`] has a row per switch and a column per *root*: the
/// switch a host hangs from (hosts on one switch are routed alike everywhere except at that
/// switch, where each has its own port, kept beside the host) or, for a host linked to another
/// host, the host itself. Its hosts' own entries are derived (a host's one port, when the
/// destination is reachable). So its memory grows with switches × destination switches
/// rather than nodes × hosts: a k = 48 fat tree (2,880 switches, 1,152 ToRs) needs 13 MiB
/// (it needed 3.4 GiB of table and as much again of distances while routing, one per host).
#[derive(Clone, Debug, Default)]
pub struct RoutingTable {
    hosts: usize,
    /// Per node: its row in `cells`, or [`DERIVED`] for a host whose entries are derived.
    row: Vec<u32>,
    /// Columns per row.
    cols: usize,
    /// Per destination host (dense index): its column, root and own entry at the root.
    dest: Vec<Dest>,
    /// `dest` by the host's node id (other nodes: [`NO_DEST`]), for the engine's lookup by a
    /// packet's destination; empty in a table built by hand until the engine binds it
    /// ([`RoutingTable::bind_hosts`]).
    by_node: Vec<Dest>,
    /// `cells[row * cols + col]`: a set, as its span of `set_ports` (one load per lookup).
    cells: Vec<Span>,
    /// The interned sets, back to back.
    set_ports: Vec<PortNo>,
    /// Per node with a derived row: the node at the far end of its link and whether that
    /// link is up.
    host_link: Vec<(u32, bool)>,
    /// Whether the columns are roots ([`RoutingTable::shortest_paths`]).
    grouped: bool,
    /// Per column of a grouped table: its root switch ([`NO_NODE`] for a host root).
    roots: Vec<u32>,
}

/// The routing of one destination host.
#[derive(Clone, Copy, Debug, Default)]
struct Dest {
    /// Its column.
    col: u32,
    /// The switch it hangs from, where `own` applies ([`NO_NODE`] for none).
    root: u32,
    /// Its entry at `root`.
    own: Span,
    /// The host's node id ([`NO_NODE`] in a table built by hand).
    node: u32,
}

/// `RoutingTable::by_node` of a node that is not a host.
const NO_DEST: Dest = Dest { col: 0, root: NO_NODE, own: EMPTY, node: NO_NODE };

/// `RoutingTable::row` of a host whose entries are derived.
const DERIVED: u32 = u32::MAX;
/// No node.
const NO_NODE: u32 = u32::MAX;
/// A set of ports: `set_ports[start..start + len]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Span {
    start: u32,
    len: u32,
}

/// The empty set.
const EMPTY: Span = Span { start: 0, len: 0 };

/// Interns sets of ports for a [`RoutingTable`] under construction.
#[derive(Default)]
struct Interner {
    ids: std::collections::HashMap<Vec<PortNo>, Span>,
    ports: Vec<PortNo>,
}

impl Interner {
    fn new() -> Interner {
        let mut i = Interner::default();
        i.ids.insert(Vec::new(), EMPTY);
        i
    }

    /// The ports of an interned set.
    fn get(&self, s: Span) -> &[PortNo] {
        &self.ports[s.start as usize..(s.start + s.len) as usize]
    }

    /// The span of the set `ports` (in order), adding it if new.
    fn intern(&mut self, ports: &[PortNo]) -> Span {
        if let Some(&span) = self.ids.get(ports) {
            return span;
        }
        let span = Span { start: self.ports.len() as u32, len: ports.len() as u32 };
        self.ports.extend_from_slice(ports);
        self.ids.insert(ports.to_vec(), span);
        span
    }
}

/// The routing of the hosts of one column of a [`RoutingTable`] built by
/// [`RoutingTable::shortest_paths`] (see [`RoutingTable::column`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Column {
    /// The switch the column's hosts hang from, or `None` for a host linked to a host.
    pub root: Option<NodeId>,
}

impl RoutingTable {
    /// The most routing work ([`RoutingTable::work`]) that callers of
    /// [`RoutingTable::shortest_paths_within`] allow by default: 2^28 steps, a few seconds; a
    /// k = 48 fat tree needs 2.3 · 10^8 (226 271 232).
    pub const MAX_WORK: usize = 1 << 28;

    /// Builds the table by asking `next_hops(node, host_index)` for every node and host.
    ///
    /// # Panics
    /// If the table would hold more than `u32::MAX` entries in all.
    pub fn from_fn(
        nodes: usize,
        hosts: usize,
        next_hops: impl FnMut(NodeId, usize) -> Vec<PortNo>,
    ) -> RoutingTable {
        Self::try_from_fn(nodes, hosts, u32::MAX as usize, next_hops)
            .expect("at most u32::MAX entries")
    }

    /// [`RoutingTable::from_fn`], giving up with the count reached as soon as the table would
    /// hold more than `max` entries (cells plus distinct next hops, [`RoutingTable::size`]; at
    /// most `u32::MAX`).
    pub fn try_from_fn(
        nodes: usize,
        hosts: usize,
        max: usize,
        mut next_hops: impl FnMut(NodeId, usize) -> Vec<PortNo>,
    ) -> Result<RoutingTable, usize> {
        let max = max.min(u32::MAX as usize);
        let cells_len = nodes.saturating_mul(hosts);
        if cells_len > max {
            return Err(cells_len);
        }
        let mut sets = Interner::new();
        let mut cells = Vec::with_capacity(cells_len);
        for n in 0..nodes {
            for h in 0..hosts {
                cells.push(sets.intern(&next_hops(NodeId::from_idx(n), h)));
                if cells_len + sets.ports.len() > max {
                    return Err(cells_len + sets.ports.len());
                }
            }
        }
        Ok(RoutingTable {
            hosts,
            row: (0..nodes as u32).collect(),
            cols: hosts,
            dest: (0..hosts as u32)
                .map(|h| Dest { col: h, root: NO_NODE, own: EMPTY, node: NO_NODE })
                .collect(),
            by_node: Vec::new(),
            cells,
            set_ports: sets.ports,
            host_link: Vec::new(),
            grouped: false,
            roots: Vec::new(),
        })
    }

    /// Next hops (egress ports) at `node` towards the host with dense index `host`, in
    /// ascending order of the neighbour's node id.
    #[inline]
    pub fn next_hops(&self, node: NodeId, host: usize) -> &[PortNo] {
        let d = self.dest[host];
        let span = if node.0 == d.root {
            d.own
        } else {
            match self.row[node.idx()] {
                DERIVED => return self.host_entry(node, d),
                r => self.cells[r as usize * self.cols + d.col as usize],
            }
        };
        self.set(span)
    }

    /// [`RoutingTable::next_hops`] at a node with a row (a switch; any node of a table built
    /// by [`RoutingTable::from_fn`]): the engine's per-hop lookup. The destination's own entry
    /// and the column's cell are both loaded and one is selected without a branch: whether a
    /// packet leaves toward one of the switch's own hosts is data-dependent, and a mispredicted
    /// branch costs more than the second (cached) load.
    ///
    /// The destination is the host's node id (no dense index to look up first); the table
    /// must be bound to the network's hosts ([`RoutingTable::bind_hosts`]).
    #[inline(always)]
    pub(crate) fn switch_next_hops(&self, node: NodeId, dst: NodeId) -> &[PortNo] {
        let d = self.by_node[dst.idx()];
        debug_assert!(d.node == dst.0 || !self.grouped, "{dst:?} is a host");
        let r = self.row[node.idx()];
        debug_assert!(r != DERIVED, "{node:?} has a row");
        let cell = self.cells[r as usize * self.cols + d.col as usize];
        self.set(std::hint::select_unpredictable(node.0 == d.root, d.own, cell))
    }

    /// Lets [`RoutingTable::switch_next_hops`] look destinations up by node id: `hosts[i]` is
    /// the node of dense host index `i` (the network's host list) and `nodes` the network's
    /// node count. A table built by [`RoutingTable::shortest_paths`] is bound already (its
    /// copy is kept as is).
    pub(crate) fn bind_hosts(&mut self, hosts: &[NodeId], nodes: usize) {
        if self.by_node.len() == nodes {
            return;
        }
        self.by_node = vec![NO_DEST; nodes];
        for (d, &h) in self.dest.iter().zip(hosts) {
            self.by_node[h.idx()] = *d;
        }
    }

    /// The ports of a set.
    #[inline(always)]
    fn set(&self, s: Span) -> &[PortNo] {
        &self.set_ports[s.start as usize..(s.start + s.len) as usize]
    }

    /// The entry of host `x` (a derived row) toward `d`: its one port when the BFS from the
    /// destination reaches it, i.e. its link is up and the node at the far end is the
    /// destination or a switch the destination is reachable from.
    #[cold]
    #[inline(never)]
    fn host_entry(&self, x: NodeId, d: Dest) -> &[PortNo] {
        const HOST_PORT: [PortNo; 1] = [PortNo(0)];
        let (peer, up) = self.host_link[x.idx()];
        if !up || x.0 == d.node {
            return &[];
        }
        let reached = if peer == d.node {
            true
        } else if peer == d.root {
            d.own != EMPTY
        } else {
            match self.row[peer as usize] {
                DERIVED => false,
                r => self.cells[r as usize * self.cols + d.col as usize] != EMPTY,
            }
        };
        if reached {
            &HOST_PORT
        } else {
            &[]
        }
    }

    /// Number of hosts the table was built for.
    pub fn host_count(&self) -> usize {
        self.hosts
    }

    /// Cells plus distinct next hops held: what [`RoutingTable::shortest_paths_within`]'s
    /// budget counts (memory is about 4 bytes per cell and 2 per next hop).
    pub fn size(&self) -> usize {
        self.cells.len() + self.set_ports.len()
    }

    /// Whether the table was built by [`RoutingTable::shortest_paths`], so that
    /// [`RoutingTable::column`], [`RoutingTable::column_of`] and
    /// [`RoutingTable::column_next_hops`] describe it.
    pub fn is_grouped(&self) -> bool {
        self.grouped
    }

    /// Number of columns of a grouped table (destination roots).
    pub fn column_count(&self) -> usize {
        if self.grouped {
            self.cols - 1
        } else {
            self.cols
        }
    }

    /// The column of destination host `host` in a grouped table, or `None` when it is
    /// unreachable from everywhere (its link is down).
    pub fn column_of(&self, host: usize) -> Option<usize> {
        let c = self.dest[host].col as usize;
        (c < self.column_count()).then_some(c)
    }

    /// Column `col` of a grouped table.
    pub fn column(&self, col: usize) -> Column {
        let r = self.roots[col];
        Column { root: (r != NO_NODE).then_some(NodeId(r)) }
    }

    /// Next hops of switch `node` toward the hosts of column `col` of a grouped table, `node`
    /// not being the column's root (whose entries are per host).
    pub fn column_next_hops(&self, node: NodeId, col: usize) -> &[PortNo] {
        match self.row[node.idx()] {
            DERIVED => &[],
            r => self.set(self.cells[r as usize * self.cols + col]),
        }
    }

    /// The work of [`RoutingTable::shortest_paths`] on `net`: roots × (nodes + 2 × links), a
    /// root being a switch that hosts hang from or a host linked to a host. Routing runs one
    /// BFS (every node and both ends of every link) and one pass over the switches' ports per
    /// root, so this bounds its time, and its table (switches × (roots + 1) cells and the
    /// distinct sets of ports) is smaller.
    pub fn work(net: &Network) -> u128 {
        let roots = Self::roots(net).len() as u128;
        roots * (net.node_count() as u128 + 2 * net.links().len() as u128)
    }

    /// The roots of `net`'s hosts in the order of their first host: for each host, the switch
    /// at the far end of its link, or the host itself when that is a host.
    fn roots(net: &Network) -> Vec<NodeId> {
        let mut seen = vec![false; net.node_count()];
        let mut roots = Vec::new();
        for &h in net.hosts() {
            let peer = net.ports(h)[0].peer;
            let root = if net.is_host(peer) { h } else { peer };
            if !std::mem::replace(&mut seen[root.idx()], true) {
                roots.push(root);
            }
        }
        roots
    }

    /// Shortest-path ECMP next hops of every node toward every host, over the links that are
    /// up: `link_up[l]` for link `l` (an empty slice: every link is up).
    ///
    /// For every destination host, a BFS from it expands only through switches (a host is
    /// only ever an endpoint) and over links that are up. At a switch, every port on an up
    /// link whose neighbour lies on a shortest hop-count path toward the destination (the
    /// destination itself or a switch one hop closer) is a next hop, listed in **ascending
    /// neighbour node id** (ties, i.e. parallel links, by port number). The reference orders
    /// them by pointer value, which is not reproducible (spec §3.1).
    ///
    /// Host entries: a host's route toward every *other* host it can reach is `[PortNo(0)]`,
    /// its one NIC port; toward itself and toward unreachable hosts the entry is empty. A
    /// switch's entry toward an unreachable host is empty too (packets for it are dropped and
    /// counted as `no_route_drops`).
    ///
    /// Since a host's only link leads to one node, every shortest path toward it passes that
    /// node: the BFS runs once per such root (a switch, or a host linked to a host) rather
    /// than once per host, and the table holds a row per switch and a column per root (see
    /// the type's doc). Cost: O(roots × (nodes + links)) time, O(switches × roots) memory.
    ///
    /// # Panics
    /// If `link_up` is neither empty nor one entry per link.
    pub fn shortest_paths(net: &Network, link_up: &[bool]) -> RoutingTable {
        Self::shortest_paths_within(net, link_up, u32::MAX as usize)
            .expect("at most u32::MAX entries")
    }

    /// [`RoutingTable::shortest_paths`], or, before any work, `Err` with the work it would
    /// take ([`RoutingTable::work`], saturating) when that is more than `max`: for networks
    /// given by users (e.g. [`RoutingTable::MAX_WORK`]).
    ///
    /// # Panics
    /// If `link_up` is neither empty nor one entry per link.
    pub fn shortest_paths_within(
        net: &Network,
        link_up: &[bool],
        max: usize,
    ) -> Result<RoutingTable, usize> {
        assert!(link_up.is_empty() || link_up.len() == net.links().len(), "one state per link");
        let work = Self::work(net);
        if work > max as u128 {
            return Err(usize::try_from(work).unwrap_or(usize::MAX));
        }
        let up = |l: LinkId| link_up.is_empty() || link_up[l.idx()];
        let n = net.node_count();
        let hosts = net.hosts();
        let is_switch = |x: NodeId| net.kind(x) == NodeKind::Switch;

        let mut row = vec![DERIVED; n];
        let mut rows = 0usize;
        for (i, r) in row.iter_mut().enumerate() {
            if is_switch(NodeId::from_idx(i)) {
                *r = rows as u32;
                rows += 1;
            }
        }
        // Columns: one per root.
        let roots = Self::roots(net);
        let mut col_of_root = vec![u32::MAX; n];
        for (c, r) in roots.iter().enumerate() {
            col_of_root[r.idx()] = c as u32;
        }
        let mut host_link = vec![(NO_NODE, false); n];
        let mut dest = Vec::with_capacity(hosts.len());
        for &h in hosts {
            let port = &net.ports(h)[0];
            host_link[h.idx()] = (port.peer.0, up(port.link));
            let root = if is_switch(port.peer) { port.peer } else { h };
            dest.push(Dest {
                col: col_of_root[root.idx()],
                root: if root == h { NO_NODE } else { root.0 },
                own: EMPTY,
                node: h.0,
            });
        }
        let cols = roots.len() + 1; // the last column: hosts whose link is down

        // Every node's ports on up links, in ascending (neighbour id, port number).
        let by_peer: Vec<Vec<(NodeId, PortNo)>> = (0..n)
            .map(|i| {
                let node = NodeId::from_idx(i);
                let mut v: Vec<(NodeId, PortNo)> = net
                    .ports(node)
                    .iter()
                    .enumerate()
                    .filter(|(_, port)| up(port.link))
                    .map(|(p, port)| (port.peer, PortNo(p as u16)))
                    .collect();
                v.sort_unstable();
                v
            })
            .collect();

        let mut sets = Interner::new();
        let mut cells = vec![EMPTY; rows * cols];
        let mut dist = vec![UNREACHED; n];
        let mut queue: Vec<NodeId> = Vec::with_capacity(n);
        let mut scratch: Vec<PortNo> = Vec::new();
        for (c, &root) in roots.iter().enumerate() {
            dist.fill(UNREACHED);
            bfs_through_switches(net, root, &mut dist, &mut queue, &up);
            for &v in &queue {
                if v == root || !is_switch(v) {
                    continue;
                }
                let here = dist[v.idx()];
                scratch.clear();
                scratch.extend(
                    by_peer[v.idx()]
                        .iter()
                        .filter(|(peer, _)| {
                            dist[peer.idx()].wrapping_add(1) == here
                                && (*peer == root || is_switch(*peer))
                        })
                        .map(|&(_, p)| p),
                );
                let at = row[v.idx()] as usize * cols + c;
                // A switch's next hops are often those toward the previous root: compare
                // before hashing.
                let prev = if c > 0 { cells[at - 1] } else { EMPTY };
                cells[at] =
                    if sets.get(prev) == scratch.as_slice() { prev } else { sets.intern(&scratch) };
            }
        }
        for (d, &h) in dest.iter_mut().zip(hosts) {
            if !host_link[h.idx()].1 {
                // Unreachable from everywhere: the empty column, no entry at its switch.
                d.col = roots.len() as u32;
                continue;
            }
            if d.root != NO_NODE {
                let at = &by_peer[d.root as usize];
                let i = at.partition_point(|&(peer, _)| peer < h);
                d.own = sets.intern(&[at[i].1]);
            }
        }
        let mut table = RoutingTable {
            hosts: hosts.len(),
            row,
            cols,
            dest,
            by_node: Vec::new(),
            cells,
            set_ports: sets.ports,
            host_link,
            grouped: true,
            roots: roots.iter().map(|&r| if is_switch(r) { r.0 } else { NO_NODE }).collect(),
        };
        table.bind_hosts(hosts, n);
        Ok(table)
    }
}

/// Marks a node not reached by a BFS.
const UNREACHED: u32 = u32::MAX;

/// Fills `dist` with the hop count from every node to `dst`, expanding only through switches
/// (and `dst` itself) and over links for which `up` holds. `queue` is scratch space.
fn bfs_through_switches(
    net: &Network,
    dst: NodeId,
    dist: &mut [u32],
    queue: &mut Vec<NodeId>,
    up: &impl Fn(LinkId) -> bool,
) {
    queue.clear();
    dist[dst.idx()] = 0;
    queue.push(dst);
    let mut head = 0;
    while let Some(&u) = queue.get(head) {
        head += 1;
        if u != dst && net.kind(u) == NodeKind::Host {
            continue;
        }
        let du = dist[u.idx()];
        for port in net.ports(u) {
            let v = port.peer.idx();
            if dist[v] == UNREACHED && up(port.link) {
                dist[v] = du + 1;
                queue.push(port.peer);
            }
        }
    }
}

/// A 100 Gb/s, 1 µs, lossless link between nodes `a` and `b`: for tests' hand-made networks.
#[cfg(test)]
pub(crate) fn test_link(a: u32, b: u32) -> LinkSpec {
    LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate: BitsPerSec::gbps(100),
        delay: Duration::from_us(1),
        loss: 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A star: hosts 0..n on switch n.
    fn star(n: u32) -> Network {
        let mut kinds = vec![NodeKind::Host; n as usize];
        kinds.push(NodeKind::Switch);
        Network::new(kinds, (0..n).map(|h| test_link(h, n)).collect()).unwrap()
    }

    /// A link may run at up to 100 Tbps; faster is an error naming the link, not a run whose
    /// frames take no time.
    #[test]
    fn links_faster_than_the_largest_rate_are_refused() {
        let kinds = vec![NodeKind::Host, NodeKind::Switch, NodeKind::Host];
        let with = |rate: u64| {
            let fast = LinkSpec { rate: BitsPerSec(rate), ..test_link(2, 1) };
            Network::new(kinds.clone(), vec![test_link(0, 1), fast])
        };
        assert!(with(crate::units::MAX_RATE.0).is_ok());
        let e = with(crate::units::MAX_RATE.0 + 1).unwrap_err();
        assert!(matches!(e, NetworkError::RateTooHigh { rate: 100_000_000_000_001, .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "link 1 (2-1) has rate 100000000000001 bps, above the largest rate supported, 100 Tbps"
        );
    }

    /// A link's delay may be up to the time limit (2^62 ps); longer is an error naming the
    /// link, not arrival times that wrap.
    #[test]
    fn links_slower_than_the_time_limit_are_refused() {
        let kinds = vec![NodeKind::Host, NodeKind::Switch, NodeKind::Host];
        let with = |delay: u64| {
            let long =
                LinkSpec { delay: crate::units::Duration::from_ps(delay), ..test_link(2, 1) };
            Network::new(kinds.clone(), vec![test_link(0, 1), long])
        };
        assert!(with(crate::units::TIME_LIMIT.as_ps()).is_ok());
        for delay in [crate::units::TIME_LIMIT.as_ps() + 1, u64::MAX] {
            let e = with(delay).unwrap_err();
            assert!(matches!(e, NetworkError::DelayTooLong { .. }), "{e:?}");
            assert!(e.to_string().starts_with("link 1 (2-1) has delay"), "{e}");
        }
    }

    #[test]
    fn routing_gives_up_past_its_work_budget() {
        let net = star(10);
        // Every host reaches 9 others (1 hop each) and the switch reaches 10: 100 next hops.
        // One switch row and one column (plus the column of unreachable hosts): 2 cells,
        // and the ten one-port sets of the hosts' own entries.
        let full = RoutingTable::shortest_paths(&net, &[]);
        assert_eq!(full.size(), 2 + 10);
        // One root: one BFS over 11 nodes and both ends of 10 links.
        assert_eq!(RoutingTable::work(&net), 31);
        assert!(RoutingTable::shortest_paths_within(&net, &[], 31).is_ok());
        assert_eq!(RoutingTable::shortest_paths_within(&net, &[], 30).unwrap_err(), 31);
        // A failed host link leaves that host unreachable (empty entries).
        let mut up = vec![true; 10];
        up[3] = false;
        let cut = RoutingTable::shortest_paths(&net, &up);
        assert!(cut.next_hops(NodeId(10), 3).is_empty());
        assert_eq!(cut.next_hops(NodeId(10), 4), &[PortNo(4)]);
    }

    /// A leaf-spine (leaves 0–2, spines 3–4, two hosts per leaf: 5–10) plus two hosts linked
    /// to each other (11–12).
    fn leaf_spine() -> Network {
        let l = test_link;
        let mut links = Vec::new();
        for leaf in 0..3 {
            for spine in 3..5 {
                links.push(l(leaf, spine));
            }
            links.push(l(5 + 2 * leaf, leaf));
            links.push(l(6 + 2 * leaf, leaf));
        }
        links.push(l(11, 12));
        let mut kinds = vec![NodeKind::Switch; 5];
        kinds.extend([NodeKind::Host; 8]);
        Network::new(kinds, links).unwrap()
    }

    /// The engine's lookup by destination node, at every switch toward every host, equals
    /// `next_hops`: on grouped tables with every single link down, and on a hand-made table
    /// once bound to the hosts.
    #[test]
    fn switch_lookup_by_node_equals_next_hops() {
        let net = leaf_spine();
        let check = |t: &RoutingTable| {
            for (i, &h) in net.hosts().iter().enumerate() {
                for sw in 0..5 {
                    assert_eq!(
                        t.switch_next_hops(NodeId(sw), h),
                        t.next_hops(NodeId(sw), i),
                        "switch {sw} toward {h:?}"
                    );
                }
            }
        };
        let mut tables = vec![RoutingTable::shortest_paths(&net, &[])];
        for down in 0..net.links().len() {
            let mut up = vec![true; net.links().len()];
            up[down] = false;
            tables.push(RoutingTable::shortest_paths(&net, &up));
        }
        for t in &tables {
            check(t);
        }
        // Down links leave some entries empty: the check above saw both kinds.
        assert!(tables[1..].iter().any(|t| t.next_hops(NodeId(0), 0).is_empty()));
        // By hand: switch `sw` sends toward host `h` through port `(sw + h) % 3`.
        let mut by_hand = RoutingTable::from_fn(net.node_count(), net.hosts().len(), |n, h| {
            if n.idx() < 5 {
                vec![PortNo(((n.idx() + h) % 3) as u16)]
            } else {
                vec![PortNo(0)]
            }
        });
        by_hand.bind_hosts(net.hosts(), net.node_count());
        check(&by_hand);
    }
}
