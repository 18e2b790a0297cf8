//! Target information (`target`): the hardware the graph was compiled for.

use crate::counts::Counts;
use crate::number::Int;
use crate::record::{names, record};

names! {
    /// The kind of target (`target.type`).
    #[derive(Default)]
    pub enum TargetType {
        /// The host CPU.
        Cpu = "CPU",
        /// IPU hardware.
        #[default]
        Ipu = "IPU",
        /// The IPU model, a simulation on the host.
        IpuModel = "IPU_MODEL",
    }
}

record! {
    /// The target (`target`).
    ///
    /// `numTiles` is `numIPUs` x `tilesPerIPU`, and `totalMemory` is `bytesPerTile` x `numTiles`
    /// (or `bytesPerIPU` x `numIPUs`), both stored redundantly; [`validate`](crate::validate())
    /// checks them. The sync delay of a tile is `minSyncDelay + relativeSyncDelayByTile[tile]`,
    /// given for the tiles of one IPU (the same on every IPU).
    pub struct Target / TargetFields {
        /// `bytesPerIPU`: bytes of memory on an IPU.
        "bytesPerIPU" => bytes_per_ipu: req u64 as Int,
        /// `bytesPerTile`: bytes of memory on a tile.
        "bytesPerTile" => bytes_per_tile: req u64 as Int,
        /// `clockFrequency`: the tile clock, in hertz.
        "clockFrequency" => clock_frequency: req f64,
        /// `minSyncDelay`: the smallest sync delay of any tile, in cycles.
        "minSyncDelay" => min_sync_delay: opt u64 as Int,
        /// `numIPUs`: IPU chips in the system.
        "numIPUs" => num_ipus: req u64 as Int,
        /// `numTiles`: tiles in total.
        "numTiles" => num_tiles: req u64 as Int,
        /// `relativeSyncDelayByTile`: each tile's sync delay above `minSyncDelay`, for the
        /// `tilesPerIPU` tiles of one IPU.
        "relativeSyncDelayByTile" => relative_sync_delay_by_tile: opt Counts,
        /// `tilesPerIPU`: tiles on each IPU.
        "tilesPerIPU" => tiles_per_ipu: req u64 as Int,
        /// `totalMemory`: bytes of memory in total.
        "totalMemory" => total_memory: req u64 as Int,
        /// `type`: CPU, IPU or IPU_MODEL.
        "type" => target_type: req TargetType,
    }
}

impl Target {
    /// The sync delay of `tile` in cycles (`minSyncDelay + relativeSyncDelayByTile[tile mod
    /// tilesPerIPU]`), when the target gives them.
    pub fn sync_delay(&self, tile: u64) -> Option<u64> {
        let per_ipu = self.tiles_per_ipu.max(1);
        let relative = self
            .relative_sync_delay_by_tile
            .as_ref()?
            .get(usize::try_from(tile % per_ipu).ok()?)?;
        Some(self.min_sync_delay?.saturating_add(relative))
    }

    /// `cycles` in nanoseconds at the target's clock (`None` when the clock is not positive).
    pub fn cycles_to_ns(&self, cycles: u64) -> Option<f64> {
        (self.clock_frequency > 0.0 && self.clock_frequency.is_finite())
            .then(|| cycles as f64 * 1e9 / self.clock_frequency)
    }
}
