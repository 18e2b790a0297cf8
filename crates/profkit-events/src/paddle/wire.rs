//! The schemas of Paddle's two profile files, for the protobuf wire walk of `profkit-wire`.
//!
//! prost decodes; when it refuses an input, [`locate`] walks the same bytes with the schema to
//! say where the encoding breaks: the byte offset and the path down to the repeated element
//! (`NodeTreesProto.thread_trees[0].host_nodes[12].host_trace_event.name`). [`TopLevel`] reads a
//! message's top-level fields one at a time from any `Read`, for the streaming readers.

use std::io::Read;

use profkit_wire::{
    END_GROUP, FIXED32, FaultError, Kind, LEN, MAX_FIELD_NUMBER, Problem, START_GROUP, Schema,
    VARINT, WireReader, read_varint, split_tag,
};

use profkit_error::OverLimit;

use crate::error::{Error, Result};

/// Groups in unknown fields may nest; deeper than this is refused (prost's recursion limit).
pub(crate) const MAX_GROUP_DEPTH: u32 = 100;

profkit_wire::schema! {
    /// The messages of both schemas.
    pub(crate) enum Msg {
        Profile {
            1 events: [Event], 2 start_ns: varint, 3 end_ns: varint, 4 mem_events: [MemEvent],
        }
        Event {
            1 name: string, 2 start_ns: varint, 3 end_ns: varint, 5 device_id: varint,
            6 sub_device_id: varint, 7 memcopy: MemCopy, 8 type: varint, 9 detail_info: string,
        }
        MemCopy { 1 bytes: varint }
        MemEvent {
            1 start_ns: varint, 2 end_ns: varint, 3 bytes: varint, 4 place: varint,
            5 thread_id: varint, 6 device_id: varint, 7 alloc_in: string, 8 free_in: string,
        }
        NodeTrees {
            1 version: string, 2 span_index: varint, 3 thread_trees: [ThreadTree],
            4 extra_info: [ExtraInfo], 5 device_property: [DeviceProperty],
        }
        ThreadTree { 1 thread_id: varint, 2 host_nodes: [HostNode] }
        HostNode {
            1 id: varint, 2 parentid: varint, 3 host_trace_event: HostEvent,
            4 runtime_nodes: [RuntimeNode], 5 mem_nodes: [MemNode], 6 op_supplement_nodes: [OpNode],
        }
        HostEvent {
            1 name: string, 2 type: varint, 3 start_ns: varint, 4 end_ns: varint,
            5 process_id: varint, 6 thread_id: varint,
        }
        RuntimeNode { 1 runtime_trace_event: RuntimeEvent, 2 device_nodes: [DeviceNode] }
        RuntimeEvent {
            1 name: string, 2 start_ns: varint, 3 end_ns: varint, 4 process_id: varint,
            5 thread_id: varint, 6 correlation_id: varint, 7 callback_id: varint,
        }
        DeviceNode { 1 device_event: DeviceEvent }
        DeviceEvent {
            1 name: string, 2 type: varint, 3 start_ns: varint, 4 end_ns: varint,
            5 device_id: varint, 6 context_id: varint, 7 stream_id: varint,
            8 correlation_id: varint, 9 kernel_info: KernelInfo, 10 memcpy_info: MemcpyInfo,
            11 memset_info: MemsetInfo,
        }
        KernelInfo {
            1 block_x: varint, 2 block_y: varint, 3 block_z: varint, 4 grid_x: varint,
            5 grid_y: varint, 6 grid_z: varint, 7 dynamic_shared_memory: varint,
            8 static_shared_memory: varint, 9 registers_per_thread: varint,
            10 local_memory_per_thread: varint, 11 local_memory_total: varint, 12 queued: varint,
            13 submitted: varint, 14 completed: varint, 15 blocks_per_sm: fixed32,
            16 warps_per_sm: fixed32, 17 occupancy: fixed32,
        }
        MemcpyInfo {
            1 num_bytes: varint, 2 copy_kind: string, 3 src_kind: string, 4 dst_kind: string,
        }
        MemsetInfo { 1 num_bytes: varint, 2 memory_kind: string, 3 value: varint }
        MemNode { 1 mem_event: MemTraceEvent }
        MemTraceEvent {
            1 timestamp_ns: varint, 2 type: varint, 3 addr: varint, 4 process_id: varint,
            5 thread_id: varint, 6 increase_bytes: varint, 7 place: string,
            8 current_allocated: varint, 9 current_reserved: varint, 10 peak_allocated: varint,
            11 peak_reserved: varint,
        }
        OpNode { 1 op_supplement_event: OpEvent }
        OpEvent {
            1 timestamp_ns: varint, 2 op_type: string, 3 process_id: varint, 4 thread_id: varint,
            5 input_shapes: InputShapes, 6 dtypes: Dtypes, 7 callstack: string, 8 op_id: varint,
        }
        InputShapes { 1 key: [string], 2 shape_vecs: [ShapeVector] }
        ShapeVector { 1 shapes: [Shape] }
        Shape { 1 size: [varints] }
        Dtypes { 1 key: [string], 2 dtype_vecs: [DtypeVector] }
        DtypeVector { 1 dtype: [string] }
        ExtraInfo { 1 key: string, 2 value: string }
        // Its name, and its id and numbers (memory, compute capability, limits) under one name.
        DeviceProperty { 2 name: string, (1 | 3..=14) "<scalar>": varint }
    }
    impl {
        const MAX_GROUP_DEPTH: u32 = MAX_GROUP_DEPTH;
    }
}

