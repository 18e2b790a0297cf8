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
use crate::tools::pbjson::{Writer, push_string};

/// The JSON text xprof 2.24.2 returns for this memory viewer result.
pub fn to_json(r: &PreprocessResult) -> String {
    let mut w = Writer::default();
    w.open();
    w.opt_doubles("heapSizes", &r.heap_sizes);
    w.opt_doubles("unpaddedHeapSizes", &r.unpadded_heap_sizes);
    w.opt_messages("maxHeap", &r.max_heap, heap_object);
    w.opt_messages("maxHeapBySize", &r.max_heap_by_size, heap_object);
    if !r.logical_buffer_spans.is_empty() {
        w.key("logicalBufferSpans");
        w.out.push('{');
        for (i, (id, span)) in r.logical_buffer_spans.iter().enumerate() {
            if i > 0 {
                w.out.push(',');
            }
            let _ = write!(w.out, "\"{id}\":");
            w.open();
            w.opt_int32("start", span.start);
            w.opt_int32("limit", span.limit);
            w.close();
        }
        w.out.push('}');
    }
    w.opt_int32s("maxHeapToBySize", &r.max_heap_to_by_size);
    w.opt_int32s("bySizeToMaxHeap", &r.by_size_to_max_heap);
    w.opt_string("moduleName", &r.module_name);
    w.opt_string("entryComputationName", &r.entry_computation_name);
    w.opt_double("peakHeapMib", r.peak_heap_mib);
    w.opt_double("peakUnpaddedHeapMib", r.peak_unpadded_heap_mib);
    w.opt_int32("peakHeapSizePosition", r.peak_heap_size_position);
    w.opt_double(
        "entryComputationParametersMib",
        r.entry_computation_parameters_mib,
    );
    w.opt_double("nonReusableMib", r.non_reusable_mib);
    w.opt_double("maybeLiveOutMib", r.maybe_live_out_mib);
    w.opt_messages("indefiniteLifetimes", &r.indefinite_lifetimes, allocation);
    w.opt_string("allocationTimeline", &r.allocation_timeline);
    w.opt_double("totalBufferAllocationMib", r.total_buffer_allocation_mib);
    w.opt_double(
        "indefiniteBufferAllocationMib",
        r.indefinite_buffer_allocation_mib,
    );
    w.opt_strings("hloInstructionNames", &r.hlo_instruction_names);
    w.opt_double(
        "maxScopedVmemAllocationMib",
        r.max_scoped_vmem_allocation_mib,
    );
    w.opt_string(
        "maxScopedVmemInstructionName",
        &r.max_scoped_vmem_instruction_name,
    );
    w.opt_messages("bufferBlocks", &r.buffer_blocks, block);
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
    w.opt_string("label", &o.label);
    w.opt_int32("logicalBufferId", o.logical_buffer_id);
    w.opt_double("logicalBufferSizeMib", o.logical_buffer_size_mib);
    w.opt_double("unpaddedShapeMib", o.unpadded_shape_mib);
    w.opt_string("instructionName", &o.instruction_name);
    w.opt_string("shapeString", &o.shape_string);
    w.opt_string("tfOpName", &o.tf_op_name);
    w.opt_string("groupName", &o.group_name);
    w.opt_string("opCode", &o.op_code);
    if let Some(s) = &o.source_info {
        w.key("sourceInfo");
        source_info(w, s);
    }
    w.close();
}

fn source_info(w: &mut Writer, s: &SourceInfo) {
    w.open();
    w.opt_string("fileName", &s.file_name);
    w.opt_int32("lineNumber", s.line_number);
    w.opt_string("stackFrame", &s.stack_frame);
    w.close();
}

fn logical_buffer(w: &mut Writer, b: &LogicalBuffer) {
    w.open();
    w.opt_int64("id", b.id);
    w.opt_string("shape", &b.shape);
    w.opt_double("sizeMib", b.size_mib);
    w.opt_string("hloName", &b.hlo_name);
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
    w.opt_int64("id", a.id);
    w.opt_double("sizeMib", a.size_mib);
    w.opt_strings("attributes", &a.attributes);
    w.opt_messages("logicalBuffers", &a.logical_buffers, logical_buffer);
    w.opt_string("commonShape", &a.common_shape);
    w.close();
}

fn block(w: &mut Writer, b: &BufferBlockProto) {
    w.open();
    w.opt_int32("logicalBufferId", b.logical_buffer_id);
    w.opt_string("name", &b.name);
    w.opt_double("offset", b.offset);
    w.opt_double("size", b.size);
    w.opt_int32("startStep", b.start_step);
    w.opt_int32("endStep", b.end_step);
    w.opt_string("tfOpName", &b.tf_op_name);
    w.opt_string("category", &b.category);
    if let Some(s) = &b.source_info {
        w.key("sourceInfo");
        source_info(w, s);
    }
    w.opt_string("shapeString", &b.shape_string);
    w.opt_double("unpaddedSize", b.unpadded_size);
    w.opt_string("color", &b.color);
    w.close();
}
