//! xprof's op profile tool: the device ops of an [`OpStats`] as a tree (by program, by category,
//! or by program and provenance), each node with its time, FLOPs utilisation and memory bandwidth
//! utilisation against the device's peaks, as xprof 2.24.2 builds it
//! (`ConvertOpStatsToOpProfile`, `OpProfileBuilder`) and prints it (protobuf JSON of
//! `op_profile.proto`'s `Profile`).
//!
//! The tree, for the default grouping by program: the root (`by_program`), one node per program
//! (`name(program id)`, or `main` for a program OpStats does not name), one per op category under
//! it, one per deduplicated name under that (the group of an op and its duplicates, named
//! `<op> and its duplicate(s)`; a group of one op is replaced by the op), and the ops, with the
//! instructions fused into them (the op metrics' children). The idle time is an op of its own
//! under the root. Grouping by category leaves the program level out; grouping by provenance puts
//! the op's provenance path (its framework op name split at `/`) between program and category.
//! Each tree is built twice: with the idle time and without it (`*_exclude_idle`).
//!
//! A parent's time is the sum of its ops' self times (the root's is the database's total time),
//! its FLOPs and bytes those of its ops that have no nested ops (so that nothing counts twice).
//! Children are sorted by time (under a fusion, by FLOPs), descending, with the order libstdc++'s
//! `std::partial_sort` gives ties, and only the first 100 are kept below the program and category
//! levels.
//!
//! ```
//! use profkit_xprof::proto::{OpMetrics, OpMetricsDb, OpStats};
//! use profkit_xprof::tools::op_profile::{Grouping, op_profile};
//! let op = OpMetrics {
//!     name: "fusion.1".into(),
//!     category: "loop fusion".into(),
//!     occurrences: 2,
//!     time_ps: 4_000,
//!     self_time_ps: 4_000,
//!     ..OpMetrics::default()
//! };
//! let db = OpMetricsDb { metrics_db: vec![op], total_time_ps: 5_000, ..OpMetricsDb::default() };
//! let stats = OpStats { device_op_metrics_db: Some(db), ..OpStats::default() };
//! let profile = op_profile(&stats, Grouping::Category).unwrap();
//! let root = profile.by_category.unwrap();
//! assert_eq!(root.children[0].name, "loop fusion");
//! assert_eq!(root.children[0].children[0].name, "fusion.1");
//! ```

mod heap;
pub mod json;

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::op_stats::roofline::{giga_to_gibi, safe_divide};
use crate::op_stats::{OpStatsBuild, is_idle};
use crate::proto::op_profile::node::xla_instruction::LayoutAnalysis;
use crate::proto::op_profile::node::xla_instruction::layout_analysis::Dimension;
use crate::proto::op_profile::node::{Contents, XlaInstruction};
use crate::proto::op_profile::{Metrics, Node, Profile};
use crate::proto::{
    HardwareType, LayoutDimensionSemantics, OpMetrics, OpStats, op_metrics::TpuCoreType,
};

/// The children xprof keeps under a node below the levels it does not prune (its
/// `op_profile_limit`).
pub const CHILDREN_PER_NODE: usize = 100;

/// The deepest a provenance path or an op's nested children may go: the tree is printed
/// recursively, and xprof's own profiles stay far shallower.
pub const MAX_DEPTH: usize = 100;

/// How the op profile groups ops: the `group_by` option of xprof's tool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Grouping {
    /// By program, then category (xprof's default).
    #[default]
    Program,
    /// By category.
    Category,
    /// By program, then the op's provenance path, then category.
    Provenance,
}

impl Grouping {
    /// `GetOpProfileGrouping`: `category` and `provenance` name theirs, anything else is by
    /// program.
    pub fn from_option(value: &str) -> Self {
        match value {
            "category" => Grouping::Category,
            "provenance" => Grouping::Provenance,
            _ => Grouping::Program,
        }
    }

    fn root_name(self) -> &'static str {
        match self {
            Grouping::Program => "by_program",
            Grouping::Category => "by_category",
            Grouping::Provenance => "by_provenance",
        }
    }
}

