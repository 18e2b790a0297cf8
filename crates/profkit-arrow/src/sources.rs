//! Every input profkit reads, as an events stream: XSpaces streamed plane by plane, the other
//! formats through profkit-convert's conversions to the XSpace (which read them whole).

use std::io::Read;

use profkit_convert::{events as events_convert, poplar as poplar_convert, xdl as xdl_convert};
use profkit_events::paddle::{ReadOptions as PaddleReadOptions, legacy, nodetree};
use profkit_poplar::{ExecutionProfile, GraphProfile};
use profkit_xplane::{ReadOptions, XSpace, XSpaceReader};

use crate::error::Result;
use crate::events::{EventBatches, HostInfo, Options, SpaceItems, space_items};

/// An input read into a space, with what its conversion noted on the way.
pub struct Prepared {
    /// The events stream.
    pub batches: EventBatches<SpaceItems>,
    /// Warnings of the conversion (events left out, unmatched pairs), for the user.
    pub warnings: Vec<String>,
}

/// An XSpace read from `reader` one plane at a time.
pub fn xspace<R: Read>(
    reader: R,
    info: HostInfo,
    options: Options,
    read_options: ReadOptions,
) -> EventBatches<XSpaceReader<R>> {
    EventBatches::new(XSpaceReader::new(reader, read_options), info, options)
}

/// A space already in memory.
pub fn space(space: XSpace, info: HostInfo, options: Options) -> EventBatches<SpaceItems> {
    EventBatches::new(space_items(space), info, options)
}

/// Chrome trace JSON (or Kineto's): read as an XSpace by profkit-convert's reader. Errors name
/// the JSON path and byte.
pub fn chrome(json: &[u8], info: HostInfo, options: Options) -> Result<Prepared> {
    chrome_reader(json, info, options)
}

/// Chrome trace JSON read from any reader, streaming (standard input, say): as [`chrome`].
pub fn chrome_reader(reader: impl Read, info: HostInfo, options: Options) -> Result<Prepared> {
    let import = profkit_chrome::read_chrome(reader).map_err(profkit_convert::Error::from)?;
    let mut warnings = import.warnings;
    for (phase, count) in &import.skipped {
        warnings.push(format!(
            "{count} events of phase {phase:?} have no place in an XSpace and are left out"
        ));
    }
    Ok(Prepared {
        batches: space(import.space, info, options),
        warnings,
    })
}

fn recording(recording: &profkit_events::Recording, info: HostInfo, options: Options) -> Prepared {
    let (xspace, warnings) = events_convert::recording_to_xspace(recording);
    Prepared {
        batches: space(xspace, info, options),
        warnings: warnings.iter().map(ToString::to_string).collect(),
    }
}

/// Paddle's legacy `Profile` protobuf, through the event model.
pub fn paddle_profile(reader: impl Read, info: HostInfo, options: Options) -> Result<Prepared> {
    paddle_profile_with(reader, info, options, PaddleReadOptions::default())
}

/// [`paddle_profile`] with Paddle's read options (its message budget).
pub fn paddle_profile_with(
    reader: impl Read,
    info: HostInfo,
    options: Options,
    paddle: PaddleReadOptions,
) -> Result<Prepared> {
    let profile = legacy::read_profile(reader, paddle)?;
    Ok(recording(&legacy::to_recording(&profile), info, options))
}

/// Paddle's node trees protobuf, through the event model.
pub fn paddle_node_trees(reader: impl Read, info: HostInfo, options: Options) -> Result<Prepared> {
    paddle_node_trees_with(reader, info, options, PaddleReadOptions::default())
}

/// [`paddle_node_trees`] with Paddle's read options (its message budget).
pub fn paddle_node_trees_with(
    reader: impl Read,
    info: HostInfo,
    options: Options,
    paddle: PaddleReadOptions,
) -> Result<Prepared> {
    let trees = nodetree::read_node_trees(reader, paddle)?;
    Ok(recording(&nodetree::to_recording(&trees), info, options))
}

/// A Poplar execution profile (and the graph profile of the same run, which gives the clock).
pub fn poplar(
    execution: Option<&ExecutionProfile>,
    graph: Option<&GraphProfile>,
    info: HostInfo,
    options: Options,
) -> Result<Prepared> {
    let xspace = poplar_convert::poplar_to_xspace(execution, graph)?;
    Ok(Prepared {
        batches: space(xspace, info, options),
        warnings: Vec::new(),
    })
}

/// XDL datasets as events (a `Steps` line per dataset, scalars as counters); their records as a
/// table of their own are [`crate::xdl::records`].
pub fn xdl(
    datasets: &[profkit_xdl::Dataset],
    info: HostInfo,
    options: Options,
) -> Result<Prepared> {
    let xspace = xdl_convert::datasets_to_xspace(datasets, profkit_xdl::ReadOptions::default())?;
    Ok(Prepared {
        batches: space(xspace, info, options),
        warnings: Vec::new(),
    })
}
