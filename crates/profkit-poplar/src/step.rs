//! Simulation steps (`simulation.steps`): the compute, sync and exchange steps of the simulated
//! run, tagged by `type`.
//!
//! Every step but a sync names its `program`, its span in cycles (`cyclesFrom` to `cyclesTo`),
//! `cycles` taken by the longest-running tile, and how balanced the tiles were (`tileBalance` =
//! total tile cycles / (`cycles` x numTiles)). Exchange steps add `totalData` and `dataBalance`,
//! `OnTileExecute` adds `computeSet` and `threadBalance`. Which fields appear varies between SDKs,
//! so all but `program` are optional; tags this crate does not know are kept as
//! [`Step::Unknown`].

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::number::{Index, Int};
use crate::program::ExchangeKind;
use crate::record::{Extra, keep, names, record, write_sorted};

names! {
    /// The kind of sync (`syncType`).
    pub enum SyncType {
        /// A sync across IPUs.
        External = "External",
        /// A sync within an IPU.
        Internal = "Internal",
    }
}

record! {
    /// An `OnTileExecute` step: a compute set running.
    pub struct ComputeStep / ComputeStepFields {
        /// `activeTileBalance`: `tileBalance` over the tiles that compute.
        "activeTileBalance" => active_tile_balance: opt f64,
        /// `activeTiles`: tiles that compute.
        "activeTiles" => active_tiles: opt u64 as Int,
        /// `computeSet`: an index into `computeSets`.
        "computeSet" => compute_set: opt u32 as Index,
        /// `cycles`: cycles of the longest-running tile.
        "cycles" => cycles: opt u64 as Int,
        /// `cyclesFrom`: the first cycle the step runs on any tile.
        "cyclesFrom" => cycles_from: opt u64 as Int,
        /// `cyclesOverlapped`: cycles overlapped with earlier steps.
        "cyclesOverlapped" => cycles_overlapped: opt u64 as Int,
        /// `cyclesTo`: the last cycle the step runs on any tile.
        "cyclesTo" => cycles_to: opt u64 as Int,
        /// `name`: the compute set's name.
        "name" => name: opt String,
        /// `program`: an index into `programs`.
        "program" => program: req u32 as Index,
        /// `threadBalance`: how well the six hardware threads were used, 0 to 1.
        "threadBalance" => thread_balance: opt f64,
        /// `tileBalance`: total tile cycles / (`cycles` x numTiles), 0 to 1.
        "tileBalance" => tile_balance: opt f64,
    }
}

record! {
    /// A `DoExchange`, `GlobalExchange`, `StreamCopy` or `CopySharedStructure` step.
    pub struct ExchangeStep / ExchangeStepFields {
        /// `activeTileBalance`.
        "activeTileBalance" => active_tile_balance: opt f64,
        /// `activeTiles`: tiles that exchange.
        "activeTiles" => active_tiles: opt u64 as Int,
        /// `cycles`: cycles of the longest-running tile.
        "cycles" => cycles: opt u64 as Int,
        /// `cyclesFrom`.
        "cyclesFrom" => cycles_from: opt u64 as Int,
        /// `cyclesOverlapped` (`DoExchange`, `CopySharedStructure`).
        "cyclesOverlapped" => cycles_overlapped: opt u64 as Int,
        /// `cyclesTo`.
        "cyclesTo" => cycles_to: opt u64 as Int,
        /// `dataBalance`: like `tileBalance`, for the data each tile sends and receives.
        "dataBalance" => data_balance: opt f64,
        /// `exchange` (`DoExchange`): an index into `exchanges`.
        "exchange" => exchange: opt u32 as Index,
        /// `externalExchange` (`GlobalExchange`): an index into `externalExchanges`.
        "externalExchange" => external_exchange: opt u32 as Index,
        /// `hostExchange` (`StreamCopy`): an index into `hostExchanges`.
        "hostExchange" => host_exchange: opt u32 as Index,
        /// `name`.
        "name" => name: opt String,
        /// `program`: an index into `programs`.
        "program" => program: req u32 as Index,
        /// `tileBalance`.
        "tileBalance" => tile_balance: opt f64,
        /// `totalData`: bytes transferred.
        "totalData" => total_data: opt u64 as Int,
    }
}