/// The op profile of `stats`, grouped as asked, as xprof 2.24.2 builds it.
pub fn op_profile(stats: &OpStats, group_by: Grouping) -> Result<Profile> {
    let db = stats.device_op_metrics_db.clone().unwrap_or_default();
    check_depth(&db.metrics_db)?;
    // The run environment's hardware type (xprof 2.24.2 names it, not the device type string:
    // a TPU without a device type string is a TPU).
    let hardware = stats
        .run_environment
        .as_ref()
        .map_or(0, |e| e.hardware_type);
    let mut profile = Profile {
        device_type: HardwareType::try_from(hardware)
            .unwrap_or(HardwareType::UnknownHardware)
            .as_str_name()
            .to_owned(),
        agg_dvfs_time_scale_multiplier: safe_divide(
            db.normalized_total_op_time_ps as f64,
            db.total_op_time_ps as f64,
        ),
        ..Profile::default()
    };
    let tree = |exclude_idle| Some(build_tree(stats, group_by, exclude_idle));
    match group_by {
        Grouping::Program => {
            profile.by_program = tree(false);
            profile.by_program_exclude_idle = tree(true);
        }
        Grouping::Category => {
            profile.by_category = tree(false);
            profile.by_category_exclude_idle = tree(true);
        }
        Grouping::Provenance => {
            profile.by_provenance = tree(false);
            profile.by_provenance_exclude_idle = tree(true);
        }
    }
    Ok(profile)
}

/// The JSON text xprof 2.24.2 returns for the op profile of `stats`.
pub fn op_profile_json(stats: &OpStats, group_by: Grouping) -> Result<String> {
    Ok(json::to_json(&op_profile(stats, group_by)?))
}

/// What of the op profile of `built` is not xprof's, each gap ending with the JSON fields it
/// touches (`(op_profile fields: a, b)`; `all` any field): the parts of OpStats not built
/// ([`OpStatsBuild::missing`]) that the op profile shows (among them the HLO text of GPU HLO ops
/// and of fused instructions that OpStats does not print), and the kernel
/// metadata xprof parses from the HLO expressions that carry some (`xprof_metadata`).
pub fn missing(built: &OpStatsBuild) -> Vec<String> {
    const FLOPS: &str = "flops, uncappedFlops, rawFlops, bf16Flops";
    const BYTES: &str = "bandwidthUtils, rawBytesAccessedArray";
    let mut gaps = Vec::new();
    // The op metrics' gaps: the steps database, the kernel stats and the device's busy time are
    // no part of the op profile.
    let op_metrics: Vec<&str> = built.missing_op_metrics().collect();
    for m in &built.missing {
        let op_profile_only = m.contains("fused instructions");
        let fields = if !op_metrics.contains(&m.as_str()) && !op_profile_only {
            continue;
        } else if m.contains("TensorCore utilization") {
            // The kernel stats' TensorCore use, which the op profile does not show.
            continue;
        } else if m.contains("cost model") {
            format!("{FLOPS}, {BYTES}")
        } else if m.contains("peaks") {
            "flops, uncappedFlops, bandwidthUtils".to_owned()
        } else if m.contains("XLA's printer") || m.contains("fused instructions") {
            "expression".to_owned()
        } else {
            "all".to_owned()
        };
        gaps.push(format!("{m} (op_profile fields: {fields})"));
    }
    let ops = built
        .op_stats
        .device_op_metrics_db
        .iter()
        .flat_map(|db| &db.metrics_db);
    let mut stack: Vec<&OpMetrics> = ops.collect();
    while let Some(op) = stack.pop() {
        if op.long_name.contains("xprof_metadata") {
            gaps.push(
                "the kernel metadata of ops whose HLO expression has `xprof_metadata` (op_profile fields: xprofKernelMetadata)"
                    .to_owned(),
            );
            break;
        }
        stack.extend(op.children.iter().flat_map(|c| &c.metrics_db));
    }
    gaps
}

/// Refuses ops whose children or provenance nest deeper than [`MAX_DEPTH`].
fn check_depth(ops: &[OpMetrics]) -> Result<()> {
    let too_deep = |what: &str, depth| Error::TooDeep {
        tool: "op_profile",
        what: what.to_owned(),
        depth,
        max: MAX_DEPTH,
    };
    let mut stack: Vec<(&OpMetrics, usize)> = ops.iter().map(|op| (op, 1)).collect();
    while let Some((op, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            return Err(too_deep(&op.name, depth));
        }
        let parts = op.provenance.split('/').filter(|p| !p.is_empty()).count();
        if parts > MAX_DEPTH {
            return Err(too_deep(&op.provenance, parts));
        }
        if let Some(children) = &op.children {
            stack.extend(children.metrics_db.iter().map(|c| (c, depth + 1)));
        }
    }
    Ok(())
}

