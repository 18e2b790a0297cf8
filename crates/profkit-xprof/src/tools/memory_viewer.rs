//! `memory_viewer` (the Memory Viewer page): one XLA program's buffers over its lifetime, in one
//! memory space, as xprof 2.24.2 computes it from the program's HLO proto
//! (`ConvertHloProtoToPreprocessResult`): a `PreprocessResult`, printed as protobuf JSON.
//!
//! JAX and TensorFlow store each compiled program in the `/host:metadata` plane as an
//! `xla.HloProto`: the module (its instructions, with their shapes and layouts) and XLA's buffer
//! assignment: the logical buffers (one per value an instruction defines, with its size and memory
//! space, its *color*), the buffer allocations that hold them (parameters, outputs, constants,
//! thread-local and temporary ones, each with the buffers assigned to it at their offsets), and
//! the heap simulator's traces (the order in which the temporary buffers are allocated, freed and
//! shared with a buffer already live). Modules are named as xprof names them:
//! `<module name>(<program id>)` ([`modules`]).
//!
//! The rules, in the order xprof applies them:
//! - The heap simulator trace of the memory space is the one of its first temporary allocation
//!   that has one (a trace belongs to the allocation of its first event's buffer), else the trace
//!   with the most events of that space. Replaying it gives the heap size at each event (the
//!   padded size: the buffer's own; the unpadded one: its shape's bytes without the layout's
//!   tiling), the point where the heap peaks, the buffers live there, and each buffer's span. A
//!   buffer shared with a live one adds nothing until the last of them is freed; one shared with a
//!   freed buffer takes its place (and is shown in its stead).
//! - The allocations of indefinite lifetime (parameters, outputs, constants, thread-local ones)
//!   add their size to every point of the heap; in memory space 0 each also shows its largest
//!   buffer among those live at the peak.
//! - The live buffers at the peak are shown in program order and by size (libstdc++'s
//!   `std::sort`, largest first), buffers under 16 KiB together as one "small" entry, each with a
//!   color number; the indefinite allocations are listed with their buffers; the temporary
//!   allocations are drawn as blocks (each buffer's offset, size and span) whose colors follow the
//!   timeline's node numbering (a node smaller than a point in the 4096-point drawing is skipped).
//! - In memory space 1 (a TPU's VMEM), the largest scoped allocation an instruction's backend
//!   config declares.
//!
//! xprof keeps its allocations in a hash map: it lists them in the map's order, which for the
//! profiles checked is their index order; this module lists them by index. The timeline drawing
//! itself (`view_memory_allocation_timeline`, Graphviz HTML) is not reproduced; the JSON's
//! `allocationTimeline` is empty, as xprof leaves it.
//!
//! Input is bounded: a buffer shared through a cycle, an unknown id or an impossible heap is an
//! error or a note, never a hang; allocations are sized by what the proto holds, and the text an
//! output repeats from the program (a shape for every buffer shown) by [`MAX_OUTPUT_TEXT`].
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let space = profkit_xplane::read_file("host.xplane.pb", profkit_xplane::ReadOptions::default())?;
//! let spaces = [space];
//! for module in profkit_xprof::tools::memory_viewer::modules(&spaces) {
//!     println!("{}", module.name);
//! }
//! let viewer = profkit_xprof::tools::memory_viewer::memory_viewer(&spaces, "jit_f(1)", 0)?;
//! println!("{}", profkit_xprof::tools::memory_viewer::to_json(&viewer.result));
//! # Ok(()) }
//! ```

mod blocks;
mod json;
mod shape;
mod simulate;

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use profkit_xplane::XSpace;
use profkit_xplane::constants::METADATA_PLANE_NAME;

use crate::op_stats::hlo::xla::{
    BufferAllocationProto, HloInstructionProto, HloProto, LogicalBufferProto, ShapeProto,
    StackFrameIndexProto,
};
use crate::proto::{
    BufferAllocation, BufferSpan, HeapObject, LogicalBuffer, PreprocessResult, SourceInfo,
    heap_object,
};
use crate::{Error, Result};

pub use json::to_json;
use shape::note;

/// The most text (shapes, labels, names) a result may repeat from the program, in bytes: a shape
/// is printed for every buffer shown, so a program whose many buffers share one huge tuple shape
/// would otherwise make an output quadratic in its size.
pub const MAX_OUTPUT_TEXT: u64 = 256 << 20;

