//! The one error type of this crate, [`TopologyError`], and [`LinkRef`], the way an error
//! points at a link (a file line when the topology was read from a file, else the link's index).

use std::fmt;

use dcsim_core::ids::{LinkId, NodeId};
use dcsim_core::network::NetworkError;

/// Where a link was declared: the 1-based line of the topology file it was read from, or (for
/// topologies built in code) its index in [`crate::Topology::links`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LinkRef {
    /// 1-based line number in the topology file.
    Line(usize),
    /// Index of the link in declaration order (no file involved).
    Link(LinkId),
}

impl LinkRef {
    /// "on line 5" / "as link 5", for "first declared …" phrases.
    fn declared(self) -> String {
        match self {
            LinkRef::Line(l) => format!("on line {l}"),
            LinkRef::Link(i) => format!("as link {i}"),
        }
    }
}

impl fmt::Display for LinkRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkRef::Line(l) => write!(f, "line {l}"),
            LinkRef::Link(i) => write!(f, "link {i}"),
        }
    }
}

/// Where in a topology file an error points ([`TopologyError::file_position`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilePos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters) where the offending token starts.
    pub col: usize,
    /// What the token is: `header`, `header.nodes`, `header.switches`, `header.links`,
    /// `switch_ids`, `switch_ids[i]`, `link[k]`, `link[k].a`, `link[k].b`, `link[k].rate`,
    /// `link[k].delay` or `link[k].error_rate` (`i`, `k` from 0 in file order).
    pub field: String,
}