profkit_wire::fault_error!(Error);

/// Decodes `bytes` as `M` (the message `msg`) with prost; a refusal becomes an error with the
/// offset and path the walk finds (or prost's own reason, at `base`, if the walk finds nothing
/// wrong, as for groups nested past prost's recursion limit).
pub(crate) fn decode<M: prost::Message + Default>(
    msg: Msg,
    bytes: &[u8],
    base: u64,
    open_end: bool,
    path: &str,
) -> Result<M> {
    profkit_wire::decode(msg, bytes, base, open_end, path)
}

/// One top-level field read by [`TopLevel`].
#[derive(Debug)]
pub(crate) enum Field {
    /// A varint field.
    Varint(u64),
    /// A length-delimited field: its bytes, and the offset where they start.
    Bytes(Vec<u8>, u64),
}

/// Reads the top-level fields of a message from a stream, one at a time. Length-delimited fields
/// are checked against a limit before they are read, and their buffer grows with the bytes that
/// arrive. Fields of unknown numbers (and 64- and 32-bit fields) are skipped.
pub(crate) struct TopLevel<R> {
    input: WireReader<R, Error>,
    limit: u64,
    msg: Msg,
    name: &'static str,
    /// Elements seen per field number (for paths), up to 15.
    counts: [u64; 16],
    done: bool,
}

impl<R: Read> TopLevel<R> {
    pub(crate) fn new(reader: R, limit: u64, msg: Msg, name: &'static str) -> Self {
        TopLevel {
            input: WireReader::new(reader, Error::from_fault),
            limit,
            msg,
            name,
            counts: [0; 16],
            done: false,
        }
    }

    /// Bytes consumed so far.
    pub(crate) fn offset(&self) -> u64 {
        self.input.offset()
    }

    /// Skips the rest of an unknown group for field `number`, inside `depth` others; everything
    /// in it is named `path`.
    fn skip_group(&mut self, number: u64, path: &str, depth: u32) -> Result<()> {
        if depth >= MAX_GROUP_DEPTH {
            let at = self.input.offset();
            return Err(self.input.fault(at, path, Problem::GroupsTooDeep));
        }
        loop {
            let at = self.input.offset();
            let (inner, wire_type) = split_tag(self.input.varint(path)?);
            if inner == 0 || inner > MAX_FIELD_NUMBER {
                return Err(self
                    .input
                    .fault(at, path, Problem::InvalidFieldNumber(inner)));
            }
            if self.input.skip_value(wire_type, path)? {
                continue;
            }
            let problem = match wire_type {
                START_GROUP => {
                    self.skip_group(inner, path, depth + 1)?;
                    continue;
                }
                END_GROUP if inner == number => return Ok(()),
                END_GROUP => Problem::EndGroupMismatch,
                other => Problem::InvalidWireType(other),
            };
            return Err(self.input.fault(at, path, problem));
        }
    }

    /// The next known top-level field: its number, its path (`Profile.events[3]`) and value.
    /// `None` at the end of the input. After an error it returns `None`.
    pub(crate) fn next_field(&mut self) -> Option<Result<(u64, String, Field)>> {
        if self.done {
            return None;
        }
        let result = self.read_field().transpose();
        if !matches!(result, Some(Ok(_))) {
            self.done = true;
        }
        result
    }

