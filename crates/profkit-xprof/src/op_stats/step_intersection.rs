//! The steps database of several hosts (`StepIntersection` and `CombineStepDatabase` of xprof's
//! OpStats combiner): the host whose steps span the least time is the chief; every other host's
//! step sequence is aligned with the chief's at the offset where their step times overlap most
//! (ties to the smallest non-negative offset, then the smallest negative one); the steps every
//! host has are kept, renumbered from 0, each holding every host's cores under global core ids
//! (`host * 1000 + core`). Hosts without a device are left out when another host has one (they
//! coordinate).

use std::collections::BTreeMap;

use super::event_span::Span;
use crate::proto::{HardwareType, OpMetricsDb, PerCoreStepInfo, StepDatabaseResult};

/// `GlobalCoreId`: `host * 1000 + core`, in 32 bits (wrapping).
pub fn global_core_id(host: u32, core: u32) -> u32 {
    host.wrapping_mul(1000).wrapping_add(core)
}

/// `ParseHardwareType` of a run environment's device type.
pub fn parse_hardware_type(device_type: &str) -> HardwareType {
    if device_type.contains("GPU") {
        HardwareType::Gpu
    } else if device_type == "CPU" {
        HardwareType::CpuOnly
    } else if device_type.contains("TPU") {
        HardwareType::Tpu
    } else {
        HardwareType::UnknownHardware
    }
}

fn has_device(t: HardwareType) -> bool {
    matches!(t, HardwareType::Gpu | HardwareType::Tpu)
}

/// The span of a step across its cores (`StepTimespan`).
fn step_span(step: &PerCoreStepInfo) -> Span {
    let infos = &step.step_info_per_core;
    if infos.len() == 1 {
        let info = infos
            .values()
            .next()
            .map_or((0, 0), |i| (i.begin_ps, i.duration_ps));
        return Span::from_end_points(info.0, info.0.wrapping_add(info.1));
    }
    let mut min = u64::MAX;
    let mut max = 0u64;
    for info in infos.values() {
        min = min.min(info.begin_ps);
        max = max.max(info.begin_ps.wrapping_add(info.duration_ps));
    }
    if min < max {
        Span::from_end_points(min, max)
    } else {
        Span::default()
    }
}

#[derive(Clone, Copy, Default)]
struct Alignment {
    begin_subordinate: u32,
    begin_chief: u32,
    num_steps: u32,
}

/// `FindStepsAlignment`: the offset (chief index less subordinate index) whose steps overlap
/// most, walking both sequences in time order.
fn align(subordinate: &[Span], chief: &[Span]) -> Alignment {
    let (n, m) = (subordinate.len(), chief.len());
    if n == 0 || m == 0 {
        return Alignment::default();
    }
    let mut similarity = vec![0u64; n + m - 1];
    let (mut s, mut c) = (0usize, 0usize);
    while s < n && c < m {
        let (a, b) = (subordinate[s], chief[c]);
        if a.duration == 0 {
            s += 1;
            continue;
        }
        if b.duration == 0 {
            c += 1;
            continue;
        }
        let start = a.begin.max(b.begin);
        let end = a.end().min(b.end());
        let overlap = end.saturating_sub(start);
        let slot = &mut similarity[c + (n - 1) - s];
        *slot = slot.wrapping_add(overlap);
        match a.end().cmp(&b.end()) {
            std::cmp::Ordering::Less => s += 1,
            std::cmp::Ordering::Greater => c += 1,
            std::cmp::Ordering::Equal => {
                s += 1;
                c += 1;
            }
        }
    }
    // Offsets 0..m first, then -1 down to -(n-1); the first maximum wins.
    let mut best: Option<(u64, i64)> = None;
    let offsets = (0..m as i64).chain((1..n as i64).map(|k| -k));
    for k in offsets {
        let value = similarity[(k + n as i64 - 1) as usize];
        if best.is_none_or(|(max, _)| value > max) {
            best = Some((value, k));
        }
    }
    let k = best.map_or(0, |b| b.1);
    let begin_subordinate = if k >= 0 { 0 } else { (-k) as u32 };
    let begin_chief = if k >= 0 { k as u32 } else { 0 };
    Alignment {
        begin_subordinate,
        begin_chief,
        num_steps: (n as u32 - begin_subordinate).min(m as u32 - begin_chief),
    }
}

