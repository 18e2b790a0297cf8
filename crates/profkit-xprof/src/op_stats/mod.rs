//! xprof's `OpStats`, the summary every xprof tool but the trace viewer is computed from, built
//! from XSpaces as xprof 2.24.2 builds it (`ConvertXSpaceToOpStats` on each host's preprocessed
//! space, then `CombineOpStats` across hosts).
//!
//! What is built today: the host op metrics database ([`host_op_metrics_db`]); the device op
//! metrics of TPU planes (the XLA ops of each TensorCore plane, with the ops of its SparseCore
//! planes as children: [`tensor_core_op_metrics_db`], module `tpu`; the instructions fused into
//! TPU ops as their children, from the programs' HLO protos, module `fusion`) and of GPU planes
//! ([`gpu_op_metrics_db`]: kernels that carry a framework op, and kernels of XLA programs placed
//! on their HLO ops through the programs' HLO protos, [`HloModuleMap`], with FLOPs, bytes and HBM
//! reads and writes from XLA's GPU cost model for the opcodes module `cost` covers, and their
//! expressions and source stacks, module `hlo_text`); the TPU and GPU devices' peaks
//! ([`perf_env`]), against which [`roofline`] places each op; the GPU kernels grouped with their
//! launch parameters and TensorCore use ([`kernel_stats`]); the run environment (hosts, device
//! type and count, hardware type, whether the HLO modules train); the programs' names from their
//! HLO protos (`program_id_to_name_map`); the diagnostics (the space's
//! errors and warnings); the steps database ([`steps`]: host, GPU and TPU step events made into
//! per-step breakdowns, [`event_span`]; several hosts aligned on their common steps,
//! [`step_intersection`]) with the device's precision stats, the cores' details and the complete
//! steps' HLO op metrics, and on a TPU host without an infeed op the host's input time of each
//! step taken from the TensorCores' idle time as xprof's `MayFixTpuStepAnalysis` takes it; and the
//! tf-function stats ([`tf_functions`]).
//!
//! Not built: XLA's cost model beyond the opcodes module `cost` names; the GPU `PerfEnv` of
//! architectures whose peak tables [`perf_env`] does not know; the expressions of GPU HLO ops and
//! the HLO text of fused instructions whose opcodes or attributes module `hlo_text` does not
//! print (named in [`OpStatsBuild::missing`]); the SparseCore cores' step info. Where a profile
//! has what xprof builds a missing part from and a tool would show it (an HLO op of an opcode not
//! covered, GPU peaks when HLO ops have FLOPs or bytes), [`OpStatsBuild::missing`] names it, so
//! that the tool can say what it could not reproduce.
//!
//! Memory: [`read_for`] reads the planes OpStats reads (the others skipped as their bytes pass)
//! and keeps the host threads' plane, the largest of most profiles, as its encoded bytes with an
//! index of where each event lies ([`OpStatsSpace`]): 8 bytes an event, where a decoded event
//! takes 56 and each of its stats 40. Grouping (with the threadpool regions, kept beside the bytes
//! in their place in each line), the host op metrics, the host's step events and the tf-function
//! stats read its events through the index, and what grouping gives them beside it. A plane
//! whose events preprocessing rewrites in place (the TPU runtime's run ids) is decoded.
//! [`read_seekable_for`] reads an input that can be read again (a file) and groups as it reads:
//! the host threads' plane is split by line once indexed (each line's events' bytes read again on
//! their own), each line's bytes are let go of as soon as the forest has taken the line in, and
//! read again after grouping, checked (a hash) to be what they were, so that the peak holds either
//! the plane or the grouping, not both; the commands read files so.
//!
//! ```
//! use profkit_xplane::{PlaneBuilder, XPlane, XSpace};
//! let mut plane = XPlane::default();
//! let mut b = PlaneBuilder::new(&mut plane);
//! b.set_name("/host:CPU");
//! let mut line = b.line(1);
//! line.add_event("model/dense/MatMul:MatMul").set_offset_ps(0).set_duration_ps(4_000_000);
//! line.add_event("model/dense/Relu:Relu").set_offset_ps(5_000_000).set_duration_ps(1_000_000);
//! let space = XSpace { planes: vec![plane], ..XSpace::default() };
//! let built = profkit_xprof::op_stats::build(vec![space], &["worker0"]);
//! let host = built.op_stats.host_op_metrics_db.unwrap();
//! assert_eq!(host.metrics_db[0].name, "model/dense/MatMul");
//! assert_eq!(host.total_op_time_ps, 5_000_000);
//! assert_eq!(host.total_time_ps, 6_000_000);
//! ```

mod cost;
mod device;
mod duty_cycle;
pub mod event_span;
mod fusion;
pub(crate) mod hlo;
mod hlo_text;
mod host;
pub mod kernel_stats;
mod metrics_db;
mod model;
pub mod perf_env;
mod programs;
pub mod roofline;
pub mod step_intersection;
pub mod steps;
pub mod tf_functions;
mod tpu;
mod tpu_fix;
mod tpu_steps;

use profkit_xplane::XSpace;
use profkit_xplane::constants::{
    GPU_PLANE_PREFIX, HOST_PLANE_NAME, METADATA_PLANE_NAME, TPU_PLANE_PREFIX,
};
use profkit_xplane::visitor::PlaneVisitor;
use rayon::prelude::*;

pub use cost::Cost;
pub use device::{GpuDb, gpu_op_metrics_db};
pub use hlo::{HloModule, HloModuleMap};
pub use host::host_op_metrics_db;
pub(crate) use metrics_db::{DbBuilder, combine_op};
pub use metrics_db::{IDLE, is_idle, sorted};
pub use model::ModelTracker;
pub use tpu::{add_sparse_core_op_metrics, tensor_core_op_metrics_db};

