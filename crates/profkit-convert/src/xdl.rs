//! X-DeepLearning tensor traces to XSpace: each worker rank a process, each record a step.
//!
//! The datasets of one rank share a plane `/device:CUSTOM:<rank>`. Each dataset's records become
//! events of a `Steps` line (one line per dataset, named `Steps` when the rank has one dataset,
//! `Steps (<phase>.<name>)` otherwise), named `step <gstep>`, at the record's timestamp and lasting
//! until the next record's (the last record is an instant), with `step_num` (the global step),
//! `gstep` and `lstep` stats. Every scalar column (one element, any dtype) becomes a counter
//! event of the plane's `_counters_` line, named by its key (prefixed with the dataset when the
//! rank has several), with the value as `value`; tensors are left out. Timestamps (Unix epoch
//! milliseconds) are made relative to the earliest, which `Task Environment` keeps.

use std::collections::BTreeMap;

use profkit_xdl::DType as Type;
use profkit_xdl::{Column, Dataset, DatasetId, ReadOptions, Record};
use profkit_xplane::constants::{COUNTERS_LINE_ID, COUNTERS_LINE_NAME, TASK_ENV_PLANE_NAME, stats};
use profkit_xplane::{PlaneBuilder, StatValue, XPlane, XSpace};

use crate::error::{Error, Result};

/// The value of a one-element column, as a stat.
fn scalar(column: &Column) -> Option<StatValue> {
    if column.element_count().ok()? != 1 {
        return None;
    }
    let first = |c: &Column| -> Option<StatValue> {
        Some(match c.try_dtype().ok()? {
            Type::Int8 => StatValue::Int64(i64::from(*c.values::<i8>().ok()?.first()?)),
            Type::Int16 => StatValue::Int64(i64::from(*c.values::<i16>().ok()?.first()?)),
            Type::Int32 => StatValue::Int64(i64::from(*c.values::<i32>().ok()?.first()?)),
            Type::Int64 => StatValue::Int64(*c.values::<i64>().ok()?.first()?),
            Type::Float => StatValue::Double(f64::from(*c.values::<f32>().ok()?.first()?)),
            Type::Double => StatValue::Double(*c.values::<f64>().ok()?.first()?),
            Type::Bool => StatValue::Int64(i64::from(*c.to_bools().ok()?.first()?)),
            Type::Byte => StatValue::Int64(i64::from(*c.values::<u8>().ok()?.first()?)),
        })
    };
    first(column)
}

/// The XSpace of datasets (see the module documentation), read with `options`. Errors name the
/// dataset.
pub fn datasets_to_xspace(datasets: &[Dataset], options: ReadOptions) -> Result<XSpace> {
    // Records of each dataset: (timestamp ms, gstep, lstep, scalars).
    type Row = (i64, i64, i64, Vec<(String, StatValue)>);
    let mut by_rank: BTreeMap<u64, Vec<(DatasetId, Vec<Row>)>> = BTreeMap::new();
    for dataset in datasets {
        let mut reader = dataset.records(options);
        let mut rows = Vec::new();
        while let Some(record) = reader.next() {
            let record: Record =
                record.map_err(|e| Error::Unsupported(format!("dataset {}: {e}", dataset.id)))?;
            let keys: Vec<String> = reader.keys().map(<[String]>::to_vec).unwrap_or_default();
            let scalars = record
                .column
                .iter()
                .zip(keys)
                .filter_map(|(c, k)| scalar(c).map(|v| (k, v)))
                .collect();
            rows.push((record.timestamp, record.gstep, record.lstep, scalars));
        }
        by_rank
            .entry(dataset.id.rank)
            .or_default()
            .push((dataset.id.clone(), rows));
    }
    let start = by_rank
        .values()
        .flatten()
        .flat_map(|(_, rows)| rows.iter().map(|r| r.0))
        .min()
        .unwrap_or(0);
    let stop = by_rank
        .values()
        .flatten()
        .flat_map(|(_, rows)| rows.iter().map(|r| r.0))
        .max()
        .unwrap_or(0);
    let ps = |ms: i64| {
        i64::try_from((i128::from(ms) - i128::from(start)) * 1_000_000_000).unwrap_or(i64::MAX)
    };
    let mut space = XSpace::default();
    for (rank, datasets) in &by_rank {
        let several = datasets.len() > 1;
        let mut plane = XPlane::default();
        {
            let mut b = PlaneBuilder::new(&mut plane);
            b.set_id(i64::try_from(*rank).unwrap_or(i64::MAX))
                .set_name(format!("/device:CUSTOM:{rank}"));
            b.add_stat(stats::DEVICE_TYPE_STRING, "XDL worker");
            let mut counters: Vec<(i64, String, StatValue)> = Vec::new();
            for (index, (id, rows)) in datasets.iter().enumerate() {
                let name = if several {
                    format!("Steps ({}.{})", id.phase, id.name)
                } else {
                    "Steps".to_owned()
                };
                let mut line = b.line(index as i64 + 1);
                line.set_name(name).set_timestamp_ns(0);
                for (k, (ts, gstep, lstep, scalars)) in rows.iter().enumerate() {
                    let next = rows.get(k + 1).map_or(*ts, |r| r.0.max(*ts));
                    line.add_event(&format!("step {gstep}"))
                        .set_offset_ps(ps(*ts))
                        .set_duration_ps(ps(next).saturating_sub(ps(*ts)))
                        .add_stat(stats::STEP_NUM, *gstep)
                        .add_stat("gstep", *gstep)
                        .add_stat("lstep", *lstep);
                    for (key, value) in scalars {
                        let key = if several {
                            format!("{}.{} {key}", id.phase, id.name)
                        } else {
                            key.clone()
                        };
                        counters.push((*ts, key, value.clone()));
                    }
                }
            }
            if !counters.is_empty() {
                counters.sort_by_key(|c| c.0);
                let mut line = b.line(COUNTERS_LINE_ID);
                line.set_name(COUNTERS_LINE_NAME).set_timestamp_ns(0);
                for (ts, key, value) in counters {
                    line.add_event(&key)
                        .set_offset_ps(ps(ts))
                        .add_stat("value", value);
                }
            }
        }
        space.planes.push(plane);
    }
    let mut env = XPlane::default();
    {
        let mut b = PlaneBuilder::new(&mut env);
        let id = space
            .planes
            .iter()
            .map(|p| p.id)
            .max()
            .map_or(0, |m| m.saturating_add(1));
        b.set_id(id).set_name(TASK_ENV_PLANE_NAME);
        let ns = |ms: i64| u64::try_from(i128::from(ms) * 1_000_000).unwrap_or(0);
        b.add_stat(stats::PROFILE_START_TIME, ns(start));
        b.add_stat(stats::PROFILE_STOP_TIME, ns(stop));
    }
    space.planes.push(env);
    Ok(space)
}
