//! xprof's steps database as a table (`steps`): one row per step per core of an OpStats' steps
//! database (see `profkit_xprof::op_stats::steps`), with the step's time and its breakdown, so
//! that the step times of every host of a cluster are one query over its `table=steps` files.

use std::sync::Arc;

use arrow_array::builder::{StringBuilder, UInt32Builder, UInt64Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use profkit_xprof::op_stats::event_span::event_type;
use profkit_xprof::op_stats::steps::generic_breakdown;
use profkit_xprof::proto::OpStats;

use crate::schema::{HOST, TABLE_KEY, VERSION, VERSION_KEY};
use crate::{Error, Result};

/// The table's name.
pub const STEPS: &str = "steps";

/// The breakdown's columns: picoseconds of the step spent on each of xprof's event types (host
/// and GPU steps; 0 for a type the step did not have).
const TYPES: [(&str, i32); 11] = [
    ("unknown_time_ps", event_type::UNKNOWN_TIME),
    ("host_compute_ps", event_type::HOST_COMPUTE),
    ("host_to_host_ps", event_type::HOST_TO_HOST),
    ("host_to_device_ps", event_type::HOST_TO_DEVICE),
    ("host_prepare_ps", event_type::HOST_PREPARE),
    ("device_collectives_ps", event_type::DEVICE_COLLECTIVES),
    ("host_wait_input_ps", event_type::HOST_WAIT_INPUT),
    ("device_to_device_ps", event_type::DEVICE_TO_DEVICE),
    ("device_to_host_ps", event_type::DEVICE_TO_HOST),
    ("device_compute_32_ps", event_type::DEVICE_COMPUTE_32),
    ("device_compute_16_ps", event_type::DEVICE_COMPUTE_16),
];

/// The `steps` table: `step_num` is the step's number in the database (its group id on one
/// host, its index in the steps common to all hosts when several were combined), `core_id`
/// xprof's (1 for a host's steps, the TPU core, `host * 1000 + core` across hosts); the
/// breakdown columns are the step's time per event type (host and GPU steps), and
/// `category_ps` the time per op category as a JSON object (TPU steps; `{}` otherwise).
pub fn schema() -> SchemaRef {
    let metadata = [
        (VERSION_KEY.to_owned(), VERSION.to_owned()),
        (TABLE_KEY.to_owned(), STEPS.to_owned()),
    ]
    .into_iter()
    .collect();
    let mut fields = vec![
        Field::new(HOST, DataType::Utf8, false),
        Field::new("step_num", DataType::UInt32, false),
        Field::new("step_name", DataType::Utf8, false),
        Field::new("core_id", DataType::UInt32, false),
        Field::new("begin_ps", DataType::UInt64, false),
        Field::new("duration_ps", DataType::UInt64, false),
    ];
    fields.extend(
        TYPES
            .iter()
            .map(|(name, _)| Field::new(*name, DataType::UInt64, false)),
    );
    fields.push(Field::new("category_ps", DataType::Utf8, false));
    Arc::new(Schema::new_with_metadata(fields, metadata))
}

/// A JSON object of the map, keys in order.
fn json_object(map: &std::collections::BTreeMap<String, u64>) -> String {
    let mut out = String::from("{");
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        for c in k.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
                c => out.push(c),
            }
        }
        out.push_str("\":");
        out.push_str(&v.to_string());
    }
    out.push('}');
    out
}

/// The steps of `stats` as one batch, every row of host `host`.
pub fn batch(host: &str, stats: &OpStats) -> Result<RecordBatch> {
    let mut hosts = StringBuilder::new();
    let mut step_num = UInt32Builder::new();
    let mut step_name = StringBuilder::new();
    let mut core = UInt32Builder::new();
    let mut begin = UInt64Builder::new();
    let mut duration = UInt64Builder::new();
    let mut types: Vec<UInt64Builder> = TYPES.iter().map(|_| UInt64Builder::new()).collect();
    let mut categories = StringBuilder::new();
    let steps = stats
        .step_db
        .as_ref()
        .map_or(&[][..], |db| &db.step_sequence);
    for step in steps {
        for (core_id, info) in &step.step_info_per_core {
            hosts.append_value(host);
            step_num.append_value(step.step_num);
            step_name.append_value(&info.step_name);
            core.append_value(*core_id);
            begin.append_value(info.begin_ps);
            duration.append_value(info.duration_ps);
            let breakdown = info
                .step_breakdown
                .as_ref()
                .and_then(generic_breakdown)
                .unwrap_or_default();
            for ((_, kind), column) in TYPES.iter().zip(&mut types) {
                column.append_value(breakdown.type_ps.get(kind).copied().unwrap_or(0));
            }
            categories.append_value(json_object(&breakdown.category_ps));
        }
    }
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(hosts.finish()),
        Arc::new(step_num.finish()),
        Arc::new(step_name.finish()),
        Arc::new(core.finish()),
        Arc::new(begin.finish()),
        Arc::new(duration.finish()),
    ];
    columns.extend(types.iter_mut().map(|c| Arc::new(c.finish()) as ArrayRef));
    columns.push(Arc::new(categories.finish()));
    RecordBatch::try_new(schema(), columns).map_err(Error::from)
}

#[cfg(test)]
mod tests {
    use arrow_array::{StringArray, UInt64Array};
    use profkit_xplane::{PlaneBuilder, XPlane, XSpace};

    use super::*;

    #[test]
    fn one_row_per_step_and_core() {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/host:CPU");
        let mut line = b.line(1);
        for (step, at) in [(0i64, 0i64), (1, 100)] {
            line.add_event("train")
                .set_offset_ps(at)
                .set_duration_ps(90)
                .add_stat("_r", 1i64)
                .add_stat("step_num", step);
            line.add_event("m/MatMul:MatMul")
                .set_offset_ps(at + 10)
                .set_duration_ps(40);
        }
        let space = XSpace {
            planes: vec![plane],
            ..XSpace::default()
        };
        let built = profkit_xprof::op_stats::build(vec![space], &["w0"]);
        let batch = batch("w0", &built.op_stats).unwrap();
        assert_eq!(batch.num_rows(), 2);
        let column = |name: &str| batch.column(batch.schema().index_of(name).unwrap()).clone();
        let compute = column("host_compute_ps");
        let compute = compute.as_any().downcast_ref::<UInt64Array>().unwrap();
        assert_eq!((compute.value(0), compute.value(1)), (40, 40));
        let unknown = column("unknown_time_ps");
        let unknown = unknown.as_any().downcast_ref::<UInt64Array>().unwrap();
        assert_eq!(unknown.value(1), 50);
        let categories = column("category_ps");
        let categories = categories.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(categories.value(0), "{}");
    }

    #[test]
    fn categories_are_a_json_object() {
        let map = [("IDLE".to_owned(), 5u64), ("a\"b".to_owned(), 1)].into();
        assert_eq!(json_object(&map), r#"{"IDLE":5,"a\"b":1}"#);
    }
}
