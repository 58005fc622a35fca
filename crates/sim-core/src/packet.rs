//! Packets, their wire sizes per header mode, and INT hop records.

use crate::ids::{FlowId, NodeId, PortNo};
use crate::units::{BitsPerSec, Time};

pub use dcsim_tcp::{Flags, SackBlocks};
pub use dcsim_types::Ecn;

/// L2 (14, Ethernet-like) + IPv4 (20) bytes on every packet.
pub const L2_L3_BYTES: u32 = 34;
/// UDP (8) + sequence/priority header (6) on data packets.
pub const DATA_L4_BYTES: u32 = 14;
/// ACK/NACK L4 header: ports, flags, pg, seq.
pub const ACK_L4_BYTES: u32 = 12;
/// Data packet header bytes without any INT area (the "base headers" of the ideal FCT).
pub const DATA_BASE_HEADER: u32 = L2_L3_BYTES + DATA_L4_BYTES;
/// Minimum frame size; ACKs/NACKs are zero-padded to it.
pub const MIN_FRAME: u32 = 60;
/// PFC pause/resume frame size (14 + 20 + 9).
pub const PFC_FRAME: u32 = 43;
/// The switches of a path whose egress ports a packet carries ([`Packet::path`]).
pub const PATH_HOPS: usize = 8;
/// No port kept ([`Packet::path`]).
pub const NO_PORT: u16 = u16::MAX;
/// Maximum INT hop records carried (more hops overwrite from the start, as the reference does).
pub const MAX_INT_HOPS: usize = 5;

/// What in-band header area every data packet carries (a global choice made by the CC scheme).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum HeaderMode {
    /// No telemetry area (DCQCN, DCTCP, `none`).
    #[default]
    None,
    /// HPCC's INT: 5 hop records of 8 bytes + a 2-byte hop count (42 bytes). Switches stamp.
    Int,
    /// TIMELY's 8-byte sender timestamp, echoed in the ACK.
    Timestamp,
    /// PINT's 2-byte digest: the path maximum of the encoded port utilisation (HPCC-PINT).
    Pint,
}

impl HeaderMode {
    /// Bytes of the telemetry area.
    pub const fn area_bytes(self) -> u32 {
        match self {
            HeaderMode::None => 0,
            HeaderMode::Int => 42,
            HeaderMode::Timestamp => 8,
            HeaderMode::Pint => 2,
        }
    }
    /// Wire size of a data packet carrying `payload` bytes.
    pub const fn data_wire(self, payload: u32) -> u32 {
        DATA_BASE_HEADER + self.area_bytes() + payload
    }
    /// Wire size of an ACK/NACK (padded to 60 bytes).
    pub const fn ack_wire(self) -> u32 {
        let s = L2_L3_BYTES + ACK_L4_BYTES + self.area_bytes();
        if s < MIN_FRAME {
            MIN_FRAME
        } else {
            s
        }
    }
}

/// One switch hop's INT record, stamped when the packet starts transmission at that hop.
/// Values are kept at full precision (the reference packs them into 64 bits; see spec §1.2).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct IntHop {
    /// Egress port line rate.
    pub rate: BitsPerSec,
    /// Switch time at transmission start.
    pub time: Time,
    /// Bytes the port had transmitted before this packet.
    pub tx_bytes: u64,
    /// Bytes queued at the port over all priorities, excluding this packet.
    pub qlen: u64,
}

/// The INT stack of a data packet, echoed unchanged in its ACK.
///
/// `repr(C)` with the count first, so that it shares the packet's second cache line with the
/// area's tag and the first record (the event loop prefetches that line with the first): a
/// hop's push then misses only on the line of its own record.
///
/// Only the first `min(nhop, MAX_INT_HOPS)` records mean anything ([`IntStack::valid`]);
/// the others may hold what an earlier packet in the same pool slot carried (a new packet
/// only sets the count: [`IntStack::clear`]). Equality compares the valid records only.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct IntStack {
    /// Number of hops that stamped (may exceed [`MAX_INT_HOPS`]; records wrap).
    pub nhop: u16,
    /// The records; hop `i` is at `i % MAX_INT_HOPS`.
    pub hops: [IntHop; MAX_INT_HOPS],
}

impl IntStack {
    /// No records (what a packet outside [`HeaderMode::Int`] gives its congestion control).
    pub const EMPTY: IntStack = IntStack {
        nhop: 0,
        hops: [IntHop { rate: BitsPerSec(0), time: Time::ZERO, tx_bytes: 0, qlen: 0 };
            MAX_INT_HOPS],
    };

