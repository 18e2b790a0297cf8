//! Read, write, validate and analyse Graphcore Poplar profiles.
//!
//! Poplar, the IPU's graph library, writes two JSON files about a program: a graph profile
//! (`graph.json`: the target, the graph's vertex types and compute sets, exchanges, the flattened
//! program tree, and memory by tile, category, compute set and vertex type, with liveness) as soon
//! as the graph is compiled, and an execution profile (`execution.json`: a tagged union on
//! `profilerMode` holding hardware cycles, the program trace and a simulated timeline of steps)
//! after it ran; `engine.getProfile()` returns both as `{"graphProfile", "executionProfile"}`.
//! Every number is a double in Poplar's own model, so counts may be written `12.0` or `1.2e1`;
//! per-tile arrays have one entry per tile (1,216 per IPU), which makes large profiles hundreds
//! of megabytes. This crate reads all three shapes into typed structs named as the format names
//! them ([`GraphProfile`], [`ExecutionProfile`], [`ProfilerMode`], [`Program`], [`Step`], ...) with
//! a streaming reader that stores per-tile arrays compactly ([`Counts`]) and names the JSON path
//! of any error; keeps unknown keys and tags so that writing back loses nothing; checks a
//! profile's consistency ([`validate()`]); and works out memory, the program tree and the
//! simulated timeline ([`analysis`]).
//!
//! ```
//! use profkit_poplar::{ProfileFile, ProfilerMode, analysis, from_str, to_string, validate};
//! let text = r#"{"executionProfile": {"profilerMode": "NONE"}, "graphProfile": {"target": {
//!     "bytesPerIPU": 1277952, "bytesPerTile": 638976, "clockFrequency": 1.33e9, "numIPUs": 1.0,
//!     "numTiles": 2, "tilesPerIPU": 2, "totalMemory": 1277952, "type": "IPU", "chip": "mk2"}}}"#;
//! let file: ProfileFile = from_str(text)?;
//! let graph = file.graph().expect("a graph profile");
//! assert_eq!((graph.target.num_tiles, graph.target.extra["chip"].as_str()), (2, Some("mk2")));
//! assert_eq!(file.execution().map(|e| &e.mode), Some(&ProfilerMode::None));
//! assert!(validate(&file).iter().all(|p| p.severity == profkit_poplar::Severity::Warning));
//! assert_eq!(analysis::analyse(&file, None).shape, "combined");
//! assert_eq!(from_str::<ProfileFile>(&to_string(&file)?)?, file);
//! # Ok::<(), profkit_poplar::Error>(())
//! ```

#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod analysis;
mod counts;
mod error;
pub mod exchange;
pub mod execution;
pub mod graph;
pub mod memory;
mod number;
mod path;
mod profile;
pub mod program;
mod reader;
mod record;
mod sniff;
pub mod step;
pub mod target;
pub mod validate;
mod writer;

pub use counts::{Counts, Iter as CountsIter};
pub use error::{Error, JsonError, Location, Result};
pub use exchange::{Exchanges, ExternalExchanges, HostExchanges};
pub use execution::{ExecutionProfile, ProfilerMode, Simulation, TileCycles};
pub use graph::{ComputeSets, CycleEstimates, GraphInfo, GraphProfile, VertexTypes};
pub use memory::{
    AlwaysLive, CategoryMemory, Liveness, LivenessNode, LivenessRoots, Memory, MemoryBreakdown,
    NotAlwaysLive, RegionMemory, TileMemory,
};
pub use profile::{Profile, ProfileFile, Shape};
pub use program::{ExchangeKind, Program};
pub use reader::{
    DEFAULT_MAX_STRING_BYTES, MAX_DEPTH, ReadOptions, from_reader, from_reader_with, from_slice,
    from_str, read_file,
};
pub use record::Extra;
pub use sniff::looks_like_poplar;
pub use step::{Step, SyncType};
pub use target::{Target, TargetType};
pub use validate::{Problem, ProblemKind, Severity, validate, validate_with_graph};
pub use writer::{to_string, to_string_pretty, to_writer, to_writer_pretty, write_file};
