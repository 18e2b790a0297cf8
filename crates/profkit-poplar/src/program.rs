//! Program structure (`programs`): a flat array of tagged programs that refer to each other by
//! index.
//!
//! The tag is `type`. Programs with sub-programs list them in `children`; `OnTileExecute` runs
//! compute set `computeSet`; `DoExchange`, `GlobalExchange` and `StreamCopy` run exchange
//! `exchange` of `exchanges`, `externalExchanges` and `hostExchanges`; `Call` calls function
//! `target` (an index into `functionPrograms`). Tags this crate does not know are kept, with all
//! their fields, as [`Program::Unknown`].
//!
//! The fields named above have the same meaning, and must have the same type, in every program,
//! whatever its tag: a field a tag does not use is kept among its unknown keys.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::number::{Index, Indices, IntMap};
use crate::record::{Extra, keep, record, write_sorted};

record! {
    /// The body of a program known by its children (`Sequence`, `Repeat`, `If`, ...) or of one
    /// without fields of its own (`Sync`, `WriteUndef`, ...).
    pub struct Block / BlockFields {
        /// `children`: indices into `programs`.
        "children" => children: opt Vec<u32> as Indices,
        /// `name`.
        "name" => name: opt String,
    }
}

record! {
    /// The body of an `OnTileExecute` program.
    pub struct OnTileExecute / OnTileExecuteFields {
        /// `computeSet`: an index into the arrays of `computeSets`.
        "computeSet" => compute_set: req u32 as Index,
        /// `name`.
        "name" => name: opt String,
    }
}

record! {
    /// The body of a `DoExchange`, `GlobalExchange` or `StreamCopy` program.
    pub struct Exchange / ExchangeFields {
        /// `exchange`: an index into `exchanges`, `externalExchanges` or `hostExchanges`.
        "exchange" => exchange: req u32 as Index,
        /// `memoryByInstruction` (`DoExchange`): bytes of each kind of exchange instruction,
        /// with their `total`.
        "memoryByInstruction" => memory_by_instruction: opt BTreeMap<String, u64> as IntMap,
        /// `name`.
        "name" => name: opt String,
    }
}

record! {
    /// The body of a `Call` program.
    pub struct Call / CallFields {
        /// `name`.
        "name" => name: opt String,
        /// `target`: an index into `functionPrograms`.
        "target" => target: req u32 as Index,
    }
}

/// A program whose tag this crate does not know, with all its fields.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UnknownProgram {
    /// The tag (`type`).
    pub type_name: String,
    /// Every other key, with its value.
    pub fields: Extra,
}

/// One entry of `programs`, by its tag.
#[derive(Clone, Debug, PartialEq)]
pub enum Program {
    /// `Sequence`: runs `children` in order.
    Sequence(Block),
    /// `Repeat`: runs its child a number of times.
    Repeat(Block),
    /// `RepeatWhile`: runs its children while a condition holds.
    RepeatWhile(Block),
    /// `If`: runs one of its children.
    If(Block),
    /// `Switch`: runs one of its children.
    Switch(Block),
    /// `OnTileExecute`: runs a compute set.
    OnTileExecute(OnTileExecute),
    /// `DoExchange`: an internal exchange.
    DoExchange(Exchange),
    /// `GlobalExchange`: an IPU-to-IPU exchange.
    GlobalExchange(Exchange),
    /// `StreamCopy`: an exchange with the host.
    StreamCopy(Exchange),
    /// `Call`: calls a function program.
    Call(Call),
    /// `CopySharedStructure`.
    CopySharedStructure(Block),
    /// `Sync`.
    Sync(Block),
    /// `WriteUndef`.
    WriteUndef(Block),
    /// `Execute` (the documentation names the program class; files use `OnTileExecute`).
    Execute(Block),
    /// `Copy` (the documentation names the program class; files use the exchange tags).
    Copy(Block),
    /// Any other tag.
    Unknown(UnknownProgram),
}

record! {
    /// Every field any program tag has, read before the tag (which sorts last) is known.
    pub(crate) struct RawProgram / RawProgramFields {
        "children" => children: opt Vec<u32> as Indices,
        "computeSet" => compute_set: opt u32 as Index,
        "exchange" => exchange: opt u32 as Index,
        "memoryByInstruction" => memory_by_instruction: opt BTreeMap<String, u64> as IntMap,
        "name" => name: opt String,
        "target" => target: opt u32 as Index,
        "type" => type_name: opt String,
    }
}

impl RawProgram {
    fn block(self) -> Block {
        let mut extra = self.extra;
        keep(&mut extra, "computeSet", self.compute_set);
        keep(&mut extra, "exchange", self.exchange);
        keep(
            &mut extra,
            "memoryByInstruction",
            self.memory_by_instruction,
        );
        keep(&mut extra, "target", self.target);
        Block {
            children: self.children,
            name: self.name,
            extra,
        }
    }

