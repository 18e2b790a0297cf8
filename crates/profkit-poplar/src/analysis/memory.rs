//! Memory: use per tile against `bytesPerTile`, overflowing tiles, the largest categories, and
//! peak liveness.

use serde::Serialize;

use crate::graph::GraphProfile;

/// One tile and a number of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TileBytes {
    /// The tile (0 to numTiles - 1).
    pub tile: u64,
    /// The IPU it is on (`tile / tilesPerIPU`).
    pub ipu: u64,
    /// The bytes.
    pub bytes: u64,
}

/// A tile that needs more memory than it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Overflow {
    /// The tile.
    pub tile: u64,
    /// The IPU it is on.
    pub ipu: u64,
    /// The bytes it needs, gaps included (`totalIncludingGaps`).
    pub bytes_including_gaps: u64,
    /// How many more than `bytesPerTile`.
    pub over_by: u64,
}

/// Memory use on one IPU.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct IpuMemory {
    /// The IPU.
    pub ipu: u64,
    /// Bytes used on its tiles, gaps included.
    pub bytes_including_gaps: u64,
    /// Its fullest tile.
    pub max_tile: Option<TileBytes>,
    /// How many of its tiles overflow.
    pub overflowing_tiles: u64,
}

/// The use on each tile, as arrays indexed by tile.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PerTile {
    /// `byTile.totalIncludingGaps`: what each tile needs.
    pub bytes_including_gaps: Vec<u64>,
    /// The gaps: `totalIncludingGaps - total`.
    pub gap_bytes: Vec<u64>,
    /// `bytesPerTile - totalIncludingGaps`: negative on a tile that overflows.
    pub headroom: Vec<i64>,
}

/// One memory category, summed over tiles.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Category {
    /// The category (`controlCode`, `variable`, ...).
    pub name: String,
    /// `total`, summed over tiles.
    pub bytes: u64,
    /// The category's share of all categories' bytes, 0 to 1.
    pub share: f64,
    /// Interleaved bytes (overlapped and not).
    pub interleaved: u64,
    /// Non-interleaved bytes.
    pub non_interleaved: u64,
    /// Overflowed bytes.
    pub overflowed: u64,
    /// Bytes shared with variables not live at the same time (`overlapped`, all regions).
    pub overlapped: u64,
}

/// Peak liveness, as Graphcore's scripts compute it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PeakLiveness {
    /// sum(`alwaysLive.bytesByTile`).
    pub always_live_bytes: u64,
    /// sum(`notAlwaysLive.maxBytesByTile`).
    pub not_always_live_max_bytes: u64,
    /// The two added: the peak of live bytes.
    pub peak_bytes: u64,
    /// The tile where always-live plus not-always-live maximum is largest.
    pub peak_tile: Option<TileBytes>,
    /// How many liveness trees `notAlwaysLive.byProgram` holds (`None` without it).
    pub by_program_roots: Option<usize>,
    /// The most bytes at any node of those trees, as Graphcore's TensorFlow test utilities take
    /// it (`None` without nodes).
    pub by_program_peak_bytes: Option<u64>,
}

/// What the memory section says.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoryReport {
    /// `target.bytesPerTile`.
    pub bytes_per_tile: u64,
    /// Tiles in `byTile` (numTiles when the profile is valid).
    pub tiles: u64,
    /// sum(`byTile.total`): bytes of data, without padding.
    pub total_bytes: u64,
    /// sum(`byTile.totalIncludingGaps`): bytes needed.
    pub total_bytes_including_gaps: u64,
    /// The difference: bytes lost to gaps.
    pub gap_bytes: u64,
    /// Bytes left over on the tiles that fit.
    pub free_bytes: u64,
    /// The mean bytes needed per tile.
    pub mean_bytes_including_gaps: f64,
    /// The fullest tile, gaps included.
    pub max_tile: Option<TileBytes>,
    /// The emptiest tile, gaps included.
    pub min_tile: Option<TileBytes>,
    /// Tiles that need more than `bytesPerTile`, most overflowing first.
    pub overflowing_tiles: Vec<Overflow>,
    /// Bytes over `bytesPerTile`, summed over the overflowing tiles.
    pub overflow_bytes: u64,
    /// Use by IPU.
    pub ipus: Vec<IpuMemory>,
    /// Use per tile.
    pub per_tile: PerTile,
    /// Categories, largest first.
    pub categories: Vec<Category>,
    /// Peak liveness, when the profile has liveness.
    pub liveness: Option<PeakLiveness>,
}

fn add(a: u64, b: u64) -> u64 {
    a.saturating_add(b)
}