/// A node while the tree is built: its accumulated op metrics (xprof's `metrics_` map) beside it.
#[derive(Default)]
struct Building {
    name: String,
    xla: Option<XlaInstruction>,
    children: Vec<usize>,
    metrics: Option<OpMetrics>,
}

/// `OpProfileBuilder`: the nodes in an arena (index 0 the root), and the maps that find a
/// program's, a category's, a duplicate group's and a provenance part's node again.
struct Builder<'a> {
    group_by: Grouping,
    nodes: Vec<Building>,
    programs: HashMap<u64, usize>,
    /// (parent node, category) to the category's node.
    categories: HashMap<(usize, String), usize>,
    /// (category node, deduplicated name) to the group's node.
    groups: HashMap<(usize, String), usize>,
    /// (parent node, provenance part) to the part's node.
    provenance: HashMap<(usize, String), usize>,
    program_names: &'a std::collections::BTreeMap<u64, String>,
}

fn build_tree(stats: &OpStats, group_by: Grouping, exclude_idle: bool) -> Node {
    let db = stats.device_op_metrics_db.clone().unwrap_or_default();
    let mut b = Builder {
        group_by,
        nodes: vec![Building {
            name: group_by.root_name().to_owned(),
            ..Building::default()
        }],
        programs: HashMap::new(),
        categories: HashMap::new(),
        groups: HashMap::new(),
        provenance: HashMap::new(),
        program_names: &stats.program_id_to_name_map,
    };
    for op in &db.metrics_db {
        // Ops that cannot be symbolized.
        if op.name.starts_with("region") || (exclude_idle && is_idle(op)) {
            continue;
        }
        b.add_op(op);
    }
    let perf = stats.perf_env.clone().unwrap_or_default();
    let peak_gflops = perf.peak_tera_flops_per_second * 1e3;
    let peak_bws: Vec<f64> = perf
        .peak_bws_giga_bytes_per_second
        .iter()
        .map(|bw| giga_to_gibi(*bw))
        .collect();
    let total = if exclude_idle {
        db.total_op_time_ps
    } else {
        db.total_time_ps
    };
    b.nodes[0]
        .metrics
        .get_or_insert_with(Default::default)
        .time_ps = total;
    let mut root = b.finish(0, peak_gflops, &peak_bws, total);
    let level = match group_by {
        Grouping::Program => 2,
        Grouping::Category => 1,
        Grouping::Provenance => 100,
    };
    sort_and_prune(&mut root, CHILDREN_PER_NODE, level);
    finalize_groups(&mut root);
    root
}