/// The steps common to every host (`StepIntersection`).
pub struct StepIntersection {
    begin_chief: u32,
    end_chief: u32,
    steps_dropped: u32,
    empty_intersect: bool,
    alignments: BTreeMap<u32, Alignment>,
}

impl StepIntersection {
    /// The intersection of the hosts' step databases (by host id), at most `max_steps` steps.
    pub fn new(max_steps: u32, hosts: &BTreeMap<u32, &StepDatabaseResult>) -> Self {
        let mut out = StepIntersection {
            begin_chief: 0,
            end_chief: 0,
            steps_dropped: 0,
            empty_intersect: false,
            alignments: BTreeMap::new(),
        };
        let spans: BTreeMap<u32, Vec<Span>> = hosts
            .iter()
            .map(|(id, db)| (*id, db.step_sequence.iter().map(step_span).collect()))
            .collect();
        // The chief: the host whose steps span the least time (the first of equals).
        let mut chief: Option<(u32, u64)> = None;
        for (id, s) in &spans {
            let mut min = u64::MAX;
            let mut max = 0u64;
            for span in s.iter().filter(|s| s.duration > 0) {
                min = min.min(span.begin);
                max = max.max(span.end());
            }
            let total = max.saturating_sub(min);
            if chief.is_none_or(|(_, d)| total < d) {
                chief = Some((*id, total));
            }
        }
        let Some((chief_id, _)) = chief else {
            return out;
        };
        let chief_spans = &spans[&chief_id];
        if chief_spans.is_empty() {
            return out;
        }
        let mut max_begin = 0u32;
        let mut min_end = u32::MAX;
        for (id, s) in &spans {
            let a = if *id == chief_id {
                Alignment {
                    begin_subordinate: 0,
                    begin_chief: 0,
                    num_steps: s.len() as u32,
                }
            } else {
                align(s, chief_spans)
            };
            max_begin = max_begin.max(a.begin_chief);
            min_end = min_end.min(a.begin_chief.wrapping_add(a.num_steps));
            out.alignments.insert(*id, a);
        }
        if max_begin > min_end {
            out.empty_intersect = true;
            return out;
        }
        out.begin_chief = max_begin;
        let num = min_end - max_begin;
        if num > max_steps {
            out.steps_dropped = num - max_steps;
            out.end_chief = max_begin + max_steps;
        } else {
            out.end_chief = min_end;
        }
        out
    }

    /// The number of steps in the intersection.
    pub fn num_steps(&self) -> u32 {
        self.end_chief - self.begin_chief
    }

    /// The index of the host's step that is the intersection's first.
    pub fn first_step_index(&self, host: u32) -> u32 {
        self.alignments.get(&host).map_or(0, |a| {
            a.begin_subordinate
                .wrapping_add(self.begin_chief.wrapping_sub(a.begin_chief))
        })
    }
}