    /// Empties the stack: the count is set to 0 and the records are left as they are (they
    /// are no longer [`IntStack::valid`]), so that a packet reusing a pooled slot does not
    /// write the 160 bytes of records that its hops will overwrite.
    #[inline]
    pub fn clear(&mut self) {
        self.nhop = 0;
    }

    /// Appends a hop record (overwriting the oldest beyond five hops).
    #[inline]
    pub fn push(&mut self, hop: IntHop) {
        self.hops[self.nhop as usize % MAX_INT_HOPS] = hop;
        self.nhop = self.nhop.saturating_add(1);
    }
    /// The valid records, in path order, when no more than five hops stamped.
    pub fn valid(&self) -> &[IntHop] {
        &self.hops[..(self.nhop as usize).min(MAX_INT_HOPS)]
    }
}

impl PartialEq for IntStack {
    /// The same count and the same valid records (the rest are not part of the value).
    fn eq(&self, other: &IntStack) -> bool {
        self.nhop == other.nhop && self.valid() == other.valid()
    }
}

impl Eq for IntStack {}

/// Packet type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PacketKind {
    /// RDMA data (UDP).
    Data,
    /// Cumulative acknowledgement.
    Ack,
    /// Negative acknowledgement (go-back-N request).
    Nack,
    /// A TCP segment (data, pure ACK or handshake; see [`TcpFields`]).
    Tcp,
    /// PFC pause (`true`) or resume (`false`) for one priority; hop-by-hop only.
    Pfc {
        /// Pause or resume.
        pause: bool,
        /// The priority.
        queue: u8,
    },
}

/// A packet in flight or queued. Stored in a pool and moved by index.
///
/// The layout is fixed (`repr(C)`) so that the fields every hop reads — kind, sizes, class,
/// ECN, flow, addresses, egress ports and hop count, sequence number, timestamp — fill the
/// first 64 bytes, which the event loop prefetches; the header area follows.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct Packet {
    /// Total bytes on the wire.
    pub wire: u32,
    /// Payload bytes (data only).
    pub payload: u32,
    /// The flow this packet belongs to (data and ACK/NACK).
    pub flow: FlowId,
    /// Source host.
    pub src: NodeId,
    /// Destination host.
    pub dst: NodeId,
    /// The egress port at each switch of the packet's path, in path order, as routing chooses
    /// them for its flow and direction (copied by its sender from the flow's kept path, which
    /// routing computed at set-up); [`NO_PORT`] past the path's end, for paths of more than
    /// [`PATH_HOPS`] switches, in runs whose routes change (link events), and in PFC frames,
    /// which no switch routes. A switch that finds no port routes the packet by its flow's
    /// ECMP key.
    pub path: [u16; PATH_HOPS],
    /// Type.
    pub kind: PacketKind,
    /// Priority group / queue index (0 is strict priority).
    pub pg: u8,
    /// The IP header's ECN field: set by the sending transport (RoCE sends ECT(0)), turned
    /// into [`Ecn::Ce`] by a queue that marks.
    pub ecn: Ecn,
    /// ECN echo flag on ACK/NACK.
    pub ecn_echo: bool,
    /// Which telemetry area this packet carries, and so what switches stamp into it: chosen by
    /// the packet's transport, not for the whole run (a probe may carry INT in a run whose
    /// data packets carry none). An ACK keeps its data packet's mode to echo the area.
    pub header: HeaderMode,
    /// Switches the packet has passed on its way (0 when its sender puts it on the wire): the
    /// index in [`Packet::path`] of the switch it reaches next.
    pub hop: u8,
    /// PINT digest (written only on data packets in [`HeaderMode::Pint`]; echoed in the ACK).
    pub pint: u16,
    /// Ingress port at the current switch (for MMU release).
    pub in_port: PortNo,
    /// Data: first byte's sequence number. ACK/NACK: cumulative acknowledged byte.
    pub seq: u64,
    /// Sender timestamp: RoCE data, when its NIC started it (an ACK echoes it); TCP, every
    /// segment's own send time (the timestamps option's TSval; the echo is in `TcpFields`).
    pub ts: Time,
    /// When the packet was fully received by the current switch (for hop-latency traces).
    pub arrived: Time,
    /// The packet's variable header area: INT records or TCP fields.
    pub area: Area,
}