use crate::proto::{Diagnostics, HardwareType, OpStats, RunEnvironment};

/// What OpStats holds for a set of hosts, and which of its parts are not built.
#[derive(Clone, Debug, Default)]
pub struct OpStatsBuild {
    /// The combined OpStats.
    pub op_stats: OpStats,
    /// The parts of OpStats left empty although the profile has what xprof builds them from
    /// (for example "device op metrics" on a profile with GPU planes).
    pub missing: Vec<String>,
}

/// The beginnings of the [`OpStatsBuild::missing`] notes about parts other than the op metrics
/// databases (the steps database, the kernel stats database, the device's busy time), which the
/// op metrics tools (framework_op_stats, the `op_metrics` table) do not read.
const NOT_OP_METRICS: [&str; 3] = [
    "steps database",
    "GPU kernel stats",
    "device busy and idle time",
];

impl OpStatsBuild {
    /// The [`missing`](Self::missing) notes that concern the host and device op metrics
    /// databases (what framework_op_stats and the `op_metrics` table show).
    pub fn missing_op_metrics(&self) -> impl Iterator<Item = &str> {
        self.missing
            .iter()
            .map(String::as_str)
            .filter(|m| !NOT_OP_METRICS.iter().any(|p| m.starts_with(p)))
            // The fused instructions' text is the op profile's, not the op metrics'.
            .filter(|m| !m.contains("fused instructions"))
    }

    /// The [`missing`](Self::missing) notes but those of what only the op profile shows (the HLO
    /// text of fused instructions): what the pages rendered from OpStats (overview_page,
    /// input_pipeline_analyzer, pod_viewer) may lack.
    pub fn missing_pages(&self) -> impl Iterator<Item = &str> {
        self.missing
            .iter()
            .map(String::as_str)
            .filter(|m| !m.contains("fused instructions"))
    }

    /// The OpStats encoded as xprof caches it (`<run>/ALL_HOSTS.op_stats_v2.pb`).
    pub fn encode(&self) -> Vec<u8> {
        prost::Message::encode_to_vec(&self.op_stats)
    }
}

/// An encoded OpStats (xprof's cache file, or [`OpStatsBuild::encode`]'s bytes).
pub fn decode(bytes: &[u8]) -> Result<OpStats, prost::DecodeError> {
    prost::Message::decode(bytes)
}

/// Whether OpStats (or xprof's tool list) reads a plane of this name: the host threads, the
/// devices, the XLA programs' metadata.
pub fn reads_plane(name: &str) -> bool {
    name == HOST_PLANE_NAME || name == METADATA_PLANE_NAME || name.starts_with("/device:")
}

/// Which parts of OpStats to build, as xprof's `OpStatsOptions` chooses them: a tool builds the
/// parts it reads ([`Parts::for_tool`]), and the parts it leaves out cost nothing (neither their
/// passes nor, where no built part reads a plane, the plane's decoding). The parts built are
/// exactly what [`build`] builds of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parts {
    /// The host threads' op metrics database.
    pub host_op_metrics: bool,
    /// The device op metrics database (with the device's busy time and, for TPUs, the
    /// instructions fused into each op).
    pub device_op_metrics: bool,
    /// The steps database, the cores' details and the complete steps' HLO op metrics (with the
    /// device op metrics' precision stats).
    pub steps: bool,
    /// The GPU (and TPU) kernel stats database.
    pub kernel_stats: bool,
    /// The tf-function stats.
    pub tf_functions: bool,
}

impl Parts {
    /// Every part (what xprof caches as `ALL_HOSTS.op_stats_v2.pb`).
    pub const ALL: Parts = Parts {
        host_op_metrics: true,
        device_op_metrics: true,
        steps: true,
        kernel_stats: true,
        tf_functions: true,
    };

    /// The parts xprof's tool of this name shows (every part for a name this does not know). No
    /// tool shows the tf-function stats; only the cached OpStats holds them.
    pub fn for_tool(tool: &str) -> Parts {
        let none = Parts {
            host_op_metrics: false,
            device_op_metrics: false,
            steps: false,
            kernel_stats: false,
            tf_functions: false,
        };
        match tool {
            "framework_op_stats" | "tensorflow_stats" => Parts {
                host_op_metrics: true,
                device_op_metrics: true,
                kernel_stats: true,
                ..none
            },
            "kernel_stats" => Parts {
                kernel_stats: true,
                ..none
            },
            "hlo_stats" | "op_profile" => Parts {
                device_op_metrics: true,
                ..none
            },
            "roofline_model" => Parts {
                device_op_metrics: true,
                steps: true,
                ..none
            },
            "overview_page" | "input_pipeline_analyzer" | "pod_viewer" => Parts {
                tf_functions: false,
                ..Parts::ALL
            },
            _ => Parts::ALL,
        }
    }

    /// The parts the OpStats tables of the Arrow and Parquet outputs read, by table name:
    /// `op_metrics` (host and device op metrics), `hlo_ops` (device), `kernels`, `steps` (the
    /// steps and what the pages show beside them); every part for another name.
    pub fn for_table(table: &str) -> Parts {
        match table {
            "op_metrics" => Parts {
                kernel_stats: false,
                ..Parts::for_tool("framework_op_stats")
            },
            "hlo_ops" => Parts::for_tool("hlo_stats"),
            "kernels" => Parts::for_tool("kernel_stats"),
            "steps" => Parts::for_tool("overview_page"),
            _ => Parts::ALL,
        }
    }

    /// Whether building these parts groups events into steps first (xprof's preprocessing): the
    /// op metrics read each event's `is_eager` and group, the steps their groups; the kernel stats
    /// and the tf-function stats read neither.
    fn groups(self) -> bool {
        self.host_op_metrics || self.device_op_metrics || self.steps
    }

