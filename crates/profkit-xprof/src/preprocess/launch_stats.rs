//! The `Launch Stats` line xprof derives on GPU planes from the host's launches
//! (`DeriveEventsFromHostTrace`).
//!
//! Every event of the first `/host:CPU` plane (derived lines aside) with a `group_id`, a
//! `correlation_id` and a `device_id` naming one of the GPU planes (by position), whose name does
//! not start with `cu`, counts as a launch of its group on that device. Each GPU plane with
//! launches gets a line `Launch Stats` (id `0xdeadbeef + 1`, timestamp the earlier of the host's
//! and the plane's earliest line timestamps) with, per group, an event `Launch Stats for <step>`
//! spanning the group's launches, with `group_id`, `num_launches`, `max_launch_time_us` and
//! `avg_launch_time_us`. xprof lists the groups in hash-map order; profkit lists them by group id,
//! which is xprof's order when a device has one group (the note says so otherwise).

use std::collections::BTreeMap;

use profkit_xplane::{XEvent, XLine, XPlane, XStat, x_event, x_stat};

use super::grouping::forest::LaunchStats;
use super::stats::{intern_event, intern_stat, start_timestamp_ns};

/// xprof's `kThreadIdKernelLaunch`.
pub(crate) const LAUNCH_LINE_ID: i64 = 0xdead_beef + 1;
/// The line's name (`kKernelLaunchLineName`).
pub(crate) const LAUNCH_LINE_NAME: &str = "Launch Stats";

/// Adds the `Launch Stats` line of a GPU plane from its groups' launches.
pub(crate) fn add_launch_stats(
    plane: &mut XPlane,
    launches: &[LaunchStats],
    host_start_ns: i64,
    names: &BTreeMap<i64, String>,
) {
    if launches.is_empty() {
        return;
    }
    let group_stat = intern_stat(plane, "group_id");
    let count_stat = intern_stat(plane, "num_launches");
    let max_stat = intern_stat(plane, "max_launch_time_us");
    let avg_stat = intern_stat(plane, "avg_launch_time_us");
    let timestamp_ns = start_timestamp_ns(plane).min(host_start_ns);
    let mut events = Vec::new();
    for launch in launches {
        let Some(name) = names.get(&launch.group) else {
            continue;
        };
        let metadata_id = intern_event(plane, &format!("Launch Stats for {name}"));
        let avg = launch.sum as f64 / launch.count.max(1) as f64;
        events.push(XEvent {
            metadata_id,
            data: Some(x_event::Data::OffsetPs(
                (launch.begin as i64).wrapping_sub(timestamp_ns.wrapping_mul(1000)),
            )),
            duration_ps: launch.end.wrapping_sub(launch.begin) as i64,
            stats: vec![
                stat(group_stat, x_stat::Value::Int64Value(launch.group)),
                stat(count_stat, x_stat::Value::Int64Value(launch.count)),
                stat(
                    max_stat,
                    x_stat::Value::DoubleValue(launch.max as f64 / 1e6),
                ),
                stat(avg_stat, x_stat::Value::DoubleValue(avg / 1e6)),
            ],
        });
    }
    let line = match plane.lines.iter().position(|l| l.id == LAUNCH_LINE_ID) {
        Some(i) => plane.lines.get_mut(i),
        None => {
            plane.lines.push(XLine {
                id: LAUNCH_LINE_ID,
                ..XLine::default()
            });
            plane.lines.last_mut()
        }
    };
    if let Some(line) = line {
        line.name = LAUNCH_LINE_NAME.to_owned();
        line.timestamp_ns = timestamp_ns;
        line.events.extend(events);
    }
}

fn stat(metadata_id: i64, value: x_stat::Value) -> XStat {
    XStat {
        metadata_id,
        value: Some(value),
    }
}