/// Buffers smaller than this many bytes are shown together (xprof's `kSmallBufferSize`).
pub const SMALL_BUFFER_SIZE: i64 = 16 * 1024;

/// One program of a profile, as xprof lists it for the memory viewer.
#[derive(Debug, Clone)]
pub struct Module {
    /// `<module name>(<program id>)`, the name xprof gives its HLO proto file.
    pub name: String,
    /// The program id.
    pub program_id: u64,
    /// The program as stored (its module and buffer assignment), for [`from_hlo_proto`].
    pub proto: HloProto,
}

/// The programs the spaces store (their `/host:metadata` planes' HLO protos), by name: the first
/// of a program id wins (the first space first, then in metadata id order), as does the first of
/// a name.
pub fn modules(spaces: &[XSpace]) -> Vec<Module> {
    let mut by_name: BTreeMap<String, Module> = BTreeMap::new();
    let mut programs = std::collections::HashSet::new();
    let planes = spaces.iter().flat_map(|s| &s.planes);
    for plane in planes.filter(|p| p.name == METADATA_PLANE_NAME) {
        for (program_id, proto) in crate::op_stats::hlo::hlo_protos(plane) {
            if !programs.insert(program_id) {
                continue;
            }
            let module_name = proto.hlo_module.as_ref().map_or("", |m| m.name.as_str());
            let name = format!("{module_name}({program_id})");
            by_name.entry(name.clone()).or_insert(Module {
                name,
                program_id,
                proto,
            });
        }
    }
    by_name.into_values().collect()
}

/// The memory viewer of one module and memory space, with what of it is not reproduced.
#[derive(Debug, Clone)]
pub struct MemoryViewer {
    /// The result, as xprof computes it.
    pub result: PreprocessResult,
    /// What of it is not reproduced, for a note (empty when all of it is).
    pub missing: Vec<String>,
}

/// The memory viewer of the module named `module` (as [`modules`] names it) in `memory_space`.
pub fn memory_viewer(spaces: &[XSpace], module: &str, memory_space: i64) -> Result<MemoryViewer> {
    let all = modules(spaces);
    let Some(found) = all.iter().find(|m| m.name == module) else {
        let names: Vec<&str> = all.iter().map(|m| m.name.as_str()).collect();
        return Err(Error::MemoryViewer(if names.is_empty() {
            "the profile stores no HLO module".to_owned()
        } else {
            format!("no module {module:?}; the modules: {}", names.join(", "))
        }));
    };
    from_hlo_proto(&found.proto, memory_space)
}

/// The memory viewer of one program's HLO proto in `memory_space`
/// (`ConvertHloProtoToPreprocessResult`).
pub fn from_hlo_proto(proto: &HloProto, memory_space: i64) -> Result<MemoryViewer> {
    let mut missing = Vec::new();
    let wrapper = Wrapper::new(proto, &mut missing);
    let sim = simulate::run(&wrapper, memory_space)
        .map_err(|e| Error::MemoryViewer(format!("Failed to process heap simulator trace: {e}")))?;
    let snapshot = Snapshot::new(&wrapper, &sim, memory_space, &mut missing)?;
    let mut result = PreprocessResult::default();
    generate(
        &wrapper,
        &sim,
        &snapshot,
        memory_space,
        &mut result,
        &mut missing,
    )?;
    blocks::blocks(&wrapper, &sim, &snapshot, memory_space, &mut result)?;
    Ok(MemoryViewer { result, missing })
}

/// A buffer allocation and the heap simulator trace that is its (xprof's
/// `BufferAllocationStruct`).
struct Allocation<'a> {
    proto: &'a BufferAllocationProto,
    trace: Option<usize>,
}

impl Allocation<'_> {
    fn is_indefinite(&self) -> bool {
        // Thread-local allocations are not among them in xprof 2.24.2 (its outputs leave them out
        // of the indefinite lifetimes and sizes).
        let p = self.proto;
        p.is_entry_computation_parameter || p.is_constant || p.maybe_live_out
    }

    fn category(&self) -> &'static str {
        let p = self.proto;
        if p.is_entry_computation_parameter {
            "Parameter"
        } else if p.maybe_live_out {
            "Output"
        } else if p.is_thread_local {
            "Thread-local"
        } else if p.is_constant {
            "Constant"
        } else {
            "Temporary"
        }
    }
}