    /// Whether building these parts reads a plane of this name ([`reads_plane`], less the host
    /// threads when only the kernel stats are built: they are read from the devices).
    pub fn reads_plane(self, name: &str) -> bool {
        reads_plane(name) && (name != HOST_PLANE_NAME || self.groups() || self.tf_functions)
    }
}

impl Default for Parts {
    fn default() -> Self {
        Parts::ALL
    }
}

/// Reads an XSpace for OpStats: plane by plane, decoding only the planes [`reads_plane`] names
/// (a plane of another name is skipped as its bytes pass), so memory is what OpStats reads, not
/// the whole file's tree.
pub fn read_space<R: std::io::Read>(
    reader: R,
    options: profkit_xplane::ReadOptions,
) -> Result<XSpace, profkit_xplane::Error> {
    read_space_for(reader, options, Parts::ALL)
}

/// [`read_space`] for the given [`Parts`]: a plane none of them reads is skipped as its bytes
/// pass (the host threads, when only the kernel stats are built).
pub fn read_space_for<R: std::io::Read>(
    reader: R,
    options: profkit_xplane::ReadOptions,
    parts: Parts,
) -> Result<XSpace, profkit_xplane::Error> {
    read_with(reader, options, parts, false).map(OpStatsSpace::into_space)
}

/// [`read_space_for`], the host threads' plane decoded only when `decode_host` says so of it
/// without its events (its metadata and its lines' own fields): otherwise it stays so, and its
/// events are never held decoded. A tool that reads only some kinds of events (the memory
/// profile's allocator events) decodes a plane that names none of them for nothing.
pub fn read_space_decoding<R: std::io::Read>(
    reader: R,
    options: profkit_xplane::ReadOptions,
    parts: Parts,
    decode_host: impl FnOnce(&profkit_xplane::XPlane) -> bool,
) -> Result<XSpace, profkit_xplane::Error> {
    let read = read_with(reader, options, parts, true)?;
    let decode = match &read.host {
        Some((_, host)) => decode_host(host.shadow()),
        None => true,
    };
    if decode {
        return Ok(read.into_space());
    }
    Ok(read.space)
}

/// What [`build_for`] reads of one host's space, read by [`read_for`]: the planes OpStats reads,
/// the host threads' plane kept as its bytes with an index of its events rather than decoded
/// (about a fifth of the memory). Any `XSpace` converts into one.
#[derive(Clone, Debug, Default)]
pub struct OpStatsSpace {
    /// The planes, the host threads' plane among them as its shadow (no events) when indexed.
    space: XSpace,
    /// The host threads' plane, indexed, and its place among the planes.
    host: Option<(usize, crate::indexed::IndexedPlane)>,
    /// Where the host threads' plane's bytes start in the input, from the reader's start.
    host_offset: u64,
    /// The space's preprocessing, when it was done as it was read ([`read_seekable_for`]).
    facts: Option<crate::preprocess::SpaceFacts>,
}

impl OpStatsSpace {
    /// The space with every plane decoded (the host threads' plane decoded from its bytes); as
    /// preprocessing leaves the planes when it was done as they were read
    /// ([`read_seekable_for`]).
    pub fn into_space(self) -> XSpace {
        let OpStatsSpace {
            mut space, host, ..
        } = self;
        if let Some((index, host)) = host {
            if let Some(slot) = space.planes.get_mut(index) {
                *slot = host.to_owned_plane();
            }
        }
        space
    }

    /// The planes read (the host threads' plane without its events when indexed).
    pub fn planes(&self) -> &[profkit_xplane::XPlane] {
        &self.space.planes
    }
}

impl From<XSpace> for OpStatsSpace {
    /// The space, its host threads' plane indexed (encoded first) unless preprocessing rewrites
    /// its events in place.
    fn from(mut space: XSpace) -> Self {
        let host = space
            .planes
            .iter_mut()
            .enumerate()
            .find(|(_, p)| p.name == HOST_PLANE_NAME && !runtime_events(p))
            .map(|(index, plane)| {
                let indexed = crate::indexed::IndexedPlane::of_owned(plane);
                *plane = indexed.shadow().clone();
                (index, indexed)
            });
        OpStatsSpace {
            space,
            host,
            ..OpStatsSpace::default()
        }
    }
}

/// [`read_space_for`] keeping the host threads' plane as its bytes and an index of its events
/// (see [`OpStatsSpace`]); what the commands read for OpStats.
pub fn read_for<R: std::io::Read>(
    reader: R,
    options: profkit_xplane::ReadOptions,
    parts: Parts,
) -> Result<OpStatsSpace, profkit_xplane::Error> {
    read_with(reader, options, parts, true)
}

fn read_with<R: std::io::Read>(
    reader: R,
    options: profkit_xplane::ReadOptions,
    parts: Parts,
    index_host: bool,
) -> Result<OpStatsSpace, profkit_xplane::Error> {
    use profkit_xplane::RawSpaceItem;
    let mut space = XSpace::default();
    let mut host = None;
    let mut host_offset = 0;
    for item in profkit_xplane::XSpaceReader::new(reader, options).raw() {
        match item? {
            RawSpaceItem::Plane(bytes) => {
                let view = bytes.view()?;
                if !parts.reads_plane(view.name()) {
                    continue;
                }
                let indexable = index_host && host.is_none() && view.name() == HOST_PLANE_NAME;
                drop(view);
                let bytes = if indexable {
                    let offset = bytes.offset();
                    match crate::indexed::IndexedPlane::from_plane_bytes(bytes)? {
                        Ok(indexed) if !runtime_events(indexed.shadow()) => {
                            host_offset = offset;
                            space.planes.push(indexed.shadow().clone());
                            host = Some((space.planes.len() - 1, indexed));
                            continue;
                        }
                        // The TPU runtime's run ids are rewritten in the plane: decoded.
                        Ok(indexed) => {
                            space.planes.push(indexed.to_owned_plane());
                            continue;
                        }
                        Err(bytes) => bytes,
                    }
                } else {
                    bytes
                };
                space.planes.push(bytes.decode_parallel()?);
            }
            RawSpaceItem::Error(e) => space.errors.push(e),
            RawSpaceItem::Warning(w) => space.warnings.push(w),
            RawSpaceItem::Hostname(h) => space.hostnames.push(h),
        }
    }
    Ok(OpStatsSpace {
        space,
        host,
        host_offset,
        facts: None,
    })
}