impl Builder<'_> {
    fn add_child(&mut self, parent: usize, name: String) -> usize {
        let id = self.nodes.len();
        self.nodes.push(Building {
            name,
            ..Building::default()
        });
        self.nodes[parent].children.push(id);
        id
    }

    fn metrics(&mut self, node: usize) -> &mut OpMetrics {
        self.nodes[node]
            .metrics
            .get_or_insert_with(Default::default)
    }

    /// `OpProfileBuilder::AddOp`.
    fn add_op(&mut self, op: &OpMetrics) {
        update_node_metrics(op, self.metrics(0));
        let idle = is_idle(op);
        let mut program = None;
        if !idle && self.group_by != Grouping::Category {
            let node = self.program_node(op.hlo_module_id);
            update_node_metrics(op, self.metrics(node));
            program = Some(node);
        }
        // An op with nested ops (other than SparseCore ones) counts in its parents only, so that
        // its children's time, FLOPs and bytes are not counted twice.
        let has_children = children_time_ps(op) > 0;
        let has_sparse_core_children = has_children
            && op.children.as_ref().is_some_and(|c| {
                c.metrics_db
                    .iter()
                    .any(|m| m.core_type == TpuCoreType::SparseCore as i32)
            });
        if has_children && !has_sparse_core_children {
            return;
        }
        let grouping: Vec<usize> = if idle {
            vec![self.add_op_node(op, 0)]
        } else {
            let mut parent = program.unwrap_or(0);
            if self.group_by == Grouping::Provenance && !op.provenance.is_empty() {
                for part in parse_provenance(&op.provenance) {
                    let key = (parent, part.clone());
                    let node = match self.provenance.get(&key) {
                        Some(n) => *n,
                        None => {
                            let n = self.add_child(parent, part);
                            self.provenance.insert(key, n);
                            n
                        }
                    };
                    update_node_metrics(op, self.metrics(node));
                    parent = node;
                }
            }
            let key = (parent, op.category.clone());
            let category = match self.categories.get(&key) {
                Some(n) => *n,
                None => {
                    let n = self.add_child(parent, op.category.clone());
                    self.categories.insert(key, n);
                    n
                }
            };
            let dedup = if op.deduplicated_name.is_empty() {
                &op.name
            } else {
                &op.deduplicated_name
            };
            let key = (category, dedup.clone());
            let group = match self.groups.get(&key) {
                Some(n) => *n,
                None => {
                    let n = self.add_child(category, dedup.clone());
                    self.groups.insert(key, n);
                    n
                }
            };
            let leaf = self.add_op_node(op, group);
            vec![category, group, leaf]
        };
        for node in grouping {
            crate::op_stats::combine_op(op, self.metrics(node), false);
        }
    }

    /// `LookupOrAddProgramNode`.
    fn program_node(&mut self, id: u64) -> usize {
        if let Some(n) = self.programs.get(&id) {
            return *n;
        }
        // `HloModuleNameWithProgramId`.
        let name = self
            .program_names
            .get(&id)
            .map_or_else(|| "main".to_owned(), |n| format!("{n}({id})"));
        let n = self.add_child(0, name);
        self.programs.insert(id, n);
        n
    }

    /// `AddOpNode`: the op's node under `parent`, with the instructions fused into it.
    fn add_op_node(&mut self, op: &OpMetrics, parent: usize) -> usize {
        let leaf = self.add_child(parent, op.name.clone());
        self.nodes[leaf].xla = Some(symbol(op));
        self.insert_fused(op, leaf);
        leaf
    }

    /// `InsertFusedInstructions`: a node per child op, recursively (depth checked beforehand).
    fn insert_fused(&mut self, op: &OpMetrics, node: usize) {
        let Some(children) = &op.children else {
            return;
        };
        for child in &children.metrics_db {
            let n = self.add_child(node, child.name.clone());
            self.nodes[n].xla = Some(symbol(child));
            crate::op_stats::combine_op(child, self.metrics(n), false);
            self.insert_fused(child, n);
        }
    }

    /// The node `id` and its subtree as protobuf nodes, each with its metrics filled in
    /// (`PopulateOpMetricsNode`).
    fn finish(&mut self, id: usize, peak_gflops: f64, peak_bws: &[f64], total: u64) -> Node {
        let b = std::mem::take(&mut self.nodes[id]);
        let children = b
            .children
            .iter()
            .map(|c| self.finish(*c, peak_gflops, peak_bws, total))
            .collect();
        Node {
            name: b.name,
            metrics: b
                .metrics
                .map(|m| node_metrics(&m, peak_gflops, peak_bws, total)),
            children,
            contents: b.xla.map(Contents::Xla),
            ..Node::default()
        }
    }
}

/// `ParseProvenance`: the parts between `/`, empty ones dropped, the last cut at its first `:`.
fn parse_provenance(provenance: &str) -> Vec<String> {
    let mut parts: Vec<String> = provenance
        .split('/')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();
    if let Some(last) = parts.last_mut()
        && let Some(colon) = last.find(':')
    {
        last.truncate(colon);
    }
    parts
}

/// `ChildrenTimePs`, wrapping as xprof's unsigned subtraction does.
fn children_time_ps(op: &OpMetrics) -> u64 {
    op.time_ps.wrapping_sub(op.self_time_ps)
}