/// A logical buffer with its allocation, instruction, offset and shape (xprof's
/// `LogicalBufferStruct`, without the replay's state, which [`simulate`] keeps).
struct Buffer<'a> {
    proto: &'a LogicalBufferProto,
    /// Position in [`Wrapper::allocations`].
    allocation: usize,
    instruction: &'a HloInstructionProto,
    offset: i64,
    shape_string: Rc<str>,
    unpadded: i64,
}

impl Buffer<'_> {
    fn shape_index(&self) -> &[i64] {
        self.proto
            .defined_at
            .as_ref()
            .map_or(&[][..], |l| l.shape_index.as_slice())
    }

    /// The instruction's name, with the shape index in braces when there is one.
    fn name_with_index(&self) -> String {
        let index = self.shape_index();
        if index.is_empty() {
            return self.instruction.name.clone();
        }
        let joined: Vec<String> = index.iter().map(i64::to_string).collect();
        format!("{}{{{}}}", self.instruction.name, joined.join(","))
    }

    fn op_name(&self) -> &str {
        self.instruction
            .metadata
            .as_ref()
            .map_or("", |m| m.op_name.as_str())
    }
}

/// The buffer assignment indexed (xprof's `HloProtoBufferWrapper`).
struct Wrapper<'a> {
    proto: &'a HloProto,
    allocations: Vec<Allocation<'a>>,
    /// Position in `allocations` by allocation index, the last of an index winning.
    allocation_by_index: BTreeMap<i64, usize>,
    buffers: Vec<Buffer<'a>>,
    /// Position in `buffers` by logical buffer id, the last of an id winning.
    buffer_by_id: HashMap<i64, usize>,
    /// What is left of [`MAX_OUTPUT_TEXT`].
    budget: Cell<u64>,
}

impl<'a> Wrapper<'a> {
    fn new(proto: &'a HloProto, missing: &mut Vec<String>) -> Self {
        let mut instructions: HashMap<i64, &HloInstructionProto> = HashMap::new();
        if let Some(module) = &proto.hlo_module {
            for c in &module.computations {
                for i in &c.instructions {
                    instructions.insert(i.id, i);
                }
            }
        }
        let assignment = proto.buffer_assignment.as_ref();
        let mut logical: HashMap<i64, &LogicalBufferProto> = HashMap::new();
        for b in assignment.map_or(&[][..], |a| a.logical_buffers.as_slice()) {
            logical.insert(b.id, b);
        }
        let mut wrapper = Wrapper {
            proto,
            allocations: Vec::new(),
            allocation_by_index: BTreeMap::new(),
            buffers: Vec::new(),
            buffer_by_id: HashMap::new(),
            budget: Cell::new(MAX_OUTPUT_TEXT),
        };
        // A shape's text and unpadded size, once per shape.
        let mut shapes: HashMap<*const ShapeProto, (Rc<str>, i64)> = HashMap::new();
        let mut unknown = false;
        for allocation in assignment.map_or(&[][..], |a| a.buffer_allocations.as_slice()) {
            let position = wrapper.allocations.len();
            wrapper.allocations.push(Allocation {
                proto: allocation,
                trace: None,
            });
            wrapper
                .allocation_by_index
                .insert(allocation.index, position);
            for assigned in &allocation.assigned {
                let Some(lb) = logical.get(&assigned.logical_buffer_id) else {
                    unknown = true;
                    continue;
                };
                let location = lb.defined_at.as_ref();
                let Some(instruction) = instructions.get(&location.map_or(0, |l| l.instruction_id))
                else {
                    unknown = true;
                    continue;
                };
                let index = location.map_or(&[][..], |l| l.shape_index.as_slice());
                let full = instruction.shape.as_ref();
                let shape = full.map_or(empty_shape(), |s| shape::resolve_index(s, index));
                let (shape_string, unpadded) = shapes
                    .entry(std::ptr::from_ref(shape))
                    .or_insert_with(|| {
                        (
                            Rc::from(shape::human_string(shape, missing)),
                            shape::unpadded_size(shape, missing),
                        )
                    })
                    .clone();
                wrapper.buffer_by_id.insert(lb.id, wrapper.buffers.len());
                wrapper.buffers.push(Buffer {
                    proto: lb,
                    allocation: position,
                    instruction,
                    offset: assigned.offset,
                    shape_string,
                    unpadded,
                });
            }
        }
        if unknown {
            note(
                missing,
                "buffers whose logical buffer or instruction the module lacks (left out)",
            );
        }
        // A trace belongs to the allocation of its first event's buffer (its own allocation index
        // is not trusted), the last trace of an allocation winning.
        for (i, trace) in assignment
            .map_or(&[][..], |a| a.heap_simulator_traces.as_slice())
            .iter()
            .enumerate()
        {
            let Some(first) = trace.events.first() else {
                continue;
            };
            let Some(&b) = wrapper.buffer_by_id.get(&first.buffer_id) else {
                continue;
            };
            let Some(allocation) = wrapper.allocations.get(wrapper.buffers[b].allocation) else {
                continue;
            };
            let index = allocation.proto.index;
            if let Some(&a) = wrapper.allocation_by_index.get(&index) {
                wrapper.allocations[a].trace = Some(i);
            }
        }
        wrapper
    }

