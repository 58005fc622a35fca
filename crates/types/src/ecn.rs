//! The two-bit ECN field of the IP header (RFC 3168, RFC 9331).

/// An ECN codepoint. The discriminants are the bit patterns of the IP header field.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
#[repr(u8)]
pub enum Ecn {
    /// `00`: the sender's transport is not ECN-capable; a congested AQM must drop instead.
    #[default]
    NotEct = 0b00,
    /// `01`: ECN-capable, L4S (RFC 9331): the scalable (DCTCP-like) response; DualPI2 puts it
    /// in its low-latency queue.
    Ect1 = 0b01,
    /// `10`: ECN-capable, classic response (RFC 3168).
    Ect0 = 0b10,
    /// `11`: congestion experienced, set by a queue instead of dropping an ECT packet.
    Ce = 0b11,
}

impl Ecn {
    /// Whether a queue may mark this packet instead of dropping it (ECT(0), ECT(1) or CE).
    #[inline]
    pub const fn is_ect(self) -> bool {
        !matches!(self, Ecn::NotEct)
    }
    /// Whether the packet carries the CE mark.
    #[inline]
    pub const fn is_ce(self) -> bool {
        matches!(self, Ecn::Ce)
    }
    /// Whether the packet belongs to the L4S class (ECT(1) or CE, RFC 9331 §5.1).
    #[inline]
    pub const fn is_l4s(self) -> bool {
        matches!(self, Ecn::Ect1 | Ecn::Ce)
    }
    /// The codepoint from the two low bits of `bits`.
    #[inline]
    pub const fn from_bits(bits: u8) -> Ecn {
        match bits & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Ecn;

    #[test]
    fn codepoints_round_trip_and_classify() {
        for b in 0..4u8 {
            assert_eq!(Ecn::from_bits(b) as u8, b);
        }
        assert!(!Ecn::NotEct.is_ect());
        assert!(Ecn::Ect0.is_ect() && !Ecn::Ect0.is_l4s());
        assert!(Ecn::Ect1.is_ect() && Ecn::Ect1.is_l4s());
        assert!(Ecn::Ce.is_ce() && Ecn::Ce.is_l4s() && Ecn::Ce.is_ect());
    }
}