/// `UpdateNodeMetrics`: a parent's time from its op's self time; FLOPs and bytes only from ops
/// without nested ops.
#[allow(deprecated)] // xprof sums the deprecated FLOPs too.
fn update_node_metrics(child: &OpMetrics, parent: &mut OpMetrics) {
    parent.time_ps = parent.time_ps.wrapping_add(child.self_time_ps);
    parent.normalized_time_ps = parent
        .normalized_time_ps
        .wrapping_add(child.normalized_time_ps);
    parent.self_time_ps = parent.self_time_ps.wrapping_add(child.self_time_ps);
    if children_time_ps(child) == 0 {
        parent.flops = parent.flops.wrapping_add(child.flops);
        parent.model_flops = parent.model_flops.wrapping_add(child.model_flops);
        parent.flops_v2 += child.flops_v2;
        parent.model_flops_v2 += child.model_flops_v2;
        parent.bytes_accessed = parent.bytes_accessed.wrapping_add(child.bytes_accessed);
        parent.dma_stall_ps = parent.dma_stall_ps.wrapping_add(child.dma_stall_ps);
        let only = OpMetrics {
            memory_accessed_breakdown: child.memory_accessed_breakdown.clone(),
            ..OpMetrics::default()
        };
        let mut breakdown = OpMetrics {
            memory_accessed_breakdown: std::mem::take(&mut parent.memory_accessed_breakdown),
            occurrences: 1,
            ..OpMetrics::default()
        };
        crate::op_stats::combine_op(&only, &mut breakdown, false);
        parent.memory_accessed_breakdown = breakdown.memory_accessed_breakdown;
    }
}

/// `PopulateSymbolNode`: what identifies the op.
fn symbol(op: &OpMetrics) -> XlaInstruction {
    let layout = op
        .layout
        .as_ref()
        .filter(|l| !l.dimensions.is_empty())
        .map(|l| LayoutAnalysis {
            dimensions: l
                .dimensions
                .iter()
                .map(|d| Dimension {
                    size: d.size,
                    alignment: d.alignment,
                    semantics: LayoutDimensionSemantics::try_from(d.semantics)
                        .map_or_else(|_| String::new(), |s| s.as_str_name().to_ascii_lowercase()),
                })
                .collect(),
        });
    XlaInstruction {
        program_id: op.hlo_module_id,
        expression: op.long_name.clone(),
        xprof_kernel_metadata: Some(String::new()),
        fingerprint: op.fingerprint,
        category: op.category.clone(),
        provenance: op.provenance.clone(),
        layout,
        computation_primitive_size: op.computation_primitive_size,
        source_info: Some(op.source_info.clone().unwrap_or_default()),
        ..XlaInstruction::default()
    }
}

/// `CapUtilization`: `std::min(u, 1.0)`, which keeps a NaN.
fn cap(u: f64) -> f64 {
    if 1.0 < u { 1.0 } else { u }
}

/// TSL's `GibiToGiga`.
fn gibi_to_giga(gibi: f64) -> f64 {
    gibi * ((1u64 << 30) as f64 / 1.0e9)
}

/// `PicoToNano`.
fn pico_to_nano(ps: u64) -> f64 {
    ps as f64 / 1e3
}

/// `OpMetrics::MemoryAccessed::OperationType`.
const READ: i32 = 1;
const WRITE: i32 = 2;
/// `MemorySpace`: HBM, and every other space counted as on chip.
const HBM: u64 = 1;
const ON_CHIP: u64 = 2_147_483_646;

/// `GigaBytesPerSecondPerCore` for a memory space and access kind.
fn giga_bytes_per_second(op: &OpMetrics, space: u64, kind: i32) -> f64 {
    let mut bytes = 0u64;
    for b in &op.memory_accessed_breakdown {
        if b.operation_type != kind {
            continue;
        }
        if (space == HBM && b.memory_space == HBM) || (space == ON_CHIP && b.memory_space != HBM) {
            bytes = bytes.wrapping_add(b.bytes_accessed);
        }
    }
    safe_divide(bytes as f64, pico_to_nano(op.time_ps))
}