    /// Spends `bytes` of the output's text budget; an error once it is spent.
    fn spend(&self, bytes: usize) -> Result<()> {
        let left = self.budget.get();
        match left.checked_sub(bytes as u64) {
            Some(rest) => {
                self.budget.set(rest);
                Ok(())
            }
            None => Err(Error::MemoryViewer(format!(
                "the output would repeat more than {MAX_OUTPUT_TEXT} bytes of the program's text \
                 (shapes and names shown for every buffer)"
            ))),
        }
    }

    fn buffer(&self, id: i64) -> Option<usize> {
        self.buffer_by_id.get(&id).copied()
    }

    /// The allocations of a memory space, in index order (xprof's hash map's order on the
    /// profiles checked).
    fn allocations_of(&self, color: i64) -> impl Iterator<Item = &Allocation<'a>> {
        self.allocation_by_index
            .values()
            .map(|&a| &self.allocations[a])
            .filter(move |a| a.proto.color == color)
    }

    fn traces(&self) -> &'a [crate::op_stats::hlo::xla::HeapSimulatorTrace] {
        self.proto
            .buffer_assignment
            .as_ref()
            .map_or(&[][..], |a| a.heap_simulator_traces.as_slice())
    }

    fn stack_frames(&self) -> Option<&'a StackFrameIndexProto> {
        self.proto.hlo_module.as_ref()?.stack_frame_index.as_ref()
    }

    /// The heap simulator trace of a memory space, if any.
    fn trace_of(&self, color: i64) -> Option<usize> {
        for allocation in self.allocations_of(color) {
            if allocation.is_indefinite() {
                continue;
            }
            if let Some(t) = allocation.trace {
                return Some(t);
            }
        }
        let mut best = None;
        let mut best_count = 0;
        for (i, trace) in self.traces().iter().enumerate() {
            let count = trace
                .events
                .iter()
                .filter(|e| {
                    self.buffer(e.buffer_id)
                        .is_some_and(|b| self.buffers[b].proto.color == color)
                })
                .count();
            if count > best_count {
                best = Some(i);
                best_count = count;
            }
        }
        best
    }

    /// The largest buffer of each indefinite allocation of a memory space.
    fn indefinite_buffers(&self, color: i64) -> Vec<usize> {
        let mut out = Vec::new();
        for allocation in self.allocations_of(color) {
            if !allocation.is_indefinite() {
                continue;
            }
            let mut best = None;
            let mut best_size = 0_u64;
            for assigned in &allocation.proto.assigned {
                let Some(b) = self.buffer(assigned.logical_buffer_id) else {
                    continue;
                };
                let size = self.buffers[b].proto.size as u64;
                if size > best_size {
                    best_size = size;
                    best = Some(b);
                }
            }
            out.extend(best);
        }
        out
    }
}

fn empty_shape() -> &'static ShapeProto {
    static EMPTY: std::sync::OnceLock<ShapeProto> = std::sync::OnceLock::new();
    EMPTY.get_or_init(ShapeProto::default)
}

fn mib(bytes: i64) -> f64 {
    bytes as f64 / f64::from(1_u32 << 20)
}