/// The memory report of a graph profile (`None` without `memory.byTile`).
pub fn memory(graph: &GraphProfile) -> Option<MemoryReport> {
    let memory = graph.memory.as_ref()?;
    let by_tile = memory.by_tile.as_ref()?;
    let target = &graph.target;
    let per_ipu = target.tiles_per_ipu.max(1);
    let capacity = target.bytes_per_tile;
    let locate = |tile: usize, bytes: u64| TileBytes {
        tile: tile as u64,
        ipu: tile as u64 / per_ipu,
        bytes,
    };

    let mut per_tile = PerTile::default();
    let mut overflowing = Vec::new();
    let mut ipus: Vec<IpuMemory> = Vec::new();
    let (mut sum, mut free, mut max, mut min) = (0u64, 0u64, None::<TileBytes>, None::<TileBytes>);
    for (tile, needed) in by_tile.total_including_gaps.iter().enumerate() {
        let data = by_tile.total.get(tile).unwrap_or(0);
        per_tile.bytes_including_gaps.push(needed);
        per_tile.gap_bytes.push(needed.saturating_sub(data));
        let headroom = i128::from(capacity) - i128::from(needed);
        per_tile
            .headroom
            .push(headroom.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64);
        sum = add(sum, needed);
        let here = locate(tile, needed);
        if max.is_none_or(|m| needed > m.bytes) {
            max = Some(here);
        }
        if min.is_none_or(|m| needed < m.bytes) {
            min = Some(here);
        }
        let over = needed.saturating_sub(capacity);
        free = add(free, capacity.saturating_sub(needed));
        // IPUs come in tile order, so the last entry is this tile's unless it is a new IPU.
        if ipus.last().is_none_or(|i| i.ipu != here.ipu) {
            ipus.push(IpuMemory {
                ipu: here.ipu,
                bytes_including_gaps: 0,
                max_tile: None,
                overflowing_tiles: 0,
            });
        }
        if let Some(ipu) = ipus.last_mut() {
            ipu.bytes_including_gaps = add(ipu.bytes_including_gaps, needed);
            if ipu.max_tile.is_none_or(|m| needed > m.bytes) {
                ipu.max_tile = Some(here);
            }
            ipu.overflowing_tiles += u64::from(over > 0);
        }
        if over > 0 {
            overflowing.push(Overflow {
                tile: here.tile,
                ipu: here.ipu,
                bytes_including_gaps: needed,
                over_by: over,
            });
        }
    }
    overflowing.sort_by(|a, b| b.over_by.cmp(&a.over_by).then(a.tile.cmp(&b.tile)));
    let total = by_tile.total.sum();
    let tiles = by_tile.total_including_gaps.len() as u64;

    let mut categories: Vec<Category> = memory
        .by_category
        .iter()
        .flatten()
        .map(|(name, c)| {
            let region =
                |r: &crate::memory::RegionMemory| add(r.non_overlapped.sum(), r.overlapped.sum());
            Category {
                name: name.clone(),
                bytes: c.total.sum(),
                share: 0.0,
                interleaved: region(&c.interleaved),
                non_interleaved: region(&c.non_interleaved),
                overflowed: region(&c.overflowed),
                overlapped: [&c.interleaved, &c.non_interleaved, &c.overflowed]
                    .iter()
                    .map(|r| r.overlapped.sum())
                    .fold(0, add),
            }
        })
        .collect();
    let all = categories.iter().map(|c| c.bytes).fold(0, add);
    for c in &mut categories {
        c.share = if all == 0 {
            0.0
        } else {
            c.bytes as f64 / all as f64
        };
    }
    categories.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));

    let liveness = memory.liveness.as_ref().and_then(|l| {
        let always = l.always_live.as_ref().map(|a| &a.bytes_by_tile);
        let not_always = l.not_always_live.as_ref().map(|n| &n.max_bytes_by_tile);
        let by_program = l
            .not_always_live
            .as_ref()
            .and_then(|n| n.by_program.as_ref());
        if always.is_none() && not_always.is_none() {
            return None;
        }
        let a = always.map_or(0, |c| c.sum());
        let n = not_always.map_or(0, |c| c.sum());
        let len = always
            .map_or(0, |c| c.len())
            .max(not_always.map_or(0, |c| c.len()));
        let mut peak_tile: Option<TileBytes> = None;
        let mut ai = always.map(|c| c.iter());
        let mut ni = not_always.map(|c| c.iter());
        for tile in 0..len {
            let bytes = add(
                ai.as_mut().and_then(Iterator::next).unwrap_or(0),
                ni.as_mut().and_then(Iterator::next).unwrap_or(0),
            );
            if peak_tile.is_none_or(|p| bytes > p.bytes) {
                peak_tile = Some(locate(tile, bytes));
            }
        }
        Some(PeakLiveness {
            always_live_bytes: a,
            not_always_live_max_bytes: n,
            peak_bytes: add(a, n),
            peak_tile,
            by_program_roots: by_program.map(|b| b.roots.len()),
            by_program_peak_bytes: by_program.and_then(|b| b.peak_bytes()),
        })
    });

    Some(MemoryReport {
        bytes_per_tile: capacity,
        tiles,
        total_bytes: total,
        total_bytes_including_gaps: sum,
        gap_bytes: sum.saturating_sub(total),
        free_bytes: free,
        mean_bytes_including_gaps: if tiles == 0 {
            0.0
        } else {
            sum as f64 / tiles as f64
        },
        max_tile: max,
        min_tile: min,
        overflow_bytes: overflowing.iter().map(|o| o.over_by).fold(0, add),
        overflowing_tiles: overflowing,
        ipus,
        per_tile,
        categories,
        liveness,
    })
}
