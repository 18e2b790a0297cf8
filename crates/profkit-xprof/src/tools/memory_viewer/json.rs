//! A `PreprocessResult` printed as xprof prints it: protobuf's JSON printer with its defaults
//! (`MessageToJsonString`): no spaces, fields by number under their lowerCamelCase names, a
//! scalar, list or map only when it is not empty or zero, a message only when set, 64-bit integers
//! as strings, doubles as protobuf's `SimpleDtoa` writes them. The spans' map is printed by key
//! (xprof's is a hash map's order, so two outputs compare equal once parsed).

use std::fmt::Write as _;

use crate::proto::{
    BufferAllocation, BufferBlockProto, HeapObject, LogicalBuffer, PreprocessResult, SourceInfo,
    heap_object,
};
use crate::tools::memory_profile::json::{push_double, push_string};

/// The JSON text xprof 2.24.2 returns for this memory viewer result.
pub fn to_json(r: &PreprocessResult) -> String {
    let mut w = Writer::default();
    w.open();
    w.doubles("heapSizes", &r.heap_sizes);
    w.doubles("unpaddedHeapSizes", &r.unpadded_heap_sizes);
    w.messages("maxHeap", &r.max_heap, heap_object);
    w.messages("maxHeapBySize", &r.max_heap_by_size, heap_object);
    if !r.logical_buffer_spans.is_empty() {
        w.key("logicalBufferSpans");
        w.out.push('{');
        for (i, (id, span)) in r.logical_buffer_spans.iter().enumerate() {
            if i > 0 {
                w.out.push(',');
            }
            let _ = write!(w.out, "\"{id}\":");
            w.open();
            w.int32("start", span.start);
            w.int32("limit", span.limit);
            w.close();
        }
        w.out.push('}');
    }
    w.int32s("maxHeapToBySize", &r.max_heap_to_by_size);
    w.int32s("bySizeToMaxHeap", &r.by_size_to_max_heap);
    w.string("moduleName", &r.module_name);
    w.string("entryComputationName", &r.entry_computation_name);
    w.double("peakHeapMib", r.peak_heap_mib);
    w.double("peakUnpaddedHeapMib", r.peak_unpadded_heap_mib);
    w.int32("peakHeapSizePosition", r.peak_heap_size_position);
    w.double(
        "entryComputationParametersMib",
        r.entry_computation_parameters_mib,
    );
    w.double("nonReusableMib", r.non_reusable_mib);
    w.double("maybeLiveOutMib", r.maybe_live_out_mib);
    w.messages("indefiniteLifetimes", &r.indefinite_lifetimes, allocation);
    w.string("allocationTimeline", &r.allocation_timeline);
    w.double("totalBufferAllocationMib", r.total_buffer_allocation_mib);
    w.double(
        "indefiniteBufferAllocationMib",
        r.indefinite_buffer_allocation_mib,
    );
    w.strings("hloInstructionNames", &r.hlo_instruction_names);
    w.double(
        "maxScopedVmemAllocationMib",
        r.max_scoped_vmem_allocation_mib,
    );
    w.string(
        "maxScopedVmemInstructionName",
        &r.max_scoped_vmem_instruction_name,
    );
    w.messages("bufferBlocks", &r.buffer_blocks, block);
    w.close();
    w.out
}

fn heap_object(w: &mut Writer, o: &HeapObject) {
    w.open();
    match &o.color {
        Some(heap_object::Color::Numbered(n)) => {
            w.key("numbered");
            let _ = write!(w.out, "{n}");
        }
        Some(heap_object::Color::Named(s)) => {
            w.key("named");
            push_string(&mut w.out, s);
        }
        None => {}
    }
    w.string("label", &o.label);
    w.int32("logicalBufferId", o.logical_buffer_id);
    w.double("logicalBufferSizeMib", o.logical_buffer_size_mib);
    w.double("unpaddedShapeMib", o.unpadded_shape_mib);
    w.string("instructionName", &o.instruction_name);
    w.string("shapeString", &o.shape_string);
    w.string("tfOpName", &o.tf_op_name);
    w.string("groupName", &o.group_name);
    w.string("opCode", &o.op_code);
    if let Some(s) = &o.source_info {
        w.key("sourceInfo");
        source_info(w, s);
    }
    w.close();
}