record! {
    /// A sync step.
    pub struct SyncStep / SyncStepFields {
        /// `syncType`: External or Internal.
        "syncType" => sync_type: opt SyncType,
    }
}

/// A step whose tag this crate does not know, with all its fields.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UnknownStep {
    /// The tag (`type`).
    pub type_name: String,
    /// Every other key, with its value.
    pub fields: Extra,
}

/// One entry of `simulation.steps`, by its tag.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// `OnTileExecute`: a compute set.
    OnTileExecute(ComputeStep),
    /// `DoExchange`: an internal exchange.
    DoExchange(ExchangeStep),
    /// `GlobalExchange`: an IPU-to-IPU exchange.
    GlobalExchange(ExchangeStep),
    /// `StreamCopy`: an exchange with the host.
    StreamCopy(ExchangeStep),
    /// `CopySharedStructure`.
    CopySharedStructure(ExchangeStep),
    /// `SharedStructureCopy`: the format's documentation names this among the exchange steps once (likely
    /// `CopySharedStructure` misspelt); read and written as spelt.
    SharedStructureCopy(ExchangeStep),
    /// `Sync` (the documentation's example spells it `sync`; `lowercase_tag` keeps the spelling).
    Sync {
        /// The step.
        step: SyncStep,
        /// Whether the tag was written `sync`.
        lowercase_tag: bool,
    },
    /// Any other tag.
    Unknown(UnknownStep),
}

record! {
    /// Every field any step tag has, read before the tag (which sorts last) is known.
    pub(crate) struct RawStep / RawStepFields {
        "activeTileBalance" => active_tile_balance: opt f64,
        "activeTiles" => active_tiles: opt u64 as Int,
        "computeSet" => compute_set: opt u32 as Index,
        "cycles" => cycles: opt u64 as Int,
        "cyclesFrom" => cycles_from: opt u64 as Int,
        "cyclesOverlapped" => cycles_overlapped: opt u64 as Int,
        "cyclesTo" => cycles_to: opt u64 as Int,
        "dataBalance" => data_balance: opt f64,
        "exchange" => exchange: opt u32 as Index,
        "externalExchange" => external_exchange: opt u32 as Index,
        "hostExchange" => host_exchange: opt u32 as Index,
        "name" => name: opt String,
        "program" => program: opt u32 as Index,
        "syncType" => sync_type: opt SyncType,
        "threadBalance" => thread_balance: opt f64,
        "tileBalance" => tile_balance: opt f64,
        "totalData" => total_data: opt u64 as Int,
        "type" => type_name: opt String,
    }
}

impl RawStep {
    fn program(&self, tag: &str) -> Result<u32, String> {
        self.program
            .ok_or_else(|| format!("an {tag} step needs `program`"))
    }

    fn compute(self) -> Result<ComputeStep, String> {
        let program = self.program("OnTileExecute")?;
        let mut extra = self.extra;
        keep(&mut extra, "dataBalance", self.data_balance);
        keep(&mut extra, "exchange", self.exchange);
        keep(&mut extra, "externalExchange", self.external_exchange);
        keep(&mut extra, "hostExchange", self.host_exchange);
        keep(&mut extra, "syncType", self.sync_type);
        keep(&mut extra, "totalData", self.total_data);
        Ok(ComputeStep {
            active_tile_balance: self.active_tile_balance,
            active_tiles: self.active_tiles,
            compute_set: self.compute_set,
            cycles: self.cycles,
            cycles_from: self.cycles_from,
            cycles_overlapped: self.cycles_overlapped,
            cycles_to: self.cycles_to,
            name: self.name,
            program,
            thread_balance: self.thread_balance,
            tile_balance: self.tile_balance,
            extra,
        })
    }

