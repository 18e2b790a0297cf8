//! The program tree: control programs and functions, with their names.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::graph::GraphProfile;
use crate::program::Program;

/// How many levels of programs the tree expands. Real programs nest a few tens of levels at most;
/// the limit keeps the tree (and its JSON) shallow enough to drop, print and read back whatever
/// the profile says.
pub const MAX_TREE_DEPTH: usize = 48;

/// One program in the tree.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProgramNode {
    /// Its index in `programs`.
    pub program: u32,
    /// Its tag.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Its `name`, or for an `OnTileExecute` without one, its compute set's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The compute set an `OnTileExecute` runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute_set: Option<u32>,
    /// The exchange an exchange program runs (an index into the list its type names).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exchange: Option<u32>,
    /// The function a `Call` calls (an index into `functionPrograms`), shown under `functions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls: Option<u32>,
    /// The program appears earlier in the tree (a shared sub-program), and is not repeated.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub seen_before: bool,
    /// The program is one of its own ancestors (a cycle), and is not expanded again.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cycle: bool,
    /// The program index is out of range.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub missing: bool,
    /// The program is [`MAX_TREE_DEPTH`] levels down: its sub-programs are not expanded.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub too_deep: bool,
    /// The sub-programs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ProgramNode>,
}

/// A function program (an entry of `functionPrograms`) and its tree.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Function {
    /// Its index in `functionPrograms`.
    pub function: u32,
    /// Its tree.
    pub tree: ProgramNode,
}

/// The program structure of a graph profile.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProgramTree {
    /// How many programs there are.
    pub programs: usize,
    /// How many of each type.
    pub by_type: BTreeMap<String, usize>,
    /// The trees of the control programs.
    pub control: Vec<ProgramNode>,
    /// The trees of the functions.
    pub functions: Vec<Function>,
}

impl ProgramNode {
    /// This node and every node below it, depth first, with their depths (this node's is 0).
    pub fn walk(&self) -> Vec<(usize, &ProgramNode)> {
        let mut out = Vec::new();
        let mut stack = vec![(0, self)];
        while let Some((depth, node)) = stack.pop() {
            out.push((depth, node));
            stack.extend(node.children.iter().rev().map(|c| (depth + 1, c)));
        }
        out
    }
}

impl ProgramTree {
    /// Every node of the control programs, then of the functions, depth first, with its depth.
    pub fn walk(&self) -> Vec<(usize, &ProgramNode)> {
        self.control
            .iter()
            .chain(self.functions.iter().map(|f| &f.tree))
            .flat_map(ProgramNode::walk)
            .collect()
    }
}

fn leaf(graph: &GraphProfile, index: u32) -> ProgramNode {
    let Some(program) = graph.programs().get(index as usize) else {
        return ProgramNode {
            program: index,
            type_name: String::new(),
            name: None,
            compute_set: None,
            exchange: None,
            calls: None,
            seen_before: false,
            cycle: false,
            missing: true,
            too_deep: false,
            children: Vec::new(),
        };
    };
    let name = program.name().map(str::to_owned).or_else(|| {
        program
            .compute_set()
            .and_then(|cs| graph.compute_set_name(cs))
            .map(str::to_owned)
    });
    ProgramNode {
        program: index,
        type_name: program.type_name().to_owned(),
        name,
        compute_set: program.compute_set(),
        exchange: program.exchange().map(|(_, e)| e),
        calls: program.call_target(),
        seen_before: false,
        cycle: false,
        missing: false,
        too_deep: false,
        children: Vec::new(),
    }
}

/// Builds the tree under `root` without recursion (programs may nest deeply), marking programs
/// already expanded elsewhere (`expanded`) and cycles (`on_path` marks the ancestors of the node
/// being built).
fn build(
    graph: &GraphProfile,
    root: u32,
    expanded: &mut [bool],
    on_path: &mut [bool],
) -> ProgramNode {
    let flag = |flags: &[bool], i: u32| flags.get(i as usize).copied().unwrap_or(false);
    let set = |flags: &mut [bool], i: u32, value: bool| {
        if let Some(f) = flags.get_mut(i as usize) {
            *f = value;
        }
    };
    let start = |index: u32, depth: usize, expanded: &mut [bool], on_path: &[bool]| {
        let mut node = leaf(graph, index);
        let mut children = Vec::new();
        if !node.missing {
            if flag(on_path, index) {
                node.cycle = true;
            } else if depth >= MAX_TREE_DEPTH {
                node.too_deep = !graph
                    .programs()
                    .get(index as usize)
                    .is_none_or(|p| p.children().is_empty());
            } else if flag(expanded, index) {
                node.seen_before = true;
            } else {
                set(expanded, index, true);
                children = graph
                    .programs()
                    .get(index as usize)
                    .map(Program::children)
                    .unwrap_or_default();
            }
        }
        (node, children)
    };
    // Each frame: the node being built, its children's indices, the next child.
    let mut stack: Vec<(ProgramNode, Vec<u32>, usize)> = Vec::new();
    let (node, children) = start(root, 0, expanded, on_path);
    set(on_path, root, true);
    stack.push((node, children, 0));
    while let Some((_, children, next)) = stack.last_mut() {
        if let Some(&child) = children.get(*next) {
            *next += 1;
            let depth = stack.len();
            let (node, grandchildren) = start(child, depth, expanded, on_path);
            if grandchildren.is_empty() {
                if let Some((parent, _, _)) = stack.last_mut() {
                    parent.children.push(node);
                }
            } else {
                set(on_path, child, true);
                stack.push((node, grandchildren, 0));
            }
            continue;
        }
        let Some((done, _, _)) = stack.pop() else {
            break;
        };
        set(on_path, done.program, false);
        match stack.last_mut() {
            Some((parent, _, _)) => parent.children.push(done),
            None => return done,
        }
    }
    leaf(graph, root)
}

/// The program tree of a graph profile: each control program and each function expanded once.
pub fn program_tree(graph: &GraphProfile) -> ProgramTree {
    let programs = graph.programs();
    let mut by_type = BTreeMap::new();
    for p in programs {
        *by_type.entry(p.type_name().to_owned()).or_insert(0) += 1;
    }
    let mut expanded = vec![false; programs.len()];
    let mut on_path = vec![false; programs.len()];
    let control = graph
        .control_programs
        .iter()
        .flatten()
        .map(|&root| build(graph, root, &mut expanded, &mut on_path))
        .collect();
    let functions = graph
        .function_programs
        .iter()
        .flatten()
        .enumerate()
        .map(|(f, &root)| Function {
            function: f as u32,
            tree: build(graph, root, &mut expanded, &mut on_path),
        })
        .collect();
    ProgramTree {
        programs: programs.len(),
        by_type,
        control,
        functions,
    }
}