/// [`read_for`] of an input that can be read again (a file), the space preprocessed as it is
/// read when `parts` group events: the host threads' plane is split by line, each line's bytes
/// let go of once the forest has taken it in and read again after grouping, checked to be the
/// same, so that the commands' peak does not hold both the plane and the grouping (on a 14.3 MB
/// profile, 49 MB instead of 62 MB; on a 1 GB one, 1.78 GiB instead of 2.17). A byte of the input
/// not read again (another plane's, the host plane's metadata) is not checked: nothing reads it
/// again. The OpStats built from it are the same.
pub fn read_seekable_for<R: std::io::Read + std::io::Seek>(
    input: R,
    options: profkit_xplane::ReadOptions,
    parts: Parts,
) -> Result<OpStatsSpace, profkit_xplane::Error> {
    read_seekable_for_on(input, options, parts, true)
}

/// [`read_seekable_for`], the host threads' lines grouped on the pool's threads when
/// `lines_on_pool` (as it does: sooner, on a plane of 50,000 to 4 million events, for a little
/// more memory while the lines are taken in) or one after the other (the least memory: what
/// `profkit convert --to parquet` asks, whose peak is there). The same OpStats either way.
pub fn read_seekable_for_on<R: std::io::Read + std::io::Seek>(
    mut input: R,
    options: profkit_xplane::ReadOptions,
    parts: Parts,
    lines_on_pool: bool,
) -> Result<OpStatsSpace, profkit_xplane::Error> {
    let start = input.stream_position()?;
    // A gzipped input is read decompressed: its planes' offsets are not places in it to read
    // again, so its bytes are kept.
    let mut magic = [0u8; 2];
    let peeked = std::io::Read::read(&mut input, &mut magic)?;
    let gzipped = peeked == 2 && magic == [0x1f, 0x8b];
    input.seek(std::io::SeekFrom::Start(start))?;
    let mut read = read_with(&mut input, options, parts, true)?;
    if gzipped || !parts.groups() {
        return Ok(read);
    }
    let Some((index, host)) = read.host.as_mut() else {
        return Ok(read);
    };
    let has_gpu = has_gpu_plane(&read.space);
    host.set_origin(start.saturating_add(read.host_offset));
    // Each line's bytes on their own, so that the forest's intake lets go of each line's as it
    // is done with it, not of the whole plane's after.
    host.split_lines(&mut input)?;
    let facts = crate::preprocess::preprocess_space_indexed(
        &mut read.space,
        has_gpu,
        true,
        Some((*index, host)),
        lines_on_pool,
    );
    host.restore(&mut input)?;
    host.clear_origin();
    read.facts = Some(facts);
    Ok(read)
}

/// Whether the space has a GPU plane (whose `Steps` line the step events read, so that
/// preprocessing derives it).
fn has_gpu_plane(space: &XSpace) -> bool {
    space
        .planes
        .iter()
        .any(|p| p.name.starts_with(GPU_PLANE_PREFIX))
}

/// Whether preprocessing rewrites events of this plane in place (the TPU runtime's run ids), so
/// that it is kept decoded.
fn runtime_events(plane: &profkit_xplane::XPlane) -> bool {
    crate::preprocess::has_runtime_events(plane.event_metadata.values().map(|m| m.name.as_str()))
}

/// OpStats of one host's space, preprocessed as xprof preprocesses it first. `host` is the name
/// xprof gives the host (its file's name without `.xplane.pb`).
pub fn host_op_stats(space: impl Into<OpStatsSpace>, host: &str) -> (OpStats, Vec<String>) {
    host_op_stats_for(space, host, Parts::ALL)
}

/// [`host_op_stats`] of the given [`Parts`] only (the others left empty). The device planes'
/// passes and the host plane's run on two threads of the current rayon pool where there are two.
pub fn host_op_stats_for(
    space: impl Into<OpStatsSpace>,
    host: &str,
    parts: Parts,
) -> (OpStats, Vec<String>) {
    host_op_stats_inner(space.into(), host, parts, true)
}