/// Everything that can be wrong with a topology: builder arguments, the reference topology
/// file's syntax, and the graph itself. Every message names the nodes and, when the topology
/// came from a file, the 1-based line involved.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TopologyError {
    // ----- builder arguments -----
    /// A builder was given an argument it cannot build from.
    #[error("{builder}: {detail}")]
    InvalidArgument {
        /// The builder function (`"fat_tree"`, `"leaf_spine"`, ...).
        builder: &'static str,
        /// What was wrong, naming the argument and its value.
        detail: String,
    },
    /// A builder's arguments would make more than [`crate::builders::MAX_NODES`] nodes or
    /// links.
    #[error("{builder}: the network would have more than {limit} nodes or links")]
    TooLarge {
        /// The builder function.
        builder: &'static str,
        /// The limit ([`crate::builders::MAX_NODES`]).
        limit: usize,
    },

    // ----- topology file syntax (spec §6.1) -----
    /// The file has no header line.
    #[error("topology file is empty: expected 'N S L' (node, switch and link counts) on line 1")]
    EmptyFile,
    /// Line 1 is not three non-negative integers.
    #[error("line {line}: expected 'N S L' (node, switch and link counts), found '{text}'")]
    BadHeader {
        /// Line number.
        line: usize,
        /// The line's text.
        text: String,
    },
    /// More nodes declared than dcsim accepts.
    #[error("line {line}: {nodes} nodes declared, more than the limit of {max}")]
    TooManyNodes {
        /// Line number.
        line: usize,
        /// Declared node count.
        nodes: usize,
        /// The limit ([`crate::builders::MAX_NODES`]).
        max: usize,
    },
    /// More switches declared than nodes.
    #[error("line {line}: {switches} switches declared but only {nodes} nodes")]
    TooManySwitches {
        /// Line number.
        line: usize,
        /// Declared switch count.
        switches: usize,
        /// Declared node count.
        nodes: usize,
    },
    /// The switch-id line has the wrong number of ids (or is missing).
    #[error("line {line}: expected {expected} switch ids, found {found}")]
    SwitchCount {
        /// Line number.
        line: usize,
        /// Declared switch count.
        expected: usize,
        /// Ids found on the line.
        found: usize,
    },
    /// A node id token that is not a non-negative integer.
    #[error("line {line}: bad node id '{token}'")]
    BadNodeId {
        /// Line number.
        line: usize,
        /// The token.
        token: String,
    },
    /// A switch id that is not below the node count.
    #[error("line {line}: switch id {id} is out of range (the header declares {nodes} nodes, so ids are below {nodes})")]
    SwitchOutOfRange {
        /// Line number.
        line: usize,
        /// The id.
        id: u32,
        /// Declared node count.
        nodes: usize,
    },
    /// A switch id listed twice.
    #[error("line {line}: switch id {id} is listed twice")]
    DuplicateSwitch {
        /// Line number.
        line: usize,
        /// The id.
        id: u32,
    },
    /// A link line without exactly five fields.
    #[error(
        "line {line}: expected 'a b rate delay err' (5 fields), found {found} fields: '{text}'"
    )]
    BadLinkLine {
        /// Line number.
        line: usize,
        /// Number of fields found.
        found: usize,
        /// The line's text.
        text: String,
    },
    /// A rate that is not a number followed by a known unit.
    #[error(
        "line {line}: bad rate '{token}' (expected e.g. 100Gbps, 400Gb/s, 10Mbps, 1Kbps, 64bps)"
    )]
    BadRate {
        /// Line number.
        line: usize,
        /// The token.
        token: String,
    },
    /// A delay that is not a number followed by a known unit.
    #[error("line {line}: bad delay '{token}' (expected e.g. 1000ns, 1us, 0.001ms, 2s)")]
    BadDelay {
        /// Line number.
        line: usize,
        /// The token.
        token: String,
    },
    /// A delay longer than [`dcsim_core::units::TIME_LIMIT`].
    #[error(
        "line {line}: delay '{token}' is longer than the limit of {}",
        dcsim_core::units::TIME_LIMIT_TEXT
    )]
    DelayTooLong {
        /// Line number.
        line: usize,
        /// The token.
        token: String,
    },
    /// A rate above [`dcsim_core::units::MAX_RATE`].
    #[error(
        "line {line}: rate '{token}' is above the largest rate supported, {}",
        dcsim_core::units::MAX_RATE_TEXT
    )]
    RateTooHigh {
        /// Line number.
        line: usize,
        /// The token.
        token: String,
    },
    /// A loss probability that is not a number.
    #[error("line {line}: bad error rate '{token}' (expected a probability such as 0 or 0.001)")]
    BadErrorRate {
        /// Line number.
        line: usize,
        /// The token.
        token: String,
    },
    /// The file ends before all declared links were read.
    #[error("line {line}: file ends after {found} of the {declared} declared links")]
    MissingLinks {
        /// The line after the last line of the file.
        line: usize,
        /// Declared link count.
        declared: usize,
        /// Links found.
        found: usize,
    },
    /// Non-blank content after the declared links.
    #[error("line {line}: unexpected content after the {declared} declared links: '{text}'")]
    TrailingContent {
        /// Line number.
        line: usize,
        /// Declared link count.
        declared: usize,
        /// The line's text.
        text: String,
    },

    // ----- graph validation -----
    /// A link names a node that does not exist.
    #[error("{at}: link names node {node}, but there are only {count} nodes")]
    UnknownNode {
        /// The link.
        at: LinkRef,
        /// The missing node.
        node: NodeId,
        /// Number of nodes.
        count: usize,
    },
    /// A link from a node to itself.
    #[error("{at}: link connects node {node} to itself")]
    SelfLoop {
        /// The link.
        at: LinkRef,
        /// The node.
        node: NodeId,
    },
    /// The same unordered node pair linked twice.
    #[error("{at}: duplicate link between nodes {a} and {b} (first declared {})", .first.declared())]
    DuplicateLink {
        /// The second declaration.
        at: LinkRef,
        /// The first declaration.
        first: LinkRef,
        /// One end.
        a: NodeId,
        /// The other end.
        b: NodeId,
    },
    /// A link with zero bandwidth.
    #[error("{at}: link between nodes {a} and {b} has zero bandwidth")]
    ZeroRate {
        /// The link.
        at: LinkRef,
        /// One end.
        a: NodeId,
        /// The other end.
        b: NodeId,
    },
    /// A loss probability outside [0, 1] (or NaN).
    #[error("{at}: link between nodes {a} and {b} has loss probability {loss}, outside [0, 1]")]
    BadLoss {
        /// The link.
        at: LinkRef,
        /// One end.
        a: NodeId,
        /// The other end.
        b: NodeId,
        /// The value.
        loss: f64,
    },
    /// A host with more than one link.
    #[error("host {node} has more than one link ({first} and {second}); a host has exactly one NIC link")]
    HostMultipleLinks {
        /// The host.
        node: NodeId,
        /// Its first link.
        first: LinkRef,
        /// Its second link.
        second: LinkRef,
    },
    /// A host with no link at all.
    #[error("host {node} has no link (disconnected host)")]
    IsolatedHost {
        /// The host.
        node: NodeId,
    },
    /// A host that cannot reach another host through the switches.
    #[error("host {node} cannot reach host {from} through the switches (disconnected host)")]
    DisconnectedHost {
        /// The unreachable host.
        node: NodeId,
        /// The host the search started from (the lowest host id).
        from: NodeId,
    },
    /// A topology without any host.
    #[error("the topology has no hosts (every node is a switch)")]
    NoHosts,
    /// A structural problem reported by `dcsim_core::network::Network::new`.
    #[error(transparent)]
    Network(#[from] NetworkError),
}

impl TopologyError {
    /// The message without its `line N: ` prefix (for front ends that print the position
    /// themselves, from [`TopologyError::file_position`]).
    pub fn detail(&self) -> String {
        let s = self.to_string();
        if let Some((num, msg)) = s.strip_prefix("line ").and_then(|r| r.split_once(": ")) {
            if num.parse::<usize>().is_ok() {
                return msg.to_string();
            }
        }
        s
    }

    /// Where in the topology file `text` (the file this error came from) the error points:
    /// the line, the column where the offending token starts, and the field. `None` for errors
    /// about the whole topology (no hosts, a disconnected host) and for topologies built in
    /// code.
    pub fn file_position(&self, text: &str) -> Option<FilePos> {
        crate::ns3::position(text, self)
    }
}
