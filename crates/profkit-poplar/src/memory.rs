//! Memory use (`memory`): by tile, by category, by compute set, by vertex type, and liveness.
//!
//! Each tile has two regions, interleaved and non-interleaved; what does not fit is overflowed.
//! Figures "including gaps" count the padding that alignment leaves; `totalIncludingGaps` is the
//! memory a tile really needs, to be set against `target.bytesPerTile`.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};

use crate::counts::Counts;
use crate::number::Int;
use crate::record::record;

record! {
    /// Memory use (`memory`).
    pub struct Memory / MemoryFields {
        /// `byCategory`: use by what the memory holds (`controlCode`, `variable`, `stack`, ...).
        /// Newer SDKs add categories, so this is an open map.
        "byCategory" => by_category: opt BTreeMap<String, CategoryMemory>,
        /// `byComputeSet`: use by compute set, then tile.
        "byComputeSet" => by_compute_set: opt MemoryBreakdown,
        /// `byTile`: use on each tile.
        "byTile" => by_tile: opt TileMemory,
        /// `byVertexType`: use by vertex type, then tile.
        "byVertexType" => by_vertex_type: opt MemoryBreakdown,
        /// `liveness`: variables live at once.
        "liveness" => liveness: opt Liveness,
    }
}

record! {
    /// Memory on each tile (`memory.byTile`), one number per tile in each array.
    pub struct TileMemory / TileMemoryFields {
        /// `interleaved`.
        "interleaved" => interleaved: req Counts,
        /// `interleavedIncludingGaps`.
        "interleavedIncludingGaps" => interleaved_including_gaps: req Counts,
        /// `nonInterleaved`.
        "nonInterleaved" => non_interleaved: req Counts,
        /// `nonInterleavedIncludingGaps`.
        "nonInterleavedIncludingGaps" => non_interleaved_including_gaps: req Counts,
        /// `overflowed`.
        "overflowed" => overflowed: req Counts,
        /// `overflowedIncludingGaps`.
        "overflowedIncludingGaps" => overflowed_including_gaps: req Counts,
        /// `total`: interleaved + nonInterleaved + overflowed, without padding.
        "total" => total: req Counts,
        /// `totalIncludingGaps`: the memory the tile really needs.
        "totalIncludingGaps" => total_including_gaps: req Counts,
    }
}

record! {
    /// One region's use by a category, per tile.
    pub struct RegionMemory / RegionMemoryFields {
        /// `nonOverlapped`.
        "nonOverlapped" => non_overlapped: req Counts,
        /// `overlapped`: memory shared with variables not live at the same time.
        "overlapped" => overlapped: req Counts,
    }
}

record! {
    /// One category's use (`memory.byCategory.<category>`), per tile.
    pub struct CategoryMemory / CategoryMemoryFields {
        /// `interleaved`.
        "interleaved" => interleaved: req RegionMemory,
        /// `nonInterleaved`.
        "nonInterleaved" => non_interleaved: req RegionMemory,
        /// `overflowed`.
        "overflowed" => overflowed: req RegionMemory,
        /// `total`.
        "total" => total: req Counts,
    }
}

record! {
    /// Memory by compute set or by vertex type (`memory.byComputeSet`, `memory.byVertexType`):
    /// 2-D arrays indexed by compute set (or vertex type), then tile. `codeBytes` may be shared
    /// between compute sets, so neither it nor `totalBytes` adds up meaningfully.
    pub struct MemoryBreakdown / MemoryBreakdownFields {
        /// `codeBytes`.
        "codeBytes" => code_bytes: req Vec<Counts>,
        /// `copyPtrBytes`.
        "copyPtrBytes" => copy_ptr_bytes: req Vec<Counts>,
        /// `descriptorBytes`.
        "descriptorBytes" => descriptor_bytes: req Vec<Counts>,
        /// `edgePtrBytes`.
        "edgePtrBytes" => edge_ptr_bytes: req Vec<Counts>,
        /// `paddingBytes`.
        "paddingBytes" => padding_bytes: req Vec<Counts>,
        /// `totalBytes`: the sum of the others.
        "totalBytes" => total_bytes: req Vec<Counts>,
        /// `vertexDataBytes`.
        "vertexDataBytes" => vertex_data_bytes: req Vec<Counts>,
    }
}