/// The combined steps database of several hosts' (`(host id, device type, steps)` in order) and
/// the HLO op metrics of their complete steps.
pub fn combine_step_dbs(
    hosts: &[(u32, String, StepDatabaseResult)],
) -> (StepDatabaseResult, OpMetricsDb) {
    let no_accelerator = !hosts.iter().any(|h| has_device(parse_hardware_type(&h.1)));
    let workers: Vec<&(u32, String, StepDatabaseResult)> = hosts
        .iter()
        .filter(|h| no_accelerator || has_device(parse_hardware_type(&h.1)))
        .collect();
    let by_id: BTreeMap<u32, &StepDatabaseResult> = workers.iter().map(|h| (h.0, &h.2)).collect();
    let intersection = StepIntersection::new(u32::MAX, &by_id);
    let mut db = StepDatabaseResult {
        num_steps_dropped: intersection.steps_dropped,
        empty_intersect: intersection.empty_intersect,
        ..StepDatabaseResult::default()
    };
    let n = intersection.num_steps();
    let mut per_step: Vec<super::DbBuilder> = Vec::new();
    for i in 0..n {
        db.step_sequence.push(PerCoreStepInfo {
            step_num: i,
            ..PerCoreStepInfo::default()
        });
        per_step.push(super::DbBuilder::default());
    }
    let mut complete = super::DbBuilder::default();
    for (host, _, src) in workers {
        if src.use_incomplete_step {
            db.use_incomplete_step = true;
        }
        let first = intersection.first_step_index(*host);
        for (i, (dst, hlo)) in db.step_sequence.iter_mut().zip(&mut per_step).enumerate() {
            let Some(step) = src.step_sequence.get(first.wrapping_add(i as u32) as usize) else {
                continue;
            };
            for (core, info) in &step.step_info_per_core {
                dst.step_info_per_core
                    .entry(global_core_id(*host, *core))
                    .or_insert_with(|| info.clone());
            }
            let num = dst.step_num;
            for info in dst.step_info_per_core.values_mut() {
                info.step_num = num;
            }
            let src_hlo = step.hlo_metrics_db.clone().unwrap_or_default();
            if !src.use_incomplete_step {
                complete.combine(&src_hlo, true);
                // xprof's combiner always writes the precision stats.
                complete
                    .db
                    .precision_stats
                    .get_or_insert_with(Default::default);
            }
            hlo.combine(&src_hlo, true);
            hlo.db.precision_stats.get_or_insert_with(Default::default);
            for (core, v) in &step.all_reduce_db_per_core {
                dst.all_reduce_db_per_core
                    .entry(global_core_id(*host, *core))
                    .or_insert_with(|| v.clone());
            }
            for (core, v) in &step.core_id_to_replica_id_map {
                dst.core_id_to_replica_id_map
                    .entry(global_core_id(*host, *core))
                    .or_insert(*v);
            }
        }
    }
    for (dst, hlo) in db.step_sequence.iter_mut().zip(per_step) {
        dst.hlo_metrics_db = Some(hlo.db);
    }
    (db, complete.db)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::StepInfoResult;

    fn steps(spans: &[(u64, u64)]) -> StepDatabaseResult {
        StepDatabaseResult {
            step_sequence: spans
                .iter()
                .enumerate()
                .map(|(i, &(begin, duration))| PerCoreStepInfo {
                    step_num: i as u32,
                    step_info_per_core: [(
                        1,
                        StepInfoResult {
                            step_num: i as u32,
                            begin_ps: begin,
                            duration_ps: duration,
                            ..StepInfoResult::default()
                        },
                    )]
                    .into(),
                    ..PerCoreStepInfo::default()
                })
                .collect(),
            ..StepDatabaseResult::default()
        }
    }

    #[test]
    fn hosts_are_aligned_on_their_overlapping_steps() {
        // Host 1 (the chief: its steps span less time) starts a step later than host 0.
        let a = steps(&[(0, 10), (10, 10), (20, 10), (30, 10)]);
        let b = steps(&[(11, 9), (20, 10), (30, 9)]);
        let hosts = vec![(0, "GPU".to_owned(), a), (1, "GPU".to_owned(), b)];
        let (db, _) = combine_step_dbs(&hosts);
        assert_eq!(db.step_sequence.len(), 3);
        let first = &db.step_sequence[0];
        assert_eq!(first.step_num, 0);
        // Host 0's second step and host 1's first, under global core ids.
        assert_eq!(first.step_info_per_core[&1].begin_ps, 10);
        assert_eq!(first.step_info_per_core[&1001].begin_ps, 11);
        assert!(first.step_info_per_core.values().all(|i| i.step_num == 0));
        assert!(!db.empty_intersect);
    }

    #[test]
    fn coordinators_are_left_out() {
        let hosts = vec![
            (0, "CPU".to_owned(), steps(&[(0, 5)])),
            (1, "GPU".to_owned(), steps(&[(100, 10), (110, 10)])),
        ];
        let (db, _) = combine_step_dbs(&hosts);
        assert_eq!(db.step_sequence.len(), 2);
        assert_eq!(
            db.step_sequence[1]
                .step_info_per_core
                .keys()
                .copied()
                .collect::<Vec<_>>(),
            vec![1001]
        );
    }

    #[test]
    fn hosts_without_steps_leave_none() {
        let hosts = vec![
            (0, "CPU".to_owned(), steps(&[])),
            (1, "CPU".to_owned(), steps(&[(0, 5)])),
        ];
        let (db, _) = combine_step_dbs(&hosts);
        assert!(db.step_sequence.is_empty());
    }
}
