//! The protobuf wire format of Paddle's two profile files, walked with their schemas.
//!
//! prost decodes; when it refuses an input, [`locate`] walks the same bytes with the schema to
//! say where the encoding breaks: the byte offset and the path down to the repeated element
//! (`NodeTreesProto.thread_trees[0].host_nodes[12].host_trace_event.name`). The walk allocates
//! nothing sized by the input and recurses only as deep as the schema, plus a bounded depth for
//! groups in unknown fields. [`TopLevel`] reads a message's top-level fields one at a time from
//! any `Read`, for the streaming readers.

use std::io::{BufRead, BufReader, Read};

use crate::error::{Error, Result};

/// Groups in unknown fields may nest; deeper than this is refused (prost's recursion limit).
pub(crate) const MAX_GROUP_DEPTH: u32 = 100;

pub(crate) const VARINT: u8 = 0;
pub(crate) const FIXED64: u8 = 1;
pub(crate) const LEN: u8 = 2;
pub(crate) const START_GROUP: u8 = 3;
pub(crate) const END_GROUP: u8 = 4;
pub(crate) const FIXED32: u8 = 5;

fn wire_type_name(wire_type: u8) -> &'static str {
    match wire_type {
        VARINT => "varint",
        FIXED64 => "64-bit",
        LEN => "length-delimited",
        START_GROUP => "start-group",
        END_GROUP => "end-group",
        FIXED32 => "32-bit",
        _ => "invalid",
    }
}

/// The messages of both schemas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Msg {
    Profile,
    Event,
    MemCopy,
    MemEvent,
    NodeTrees,
    ThreadTree,
    HostNode,
    HostEvent,
    RuntimeNode,
    RuntimeEvent,
    DeviceNode,
    DeviceEvent,
    KernelInfo,
    MemcpyInfo,
    MemsetInfo,
    MemNode,
    MemTraceEvent,
    OpNode,
    OpEvent,
    InputShapes,
    ShapeVector,
    Shape,
    Dtypes,
    DtypeVector,
    ExtraInfo,
    DeviceProperty,
}

#[derive(Clone, Copy)]
enum Kind {
    Varint,
    Fixed32,
    Str,
    /// A repeated integer, packed or one varint per element.
    Varints,
    Msg(Msg),
}

