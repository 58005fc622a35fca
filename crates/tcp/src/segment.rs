//! What a TCP endpoint puts on the wire: [`Segment`], its [`Flags`] and [`SackBlocks`].

use std::fmt;
use std::ops::BitOr;

use dcsim_types::{Ecn, Time};

use crate::config::TcpConfig;

/// TCP header flags (only those the model uses).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(u8);

impl Flags {
    /// No flag.
    pub const NONE: Flags = Flags(0);
    /// Synchronize: the first segment of each direction.
    pub const SYN: Flags = Flags(1);
    /// The `ack` field is valid (every segment but the client's first SYN).
    pub const ACK: Flags = Flags(1 << 1);
    /// No more data from the sender (unused by the model: flows are sized in advance).
    pub const FIN: Flags = Flags(1 << 2);
    /// ECN-Echo (RFC 3168): the receiver saw CE and has not yet seen CWR.
    pub const ECE: Flags = Flags(1 << 3);
    /// Congestion Window Reduced (RFC 3168): the sender reacted to ECE.
    pub const CWR: Flags = Flags(1 << 4);

    /// Whether every flag of `other` is set.
    #[inline]
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
    /// Both sets of flags.
    #[inline]
    pub const fn union(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
    /// Sets the flags of `other`.
    #[inline]
    pub fn insert(&mut self, other: Flags) {
        self.0 |= other.0;
    }
    /// The raw bits (SYN = 1, ACK = 2, FIN = 4, ECE = 8, CWR = 16).
    #[inline]
    pub const fn bits(self) -> u8 {
        self.0
    }
}

impl BitOr for Flags {
    type Output = Flags;
    #[inline]
    fn bitor(self, rhs: Flags) -> Flags {
        self.union(rhs)
    }
}

impl fmt::Debug for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (Flags::SYN, "SYN"),
            (Flags::ACK, "ACK"),
            (Flags::FIN, "FIN"),
            (Flags::ECE, "ECE"),
            (Flags::CWR, "CWR"),
        ];
        let mut first = true;
        for (flag, name) in names {
            if self.contains(flag) {
                if !first {
                    f.write_str("|")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        if first {
            f.write_str("-")?;
        }
        Ok(())
    }
}

/// Up to three SACK blocks `[start, end)` (RFC 2018; three fit beside the timestamp option).
/// The first block holds the most recently received segment. Fixed size, no allocation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SackBlocks {
    len: u8,
    blocks: [(u64, u64); 3],
}

impl SackBlocks {
    /// The most blocks an option carries.
    pub const MAX: usize = 3;
    /// No block.
    pub const EMPTY: SackBlocks = SackBlocks { len: 0, blocks: [(0, 0); 3] };

    /// Blocks from a slice (at most [`SackBlocks::MAX`] are kept).
    pub fn from_slice(blocks: &[(u64, u64)]) -> SackBlocks {
        let mut s = SackBlocks::EMPTY;
        for &b in blocks.iter().take(Self::MAX) {
            s.push(b);
        }
        s
    }
    /// Appends a block; returns `false` (and drops it) when three are already present.
    pub fn push(&mut self, block: (u64, u64)) -> bool {
        if usize::from(self.len) >= Self::MAX {
            return false;
        }
        self.blocks[usize::from(self.len)] = block;
        self.len += 1;
        true
    }
    /// The blocks, most recent first.
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..usize::from(self.len)]
    }
    /// How many blocks there are.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }
    /// Whether there is no block.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl fmt::Debug for SackBlocks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// One TCP segment as the engine carries it.