/// `PopulateOpMetricsNode`: a node's figures from its accumulated op metrics.
fn node_metrics(op: &OpMetrics, peak_gflops: f64, peak_bws: &[f64], total: u64) -> Metrics {
    let time = op.time_ps as f64;
    // `GigaFlopsPerSecondPerCoreNormalizedOnDvfs`.
    let mut gflops = safe_divide(op.flops_v2, pico_to_nano(op.time_ps));
    if op.normalized_time_ps != 0 {
        gflops *= safe_divide(time, op.normalized_time_ps as f64);
    }
    let uncapped = safe_divide(gflops, peak_gflops);
    let fraction = safe_divide(time, total as f64);
    let peak = |i: usize| peak_bws.get(i).copied().unwrap_or(0.0);
    let hbm = giga_to_gibi(giga_bytes_per_second(op, HBM, READ))
        + giga_to_gibi(giga_bytes_per_second(op, HBM, WRITE));
    let sram_rd = giga_to_gibi(giga_bytes_per_second(op, ON_CHIP, READ));
    let sram_wr = giga_to_gibi(giga_bytes_per_second(op, ON_CHIP, WRITE));
    let ns = pico_to_nano(op.time_ps);
    Metrics {
        flops: cap(uncapped) * fraction,
        uncapped_flops: uncapped * fraction,
        bandwidth_utils: vec![
            cap(safe_divide(hbm, peak(0))),
            cap(safe_divide(sram_rd, peak(1))),
            cap(safe_divide(sram_wr, peak(2))),
        ],
        raw_time: time,
        raw_flops: op.model_flops_v2,
        bf16_flops: op.flops_v2,
        normalized_time_ps: op.normalized_time_ps as f64,
        raw_bytes_accessed_array: vec![
            gibi_to_giga(hbm) * ns,
            gibi_to_giga(sram_rd) * ns,
            gibi_to_giga(sram_wr) * ns,
        ],
        occurrences: op.occurrences,
        avg_time_ps: safe_divide(time, f64::from(op.occurrences)),
    }
}

fn is_fusion(category: &str) -> bool {
    category.ends_with(" fusion")
}

/// `SortAndPruneChildren`: counts the children, sorts them by time (under a fusion, by FLOPs),
/// descending, and keeps the first `k` at levels below `level`.
fn sort_and_prune(node: &mut Node, k: usize, level: i32) {
    node.num_children = i32::try_from(node.children.len()).unwrap_or(i32::MAX);
    for child in &mut node.children {
        sort_and_prune(child, k, level - 1);
    }
    let k = if level > 0 { node.children.len() } else { k };
    if node.children.len() > 1 {
        let fusion = matches!(&node.contents, Some(Contents::Xla(x)) if is_fusion(&x.category));
        let key = |n: &Node| {
            n.metrics
                .as_ref()
                .map_or(0.0, |m| if fusion { m.raw_flops } else { m.raw_time })
        };
        let mut order: Vec<(f64, usize)> = node
            .children
            .iter()
            .enumerate()
            .map(|(i, c)| (key(c), i))
            .collect();
        heap::partial_sort(&mut order, k, &|a, b| a.0 > b.0);
        order.truncate(k);
        let mut old: Vec<Option<Node>> = std::mem::take(&mut node.children)
            .into_iter()
            .map(Some)
            .collect();
        node.children = order
            .iter()
            .filter_map(|(_, i)| old.get_mut(*i).and_then(Option::take))
            .collect();
    }
}

