//! Memory use (`memory`): by tile, by category, by compute set, by vertex type, and liveness.
//!
//! Each tile has two regions, interleaved and non-interleaved; what does not fit is overflowed.
//! Figures "including gaps" count the padding that alignment leaves; `totalIncludingGaps` is the
//! memory a tile really needs, to be set against `target.bytesPerTile`.

use std::collections::BTreeMap;

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
        /// `byProgram`: the liveness tree over all call stacks.
        "byProgram" => by_program: opt LivenessNode,
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