/// The source of an instruction: its metadata's file and line with the stack of its frame id
/// (xprof's `GetSourceInfo`: the file and line of the metadata when it names a file, else those
/// of the stack's first frame); none when neither names a file.
fn source_info(
    instruction: &HloInstructionProto,
    frames: Option<&StackFrameIndexProto>,
) -> Option<SourceInfo> {
    let metadata = instruction.metadata.as_ref()?;
    let stack = frames.map_or(String::new(), |f| stack_frames(f, metadata.stack_frame_id));
    if !metadata.source_file.is_empty() {
        return Some(SourceInfo {
            file_name: metadata.source_file.clone(),
            line_number: metadata.source_line,
            stack_frame: stack,
        });
    }
    let first = stack.split('\n').next().unwrap_or("");
    let mut parts = first.split(':');
    let file = parts.next()?;
    let line = parts.next()?;
    if file.is_empty() {
        return None;
    }
    Some(SourceInfo {
        file_name: file.to_owned(),
        line_number: line.parse().unwrap_or(0),
        stack_frame: stack,
    })
}

/// The stack from frame `id` (1-based) up to its outermost caller, a `file:line:column` line each
/// (`-1` for a number, empty for a file the index lacks); at most one line per frame of the index,
/// so that a cycle of parents ends.
fn stack_frames(index: &StackFrameIndexProto, mut id: i32) -> String {
    let mut out = String::new();
    let mut steps = 0;
    while id > 0 && steps < index.stack_frames.len() {
        steps += 1;
        let Some(frame) = index.stack_frames.get(id as usize - 1) else {
            break;
        };
        id = frame.parent_frame_id;
        let (mut file, mut line, mut column) = ("", -1, -1);
        let location = frame.file_location_id;
        if location > 0 {
            if let Some(l) = index.file_locations.get(location as usize - 1) {
                line = l.line;
                column = l.column;
                if l.file_name_id > 0 {
                    if let Some(f) = index.file_names.get(l.file_name_id as usize - 1) {
                        file = f;
                    }
                }
            }
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("{file}:{line}:{column}"));
    }
    out
}

/// The heap at its peak, as shown (xprof's `PeakUsageSnapshot`).
struct Snapshot {
    objects: Vec<HeapObject>,
    indefinite_bytes: i64,
    /// Color number by logical buffer id.
    colors: HashMap<i64, i32>,
}

impl Snapshot {
    fn new(
        wrapper: &Wrapper<'_>,
        sim: &simulate::Sim,
        color: i64,
        missing: &mut Vec<String>,
    ) -> Result<Self> {
        let mut s = Snapshot {
            objects: Vec::new(),
            indefinite_bytes: 0,
            colors: HashMap::new(),
        };
        let mut colorno = 0_i32;
        let mut small = 0_i64;
        let frames = wrapper.stack_frames();
        let mut add = |s: &mut Snapshot, b: &Buffer<'_>| -> Result<()> {
            let size = b.proto.size;
            if (size as u64) < SMALL_BUFFER_SIZE as u64 {
                small = small.wrapping_add(size);
                return Ok(());
            }
            s.colors.insert(b.proto.id, colorno);
            s.objects.push(heap_object(wrapper, b, colorno, frames)?);
            colorno = colorno.wrapping_add(1);
            Ok(())
        };
        for b in wrapper.indefinite_buffers(color) {
            let buffer = &wrapper.buffers[b];
            let allocation = &wrapper.allocations[buffer.allocation];
            s.indefinite_bytes = s.indefinite_bytes.wrapping_add(allocation.proto.size);
            // Only memory space 0 shows the indefinite buffers at the peak (XLA leaves them out
            // of the others).
            if color == 0 {
                add(&mut s, buffer)?;
            }
        }
        let mut complete = true;
        for id in &sim.peak_buffers {
            let display = sim.peak_display.get(id).copied().unwrap_or(*id);
            let Some(b) = wrapper.buffer(display) else {
                // xprof stops at the first buffer it does not know, small ones included.
                note(
                    missing,
                    "the heap's peak past a buffer the assignment lacks",
                );
                complete = false;
                break;
            };
            add(&mut s, &wrapper.buffers[b])?;
        }
        if complete && small != 0 {
            s.objects.push(HeapObject {
                color: Some(heap_object::Color::Numbered(colorno)),
                label: format!("small (<{SMALL_BUFFER_SIZE} bytes)"),
                logical_buffer_id: -1,
                logical_buffer_size_mib: mib(small),
                unpadded_shape_mib: 0.0,
                ..HeapObject::default()
            });
        }
        Ok(s)
    }
}