/// [`host_op_stats_for`], with the host threads' grouping marks kept beside their plane when
/// `marks_aside` (else written into it as stats, as the trace viewer's preprocessing does; the
/// tests compare both).
fn host_op_stats_inner(
    input: OpStatsSpace,
    host: &str,
    parts: Parts,
    marks_aside: bool,
) -> (OpStats, Vec<String>) {
    let mut input = input;
    // Preprocessed as it was read: its marks were kept aside.
    let ready = input.facts.take();
    // Read asking for the host threads' lines in turn (the least memory): so their steps too.
    let lines_on_pool = !ready.as_ref().is_some_and(|f| f.sequential_intake);
    let marks_aside = marks_aside || ready.is_some();
    // Marks written into the host threads' plane need it decoded.
    let (mut space, mut indexed) = if marks_aside {
        (input.space, input.host)
    } else {
        (input.into_space(), None)
    };
    // Grouping (for `is_eager` and the steps); the derived lines only where the step events read
    // them: the `Steps` line of GPU planes, and the groups their ungrouped events take.
    // The host threads' marks are kept beside their plane, not written into it.
    let facts = parts.groups().then(|| {
        ready.unwrap_or_else(|| {
            let has_gpu = has_gpu_plane(&space);
            crate::preprocess::preprocess_space_indexed(
                &mut space,
                has_gpu,
                marks_aside,
                indexed.as_mut().map(|(i, p)| (*i, p)),
                true,
            )
        })
    });
    let mut stats = OpStats {
        diagnostics: diagnostics(&space),
        run_environment: Some(run_environment(&space, host)),
        program_id_to_name_map: programs::program_names(&space),
        ..OpStats::default()
    };
    // The host threads' plane, indexed (a decoded one indexed now, after preprocessing).
    let (host_index, host_plane) = match indexed {
        Some((index, plane)) => (Some(index), Some(plane)),
        None => {
            let index = space.planes.iter().position(|p| p.name == HOST_PLANE_NAME);
            let plane = index
                .and_then(|i| space.planes.get(i))
                .filter(|_| parts.host_op_metrics || parts.steps || parts.tf_functions)
                .map(crate::indexed::IndexedPlane::of_owned);
            (index, plane)
        }
    };
    let host_plane = host_plane.as_ref();
    let host_marks = match (&facts, host_index, host_plane) {
        (Some(facts), Some(index), Some(plane)) if marks_aside => {
            crate::preprocess::host_marks(facts, index).map(|m| HostMarks::new(m, plane))
        }
        _ => None,
    };
    let host_marks = host_marks.as_ref();
    let host_indexed = host_plane;
    let space = &space;
    let ((device, missing), (host_db, tf_function_db)) = rayon::join(
        || {
            let (device, mut missing) = device_op_stats(space, parts);
            // The steps read the device op metrics (TPU) and add their precision stats to them.
            let mut part = OpStats {
                device_op_metrics_db: Some(device.db),
                perf_env: device.perf_env,
                kernel_stats_db: device.kernels,
                ..OpStats::default()
            };
            if parts.steps {
                steps::fill(
                    space,
                    host_indexed,
                    host_marks,
                    lines_on_pool,
                    &mut part,
                    &mut missing,
                );
            }
            ((part, device.is_training), missing)
        },
        || {
            let host_db = host_indexed
                .filter(|_| parts.host_op_metrics)
                .map(|p| host::host_op_metrics_db_marked(p, host_marks));
            let tf = host_indexed
                .filter(|_| parts.tf_functions)
                .map(tf_functions::tf_function_db_indexed);
            (host_db, tf)
        },
    );
    let (part, is_training) = device;
    if is_training {
        if let Some(env) = stats.run_environment.as_mut() {
            env.is_training = true;
        }
    }
    stats.perf_env = part.perf_env;
    stats.kernel_stats_db = part.kernel_stats_db;
    stats.device_op_metrics_db = part.device_op_metrics_db;
    stats.step_db = part.step_db;
    stats.core_id_to_details = part.core_id_to_details;
    stats.hlo_metrics_db_complete_steps_only = part.hlo_metrics_db_complete_steps_only;
    stats.host_op_metrics_db = host_db;
    stats.tf_function_db = tf_function_db;
    (stats, missing)
}

/// What grouping gave the events of the host threads' plane, kept beside it rather than written
/// into it as stats (see `preprocess::preprocess_space`): a mark per event, in line and event
/// order. A mark's value is the event's `group_id`, `step_name` or `is_eager`, in place of any the
/// event carries, as if written into the event.
pub(crate) struct HostMarks<'a> {
    marks: crate::preprocess::Marks<'a>,
    /// Where each line's events start among the plane's.
    line_starts: Vec<u32>,
}

impl<'a> HostMarks<'a> {
    fn new(marks: crate::preprocess::Marks<'a>, plane: &crate::indexed::IndexedPlane) -> Self {
        let mut line_starts = Vec::with_capacity(plane.line_count());
        let mut at = 0u32;
        for (_, events) in plane.lines() {
            line_starts.push(at);
            at = at.saturating_add(u32::try_from(events.len()).unwrap_or(u32::MAX));
        }
        HostMarks { marks, line_starts }
    }

    /// The marks of line number `index`'s events.
    pub(crate) fn line(&self, index: usize) -> crate::preprocess::Marks<'a> {
        let start = self.line_starts.get(index).copied().unwrap_or(u32::MAX);
        self.marks.starting_at(start)
    }
}

/// What the device planes give OpStats: the device op metrics, the device's peaks, the kernel
/// stats, and whether the programs train.
struct DeviceStats {
    db: crate::proto::OpMetricsDb,
    perf_env: Option<crate::proto::PerfEnv>,
    kernels: Option<crate::proto::KernelStatsDb>,
    is_training: bool,
}