fn source_info(w: &mut Writer, s: &SourceInfo) {
    w.open();
    w.string("fileName", &s.file_name);
    w.int32("lineNumber", s.line_number);
    w.string("stackFrame", &s.stack_frame);
    w.close();
}

fn logical_buffer(w: &mut Writer, b: &LogicalBuffer) {
    w.open();
    w.int64("id", b.id);
    w.string("shape", &b.shape);
    w.double("sizeMib", b.size_mib);
    w.string("hloName", &b.hlo_name);
    if !b.shape_index.is_empty() {
        w.key("shapeIndex");
        w.out.push('[');
        for (i, v) in b.shape_index.iter().enumerate() {
            if i > 0 {
                w.out.push(',');
            }
            let _ = write!(w.out, "\"{v}\"");
        }
        w.out.push(']');
    }
    w.close();
}

fn allocation(w: &mut Writer, a: &BufferAllocation) {
    w.open();
    w.int64("id", a.id);
    w.double("sizeMib", a.size_mib);
    w.strings("attributes", &a.attributes);
    w.messages("logicalBuffers", &a.logical_buffers, logical_buffer);
    w.string("commonShape", &a.common_shape);
    w.close();
}

fn block(w: &mut Writer, b: &BufferBlockProto) {
    w.open();
    w.int32("logicalBufferId", b.logical_buffer_id);
    w.string("name", &b.name);
    w.double("offset", b.offset);
    w.double("size", b.size);
    w.int32("startStep", b.start_step);
    w.int32("endStep", b.end_step);
    w.string("tfOpName", &b.tf_op_name);
    w.string("category", &b.category);
    if let Some(s) = &b.source_info {
        w.key("sourceInfo");
        source_info(w, s);
    }
    w.string("shapeString", &b.shape_string);
    w.double("unpaddedSize", b.unpadded_size);
    w.string("color", &b.color);
    w.close();
}

/// Writes JSON objects, each field skipped at its default.
#[derive(Default)]
struct Writer {
    out: String,
    first: bool,
}

impl Writer {
    fn open(&mut self) {
        self.out.push('{');
        self.first = true;
    }

    fn close(&mut self) {
        self.out.push('}');
        self.first = false;
    }

    fn key(&mut self, name: &str) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        self.out.push('"');
        self.out.push_str(name);
        self.out.push_str("\":");
    }

    fn int32(&mut self, name: &str, v: i32) {
        if v != 0 {
            self.key(name);
            let _ = write!(self.out, "{v}");
        }
    }

    fn int64(&mut self, name: &str, v: i64) {
        if v != 0 {
            self.key(name);
            let _ = write!(self.out, "\"{v}\"");
        }
    }

    fn double(&mut self, name: &str, v: f64) {
        // Protobuf tells a default double by its bits: -0 is printed.
        if v.to_bits() != 0 {
            self.key(name);
            push_double(&mut self.out, v);
        }
    }

    fn string(&mut self, name: &str, s: &str) {
        if !s.is_empty() {
            self.key(name);
            push_string(&mut self.out, s);
        }
    }

    fn doubles(&mut self, name: &str, v: &[f64]) {
        if v.is_empty() {
            return;
        }
        self.key(name);
        self.out.push('[');
        for (i, x) in v.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            push_double(&mut self.out, *x);
        }
        self.out.push(']');
    }

    fn int32s(&mut self, name: &str, v: &[i32]) {
        if v.is_empty() {
            return;
        }
        self.key(name);
        self.out.push('[');
        for (i, x) in v.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            let _ = write!(self.out, "{x}");
        }
        self.out.push(']');
    }

    fn strings(&mut self, name: &str, v: &[String]) {
        if v.is_empty() {
            return;
        }
        self.key(name);
        self.out.push('[');
        for (i, x) in v.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            push_string(&mut self.out, x);
        }
        self.out.push(']');
    }

    fn messages<T>(&mut self, name: &str, v: &[T], each: fn(&mut Writer, &T)) {
        if v.is_empty() {
            return;
        }
        self.key(name);
        self.out.push('[');
        for (i, x) in v.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            each(self, x);
        }
        self.out.push(']');
        self.first = false;
    }
}