    fn exchange(self, tag: &str) -> Result<ExchangeStep, String> {
        let program = self.program(tag)?;
        let mut extra = self.extra;
        keep(&mut extra, "computeSet", self.compute_set);
        keep(&mut extra, "syncType", self.sync_type);
        keep(&mut extra, "threadBalance", self.thread_balance);
        Ok(ExchangeStep {
            active_tile_balance: self.active_tile_balance,
            active_tiles: self.active_tiles,
            cycles: self.cycles,
            cycles_from: self.cycles_from,
            cycles_overlapped: self.cycles_overlapped,
            cycles_to: self.cycles_to,
            data_balance: self.data_balance,
            exchange: self.exchange,
            external_exchange: self.external_exchange,
            host_exchange: self.host_exchange,
            name: self.name,
            program,
            tile_balance: self.tile_balance,
            total_data: self.total_data,
            extra,
        })
    }

    fn sync(self) -> SyncStep {
        let mut extra = self.extra;
        keep(&mut extra, "activeTileBalance", self.active_tile_balance);
        keep(&mut extra, "activeTiles", self.active_tiles);
        keep(&mut extra, "computeSet", self.compute_set);
        keep(&mut extra, "cycles", self.cycles);
        keep(&mut extra, "cyclesFrom", self.cycles_from);
        keep(&mut extra, "cyclesOverlapped", self.cycles_overlapped);
        keep(&mut extra, "cyclesTo", self.cycles_to);
        keep(&mut extra, "dataBalance", self.data_balance);
        keep(&mut extra, "exchange", self.exchange);
        keep(&mut extra, "externalExchange", self.external_exchange);
        keep(&mut extra, "hostExchange", self.host_exchange);
        keep(&mut extra, "name", self.name);
        keep(&mut extra, "program", self.program);
        keep(&mut extra, "threadBalance", self.thread_balance);
        keep(&mut extra, "tileBalance", self.tile_balance);
        keep(&mut extra, "totalData", self.total_data);
        SyncStep {
            sync_type: self.sync_type,
            extra,
        }
    }

    fn unknown(self, type_name: String) -> UnknownStep {
        let step = self.sync();
        let mut fields = step.extra;
        keep(&mut fields, "syncType", step.sync_type);
        UnknownStep { type_name, fields }
    }

    fn into_step(mut self) -> Result<Step, String> {
        let Some(tag) = self.type_name.take() else {
            return Err("a step needs a `type`".into());
        };
        Ok(match tag.as_str() {
            "OnTileExecute" => Step::OnTileExecute(self.compute()?),
            "DoExchange" => Step::DoExchange(self.exchange("DoExchange")?),
            "GlobalExchange" => Step::GlobalExchange(self.exchange("GlobalExchange")?),
            "StreamCopy" => Step::StreamCopy(self.exchange("StreamCopy")?),
            "CopySharedStructure" => {
                Step::CopySharedStructure(self.exchange("CopySharedStructure")?)
            }
            "SharedStructureCopy" => {
                Step::SharedStructureCopy(self.exchange("SharedStructureCopy")?)
            }
            "Sync" | "sync" => Step::Sync {
                step: self.sync(),
                lowercase_tag: tag == "sync",
            },
            _ => Step::Unknown(self.unknown(tag)),
        })
    }
}

impl<'de> Deserialize<'de> for Step {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Step, D::Error> {
        RawStep::deserialize(d)?
            .into_step()
            .map_err(serde::de::Error::custom)
    }
}

impl Serialize for Step {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        let tag = Some(("type", self.type_name()));
        match self {
            Step::OnTileExecute(step) => step.serialize_entries(&mut map, tag)?,
            Step::DoExchange(step)
            | Step::GlobalExchange(step)
            | Step::StreamCopy(step)
            | Step::CopySharedStructure(step)
            | Step::SharedStructureCopy(step) => step.serialize_entries(&mut map, tag)?,
            Step::Sync { step, .. } => step.serialize_entries(&mut map, tag)?,
            Step::Unknown(u) => write_sorted(&mut map, &[], tag, &u.fields, |_, _| Ok(()))?,
        }
        map.end()
    }
}