/// The device side of [`host_op_stats_for`] (TPU or GPU planes), with the notes of what it does
/// not reproduce.
fn device_op_stats(space: &XSpace, parts: Parts) -> (DeviceStats, Vec<String>) {
    let mut missing = Vec::new();
    let tpu_planes: Vec<_> = space
        .planes
        .iter()
        .filter(|p| p.name.starts_with(TPU_PLANE_PREFIX))
        .collect();
    let mut device = DbBuilder::default();
    // The programs' HLO (xprof reads it for TPU op metrics, the instructions fused into ops, and
    // builds the map for GPUs since framework_op_stats asks for the kernel stats too).
    let hlo = space
        .planes
        .iter()
        .find(|p| p.name == METADATA_PLANE_NAME)
        .map(HloModuleMap::from_metadata_plane)
        .unwrap_or_default();
    let is_training = hlo.is_training();
    let mut kernels = kernel_stats::KernelReports::default();
    let perf_env;
    if let Some(first) = tpu_planes.first() {
        perf_env = Some(perf_env::tpu_perf_env(first));
        if parts.device_op_metrics {
            tpu_op_metrics(&tpu_planes, &hlo, &mut device, &mut missing);
            // The device's busy and idle time (only TPU hosts have them).
            let mut duty = duty_cycle::Combiner::default();
            let host = steps::hostname(space);
            for plane in &tpu_planes {
                let tracker = duty_cycle::plane_tracker(plane);
                match tpu_steps::core_details(plane, host) {
                    Some(details) => duty.core(&tracker, details.local_chip_id),
                    None => duty.chip(&tracker),
                }
            }
            if tpu_planes.iter().any(|p| tpu_steps::sparse_core_has_ops(p)) {
                missing.push("device busy and idle time (of the SparseCore planes)".to_owned());
            }
            device.db.idle_time_ps = duty.idle_ps();
            device.db.busy_time_ps = duty.active_ps();
            device.db.idle_time_high_confidence_ps = device.db.idle_time_ps;
            device.db.busy_time_high_confidence_ps = device.db.busy_time_ps;
        }
        // xprof looks for kernels on the TPU planes too.
        if parts.kernel_stats {
            for plane in &tpu_planes {
                kernels.merge(kernel_stats::kernel_reports(plane, &hlo));
            }
        }
    } else {
        let mut uncosted = std::collections::BTreeSet::new();
        let mut unprinted = std::collections::BTreeSet::new();
        let mut peaks_missing = false;
        // The peaks of the first GPU plane, as xprof takes them.
        let first_gpu = space
            .planes
            .iter()
            .find(|p| p.name.starts_with(GPU_PLANE_PREFIX));
        let env = first_gpu.and_then(perf_env::gpu_perf_env);
        let peaks_known = first_gpu.is_none() || env.is_some();
        perf_env = env;
        // Each GPU's op metrics and kernels on a thread of the pool, combined in plane order.
        let gpus: Vec<_> = space
            .planes
            .iter()
            .filter(|p| p.name.starts_with(GPU_PLANE_PREFIX))
            .collect();
        let per_gpu: Vec<_> = gpus
            .par_iter()
            .map(|plane| {
                let db = parts
                    .device_op_metrics
                    .then(|| gpu_op_metrics_db(plane, &hlo));
                let reports = parts
                    .kernel_stats
                    .then(|| kernel_stats::kernel_reports(plane, &hlo));
                (db, reports)
            })
            .collect();
        for (db, reports) in per_gpu {
            if let Some(gpu) = db {
                uncosted.extend(gpu.uncosted);
                unprinted.extend(gpu.unprinted);
                peaks_missing |= gpu.hlo_kernels > 0;
                device.combine(&gpu.db, true);
            }
            if let Some(reports) = reports {
                kernels.merge(reports);
            }
        }
        if !uncosted.is_empty() {
            let list: Vec<String> = uncosted.into_iter().collect();
            missing.push(format!(
                "GPU kernels of XLA programs (HLO op metrics: XLA's cost model for {})",
                list.join(", ")
            ));
        }
        if peaks_missing && !peaks_known {
            missing.push(
                "GPU kernels of XLA programs (bound_by: the GPU's peaks from its capabilities)"
                    .to_owned(),
            );
        }
        if !unprinted.is_empty() {
            let list: Vec<String> = unprinted.into_iter().collect();
            missing.push(format!(
                "GPU kernels of XLA programs (HLO op expression: XLA's printer for {})",
                list.join(", ")
            ));
        }
    }
    let device = DeviceStats {
        db: device.db,
        perf_env,
        kernels: Some(kernels.into_db()),
        is_training,
    };
    (device, missing)
}

/// The op metrics of a TPU host's TensorCore planes, with their SparseCore planes' ops as
/// children and the instructions fused into each op.
fn tpu_op_metrics(
    tpu_planes: &[&profkit_xplane::XPlane],
    hlo: &HloModuleMap,
    device: &mut DbBuilder,
    missing: &mut Vec<String>,
) {
    let mut fusion_gaps = fusion::Gaps::default();
    // SparseCore planes first: their modules' ops become children of TensorCore ops.
    let mut sparse = std::collections::HashMap::new();
    let is_sparse = |name: &str| {
        crate::preprocess::tpu::tpu_plane_has_core_id(name)
            && !crate::preprocess::tpu::is_tensor_core_plane(name)
    };
    for plane in tpu_planes.iter().filter(|p| is_sparse(&p.name)) {
        add_sparse_core_op_metrics(plane, &mut sparse);
    }
    for db in sparse.values_mut() {
        fusion::add_fused_children(db, hlo, &mut fusion_gaps);
    }
    for plane in tpu_planes.iter().filter(|p| !is_sparse(&p.name)) {
        let mut db = tensor_core_op_metrics_db(plane, &sparse);
        fusion::add_fused_children(&mut db, hlo, &mut fusion_gaps);
        device.combine(&db, true);
    }
    if fusion_gaps.over_budget {
        missing.push(format!(
            "the HLO text of fused instructions past the first {} MiB of it",
            fusion::MAX_TEXT_BYTES >> 20
        ));
    }
    if !fusion_gaps.unprinted.is_empty() {
        let opcodes: Vec<&str> = fusion_gaps.unprinted.iter().map(String::as_str).collect();
        missing.push(format!(
            "the HLO text of fused instructions of opcodes {} (their attributes, sharding, frontend attributes or constants)",
            opcodes.join(", ")
        ));
    }
}