/// `FinalizeDeduplicatedNodes`: a group of one op becomes the op; a group of several is named
/// after its first op and takes that op's identity.
fn finalize_groups(node: &mut Node) {
    let has_xla = |n: &Node| matches!(n.contents, Some(Contents::Xla(_)));
    let is_group = !node.children.is_empty() && !has_xla(node) && node.children.iter().all(has_xla);
    if !is_group {
        for child in &mut node.children {
            finalize_groups(child);
        }
        return;
    }
    if node.children.len() == 1 {
        if let Some(child) = node.children.pop() {
            *node = child;
        }
        return;
    }
    let Some(Node {
        name: top_name,
        contents: Some(Contents::Xla(top)),
        ..
    }) = node.children.first()
    else {
        return;
    };
    node.name = format!("{top_name} and its duplicate(s)");
    let mut xla = XlaInstruction {
        program_id: top.program_id,
        expression: top.expression.clone(),
        xprof_kernel_metadata: top.xprof_kernel_metadata.clone(),
        source_info: top.source_info.clone(),
        fingerprint: top.fingerprint,
        category: top.category.clone(),
        ..XlaInstruction::default()
    };
    if !is_fusion(&top.category) {
        xla.provenance.clone_from(&top.provenance);
        xla.layout = Some(top.layout.clone().unwrap_or_default());
    }
    node.contents = Some(Contents::Xla(xla));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provenance_parts() {
        assert_eq!(
            parse_provenance("jit(f)/jit(main)/add:"),
            vec!["jit(f)", "jit(main)", "add"]
        );
        assert_eq!(parse_provenance("//a//b:c:d"), vec!["a", "b"]);
        assert!(parse_provenance("").is_empty());
    }

    #[test]
    fn grouping_options() {
        assert_eq!(Grouping::from_option("category"), Grouping::Category);
        assert_eq!(Grouping::from_option("provenance"), Grouping::Provenance);
        assert_eq!(Grouping::from_option("anything"), Grouping::Program);
    }

    fn op(name: &str, dedup: &str, category: &str, program: u64, time: u64) -> OpMetrics {
        OpMetrics {
            name: name.into(),
            deduplicated_name: dedup.into(),
            category: category.into(),
            hlo_module_id: program,
            occurrences: 1,
            time_ps: time,
            self_time_ps: time,
            ..OpMetrics::default()
        }
    }

    fn stats(ops: Vec<OpMetrics>, total: u64) -> OpStats {
        let db = crate::proto::OpMetricsDb {
            total_op_time_ps: ops
                .iter()
                .filter(|o| !is_idle(o))
                .map(|o| o.self_time_ps)
                .sum(),
            metrics_db: ops,
            total_time_ps: total,
            ..Default::default()
        };
        OpStats {
            device_op_metrics_db: Some(db),
            program_id_to_name_map: [(7, "jit_f".to_owned())].into_iter().collect(),
            ..OpStats::default()
        }
    }

    #[test]
    fn programs_categories_and_duplicate_groups() {
        let s = stats(
            vec![
                op("copy.1", "copy.3", "copy", 7, 300),
                op("copy.3", "", "copy", 7, 200),
                op("fusion.4", "", "loop fusion", 7, 100),
                op("add.1", "", "add", 9, 50),
                op(crate::op_stats::IDLE, "", crate::op_stats::IDLE, 0, 350),
            ],
            1_000,
        );
        let profile = op_profile(&s, Grouping::Program).unwrap();
        let root = profile.by_program.unwrap();
        let names = |n: &Node| {
            n.children
                .iter()
                .map(|c| c.name.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(root.name, "by_program");
        assert_eq!(names(&root), vec!["jit_f(7)", "IDLE", "main"]);
        assert_eq!(root.metrics.as_ref().unwrap().raw_time, 1_000.0);
        let program = &root.children[0];
        assert_eq!(names(program), vec!["copy", "loop fusion"]);
        // A group of duplicates is named after its slowest op; a group of one is the op.
        let copy = &program.children[0];
        assert_eq!(names(copy), vec!["copy.1 and its duplicate(s)"]);
        assert_eq!(names(&copy.children[0]), vec!["copy.1", "copy.3"]);
        assert_eq!(names(&program.children[1]), vec!["fusion.4"]);
        let without_idle = profile.by_program_exclude_idle.unwrap();
        assert_eq!(names(&without_idle), vec!["jit_f(7)", "main"]);
        assert_eq!(without_idle.metrics.unwrap().raw_time, 650.0);
        let json = op_profile_json(&s, Grouping::Category).unwrap();
        assert!(json.starts_with(r#"{"byCategory":{"name":"by_category","metrics":{"flops":0,"#));
        assert!(json.ends_with(r#""aggDvfsTimeScaleMultiplier":0}"#));
    }

    #[test]
    fn too_deep_provenance_is_an_error() {
        let op = OpMetrics {
            name: "x".into(),
            provenance: "a/".repeat(MAX_DEPTH + 1),
            ..OpMetrics::default()
        };
        let db = crate::proto::OpMetricsDb {
            metrics_db: vec![op],
            ..Default::default()
        };
        let stats = OpStats {
            device_op_metrics_db: Some(db),
            ..OpStats::default()
        };
        assert!(matches!(
            op_profile(&stats, Grouping::Provenance),
            Err(Error::TooDeep { .. })
        ));
    }
}