    fn missing(tag: &str, field: &str) -> String {
        format!("an {tag} program needs `{field}`")
    }

    fn on_tile_execute(self) -> Result<OnTileExecute, String> {
        let mut extra = self.extra;
        keep(&mut extra, "children", self.children);
        keep(&mut extra, "exchange", self.exchange);
        keep(
            &mut extra,
            "memoryByInstruction",
            self.memory_by_instruction,
        );
        keep(&mut extra, "target", self.target);
        Ok(OnTileExecute {
            compute_set: self
                .compute_set
                .ok_or_else(|| Self::missing("OnTileExecute", "computeSet"))?,
            name: self.name,
            extra,
        })
    }

    fn exchange(self, tag: &str) -> Result<Exchange, String> {
        let mut extra = self.extra;
        keep(&mut extra, "children", self.children);
        keep(&mut extra, "computeSet", self.compute_set);
        keep(&mut extra, "target", self.target);
        Ok(Exchange {
            exchange: self
                .exchange
                .ok_or_else(|| Self::missing(tag, "exchange"))?,
            memory_by_instruction: self.memory_by_instruction,
            name: self.name,
            extra,
        })
    }

    fn call(self) -> Result<Call, String> {
        let mut extra = self.extra;
        keep(&mut extra, "children", self.children);
        keep(&mut extra, "computeSet", self.compute_set);
        keep(&mut extra, "exchange", self.exchange);
        keep(
            &mut extra,
            "memoryByInstruction",
            self.memory_by_instruction,
        );
        Ok(Call {
            name: self.name,
            target: self.target.ok_or_else(|| Self::missing("Call", "target"))?,
            extra,
        })
    }

    fn unknown(self, type_name: String) -> UnknownProgram {
        let mut fields = self.extra;
        keep(&mut fields, "children", self.children);
        keep(&mut fields, "computeSet", self.compute_set);
        keep(&mut fields, "exchange", self.exchange);
        keep(
            &mut fields,
            "memoryByInstruction",
            self.memory_by_instruction,
        );
        keep(&mut fields, "name", self.name);
        keep(&mut fields, "target", self.target);
        UnknownProgram { type_name, fields }
    }

    fn into_program(mut self) -> Result<Program, String> {
        let Some(tag) = self.type_name.take() else {
            return Err("a program needs a `type`".into());
        };
        Ok(match tag.as_str() {
            "Sequence" => Program::Sequence(self.block()),
            "Repeat" => Program::Repeat(self.block()),
            "RepeatWhile" => Program::RepeatWhile(self.block()),
            "If" => Program::If(self.block()),
            "Switch" => Program::Switch(self.block()),
            "OnTileExecute" => Program::OnTileExecute(self.on_tile_execute()?),
            "DoExchange" => Program::DoExchange(self.exchange("DoExchange")?),
            "GlobalExchange" => Program::GlobalExchange(self.exchange("GlobalExchange")?),
            "StreamCopy" => Program::StreamCopy(self.exchange("StreamCopy")?),
            "Call" => Program::Call(self.call()?),
            "CopySharedStructure" => Program::CopySharedStructure(self.block()),
            "Sync" => Program::Sync(self.block()),
            "WriteUndef" => Program::WriteUndef(self.block()),
            "Execute" => Program::Execute(self.block()),
            "Copy" => Program::Copy(self.block()),
            _ => Program::Unknown(self.unknown(tag)),
        })
    }
}

impl<'de> Deserialize<'de> for Program {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Program, D::Error> {
        RawProgram::deserialize(d)?
            .into_program()
            .map_err(serde::de::Error::custom)
    }
}

impl Serialize for Program {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        let tag = Some(("type", self.type_name()));
        match self {
            Program::Sequence(b)
            | Program::Repeat(b)
            | Program::RepeatWhile(b)
            | Program::If(b)
            | Program::Switch(b)
            | Program::CopySharedStructure(b)
            | Program::Sync(b)
            | Program::WriteUndef(b)
            | Program::Execute(b)
            | Program::Copy(b) => b.serialize_entries(&mut map, tag)?,
            Program::OnTileExecute(p) => p.serialize_entries(&mut map, tag)?,
            Program::DoExchange(p) | Program::GlobalExchange(p) | Program::StreamCopy(p) => {
                p.serialize_entries(&mut map, tag)?
            }
            Program::Call(p) => p.serialize_entries(&mut map, tag)?,
            Program::Unknown(u) => write_sorted(&mut map, &[], tag, &u.fields, |_, _| Ok(()))?,
        }
        map.end()
    }
}