/// `PropagateXSpaceDiagnosticsToOpStats`: the space's errors and warnings, each once.
fn diagnostics(space: &XSpace) -> Option<Diagnostics> {
    let unique = |v: &[String]| {
        let mut seen = std::collections::BTreeSet::new();
        v.iter()
            .filter(|s| seen.insert(s.as_str()))
            .cloned()
            .collect::<Vec<_>>()
    };
    Some(Diagnostics {
        errors: unique(&space.errors),
        warnings: unique(&space.warnings),
        ..Diagnostics::default()
    })
}

/// `SetRunEnvironment`: one host, one task, the device kind and count.
fn run_environment(space: &XSpace, host: &str) -> RunEnvironment {
    let mut env = RunEnvironment {
        host_count: 1,
        task_count: 1,
        ..RunEnvironment::default()
    };
    env.hostnames.insert(host.to_owned(), true);
    let gpus: Vec<_> = space
        .planes
        .iter()
        .filter(|p| p.name.starts_with(GPU_PLANE_PREFIX))
        .collect();
    let tpus: Vec<_> = space
        .planes
        .iter()
        .filter(|p| crate::preprocess::tpu::is_tensor_core_plane(&p.name))
        .collect();
    if let Some(first) = gpus.first() {
        env.device_type = gpu_model(first).unwrap_or_else(|| "GPU".to_owned());
        env.device_core_count = i32::try_from(gpus.len()).unwrap_or(i32::MAX);
        env.hardware_type = HardwareType::Gpu as i32;
    } else if let Some(first) = tpus.first() {
        let visitor = PlaneVisitor::new(first);
        if let Some(kind) = visitor
            .stat("device_type_string")
            .and_then(|s| s.value())
            .and_then(|v| v.as_str().map(str::to_owned))
        {
            env.device_type = kind;
        }
        env.device_core_count = i32::try_from(tpus.len()).unwrap_or(i32::MAX);
        env.hardware_type = HardwareType::Tpu as i32;
    } else {
        env.device_type = "CPU".to_owned();
        env.hardware_type = HardwareType::CpuOnly as i32;
    }
    env
}

/// `GpuModelName`: NVIDIA devices by the architecture their compute capability stats name, AMD
/// devices by [`amd_gpu_model`]. Other vendors get no model, so their device type stays "GPU".
fn gpu_model(plane: &profkit_xplane::XPlane) -> Option<String> {
    let visitor = PlaneVisitor::new(plane);
    let int = |name: &str| {
        visitor
            .stat(name)
            .and_then(|s| s.value())
            .and_then(|v| v.as_i64())
    };
    let vendor = visitor
        .stat("device_vendor")
        .and_then(|s| s.value())
        .and_then(|v| v.as_str().map(str::to_owned))?;
    if vendor == "AMD" {
        return Some(amd_gpu_model(
            int("compute_cap_major").unwrap_or(0),
            int("compute_cap_minor").unwrap_or(0),
        ));
    }
    if vendor != "Nvidia" {
        return None;
    }
    // The stats xprof 2.24.2 reads (checked by naming a Hopper plane, case gpu-kernel-stats).
    let major = int("compute_cap_major").unwrap_or(0);
    let minor = int("compute_cap_minor").unwrap_or(0);
    let arch = match (major, minor) {
        (2, _) => "Fermi",
        (3, _) => "Kepler",
        (5, _) => "Maxwell",
        (6, _) => "Pascal",
        (7, m) if m < 5 => "Volta",
        (7, _) => "Turing",
        (8, m) if m < 9 => "Ampere",
        (8, _) => "Ada Lovelace",
        (9, _) => "Hopper",
        (10, _) => "Blackwell",
        _ => return Some("Nvidia GPU".to_owned()),
    };
    Some(format!("Nvidia GPU ({arch})"))
}

/// An AMD GPU's model as xprof 2.24.2 names it from the plane's compute capability (found by
/// running it on each): the architecture for the two it knows by number (9.4 `gfx942`, 9.5
/// `gfx950`), else the architecture's series (9, 10, 11), else no more than the vendor.
fn amd_gpu_model(major: i64, minor: i64) -> String {
    match (major, minor) {
        (9, 4) => "AMD GPU - gfx942".to_owned(),
        (9, 5) => "AMD GPU - gfx950".to_owned(),
        (9..=11, _) => format!("AMD GPU - gfx-{major}XX series"),
        _ => "AMD GPU".to_owned(),
    }
}

/// `CombineRunEnvironment`, as far as the built parts go.
fn combine_run_environment(src: &RunEnvironment, dst: &mut RunEnvironment) {
    dst.hostnames
        .extend(src.hostnames.iter().map(|(k, v)| (k.clone(), *v)));
    dst.host_count = i32::try_from(dst.hostnames.len()).unwrap_or(i32::MAX);
    if src.device_type != "CPU" && src.device_type != "Device" {
        dst.device_type.clone_from(&src.device_type);
        dst.device_core_count = dst.device_core_count.saturating_add(src.device_core_count);
        dst.replica_count = dst.replica_count.max(src.replica_count);
        dst.num_cores_per_replica = dst.num_cores_per_replica.max(src.num_cores_per_replica);
        dst.system_topology.clone_from(&src.system_topology);
    } else if dst.device_type.is_empty() {
        dst.device_type.clone_from(&src.device_type);
    }
    if src.hardware_type != dst.hardware_type {
        dst.hardware_type = dst.hardware_type.max(src.hardware_type);
    }
    dst.task_count = dst.task_count.saturating_add(src.task_count);
    dst.host_trace_level = src.host_trace_level;
    dst.is_training = src.is_training;
}

/// OpStats of several hosts' spaces, each built by [`host_op_stats`] and combined in order as
/// xprof combines them. `hosts[i]` names space `i` (a missing name is `host<i>`).
pub fn build<S: Into<OpStatsSpace>>(spaces: Vec<S>, hosts: &[&str]) -> OpStatsBuild {
    build_for(spaces, hosts, Parts::ALL)
}