/// The timing fields every step but a sync has.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepTiming {
    /// `program`.
    pub program: u32,
    /// `cycles`.
    pub cycles: Option<u64>,
    /// `cyclesFrom`.
    pub cycles_from: Option<u64>,
    /// `cyclesTo`.
    pub cycles_to: Option<u64>,
    /// `tileBalance`.
    pub tile_balance: Option<f64>,
    /// `activeTiles`.
    pub active_tiles: Option<u64>,
    /// `activeTileBalance`.
    pub active_tile_balance: Option<f64>,
}

impl Step {
    /// The tag, as written in `type`.
    pub fn type_name(&self) -> &str {
        match self {
            Step::OnTileExecute(_) => "OnTileExecute",
            Step::DoExchange(_) => "DoExchange",
            Step::GlobalExchange(_) => "GlobalExchange",
            Step::StreamCopy(_) => "StreamCopy",
            Step::CopySharedStructure(_) => "CopySharedStructure",
            Step::SharedStructureCopy(_) => "SharedStructureCopy",
            Step::Sync {
                lowercase_tag: true,
                ..
            } => "sync",
            Step::Sync { .. } => "Sync",
            Step::Unknown(u) => &u.type_name,
        }
    }

    /// The program the step runs (none for a sync or an unknown tag).
    pub fn program(&self) -> Option<u32> {
        self.timing().map(|t| t.program)
    }

    /// The step's name (a compute set's, for `OnTileExecute`).
    pub fn name(&self) -> Option<&str> {
        match self {
            Step::OnTileExecute(s) => s.name.as_deref(),
            Step::DoExchange(s)
            | Step::GlobalExchange(s)
            | Step::StreamCopy(s)
            | Step::CopySharedStructure(s)
            | Step::SharedStructureCopy(s) => s.name.as_deref(),
            Step::Sync { .. } => None,
            Step::Unknown(u) => u.fields.get("name").and_then(|v| v.as_str()),
        }
    }

    /// The timing fields (none for a sync or an unknown tag).
    pub fn timing(&self) -> Option<StepTiming> {
        match self {
            Step::OnTileExecute(s) => Some(StepTiming {
                program: s.program,
                cycles: s.cycles,
                cycles_from: s.cycles_from,
                cycles_to: s.cycles_to,
                tile_balance: s.tile_balance,
                active_tiles: s.active_tiles,
                active_tile_balance: s.active_tile_balance,
            }),
            Step::DoExchange(s)
            | Step::GlobalExchange(s)
            | Step::StreamCopy(s)
            | Step::CopySharedStructure(s)
            | Step::SharedStructureCopy(s) => Some(StepTiming {
                program: s.program,
                cycles: s.cycles,
                cycles_from: s.cycles_from,
                cycles_to: s.cycles_to,
                tile_balance: s.tile_balance,
                active_tiles: s.active_tiles,
                active_tile_balance: s.active_tile_balance,
            }),
            Step::Sync { .. } | Step::Unknown(_) => None,
        }
    }

    /// The exchange an exchange step runs, and which list its index is into: `exchange` for
    /// `DoExchange`, `externalExchange` for `GlobalExchange`, `hostExchange` for `StreamCopy`.
    pub fn exchange(&self) -> Option<(ExchangeKind, u32)> {
        match self {
            Step::DoExchange(s) => s.exchange.map(|i| (ExchangeKind::Internal, i)),
            Step::GlobalExchange(s) => s.external_exchange.map(|i| (ExchangeKind::External, i)),
            Step::StreamCopy(s) => s.host_exchange.map(|i| (ExchangeKind::Host, i)),
            _ => None,
        }
    }

    /// The compute set an `OnTileExecute` step runs.
    pub fn compute_set(&self) -> Option<u32> {
        match self {
            Step::OnTileExecute(s) => s.compute_set,
            _ => None,
        }
    }
}