/// What an exchange program exchanges, and so which list its `exchange` indexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExchangeKind {
    /// Between tiles of an IPU (`exchanges`).
    Internal,
    /// Between IPUs (`externalExchanges`).
    External,
    /// With the host (`hostExchanges`).
    Host,
}

impl fmt::Display for ExchangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ExchangeKind::Internal => "exchanges",
            ExchangeKind::External => "externalExchanges",
            ExchangeKind::Host => "hostExchanges",
        })
    }
}

impl Program {
    /// The tag, as written in `type`.
    pub fn type_name(&self) -> &str {
        match self {
            Program::Sequence(_) => "Sequence",
            Program::Repeat(_) => "Repeat",
            Program::RepeatWhile(_) => "RepeatWhile",
            Program::If(_) => "If",
            Program::Switch(_) => "Switch",
            Program::OnTileExecute(_) => "OnTileExecute",
            Program::DoExchange(_) => "DoExchange",
            Program::GlobalExchange(_) => "GlobalExchange",
            Program::StreamCopy(_) => "StreamCopy",
            Program::Call(_) => "Call",
            Program::CopySharedStructure(_) => "CopySharedStructure",
            Program::Sync(_) => "Sync",
            Program::WriteUndef(_) => "WriteUndef",
            Program::Execute(_) => "Execute",
            Program::Copy(_) => "Copy",
            Program::Unknown(u) => &u.type_name,
        }
    }

    /// The program's `name`, when it has one.
    pub fn name(&self) -> Option<&str> {
        match self {
            Program::Sequence(b)
            | Program::Repeat(b)
            | Program::RepeatWhile(b)
            | Program::If(b)
            | Program::Switch(b)
            | Program::CopySharedStructure(b)
            | Program::Sync(b)
            | Program::WriteUndef(b)
            | Program::Execute(b)
            | Program::Copy(b) => b.name.as_deref(),
            Program::OnTileExecute(p) => p.name.as_deref(),
            Program::DoExchange(p) | Program::GlobalExchange(p) | Program::StreamCopy(p) => {
                p.name.as_deref()
            }
            Program::Call(p) => p.name.as_deref(),
            Program::Unknown(u) => u.fields.get("name").and_then(|v| v.as_str()),
        }
    }

    /// The sub-programs (`children`): indices into `programs`. For an unknown tag, its
    /// `children` when that is an array of indices.
    pub fn children(&self) -> Vec<u32> {
        match self {
            Program::Sequence(b)
            | Program::Repeat(b)
            | Program::RepeatWhile(b)
            | Program::If(b)
            | Program::Switch(b)
            | Program::CopySharedStructure(b)
            | Program::Sync(b)
            | Program::WriteUndef(b)
            | Program::Execute(b)
            | Program::Copy(b) => b.children.clone().unwrap_or_default(),
            Program::Unknown(u) => u
                .fields
                .get("children")
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_u64().and_then(|i| u32::try_from(i).ok()))
                        .collect()
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// The compute set an `OnTileExecute` runs.
    pub fn compute_set(&self) -> Option<u32> {
        match self {
            Program::OnTileExecute(p) => Some(p.compute_set),
            _ => None,
        }
    }

    /// The exchange an exchange program runs, and which list it indexes.
    pub fn exchange(&self) -> Option<(ExchangeKind, u32)> {
        match self {
            Program::DoExchange(p) => Some((ExchangeKind::Internal, p.exchange)),
            Program::GlobalExchange(p) => Some((ExchangeKind::External, p.exchange)),
            Program::StreamCopy(p) => Some((ExchangeKind::Host, p.exchange)),
            _ => None,
        }
    }

    /// The function a `Call` calls: an index into `functionPrograms`.
    pub fn call_target(&self) -> Option<u32> {
        match self {
            Program::Call(p) => Some(p.target),
            _ => None,
        }
    }

    /// The keys and values of the program's unknown fields (for an unknown tag, all its fields).
    pub fn extra(&self) -> &Extra {
        match self {
            Program::Sequence(b)
            | Program::Repeat(b)
            | Program::RepeatWhile(b)
            | Program::If(b)
            | Program::Switch(b)
            | Program::CopySharedStructure(b)
            | Program::Sync(b)
            | Program::WriteUndef(b)
            | Program::Execute(b)
            | Program::Copy(b) => &b.extra,
            Program::OnTileExecute(p) => &p.extra,
            Program::DoExchange(p) | Program::GlobalExchange(p) | Program::StreamCopy(p) => {
                &p.extra
            }
            Program::Call(p) => &p.extra,
            Program::Unknown(u) => &u.fields,
        }
    }
}
