//! Typed dense indices. Every entity lives in a `Vec` and is named by one of these.

macro_rules! dense_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
        pub struct $name(pub u32);

        impl $name {
            /// The index as `usize`, for indexing a `Vec`.
            #[inline]
            pub const fn idx(self) -> usize {
                self.0 as usize
            }
            /// From a `usize` index.
            ///
            /// # Panics
            /// If the index does not fit in `u32`.
            #[inline]
            pub fn from_idx(i: usize) -> Self {
                Self(u32::try_from(i).expect(concat!(stringify!($name), " overflows u32")))
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

dense_id!(
    /// A node (host or switch) of the network; equal to its id in a reference topology file.
    NodeId
);
dense_id!(
    /// A full-duplex link, in the order the links were declared.
    LinkId
);
dense_id!(
    /// A flow, in the order the flows were given.
    FlowId
);

/// A port of one node, numbered from 0 in the order the node's links were declared.
/// (The reference numbers them from 1 because its device 0 is a loopback.)
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct PortNo(pub u16);

impl PortNo {
    /// The port number as `usize`.
    #[inline]
    pub const fn idx(self) -> usize {
        self.0 as usize
    }
}

impl std::fmt::Display for PortNo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}
