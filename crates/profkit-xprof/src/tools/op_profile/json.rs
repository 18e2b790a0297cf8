//! A `Profile` printed as xprof prints it: protobuf's C++ JSON printer (`MessageToJsonString`
//! with `always_print_fields_with_no_presence`), no spaces, fields in field-number order by their
//! lowerCamelCase names, every scalar and repeated field printed even when empty, a message field
//! (and a proto3 `optional` or oneof member) only when set, 64-bit integers as strings, doubles as
//! `SimpleDtoa` writes them.

use crate::proto::SourceInfo;
use crate::proto::op_profile::node::xla_instruction::LayoutAnalysis;
use crate::proto::op_profile::node::{Contents, XlaInstruction};
use crate::proto::op_profile::{Metrics, Node, Profile};
use crate::tools::pbjson::{push_double, push_string};

/// The JSON text of `profile`.
pub fn to_json(profile: &Profile) -> String {
    let mut w = Writer::default();
    w.out.push('{');
    let roots = [
        ("byCategory", &profile.by_category),
        ("byProgram", &profile.by_program),
    ];
    for (key, node) in roots {
        if let Some(node) = node {
            w.key(key);
            w.node(node);
        }
    }
    w.key("deviceType");
    push_string(&mut w.out, &profile.device_type);
    let roots = [
        ("byCategoryExcludeIdle", &profile.by_category_exclude_idle),
        ("byProgramExcludeIdle", &profile.by_program_exclude_idle),
        ("byProvenance", &profile.by_provenance),
        (
            "byProvenanceExcludeIdle",
            &profile.by_provenance_exclude_idle,
        ),
    ];
    for (key, node) in roots {
        if let Some(node) = node {
            w.key(key);
            w.node(node);
        }
    }
    w.key("aggDvfsTimeScaleMultiplier");
    push_double(&mut w.out, profile.agg_dvfs_time_scale_multiplier);
    w.out.push('}');
    w.out
}

#[derive(Default)]
struct Writer {
    out: String,
}

impl Writer {
    /// A field's name, after a comma unless it opens its object (no value ends with `{`).
    fn key(&mut self, name: &str) {
        if !self.out.ends_with('{') {
            self.out.push(',');
        }
        self.out.push('"');
        self.out.push_str(name);
        self.out.push_str("\":");
    }

    fn doubles(&mut self, values: &[f64]) {
        self.out.push('[');
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            push_double(&mut self.out, *v);
        }
        self.out.push(']');
    }

    fn node(&mut self, node: &Node) {
        // Recursive: the builder bounds the tree's depth (see `MAX_DEPTH`).
        self.out.push('{');
        self.key("name");
        push_string(&mut self.out, &node.name);
        if let Some(m) = &node.metrics {
            self.key("metrics");
            self.metrics(m);
        }
        self.key("children");
        self.out.push('[');
        for (i, child) in node.children.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.node(child);
        }
        self.out.push(']');
        match &node.contents {
            Some(Contents::Category(_)) => {
                self.key("category");
                self.out.push_str("{}");
            }
            Some(Contents::Xla(xla)) => {
                self.key("xla");
                self.xla(xla);
            }
            None => {}
        }
        self.key("numChildren");
        self.out.push_str(&node.num_children.to_string());
        if let Some(m) = &node.program_serving_metadata {
            self.key("programServingMetadata");
            self.out.push('{');
            self.key("modelId");
            push_string(&mut self.out, &m.model_id);
            self.key("batchSize");
            self.out.push_str(&m.batch_size.to_string());
            self.key("numBatches");
            self.out.push_str(&m.num_batches.to_string());
            self.out.push('}');
        }
        self.out.push('}');
    }

    fn metrics(&mut self, m: &Metrics) {
        self.out.push('{');
        self.key("flops");
        push_double(&mut self.out, m.flops);
        self.key("bandwidthUtils");
        self.doubles(&m.bandwidth_utils);
        self.key("rawTime");
        push_double(&mut self.out, m.raw_time);
        self.key("rawFlops");
        push_double(&mut self.out, m.raw_flops);
        self.key("rawBytesAccessedArray");
        self.doubles(&m.raw_bytes_accessed_array);
        self.key("occurrences");
        self.out.push_str(&m.occurrences.to_string());
        self.key("avgTimePs");
        push_double(&mut self.out, m.avg_time_ps);
        self.key("bf16Flops");
        push_double(&mut self.out, m.bf16_flops);
        self.key("uncappedFlops");
        push_double(&mut self.out, m.uncapped_flops);
        self.key("normalizedTimePs");
        push_double(&mut self.out, m.normalized_time_ps);
        self.out.push('}');
    }

    fn xla(&mut self, x: &XlaInstruction) {
        self.out.push('{');
        for (key, value) in [
            ("op", &x.op),
            ("expression", &x.expression),
            ("provenance", &x.provenance),
            ("category", &x.category),
        ] {
            self.key(key);
            push_string(&mut self.out, value);
        }
        if let Some(layout) = &x.layout {
            self.key("layout");
            self.layout(layout);
        }
        self.key("computationPrimitiveSize");
        self.out.push_str(&x.computation_primitive_size.to_string());
        self.key("fingerprint");
        self.out.push_str(&format!("\"{}\"", x.fingerprint));
        self.key("programId");
        self.out.push_str(&format!("\"{}\"", x.program_id));
        if let Some(s) = &x.source_info {
            self.key("sourceInfo");
            self.source_info(s);
        }
        if let Some(k) = &x.xprof_kernel_metadata {
            self.key("xprofKernelMetadata");
            push_string(&mut self.out, k);
        }
        self.out.push('}');
    }

    fn layout(&mut self, layout: &LayoutAnalysis) {
        self.out.push('{');
        self.key("dimensions");
        self.out.push('[');
        for (i, d) in layout.dimensions.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.out.push('{');
            self.key("size");
            self.out.push_str(&d.size.to_string());
            self.key("alignment");
            self.out.push_str(&d.alignment.to_string());
            self.key("semantics");
            push_string(&mut self.out, &d.semantics);
            self.out.push('}');
        }
        self.out.push(']');
        self.out.push('}');
    }

    fn source_info(&mut self, s: &SourceInfo) {
        self.out.push('{');
        self.key("fileName");
        push_string(&mut self.out, &s.file_name);
        self.key("lineNumber");
        self.out.push_str(&s.line_number.to_string());
        self.key("stackFrame");
        push_string(&mut self.out, &s.stack_frame);
        self.out.push('}');
    }
}