    fn read_field(&mut self) -> Result<Option<(u64, String, Field)>> {
        loop {
            let tag_at = self.input.offset();
            let Some(tag) = self.input.tag(self.name)? else {
                return Ok(None);
            };
            let (number, wire_type) = split_tag(tag);
            if number == 0 || number > MAX_FIELD_NUMBER {
                let problem = Problem::InvalidFieldNumber(number);
                return Err(self.input.fault(tag_at, self.name, problem));
            }
            let Some(field) = self.msg.field(number) else {
                let path = format!("{}.<unknown field {number}>", self.name);
                if self.input.skip_value(wire_type, &path)? {
                    continue;
                }
                let problem = match wire_type {
                    START_GROUP => {
                        self.skip_group(number, &path, 0)?;
                        continue;
                    }
                    END_GROUP => Problem::EndGroupWithoutStart,
                    other => Problem::InvalidWireType(other),
                };
                return Err(self.input.fault(tag_at, &path, problem));
            };
            let path = if field.repeated {
                let index = self.counts.get(number as usize).copied().unwrap_or(0);
                if let Some(c) = self.counts.get_mut(number as usize) {
                    *c += 1;
                }
                format!("{}.{}[{index}]", self.name, field.name)
            } else {
                format!("{}.{}", self.name, field.name)
            };
            let expected = field.kind.wire_type(wire_type);
            if wire_type != expected {
                let problem = Problem::WrongWireType {
                    found: wire_type,
                    expected,
                };
                return Err(self.input.fault(tag_at, &path, problem));
            }
            if wire_type == VARINT {
                let value = self.input.varint(&path)?;
                return Ok(Some((number, path, Field::Varint(value))));
            }
            let len = self.input.varint(&path)?;
            let start = self.input.offset();
            OverLimit::check(&path, start, len, self.limit).map_err(Error::TooLarge)?;
            let body = self.input.body(len, &path)?;
            if let Kind::Str = field.kind
                && let Err(e) = std::str::from_utf8(&body)
            {
                let at = start + e.valid_up_to() as u64;
                return Err(self.input.fault(at, &path, Problem::InvalidUtf8));
            }
            return Ok(Some((number, path, Field::Bytes(body, start))));
        }
    }
}

/// Whether every complete top-level field in `prefix` matches `msg`'s numbers and wire types,
/// with `first` deciding about the first field (number, wire type, body within the prefix).
pub(crate) fn top_fields_match(
    prefix: &[u8],
    msg: Msg,
    first: impl Fn(u64, u8, &[u8]) -> bool,
) -> bool {
    let mut pos = 0usize;
    let mut fields = 0;
    while pos < prefix.len() {
        let Ok(tag) = read_varint(prefix, &mut pos) else {
            return fields > 0;
        };
        let (number, wire_type) = split_tag(tag);
        let Some(field) = msg.field(number) else {
            return false;
        };
        if wire_type != field.kind.wire_type(wire_type) {
            return false;
        }
        let Ok(value) = read_varint(prefix, &mut pos) else {
            return fields > 0;
        };
        let body = if wire_type == LEN {
            let end = usize::try_from(value)
                .ok()
                .and_then(|l| pos.checked_add(l))
                .unwrap_or(usize::MAX);
            let body = prefix.get(pos..end.min(prefix.len())).unwrap_or_default();
            pos = end;
            body
        } else {
            &[][..]
        };
        if fields == 0 && !first(number, wire_type, body) {
            return false;
        }
        fields += 1;
    }
    fields > 0
}

/// Whether every complete field of `body` (the start of an encoded `msg`, possibly cut) has a
/// number and wire type of `msg`, and there is at least one.
pub(crate) fn fields_match(body: &[u8], msg: Msg) -> bool {
    let mut pos = 0usize;
    let mut fields = 0;
    while pos < body.len() {
        let Ok(tag) = read_varint(body, &mut pos) else {
            break;
        };
        let (number, wire_type) = split_tag(tag);
        let Some(field) = msg.field(number) else {
            return false;
        };
        if wire_type != field.kind.wire_type(wire_type) {
            return false;
        }
        fields += 1;
        let skip = match wire_type {
            VARINT => read_varint(body, &mut pos).map(|_| 0),
            FIXED32 => Ok(4),
            _ => read_varint(body, &mut pos),
        };
        let Ok(skip) = skip else { break };
        match usize::try_from(skip).ok().and_then(|s| pos.checked_add(s)) {
            Some(next) => pos = next,
            None => break,
        }
    }
    fields > 0
}