impl Msg {
    /// The field's name, kind and whether it repeats; `None` for a field the schema lacks.
    fn field(self, number: u64) -> Option<(&'static str, Kind, bool)> {
        use Kind::{Fixed32 as F32, Str, Varint as V};
        let m = Kind::Msg;
        Some(match (self, number) {
            (Msg::Profile, 1) => ("events", m(Msg::Event), true),
            (Msg::Profile, 2) => ("start_ns", V, false),
            (Msg::Profile, 3) => ("end_ns", V, false),
            (Msg::Profile, 4) => ("mem_events", m(Msg::MemEvent), true),
            (Msg::Event, 1) => ("name", Str, false),
            (Msg::Event, 2) => ("start_ns", V, false),
            (Msg::Event, 3) => ("end_ns", V, false),
            (Msg::Event, 5) => ("device_id", V, false),
            (Msg::Event, 6) => ("sub_device_id", V, false),
            (Msg::Event, 7) => ("memcopy", m(Msg::MemCopy), false),
            (Msg::Event, 8) => ("type", V, false),
            (Msg::Event, 9) => ("detail_info", Str, false),
            (Msg::MemCopy, 1) => ("bytes", V, false),
            (Msg::MemEvent, 1) => ("start_ns", V, false),
            (Msg::MemEvent, 2) => ("end_ns", V, false),
            (Msg::MemEvent, 3) => ("bytes", V, false),
            (Msg::MemEvent, 4) => ("place", V, false),
            (Msg::MemEvent, 5) => ("thread_id", V, false),
            (Msg::MemEvent, 6) => ("device_id", V, false),
            (Msg::MemEvent, 7) => ("alloc_in", Str, false),
            (Msg::MemEvent, 8) => ("free_in", Str, false),
            (Msg::NodeTrees, 1) => ("version", Str, false),
            (Msg::NodeTrees, 2) => ("span_index", V, false),
            (Msg::NodeTrees, 3) => ("thread_trees", m(Msg::ThreadTree), true),
            (Msg::NodeTrees, 4) => ("extra_info", m(Msg::ExtraInfo), true),
            (Msg::NodeTrees, 5) => ("device_property", m(Msg::DeviceProperty), true),
            (Msg::ThreadTree, 1) => ("thread_id", V, false),
            (Msg::ThreadTree, 2) => ("host_nodes", m(Msg::HostNode), true),
            (Msg::HostNode, 1) => ("id", V, false),
            (Msg::HostNode, 2) => ("parentid", V, false),
            (Msg::HostNode, 3) => ("host_trace_event", m(Msg::HostEvent), false),
            (Msg::HostNode, 4) => ("runtime_nodes", m(Msg::RuntimeNode), true),
            (Msg::HostNode, 5) => ("mem_nodes", m(Msg::MemNode), true),
            (Msg::HostNode, 6) => ("op_supplement_nodes", m(Msg::OpNode), true),
            (Msg::HostEvent, 1) => ("name", Str, false),
            (Msg::HostEvent, 2) => ("type", V, false),
            (Msg::HostEvent, 3) => ("start_ns", V, false),
            (Msg::HostEvent, 4) => ("end_ns", V, false),
            (Msg::HostEvent, 5) => ("process_id", V, false),
            (Msg::HostEvent, 6) => ("thread_id", V, false),
            (Msg::RuntimeNode, 1) => ("runtime_trace_event", m(Msg::RuntimeEvent), false),
            (Msg::RuntimeNode, 2) => ("device_nodes", m(Msg::DeviceNode), true),
            (Msg::RuntimeEvent, 1) => ("name", Str, false),
            (Msg::RuntimeEvent, 2) => ("start_ns", V, false),
            (Msg::RuntimeEvent, 3) => ("end_ns", V, false),
            (Msg::RuntimeEvent, 4) => ("process_id", V, false),
            (Msg::RuntimeEvent, 5) => ("thread_id", V, false),
            (Msg::RuntimeEvent, 6) => ("correlation_id", V, false),
            (Msg::RuntimeEvent, 7) => ("callback_id", V, false),
            (Msg::DeviceNode, 1) => ("device_event", m(Msg::DeviceEvent), false),
            (Msg::DeviceEvent, 1) => ("name", Str, false),
            (Msg::DeviceEvent, 2) => ("type", V, false),
            (Msg::DeviceEvent, 3) => ("start_ns", V, false),
            (Msg::DeviceEvent, 4) => ("end_ns", V, false),
            (Msg::DeviceEvent, 5) => ("device_id", V, false),
            (Msg::DeviceEvent, 6) => ("context_id", V, false),
            (Msg::DeviceEvent, 7) => ("stream_id", V, false),
            (Msg::DeviceEvent, 8) => ("correlation_id", V, false),
            (Msg::DeviceEvent, 9) => ("kernel_info", m(Msg::KernelInfo), false),
            (Msg::DeviceEvent, 10) => ("memcpy_info", m(Msg::MemcpyInfo), false),
            (Msg::DeviceEvent, 11) => ("memset_info", m(Msg::MemsetInfo), false),
            (Msg::KernelInfo, 1) => ("block_x", V, false),
            (Msg::KernelInfo, 2) => ("block_y", V, false),
            (Msg::KernelInfo, 3) => ("block_z", V, false),
            (Msg::KernelInfo, 4) => ("grid_x", V, false),
            (Msg::KernelInfo, 5) => ("grid_y", V, false),
            (Msg::KernelInfo, 6) => ("grid_z", V, false),
            (Msg::KernelInfo, 7) => ("dynamic_shared_memory", V, false),
            (Msg::KernelInfo, 8) => ("static_shared_memory", V, false),
            (Msg::KernelInfo, 9) => ("registers_per_thread", V, false),
            (Msg::KernelInfo, 10) => ("local_memory_per_thread", V, false),
            (Msg::KernelInfo, 11) => ("local_memory_total", V, false),
            (Msg::KernelInfo, 12) => ("queued", V, false),
            (Msg::KernelInfo, 13) => ("submitted", V, false),
            (Msg::KernelInfo, 14) => ("completed", V, false),
            (Msg::KernelInfo, 15) => ("blocks_per_sm", F32, false),
            (Msg::KernelInfo, 16) => ("warps_per_sm", F32, false),
            (Msg::KernelInfo, 17) => ("occupancy", F32, false),
            (Msg::MemcpyInfo, 1) => ("num_bytes", V, false),
            (Msg::MemcpyInfo, 2) => ("copy_kind", Str, false),
            (Msg::MemcpyInfo, 3) => ("src_kind", Str, false),
            (Msg::MemcpyInfo, 4) => ("dst_kind", Str, false),
            (Msg::MemsetInfo, 1) => ("num_bytes", V, false),
            (Msg::MemsetInfo, 2) => ("memory_kind", Str, false),
            (Msg::MemsetInfo, 3) => ("value", V, false),
            (Msg::MemNode, 1) => ("mem_event", m(Msg::MemTraceEvent), false),
            (Msg::MemTraceEvent, 1) => ("timestamp_ns", V, false),
            (Msg::MemTraceEvent, 2) => ("type", V, false),
            (Msg::MemTraceEvent, 3) => ("addr", V, false),
            (Msg::MemTraceEvent, 4) => ("process_id", V, false),
            (Msg::MemTraceEvent, 5) => ("thread_id", V, false),
            (Msg::MemTraceEvent, 6) => ("increase_bytes", V, false),
            (Msg::MemTraceEvent, 7) => ("place", Str, false),
            (Msg::MemTraceEvent, 8) => ("current_allocated", V, false),
            (Msg::MemTraceEvent, 9) => ("current_reserved", V, false),
            (Msg::MemTraceEvent, 10) => ("peak_allocated", V, false),
            (Msg::MemTraceEvent, 11) => ("peak_reserved", V, false),
            (Msg::OpNode, 1) => ("op_supplement_event", m(Msg::OpEvent), false),
            (Msg::OpEvent, 1) => ("timestamp_ns", V, false),
            (Msg::OpEvent, 2) => ("op_type", Str, false),
            (Msg::OpEvent, 3) => ("process_id", V, false),
            (Msg::OpEvent, 4) => ("thread_id", V, false),
            (Msg::OpEvent, 5) => ("input_shapes", m(Msg::InputShapes), false),
            (Msg::OpEvent, 6) => ("dtypes", m(Msg::Dtypes), false),
            (Msg::OpEvent, 7) => ("callstack", Str, false),
            (Msg::OpEvent, 8) => ("op_id", V, false),
            (Msg::InputShapes, 1) | (Msg::Dtypes, 1) => ("key", Str, true),
            (Msg::InputShapes, 2) => ("shape_vecs", m(Msg::ShapeVector), true),
            (Msg::ShapeVector, 1) => ("shapes", m(Msg::Shape), true),
            (Msg::Shape, 1) => ("size", Kind::Varints, true),
            (Msg::Dtypes, 2) => ("dtype_vecs", m(Msg::DtypeVector), true),
            (Msg::DtypeVector, 1) => ("dtype", Str, true),
            (Msg::ExtraInfo, 1) => ("key", Str, false),
            (Msg::ExtraInfo, 2) => ("value", Str, false),
            (Msg::DeviceProperty, 2) => ("name", Str, false),
            (Msg::DeviceProperty, 1 | 3..=14) => ("<scalar>", V, false),
            _ => return None,
        })
    }
}