/// [`build`] of the given [`Parts`] only: what a tool reads ([`Parts::for_tool`]), the other
/// parts left empty.
pub fn build_for<S: Into<OpStatsSpace>>(
    spaces: Vec<S>,
    hosts: &[&str],
    parts: Parts,
) -> OpStatsBuild {
    let mut combined = OpStats::default();
    let mut host_db = DbBuilder::default();
    let mut device_db = DbBuilder::default();
    let mut env = RunEnvironment::default();
    let mut perf: Option<crate::proto::PerfEnv> = None;
    let mut diag = Diagnostics::default();
    let mut kernels = crate::proto::KernelStatsDb::default();
    let mut missing = Vec::new();
    let mut steps = Vec::new();
    let mut tf_function_db = crate::proto::TfFunctionDb::default();
    let mut last = None;
    let single = spaces.len() == 1;
    for (i, space) in spaces.into_iter().enumerate() {
        let name = hosts
            .get(i)
            .map_or_else(|| format!("host{i}"), |h| (*h).to_owned());
        let (stats, gaps) = host_op_stats_for(space, &name, parts);
        for gap in gaps {
            if !missing.contains(&gap) {
                missing.push(gap);
            }
        }
        if let Some(db) = &stats.host_op_metrics_db {
            host_db.combine(db, false);
        }
        if let Some(db) = &stats.device_op_metrics_db {
            device_db.combine(db, true);
        }
        if let Some(src) = &stats.run_environment {
            combine_run_environment(src, &mut env);
        }
        if single {
            // One host's OpStats is xprof's as it is, with every peak flag it read.
            perf.clone_from(&stats.perf_env);
        } else if let Some(src) = &stats.perf_env {
            perf_env::combine(src, perf.get_or_insert_with(Default::default));
        }
        if let Some(src) = &stats.kernel_stats_db {
            kernels.reports.extend(src.reports.iter().cloned());
        }
        for (id, name) in &stats.program_id_to_name_map {
            combined
                .program_id_to_name_map
                .entry(*id)
                .or_insert_with(|| name.clone());
        }
        if let Some(src) = &stats.diagnostics {
            diag.info.extend(src.info.iter().cloned());
            diag.warnings.extend(src.warnings.iter().cloned());
            diag.errors.extend(src.errors.iter().cloned());
        }
        if let Some(src) = &stats.tf_function_db {
            tf_functions::combine(src, &mut tf_function_db);
        }
        let host_id = u32::try_from(i).unwrap_or(u32::MAX);
        for (core, details) in &stats.core_id_to_details {
            combined
                .core_id_to_details
                .entry(step_intersection::global_core_id(host_id, *core))
                .or_insert_with(|| details.clone());
        }
        let device_type = stats
            .run_environment
            .as_ref()
            .map(|e| e.device_type.clone())
            .unwrap_or_default();
        steps.push((
            host_id,
            device_type,
            stats.step_db.clone().unwrap_or_default(),
        ));
        last = Some(stats);
    }
    combined.host_op_metrics_db = Some(host_db.db);
    combined.device_op_metrics_db = Some(device_db.db);
    combined.run_environment = Some(env);
    combined.perf_env = perf;
    combined.diagnostics = Some(diag);
    if let (1, Some(only)) = (steps.len(), last) {
        // xprof copies a single host's OpStats as it is.
        combined.tf_function_db = only.tf_function_db;
        combined.step_db = only.step_db;
        combined.hlo_metrics_db_complete_steps_only = only.hlo_metrics_db_complete_steps_only;
    } else {
        combined.tf_function_db = Some(tf_function_db);
        let (db, complete) = step_intersection::combine_step_dbs(&steps);
        combined.step_db = Some(db);
        combined.hlo_metrics_db_complete_steps_only = Some(complete);
    }
    kernel_stats::sort_and_keep_top(&mut kernels);
    combined.kernel_stats_db = Some(kernels);
    OpStatsBuild {
        op_stats: combined,
        missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host threads' grouping read beside their plane gives the OpStats that the plane with
    /// the grouping written into it gives, on every XSpace case of `conformance/` (partly grouped
    /// spaces, events with their own `group_id`, `step_name` and `is_eager` stats among them).
    #[test]
    fn marks_beside_the_host_plane_give_the_same_op_stats() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance");
        let mut dirs: Vec<_> = std::fs::read_dir(root.join("xplane"))
            .unwrap()
            .map(|e| e.unwrap().path().join("input.xplane.pb"))
            .filter(|p| p.exists())
            .collect();
        dirs.sort();
        for device in ["gpu", "rocm1", "tpu"] {
            dirs.push(root.join(format!("xplane-device/{device}/input.xplane.pb.gz")));
        }
        let mut checked = 0;
        for path in dirs {
            let mut bytes = std::fs::read(&path).unwrap();
            if path.extension().is_some_and(|e| e == "gz") {
                let mut out = Vec::new();
                std::io::Read::read_to_end(
                    &mut profkit_gzip::GzipReader::new(bytes.as_slice(), Default::default()),
                    &mut out,
                )
                .unwrap();
                bytes = out;
            }
            let Ok(space) = profkit_xplane::decode(bytes) else {
                continue;
            };
            let aside = host_op_stats_inner(space.clone().into(), "host", Parts::ALL, true);
            let written = host_op_stats_inner(space.into(), "host", Parts::ALL, false);
            assert_eq!(aside.1, written.1, "{}", path.display());
            assert!(
                prost::Message::encode_to_vec(&aside.0)
                    == prost::Message::encode_to_vec(&written.0),
                "{}",
                path.display()
            );
            checked += 1;
        }
        assert!(checked > 40, "{checked}");
    }
}