impl MemoryBreakdown {
    /// The arrays with their keys, in key order.
    pub fn arrays(&self) -> [(&'static str, &[Counts]); 7] {
        [
            ("codeBytes", &self.code_bytes),
            ("copyPtrBytes", &self.copy_ptr_bytes),
            ("descriptorBytes", &self.descriptor_bytes),
            ("edgePtrBytes", &self.edge_ptr_bytes),
            ("paddingBytes", &self.padding_bytes),
            ("totalBytes", &self.total_bytes),
            ("vertexDataBytes", &self.vertex_data_bytes),
        ]
    }
}

record! {
    /// Variable liveness (`memory.liveness`). Graphcore's scripts take the peak as
    /// sum(alwaysLive.bytesByTile) + sum(notAlwaysLive.maxBytesByTile).
    pub struct Liveness / LivenessFields {
        /// `alwaysLive`: variables live throughout.
        "alwaysLive" => always_live: opt AlwaysLive,
        /// `notAlwaysLive`: the others.
        "notAlwaysLive" => not_always_live: opt NotAlwaysLive,
    }
}

record! {
    /// Variables live throughout (`memory.liveness.alwaysLive`).
    pub struct AlwaysLive / AlwaysLiveFields {
        /// `bytesByTile`.
        "bytesByTile" => bytes_by_tile: req Counts,
    }
}

record! {
    /// Variables not always live (`memory.liveness.notAlwaysLive`).
    pub struct NotAlwaysLive / NotAlwaysLiveFields {
        /// `byProgram`: the liveness trees over all call stacks, a list of root nodes (one
        /// object in some files: a list of one).
        "byProgram" => by_program: opt LivenessRoots,
        /// `maxBytesByTile`: the most live at once on each tile.
        "maxBytesByTile" => max_bytes_by_tile: req Counts,
    }
}

record! {
    /// A node of the liveness tree: bytes live, and the nodes below.
    pub struct LivenessNode / LivenessNodeFields {
        /// `bytes`.
        "bytes" => bytes: req u64 as Int,
        /// `children`.
        "children" => children: opt Vec<LivenessNode>,
    }
}

/// The roots of the liveness trees (`memory.liveness.notAlwaysLive.byProgram`). The files
/// Graphcore's own tools read hold a list of root nodes; a single object is read as a list of one,
/// and written back as it was read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LivenessRoots {
    /// The root nodes, in file order.
    pub roots: Vec<LivenessNode>,
    /// Whether the file held one object rather than a list (written back the same way).
    pub single_object: bool,
}

impl LivenessRoots {
    /// Every node of every tree, depth first, without recursion (a hostile tree may be deep).
    pub fn nodes(&self) -> impl Iterator<Item = &LivenessNode> {
        let mut stack: Vec<&LivenessNode> = self.roots.iter().rev().collect();
        std::iter::from_fn(move || {
            let node = stack.pop()?;
            if let Some(children) = &node.children {
                stack.extend(children.iter().rev());
            }
            Some(node)
        })
    }

    /// The most bytes live at any node of any tree: the peak as Graphcore's TensorFlow test
    /// utilities take it (the maximum over the list, recursing into `children`).
    pub fn peak_bytes(&self) -> Option<u64> {
        self.nodes().map(|n| n.bytes).max()
    }
}

impl<'de> serde::Deserialize<'de> for LivenessRoots {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct RootsVisitor;
        impl<'de> Visitor<'de> for RootsVisitor {
            type Value = LivenessRoots;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of liveness nodes, or one node (LivenessNode)")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<LivenessRoots, A::Error> {
                let mut roots = Vec::new();
                while let Some(node) = seq.next_element::<LivenessNode>()? {
                    roots.push(node);
                }
                Ok(LivenessRoots {
                    roots,
                    single_object: false,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<LivenessRoots, A::Error> {
                let node = crate::record::RecordVisitor::<LivenessNodeFields>::new(
                    "an object (LivenessNode)",
                )
                .visit_map(map)?;
                Ok(LivenessRoots {
                    roots: vec![node],
                    single_object: true,
                })
            }
        }
        d.deserialize_any(RootsVisitor)
    }
}

impl serde::Serialize for LivenessRoots {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.roots.as_slice() {
            [one] if self.single_object => one.serialize(s),
            roots => roots.serialize(s),
        }
    }
}

impl From<LivenessNode> for LivenessRoots {
    fn from(node: LivenessNode) -> LivenessRoots {
        LivenessRoots {
            roots: vec![node],
            single_object: true,
        }
    }
}

impl From<Vec<LivenessNode>> for LivenessRoots {
    fn from(roots: Vec<LivenessNode>) -> LivenessRoots {
        LivenessRoots {
            roots,
            single_object: false,
        }
    }
}
