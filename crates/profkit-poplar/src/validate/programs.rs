//! The checks of the program tree: indices into `programs`, and cycles.

use crate::graph::GraphProfile;
use crate::path;
use crate::program::Program;

use super::{ProblemKind, Problems, exchange_count};

/// The index checks of `programs`, `controlPrograms` and `functionPrograms`, and the search for
/// cycles.
pub(super) fn check_programs(graph: &GraphProfile, base: &str, p: &mut Problems) {
    let programs = graph.programs();
    let n = programs.len();
    let at = |key: &str| path::key(base, key);
    for key in ["controlPrograms", "functionPrograms"] {
        let list = if key == "controlPrograms" {
            &graph.control_programs
        } else {
            &graph.function_programs
        };
        if let Some(list) = list {
            p.indices(
                ProblemKind::IndexOutOfRange,
                &at(key),
                list.iter().copied(),
                n,
                "program",
            );
        }
    }
    let functions = graph.function_programs.as_deref().unwrap_or_default();
    let compute_sets = graph.num_compute_sets();
    let pp = at("programs");
    for (i, program) in programs.iter().enumerate() {
        let here = path::index(&pp, i);
        let children = program.children();
        p.indices(
            ProblemKind::IndexOutOfRange,
            &path::key(&here, "children"),
            children.iter().copied(),
            n,
            "program",
        );
        if let Some(cs) = program.compute_set() {
            match compute_sets {
                Some(len) if (cs as usize) < len => {}
                Some(len) => p.error(
                    ProblemKind::IndexOutOfRange,
                    path::key(&here, "computeSet"),
                    format!("compute set {cs} is out of range (there are {len})"),
                ),
                None => p.error(
                    ProblemKind::IndexOutOfRange,
                    path::key(&here, "computeSet"),
                    format!("compute set {cs}, but the profile has no computeSets"),
                ),
            }
        }
        if let Some((kind, ex)) = program.exchange() {
            let len = exchange_count(graph, kind);
            match len {
                Some(len) if (ex as usize) < len => {}
                Some(len) => p.error(
                    ProblemKind::IndexOutOfRange,
                    path::key(&here, "exchange"),
                    format!("exchange {ex} is out of range ({kind} has {len})"),
                ),
                None => p.error(
                    ProblemKind::IndexOutOfRange,
                    path::key(&here, "exchange"),
                    format!("exchange {ex}, but the profile has no {kind}"),
                ),
            }
        }
        if let Some(target) = program.call_target()
            && target as usize >= functions.len()
        {
            p.error(
                ProblemKind::IndexOutOfRange,
                path::key(&here, "target"),
                format!(
                    "function {target} is out of range (functionPrograms has {})",
                    functions.len()
                ),
            );
        }
        if let Program::DoExchange(ex) = program
            && let Some(by_instruction) = &ex.memory_by_instruction
            && let Some(&total) = by_instruction.get("total")
        {
            let sum = by_instruction
                .iter()
                .filter(|(k, _)| k.as_str() != "total")
                .fold(0u64, |s, (_, &v)| s.saturating_add(v));
            if sum != total {
                p.error(
                    ProblemKind::Inconsistent,
                    path::key(&path::key(&here, "memoryByInstruction"), "total"),
                    format!("total is {total}, but the other entries add up to {sum}"),
                );
            }
        }
        if let Program::Unknown(u) = program {
            p.warning(
                ProblemKind::UnknownTag,
                path::key(&here, "type"),
                format!("unknown program type {:?} (kept as it is)", u.type_name),
            );
        }
    }
    find_cycles(programs, functions, &pp, p);
}

/// The edges out of program `i`: its children, and the function it calls, each with the path
/// suffix of the field that makes the edge.
fn edges(program: &Program, functions: &[u32]) -> Vec<(u32, String)> {
    let mut out: Vec<(u32, String)> = program
        .children()
        .into_iter()
        .enumerate()
        .map(|(k, c)| (c, path::index("children", k)))
        .collect();
    if let Some(target) = program.call_target()
        && let Some(&f) = functions.get(target as usize)
    {
        out.push((f, "target".to_owned()));
    }
    out
}

/// A program being visited: its index, its edges, the next edge to follow.
type Visit = (usize, Vec<(u32, String)>, usize);

/// Reports every edge that closes a cycle of programs, found by an iterative depth-first search
/// (so that no program graph can exhaust the stack).
fn find_cycles(programs: &[Program], functions: &[u32], base: &str, p: &mut Problems) {
    const UNSEEN: u8 = 0;
    const ON_STACK: u8 = 1;
    const DONE: u8 = 2;
    let n = programs.len();
    let mut state = vec![UNSEEN; n];
    let mut stack_pos = vec![0usize; n];
    for root in 0..n {
        if state.get(root) != Some(&UNSEEN) {
            continue;
        }
        let mut stack: Vec<Visit> = Vec::new();
        if let Some(program) = programs.get(root) {
            stack.push((root, edges(program, functions), 0));
        }
        if let (Some(s), Some(sp)) = (state.get_mut(root), stack_pos.get_mut(root)) {
            *s = ON_STACK;
            *sp = 0;
        }
        while let Some((node, node_edges, next)) = stack.last_mut() {
            let node = *node;
            let Some((to, field)) = node_edges.get(*next).cloned() else {
                if let Some(s) = state.get_mut(node) {
                    *s = DONE;
                }
                stack.pop();
                continue;
            };
            *next += 1;
            let to = to as usize;
            match state.get(to).copied() {
                Some(UNSEEN) => {
                    let depth = stack.len();
                    if let (Some(s), Some(sp)) = (state.get_mut(to), stack_pos.get_mut(to)) {
                        *s = ON_STACK;
                        *sp = depth;
                    }
                    if let Some(program) = programs.get(to) {
                        stack.push((to, edges(program, functions), 0));
                    }
                }
                Some(ON_STACK) => {
                    let from = stack_pos.get(to).copied().unwrap_or(0);
                    let mut cycle: Vec<String> = stack
                        .iter()
                        .skip(from)
                        .map(|(i, _, _)| i.to_string())
                        .collect();
                    if cycle.len() > 12 {
                        let tail = cycle.split_off(cycle.len() - 4);
                        cycle.truncate(6);
                        cycle.push("...".into());
                        cycle.extend(tail);
                    }
                    cycle.push(to.to_string());
                    p.error(
                        ProblemKind::ProgramCycle,
                        format!("{}.{field}", path::index(base, node)),
                        format!(
                            "program {node} reaches program {to} again: a cycle ({}); Poplar \
                             programs cannot recurse",
                            cycle.join(" -> ")
                        ),
                    );
                }
                _ => {}
            }
        }
    }
}