fn heap_object(
    wrapper: &Wrapper<'_>,
    b: &Buffer<'_>,
    color: i32,
    frames: Option<&StackFrameIndexProto>,
) -> Result<HeapObject> {
    let name = &b.instruction.name;
    wrapper.spend(2 * b.shape_string.len() + 2 * name.len() + 2 * b.op_name().len())?;
    Ok(HeapObject {
        color: Some(heap_object::Color::Numbered(color)),
        label: format!(
            "{}: {} # {}",
            b.instruction.name,
            b.shape_string,
            b.op_name()
        ),
        logical_buffer_id: b.proto.id as i32,
        logical_buffer_size_mib: mib(b.proto.size),
        unpadded_shape_mib: mib(b.unpadded),
        instruction_name: b.name_with_index(),
        shape_string: b.shape_string.to_string(),
        tf_op_name: b.op_name().to_owned(),
        group_name: wrapper.allocations[b.allocation].category().to_owned(),
        op_code: b.instruction.opcode.clone(),
        source_info: source_info(b.instruction, frames),
    })
}

/// The result's heap, peak, spans and allocations (xprof's `GeneratePreprocessResult`).
fn generate(
    wrapper: &Wrapper<'_>,
    sim: &simulate::Sim,
    snapshot: &Snapshot,
    color: i64,
    result: &mut PreprocessResult,
    missing: &mut Vec<String>,
) -> Result<()> {
    if let Some(module) = &wrapper.proto.hlo_module {
        result.module_name = module.name.clone();
        result.entry_computation_name = module.entry_computation_name.clone();
    }
    let objects = &snapshot.objects;
    // The objects are shown twice.
    let shown: usize = objects
        .iter()
        .map(|o| o.label.len() + o.shape_string.len() + o.instruction_name.len())
        .sum();
    wrapper.spend(shown)?;
    let mut by_size: Vec<usize> = (0..objects.len()).collect();
    profkit_events::report::std_sort(&mut by_size, &|a: &usize, b: &usize| {
        objects[*a].logical_buffer_size_mib > objects[*b].logical_buffer_size_mib
    });
    let mut to_by_size = vec![0_i32; objects.len()];
    for (position, &object) in by_size.iter().enumerate() {
        to_by_size[object] = position as i32;
    }
    result.max_heap = objects.clone();
    result.max_heap_by_size = by_size.iter().map(|&i| objects[i].clone()).collect();
    result.max_heap_to_by_size = to_by_size;
    result.by_size_to_max_heap = by_size.iter().map(|&i| i as i32).collect();

    let add = mib(snapshot.indefinite_bytes);
    result.heap_sizes = sim.heap.iter().map(|&b| mib(b) + add).collect();
    result.unpadded_heap_sizes = sim.unpadded.iter().map(|&b| mib(b) + add).collect();
    result.hlo_instruction_names = sim.names.clone();
    result.peak_heap_mib = mib(sim.peak) + add;
    result.peak_unpadded_heap_mib = mib(sim.peak_unpadded) + add;
    result.peak_heap_size_position = sim.peak_position as i32;
    for (&b, state) in sim
        .seen
        .iter()
        .filter_map(|b| Some((b, sim.state.get(*b)?)))
    {
        if let Some((start, limit)) = state.span {
            result.logical_buffer_spans.insert(
                wrapper.buffers[b].proto.id as i32,
                BufferSpan {
                    start: start as i32,
                    limit: limit as i32,
                },
            );
        }
    }

    // The allocations of the memory space: special ones summed, indefinite ones listed.
    let (mut parameters, mut non_reusable, mut live_out) = (0_i64, 0_i64, 0_i64);
    let (mut total, mut indefinite) = (0_i64, 0_i64);
    for allocation in wrapper.allocations_of(color) {
        let p = allocation.proto;
        if p.is_entry_computation_parameter {
            parameters = parameters.wrapping_add(p.size);
        }
        if !reusable(p) {
            non_reusable = non_reusable.wrapping_add(p.size);
        }
        if p.maybe_live_out {
            live_out = live_out.wrapping_add(p.size);
        }
        if !p.is_thread_local {
            total = total.wrapping_add(p.size);
        }
        if allocation.is_indefinite() {
            indefinite = indefinite.wrapping_add(p.size);
            result
                .indefinite_lifetimes
                .push(allocation_entry(wrapper, p)?);
        }
    }
    result.entry_computation_parameters_mib = mib(parameters);
    result.non_reusable_mib = mib(non_reusable);
    result.maybe_live_out_mib = mib(live_out);
    result.total_buffer_allocation_mib = mib(total);
    result.indefinite_buffer_allocation_mib = mib(indefinite);

    if color == 1 {
        if let Some((bytes, name)) = max_scoped_vmem(wrapper.proto, color, missing) {
            result.max_scoped_vmem_allocation_mib = mib(bytes);
            result.max_scoped_vmem_instruction_name = name;
        }
    }
    Ok(())
}