///
/// Sequence numbers are 64-bit byte offsets of each direction's stream, starting at 0 for the
/// first payload byte; SYN and FIN take no sequence space in this model.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Segment {
    /// First payload byte (for a segment without payload: the sender's next sequence number).
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Cumulative acknowledgement: the next byte expected from the peer (valid with
    /// [`Flags::ACK`]).
    pub ack: u64,
    /// Header flags.
    pub flags: Flags,
    /// SACK blocks (empty when SACK is off).
    pub sack: SackBlocks,
    /// Accurate-ECN stand-in: the receiver's count of CE-marked payload bytes received so far,
    /// modulo 2^32 (zero unless `ecn = "accurate"`).
    pub ace: u32,
    /// The IP ECN codepoint: as sent, or as received after the network (possibly `Ce`).
    pub ecn: Ecn,
    /// Timestamps option: when the segment was sent (TSval; set by the endpoint that sends it).
    pub tsval: Time,
    /// Timestamps option: the peer's send time this segment echoes (TSecr), if any.
    pub tsecr: Option<Time>,
    /// The receive window the segment advertises, in bytes as its peer reads them (the scaled
    /// field shifted back; a SYN's is unscaled). Only the flow's receiver advertises one that
    /// limits (with [`TcpConfig::rwnd`]); the default, `u32::MAX`, limits nothing.
    pub wnd: u32,
}

impl Default for Segment {
    /// No payload, no flags, no options, and a window that limits nothing.
    fn default() -> Segment {
        Segment {
            seq: 0,
            len: 0,
            ack: 0,
            flags: Flags::NONE,
            sack: SackBlocks::EMPTY,
            ace: 0,
            ecn: Ecn::default(),
            tsval: Time::ZERO,
            tsecr: None,
            wnd: u32::MAX,
        }
    }
}

impl Segment {
    /// Payload end: `seq + len`.
    #[inline]
    pub fn end(&self) -> u64 {
        self.seq + u64::from(self.len)
    }
    /// Whether the segment carries the SYN flag.
    #[inline]
    pub fn is_syn(&self) -> bool {
        self.flags.contains(Flags::SYN)
    }
    /// The Ethernet frame size in bytes, as `cfg` counts headers: a data or ACK segment is
    /// `header_bytes + len` plus `4 + 8·n` for `n` SACK blocks (two NOPs and the option, as
    /// Linux writes it); a SYN or SYN-ACK is `syn_frame_bytes + len`; all are padded to
    /// `min_frame_bytes`.
    pub fn wire_bytes(&self, cfg: &TcpConfig) -> u32 {
        let size = if self.is_syn() {
            cfg.syn_frame_bytes + self.len
        } else {
            let sack = if self.sack.is_empty() { 0 } else { 4 + 8 * self.sack.len() as u32 };
            cfg.header_bytes + self.len + sack
        };
        size.max(cfg.min_frame_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_sizes_follow_linux_header_layout() {
        let cfg = TcpConfig::linux();
        let data = Segment { len: cfg.mss, flags: Flags::ACK, ..Segment::default() };
        assert_eq!(data.wire_bytes(&cfg), 1514);
        let ack = Segment { flags: Flags::ACK, ..Segment::default() };
        assert_eq!(ack.wire_bytes(&cfg), 66);
        let mut sack = ack;
        sack.sack = SackBlocks::from_slice(&[(1, 2), (3, 4), (5, 6)]);
        assert_eq!(sack.wire_bytes(&cfg), 66 + 4 + 24);
        let syn = Segment { flags: Flags::SYN, ..Segment::default() };
        assert_eq!(syn.wire_bytes(&cfg), 74);
        let dc = TcpConfig::dc_newreno();
        let data = Segment { len: dc.mss, flags: Flags::ACK, ..Segment::default() };
        assert_eq!(data.wire_bytes(&dc), 1500);
        // A pure ACK without Ethernet header and timestamps is padded to the minimum frame.
        assert_eq!(ack.wire_bytes(&dc), 60);
    }

    #[test]
    fn sack_blocks_keep_at_most_three() {
        let mut s = SackBlocks::EMPTY;
        for i in 0..4 {
            let kept = s.push((i, i + 1));
            assert_eq!(kept, i < 3);
        }
        assert_eq!(s.as_slice(), &[(0, 1), (1, 2), (2, 3)]);
        assert_eq!(format!("{:?}", Flags::SYN | Flags::ACK), "SYN|ACK");
    }
}
