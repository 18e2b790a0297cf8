//! The `flow` stat: how an XPlane links events across lines and planes (a kernel launch to its
//! kernel, a producer to its consumer), as TSL's `XFlow` packs it in one `uint64_value`.
//!
//! Bits 0-1 hold the direction ([`IN`], [`OUT`], or both), bits 2-57 the low 56 bits of the
//! flow's id and bits 58-63 its category (a TSL context type, such as 9 for a GPU launch).
//! Events whose flows share an id are linked; xprof's trace viewer draws each link as an arrow.
//!
//! ```
//! use profkit_xplane::flow::{Flow, OUT};
//! let value = Flow { id: 42, direction: OUT, category: 9 }.encode();
//! assert_eq!(Flow::decode(value), Flow { id: 42, direction: OUT, category: 9 });
//! ```

/// The name of the stat that holds a flow.
pub const FLOW_STAT: &str = "flow";
/// The direction of a flow that ends at the event.
pub const IN: u64 = 1;
/// The direction of a flow that starts at the event.
pub const OUT: u64 = 2;
/// The ids a flow can have: 56 bits.
pub const ID_MASK: u64 = (1 << 56) - 1;

/// One flow end, as a `flow` stat's value holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Flow {
    /// The flow's id (its low 56 bits are kept).
    pub id: u64,
    /// [`IN`], [`OUT`] or both (3).
    pub direction: u64,
    /// The category: a TSL context type below 64.
    pub category: u64,
}

impl Flow {
    /// The stat value (`XFlow::ToStatValue`); a direction or category out of range keeps its low
    /// bits.
    pub fn encode(self) -> u64 {
        (self.direction & 3) | ((self.id & ID_MASK) << 2) | ((self.category & 63) << 58)
    }

    /// The flow a stat value holds (`XFlow::FromStatValue`).
    pub fn decode(value: u64) -> Flow {
        Flow {
            id: (value >> 2) & ID_MASK,
            direction: value & 3,
            category: value >> 58,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_keeps_the_low_bits() {
        let flow = Flow {
            id: 0x00ab_cdef_0123_4567,
            direction: OUT,
            category: 9,
        };
        assert_eq!(Flow::decode(flow.encode()), flow);
        // A value xprof 2.24.2 wrote for a kernel launch.
        let seen = Flow::decode(2_681_798_526_667_364_826);
        assert_eq!((seen.direction, seen.category), (OUT, 9));
        let wide = Flow {
            id: u64::MAX,
            direction: 7,
            category: 65,
        };
        assert_eq!(
            Flow::decode(wide.encode()),
            Flow {
                id: ID_MASK,
                direction: 3,
                category: 1
            }
        );
    }
}