fn reusable(p: &BufferAllocationProto) -> bool {
    !p.is_thread_local && !p.is_tuple
}

/// An indefinite allocation as listed: its attributes and buffers, and their shape when all share
/// one.
fn allocation_entry(wrapper: &Wrapper<'_>, p: &BufferAllocationProto) -> Result<BufferAllocation> {
    let mut attributes = Vec::new();
    if p.is_entry_computation_parameter {
        attributes.push("entry computation parameter".to_owned());
    }
    if p.maybe_live_out {
        attributes.push("may-be live out".to_owned());
    }
    if reusable(p) {
        attributes.push("reusable".to_owned());
    }
    let mut logical_buffers: Vec<LogicalBuffer> = Vec::with_capacity(p.assigned.len());
    for assigned in &p.assigned {
        let mut lb = LogicalBuffer {
            id: assigned.logical_buffer_id,
            size_mib: mib(assigned.size),
            ..LogicalBuffer::default()
        };
        if let Some(b) = wrapper.buffer(assigned.logical_buffer_id) {
            let b = &wrapper.buffers[b];
            wrapper.spend(b.shape_string.len() + b.instruction.name.len())?;
            lb.hlo_name = b.instruction.name.clone();
            lb.shape_index = b.shape_index().to_vec();
            lb.shape = b.shape_string.to_string();
        }
        logical_buffers.push(lb);
    }
    let common_shape = match logical_buffers.split_first() {
        Some((first, rest)) if rest.iter().all(|b| b.shape == first.shape) => first.shape.clone(),
        _ => String::new(),
    };
    Ok(BufferAllocation {
        id: p.index,
        size_mib: mib(p.size),
        attributes,
        logical_buffers,
        common_shape,
    })
}

/// The largest scoped allocation of a memory space an instruction's backend config declares
/// (`used_scoped_memory_configs`: `memory_space` and `size`, numbers or decimal strings), with
/// the first instruction of that size.
fn max_scoped_vmem(
    proto: &HloProto,
    color: i64,
    missing: &mut Vec<String>,
) -> Option<(i64, String)> {
    let module = proto.hlo_module.as_ref()?;
    let mut best = (0_i64, String::new());
    for instruction in module.computations.iter().flat_map(|c| &c.instructions) {
        if instruction.backend_config.is_empty() {
            continue;
        }
        let Ok(config) = serde_json::from_slice::<serde_json::Value>(&instruction.backend_config)
        else {
            if !instruction.backend_config.starts_with(b"{") {
                note(missing, "backend configs that are not JSON");
            }
            continue;
        };
        let Some(entries) = config
            .get("used_scoped_memory_configs")
            .and_then(|v| v.as_array())
        else {
            continue;
        };
        for entry in entries {
            if int_of(entry, "memory_space") == color {
                let size = int_of(entry, "size");
                if size > best.0 {
                    best = (size, instruction.name.clone());
                }
            }
        }
    }
    (best.0 > 0).then_some(best)
}

fn int_of(entry: &serde_json::Value, key: &str) -> i64 {
    match entry.get(key) {
        Some(serde_json::Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_u64().map(|v| v as i64))
            .or_else(|| n.as_f64().map(|v| v as i64))
            .unwrap_or(0),
        Some(serde_json::Value::String(s)) => s.parse().unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod tests;