/// Reads a varint at `pos`; on failure says why and whether the input simply ended.
pub(crate) fn read_varint(buf: &[u8], pos: &mut usize) -> Result<u64, (&'static str, bool)> {
    let mut value: u64 = 0;
    for i in 0..10u32 {
        let Some(&byte) = buf.get(*pos) else {
            return Err(("input ends inside a varint", true));
        };
        *pos += 1;
        if i == 9 && byte > 1 {
            return Err(("varint longer than 64 bits", false));
        }
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(("varint longer than 10 bytes", false))
}

/// Where the walk found the first problem.
#[derive(Debug)]
pub(crate) struct Fault {
    offset: u64,
    path: String,
    reason: String,
    /// The input ended inside a field that needs this many more bytes.
    truncated_by: Option<u64>,
}

impl Fault {
    pub(crate) fn into_error(self) -> Error {
        match self.truncated_by {
            Some(needed) => Error::Truncated {
                offset: self.offset,
                path: self.path,
                needed,
            },
            None => Error::Malformed {
                offset: self.offset,
                path: self.path,
                reason: self.reason,
            },
        }
    }
}

struct Walker<'a> {
    buf: &'a [u8],
    base: u64,
}

impl Walker<'_> {
    fn fault(&self, pos: usize, path: &str, reason: impl Into<String>) -> Fault {
        Fault {
            offset: self.base + pos as u64,
            path: path.to_owned(),
            reason: reason.into(),
            truncated_by: None,
        }
    }

    /// A field of `needed` bytes starts at `pos` but its message ends at `end`: the input was cut
    /// if that message ends with the input (`open`), corrupt otherwise.
    fn short(&self, pos: usize, end: usize, open: bool, path: &str, needed: u64) -> Fault {
        if open {
            Fault {
                offset: self.base + end as u64,
                path: path.to_owned(),
                reason: "input ends inside this field".into(),
                truncated_by: Some(needed.saturating_sub(end.saturating_sub(pos) as u64).max(1)),
            }
        } else {
            self.fault(
                pos,
                path,
                format!("field of {needed} bytes runs past the end of the enclosing message"),
            )
        }
    }

    fn varint(&self, pos: &mut usize, end: usize, open: bool, path: &str) -> Result<u64, Fault> {
        let start = *pos;
        let within = self.buf.get(..end).unwrap_or(self.buf);
        read_varint(within, pos).map_err(|(reason, ended)| match (ended, open) {
            (false, _) => self.fault(start, path, reason),
            (true, true) => self.short(end, end, true, path, 1),
            (true, false) => self.fault(
                start,
                path,
                "varint runs past the end of the enclosing message",
            ),
        })
    }

    fn message(
        &self,
        msg: Msg,
        start: usize,
        end: usize,
        open: bool,
        path: &str,
    ) -> Result<(), Fault> {
        let mut pos = start;
        let mut counts: [u32; 18] = [0; 18];
        while pos < end {
            let tag_pos = pos;
            let tag = self.varint(&mut pos, end, open, path)?;
            let (number, wire_type) = (tag >> 3, (tag & 7) as u8);
            if number == 0 || number >= 1 << 29 {
                return Err(self.fault(tag_pos, path, format!("invalid field number {number}")));
            }
            let Some((name, kind, repeated)) = msg.field(number) else {
                self.skip(wire_type, number, &mut pos, end, open, path, tag_pos, 0)?;
                continue;
            };
            let field_path = if repeated {
                let slot = counts.get_mut(number as usize).map(|c| {
                    let index = *c;
                    *c = c.saturating_add(1);
                    index
                });
                format!("{path}.{name}[{}]", slot.unwrap_or(0))
            } else {
                format!("{path}.{name}")
            };
            let expected = match kind {
                Kind::Varint => VARINT,
                Kind::Fixed32 => FIXED32,
                Kind::Varints if wire_type == VARINT => VARINT,
                Kind::Str | Kind::Varints | Kind::Msg(_) => LEN,
            };
            if wire_type != expected {
                return Err(self.fault(
                    tag_pos,
                    &field_path,
                    format!(
                        "wire type {wire_type} ({}), expected {expected} ({})",
                        wire_type_name(wire_type),
                        wire_type_name(expected)
                    ),
                ));
            }
            match wire_type {
                VARINT => {
                    self.varint(&mut pos, end, open, &field_path)?;
                }
                FIXED32 => {
                    if end.saturating_sub(pos) < 4 {
                        return Err(self.short(pos, end, open, &field_path, 4));
                    }
                    pos += 4;
                }
                _ => {
                    let len = self.varint(&mut pos, end, open, &field_path)?;
                    if len > end.saturating_sub(pos) as u64 {
                        return Err(self.short(pos, end, open, &field_path, len));
                    }
                    // `len` fits: it is at most what is left before `end`.
                    let body_end = pos + len as usize;
                    match kind {
                        Kind::Str => {
                            let body = self.buf.get(pos..body_end).unwrap_or_default();
                            if let Err(e) = std::str::from_utf8(body) {
                                return Err(self.fault(
                                    pos + e.valid_up_to(),
                                    &field_path,
                                    "string is not valid UTF-8",
                                ));
                            }
                        }
                        Kind::Varints => {
                            let mut p = pos;
                            while p < body_end {
                                self.varint(&mut p, body_end, false, &field_path)?;
                            }
                        }
                        Kind::Msg(inner) => {
                            self.message(inner, pos, body_end, false, &field_path)?
                        }
                        Kind::Varint | Kind::Fixed32 => {}
                    }
                    pos = body_end;
                }
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn skip(
        &self,
        wire_type: u8,
        number: u64,
        pos: &mut usize,
        end: usize,
        open: bool,
        path: &str,
        tag_pos: usize,
        depth: u32,
    ) -> Result<(), Fault> {
        let field_path = format!("{path}.<unknown field {number}>");
        match wire_type {
            VARINT => {
                self.varint(pos, end, open, &field_path)?;
            }
            FIXED64 | FIXED32 => {
                let n = if wire_type == FIXED64 { 8 } else { 4 };
                if end.saturating_sub(*pos) < n {
                    return Err(self.short(*pos, end, open, &field_path, n as u64));
                }
                *pos += n;
            }
            LEN => {
                let len = self.varint(pos, end, open, &field_path)?;
                if len > end.saturating_sub(*pos) as u64 {
                    return Err(self.short(*pos, end, open, &field_path, len));
                }
                *pos += len as usize;
            }
            START_GROUP => {
                if depth >= MAX_GROUP_DEPTH {
                    return Err(self.fault(tag_pos, &field_path, "groups nested too deeply"));
                }
                loop {
                    if *pos >= end {
                        return Err(self.short(*pos, end, open, &field_path, 1));
                    }
                    let inner_pos = *pos;
                    let tag = self.varint(pos, end, open, &field_path)?;
                    let (inner_number, inner_type) = (tag >> 3, (tag & 7) as u8);
                    if inner_type == END_GROUP {
                        if inner_number != number {
                            return Err(self.fault(
                                inner_pos,
                                &field_path,
                                "end-group tag does not match its start",
                            ));
                        }
                        break;
                    }
                    if inner_number == 0 || inner_number >= 1 << 29 {
                        return Err(self.fault(
                            inner_pos,
                            &field_path,
                            format!("invalid field number {inner_number}"),
                        ));
                    }
                    self.skip(
                        inner_type,
                        inner_number,
                        pos,
                        end,
                        open,
                        &field_path,
                        inner_pos,
                        depth + 1,
                    )?;
                }
            }
            END_GROUP => {
                return Err(self.fault(tag_pos, &field_path, "end-group tag without a start"));
            }
            _ => {
                return Err(self.fault(
                    tag_pos,
                    &field_path,
                    format!("invalid wire type {wire_type}"),
                ));
            }
        }
        Ok(())
    }
}

/// Finds the first encoding problem in `buf`, an encoded `msg` that starts at byte `base` of the
/// input and sits at `path`. `open_end` says whether `buf` ends where the input ends (so running
/// out of bytes is a truncation) rather than at a length that was read in full.
pub(crate) fn locate(msg: Msg, buf: &[u8], base: u64, open_end: bool, path: &str) -> Option<Fault> {
    Walker { buf, base }
        .message(msg, 0, buf.len(), open_end, path)
        .err()
}

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
    M::decode(bytes).map_err(|e| match locate(msg, bytes, base, open_end, path) {
        Some(fault) => fault.into_error(),
        None => Error::Malformed {
            offset: base,
            path: path.to_owned(),
            reason: format!("rejected by the protobuf decoder: {e}"),
        },
    })
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
    reader: BufReader<R>,
    pub(crate) offset: u64,
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
            reader: BufReader::with_capacity(1 << 16, reader),
            offset: 0,
            limit,
            msg,
            name,
            counts: [0; 16],
            done: false,
        }
    }

    fn byte(&mut self) -> Result<Option<u8>> {
        loop {
            match self.reader.fill_buf() {
                Ok(buf) => {
                    let byte = buf.first().copied();
                    if byte.is_some() {
                        self.reader.consume(1);
                        self.offset += 1;
                    }
                    return Ok(byte);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// A varint; `Ok(None)` at a clean end of input when `eof_ok`.
    fn varint(&mut self, path: &str, eof_ok: bool) -> Result<Option<u64>> {
        let start = self.offset;
        let mut value = 0u64;
        for i in 0..10u32 {
            let Some(byte) = self.byte()? else {
                if i == 0 && eof_ok {
                    return Ok(None);
                }
                return Err(Error::Truncated {
                    offset: self.offset,
                    path: path.to_owned(),
                    needed: 1,
                });
            };
            if i == 9 && byte > 1 {
                break;
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(Some(value));
            }
        }
        Err(Error::Malformed {
            offset: start,
            path: path.to_owned(),
            reason: "varint longer than 64 bits".into(),
        })
    }

    /// Skips `n` bytes.
    fn skip_bytes(&mut self, n: u64, path: &str) -> Result<()> {
        let copied = std::io::copy(&mut (&mut self.reader).take(n), &mut std::io::sink())?;
        self.offset += copied;
        if copied < n {
            return Err(Error::Truncated {
                offset: self.offset,
                path: path.to_owned(),
                needed: n - copied,
            });
        }
        Ok(())
    }

    fn skip_group(&mut self, number: u64, path: &str, depth: u32) -> Result<()> {
        if depth >= MAX_GROUP_DEPTH {
            return Err(Error::Malformed {
                offset: self.offset,
                path: path.to_owned(),
                reason: "groups nested too deeply".into(),
            });
        }
        loop {
            let at = self.offset;
            let Some(tag) = self.varint(path, false)? else {
                continue;
            };
            let (inner, wire_type) = (tag >> 3, (tag & 7) as u8);
            if inner == 0 || inner >= 1 << 29 {
                return Err(Error::Malformed {
                    offset: at,
                    path: path.to_owned(),
                    reason: format!("invalid field number {inner}"),
                });
            }
            match wire_type {
                VARINT => {
                    self.varint(path, false)?;
                }
                FIXED64 => self.skip_bytes(8, path)?,
                FIXED32 => self.skip_bytes(4, path)?,
                LEN => {
                    let len = self.varint(path, false)?.unwrap_or(0);
                    self.skip_bytes(len, path)?;
                }
                START_GROUP => self.skip_group(inner, path, depth + 1)?,
                END_GROUP if inner == number => return Ok(()),
                END_GROUP => {
                    return Err(Error::Malformed {
                        offset: at,
                        path: path.to_owned(),
                        reason: "end-group tag does not match its start".into(),
                    });
                }
                other => {
                    return Err(Error::Malformed {
                        offset: at,
                        path: path.to_owned(),
                        reason: format!("invalid wire type {other}"),
                    });
                }
            }
        }
    }

    /// The next known top-level field: its number, its path (`Profile.events[3]`) and value.
    /// `None` at the end of the input. After an error it returns `None`.
    pub(crate) fn next_field(&mut self) -> Option<Result<(u64, String, Field)>> {
        if self.done {
            return None;
        }
        let result = self.read_field();
        if !matches!(result, Some(Ok(_))) {
            self.done = true;
        }
        result
    }

    fn read_field(&mut self) -> Option<Result<(u64, String, Field)>> {
        loop {
            let tag_at = self.offset;
            let tag = match self.varint(self.name, true) {
                Ok(Some(tag)) => tag,
                Ok(None) => return None,
                Err(e) => return Some(Err(e)),
            };
            let (number, wire_type) = (tag >> 3, (tag & 7) as u8);
            if number == 0 || number >= 1 << 29 {
                return Some(Err(Error::Malformed {
                    offset: tag_at,
                    path: self.name.to_owned(),
                    reason: format!("invalid field number {number}"),
                }));
            }
            let Some((field, kind, repeated)) = self.msg.field(number) else {
                let path = format!("{}.<unknown field {number}>", self.name);
                let skipped = match wire_type {
                    VARINT => self.varint(&path, false).map(|_| ()),
                    FIXED64 => self.skip_bytes(8, &path),
                    FIXED32 => self.skip_bytes(4, &path),
                    LEN => match self.varint(&path, false) {
                        Ok(len) => self.skip_bytes(len.unwrap_or(0), &path),
                        Err(e) => Err(e),
                    },
                    START_GROUP => self.skip_group(number, &path, 0),
                    END_GROUP => Err(Error::Malformed {
                        offset: tag_at,
                        path,
                        reason: "end-group tag without a start".into(),
                    }),
                    other => Err(Error::Malformed {
                        offset: tag_at,
                        path,
                        reason: format!("invalid wire type {other}"),
                    }),
                };
                if let Err(e) = skipped {
                    return Some(Err(e));
                }
                continue;
            };
            let path = if repeated {
                let index = self.counts.get(number as usize).copied().unwrap_or(0);
                if let Some(c) = self.counts.get_mut(number as usize) {
                    *c += 1;
                }
                format!("{}.{field}[{index}]", self.name)
            } else {
                format!("{}.{field}", self.name)
            };
            let expected = match kind {
                Kind::Varint => VARINT,
                Kind::Fixed32 => FIXED32,
                _ => LEN,
            };
            if wire_type != expected {
                return Some(Err(Error::Malformed {
                    offset: tag_at,
                    path,
                    reason: format!(
                        "wire type {wire_type} ({}), expected {expected} ({})",
                        wire_type_name(wire_type),
                        wire_type_name(expected)
                    ),
                }));
            }
            if wire_type == VARINT {
                return Some(match self.varint(&path, false) {
                    Ok(v) => Ok((number, path, Field::Varint(v.unwrap_or(0)))),
                    Err(e) => Err(e),
                });
            }
            let len = match self.varint(&path, false) {
                Ok(len) => len.unwrap_or(0),
                Err(e) => return Some(Err(e)),
            };
            let start = self.offset;
            if len > self.limit {
                return Some(Err(Error::TooLarge {
                    what: path,
                    offset: start,
                    size: len,
                    limit: self.limit,
                }));
            }
            let mut body = Vec::with_capacity(len.min(1 << 20) as usize);
            match (&mut self.reader).take(len).read_to_end(&mut body) {
                Ok(n) => self.offset += n as u64,
                Err(e) => return Some(Err(e.into())),
            }
            if (body.len() as u64) < len {
                return Some(Err(Error::Truncated {
                    offset: self.offset,
                    path,
                    needed: len - body.len() as u64,
                }));
            }
            if let Kind::Str = kind
                && let Err(e) = std::str::from_utf8(&body)
            {
                return Some(Err(Error::Malformed {
                    offset: start + e.valid_up_to() as u64,
                    path,
                    reason: "string is not valid UTF-8".into(),
                }));
            }
            return Some(Ok((number, path, Field::Bytes(body, start))));
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
        let (number, wire_type) = (tag >> 3, (tag & 7) as u8);
        let Some((_, kind, _)) = msg.field(number) else {
            return false;
        };
        let expected = match kind {
            Kind::Varint => VARINT,
            Kind::Fixed32 => FIXED32,
            _ => LEN,
        };
        if wire_type != expected {
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
        let (number, wire_type) = (tag >> 3, (tag & 7) as u8);
        let Some((_, kind, _)) = msg.field(number) else {
            return false;
        };
        let ok = match kind {
            Kind::Varint => wire_type == VARINT,
            Kind::Fixed32 => wire_type == FIXED32,
            Kind::Varints => wire_type == VARINT || wire_type == LEN,
            Kind::Str | Kind::Msg(_) => wire_type == LEN,
        };
        if !ok {
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