/// The variable part of a packet's headers. INT records and TCP fields never occur in the
/// same packet, so they share the space (the packet stays within four cache lines).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Area {
    /// Nothing beyond the fixed fields.
    #[default]
    None,
    /// INT records: a data packet in [`HeaderMode::Int`] (stamped by switches) and its ACK
    /// (echoed).
    Int(IntStack),
    /// TCP header fields beyond `seq`, `payload` and `ecn` ([`PacketKind::Tcp`]).
    Tcp(TcpFields),
}

impl Area {
    /// The INT records, if the area holds them.
    #[inline]
    pub fn int(&self) -> Option<&IntStack> {
        match self {
            Area::Int(s) => Some(s),
            _ => None,
        }
    }
    /// The TCP fields, if the area holds them.
    #[inline]
    pub fn tcp(&self) -> Option<&TcpFields> {
        match self {
            Area::Tcp(t) => Some(t),
            _ => None,
        }
    }
}

impl Packet {
    /// Whether this packet carries application payload (RoCE data or a TCP segment with data).
    #[inline]
    pub fn is_data(&self) -> bool {
        // Without branches: data and ACKs alternate in no order a predictor can learn.
        matches!(self.kind, PacketKind::Data)
            | (matches!(self.kind, PacketKind::Tcp) & (self.payload > 0))
    }
}

/// The TCP header fields a segment carries besides its sequence number, length and ECN
/// codepoint, which live in [`Packet::seq`], [`Packet::payload`] and [`Packet::ecn`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TcpFields {
    /// Cumulative acknowledgement.
    pub ack: u64,
    /// Flags.
    pub flags: Flags,
    /// SACK blocks.
    pub sack: SackBlocks,
    /// The accurate-ECN stand-in: the receiver's CE byte count.
    pub ace: u32,
    /// The timestamps option's echo (TSecr); the segment's own send time (TSval) is the
    /// packet's `ts`.
    pub tsecr: Option<Time>,
    /// The advertised receive window, bytes (`u32::MAX`: none that limits).
    pub wnd: u32,
    /// On a request of a reused connection ([`dcsim_tcp::Reuse`]): the flow whose response
    /// it asks for (the server answers with that flow's size, as an HTTP request names what
    /// it wants); [`TcpFields::NO_APP`] on every other segment.
    pub app: u32,
}

impl TcpFields {
    /// [`TcpFields::app`] of a segment that is no reused connection's request.
    pub const NO_APP: u32 = u32::MAX;
}

impl Default for TcpFields {
    /// No acknowledgement, flags, blocks or echo, and a window that limits nothing (as
    /// `dcsim_tcp::Segment::default`).
    fn default() -> TcpFields {
        TcpFields {
            ack: 0,
            flags: Flags::default(),
            sack: SackBlocks::default(),
            ace: 0,
            tsecr: None,
            wnd: u32::MAX,
            app: TcpFields::NO_APP,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(x: u64) -> IntHop {
        IntHop { rate: BitsPerSec(x), time: Time(x), tx_bytes: x, qlen: x }
    }

    /// A cleared stack keeps its old records in memory but not in its value: it equals a new
    /// empty stack, and records pushed after the clear are the only valid ones.
    #[test]
    fn a_cleared_stack_forgets_its_records() {
        let mut s = IntStack::EMPTY;
        for x in 1..=3 {
            s.push(hop(x));
        }
        s.clear();
        assert_eq!(s.nhop, 0);
        assert!(s.valid().is_empty());
        assert_eq!(s, IntStack::EMPTY);
        assert_eq!(s.hops[1], hop(2), "the records stay where they were");
        s.push(hop(9));
        let mut fresh = IntStack::EMPTY;
        fresh.push(hop(9));
        assert_eq!(s, fresh);
        assert_eq!(s.valid(), &[hop(9)]);
        // Stacks with the same count but different valid records differ.
        let mut other = IntStack::EMPTY;
        other.push(hop(8));
        assert_ne!(s, other);
    }

    /// Past five hops every record is valid (they wrap), so all five take part in equality.
    #[test]
    fn a_wrapped_stack_compares_all_its_records() {
        let (mut a, mut b) = (IntStack::EMPTY, IntStack::EMPTY);
        for x in 1..=6 {
            a.push(hop(x));
            b.push(hop(x));
        }
        assert_eq!(a, b);
        b.hops[4] = hop(0);
        assert_ne!(a, b);
    }
}
