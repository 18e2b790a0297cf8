//! The instructions fused into TPU ops, from the programs' HLO protos (xprof's
//! `UpdateOpMetricsDbFromHloModuleMap` over each TensorCore plane's and each SparseCore module's
//! op metrics).
//!
//! An op whose program's module has an instruction of the op's name that is a fusion gets, as
//! children, the instructions of the fusion's computation in the computation's order, parameters
//! and tuples left out; a fused instruction that is itself a fusion gets its own the same way.
//! Each child is what xprof's `EnterOpMetadata` makes of its instruction: its name, XLA's category
//! ([`hlo_text::category`]), the deduplicated name of its metadata, its provenance
//! `op_name:op_type` (TraceMe's op name, `:` when the metadata has neither), one core, one
//! occurrence, no time, no FLOPs or bytes (xprof runs no cost analysis on TPU programs), and its
//! HLO text as the expression ([`hlo_text::expression`]). The children go after any the op
//! already has.
//!
//! xprof reads a module only when XLA accepts it; a module whose fusions call computations it
//! lacks, or call each other in a cycle, is one XLA refuses, so no op of it gets children here.
//! Nesting deeper than [`MAX_FUSION_DEPTH`] is refused the same way. The HLO text the children of
//! one build hold is bounded ([`MAX_TEXT_BYTES`]); past it expressions are left empty and named.

use std::collections::{BTreeSet, HashMap};

use super::hlo::{HloInstructionProto, HloModule, HloModuleMap, tf_op_full_name_always};
use super::hlo_text;
use crate::proto::{OpMetrics, OpMetricsDb};

/// The deepest fusions may nest in a module this reads (real programs nest a level or two): each
/// level of children is two messages deeper in the OpStats file, which protobuf's readers (xprof's
/// and prost) refuse past 100 levels.
pub(crate) const MAX_FUSION_DEPTH: usize = 16;

/// The most bytes of HLO text the fused children of one build hold: each expression is cut at a
/// million bytes, but a module of many instructions whose operands have large shapes could
/// otherwise make far more text than the module's own size.
pub(crate) const MAX_TEXT_BYTES: usize = 256 << 20;

/// What the fused children of a database's ops could not reproduce.
#[derive(Debug)]
pub(crate) struct Gaps {
    /// The most bytes of HLO text to hold ([`MAX_TEXT_BYTES`]).
    pub budget: usize,
    /// Opcodes of fused instructions whose HLO text is not printed (their expression is empty).
    pub unprinted: BTreeSet<String>,
    /// Bytes of HLO text held so far.
    pub text_bytes: usize,
    /// Whether some text was left out for the budget.
    pub over_budget: bool,
}

impl Default for Gaps {
    fn default() -> Self {
        Gaps {
            budget: MAX_TEXT_BYTES,
            unprinted: BTreeSet::new(),
            text_bytes: 0,
            over_budget: false,
        }
    }
}

/// Whether every fusion of `module` calls a computation the module has, without cycles or
/// nesting deeper than [`MAX_FUSION_DEPTH`].
fn fusions_valid(module: &HloModule) -> bool {
    // The call graph of fusions between computations (by index), with each node's in-degree.
    let n = module.proto.computations.len();
    let mut calls: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut callers = vec![0usize; n];
    for (c, computation) in module.proto.computations.iter().enumerate() {
        for i in computation
            .instructions
            .iter()
            .filter(|i| i.opcode == "fusion")
        {
            let Some(callee) = i
                .called_computation_ids
                .first()
                .and_then(|id| module.computation_index(*id))
            else {
                return false;
            };
            calls[c].push(callee);
            callers[callee] += 1;
        }
    }
    // Kahn's order: every computation is reached only when the graph has no cycle; each one's
    // depth is the longest chain of fusions calling it.
    let mut depth = vec![0usize; n];
    let mut ready: Vec<usize> = (0..n).filter(|c| callers[*c] == 0).collect();
    let mut seen = 0;
    while let Some(c) = ready.pop() {
        seen += 1;
        if depth[c] > MAX_FUSION_DEPTH {
            return false;
        }
        for callee in std::mem::take(&mut calls[c]) {
            depth[callee] = depth[callee].max(depth[c] + 1);
            callers[callee] -= 1;
            if callers[callee] == 0 {
                ready.push(callee);
            }
        }
    }
    seen == n
}

/// The fused children of `instruction` (a fusion), each with its own, as xprof's
/// `AddFusionChildrenToOpMetricsFromHloInstruction` builds them.
fn fused_children(
    module: &HloModule,
    instruction: &HloInstructionProto,
    depth: usize,
    gaps: &mut Gaps,
) -> Vec<OpMetrics> {
    if instruction.opcode != "fusion" || depth > MAX_FUSION_DEPTH {
        return Vec::new();
    }
    let Some(computation) = instruction
        .called_computation_ids
        .first()
        .and_then(|id| module.computation(*id))
    else {
        return Vec::new();
    };
    let mut children = Vec::new();
    for fused in &computation.instructions {
        if fused.opcode == "parameter" || fused.opcode == "tuple" {
            continue;
        }
        // xprof's wrapper of a fused instruction is the module's first of that name.
        let fused = module.instruction(&fused.name).unwrap_or(fused);
        let expression = if gaps.text_bytes > gaps.budget {
            gaps.over_budget = true;
            String::new()
        } else {
            hlo_text::expression(module, fused).unwrap_or_else(|_| {
                gaps.unprinted.insert(fused.opcode.clone());
                String::new()
            })
        };
        gaps.text_bytes = gaps.text_bytes.saturating_add(expression.len());
        let mut child = OpMetrics {
            name: fused.name.clone(),
            category: hlo_text::category(module, fused),
            deduplicated_name: fused
                .metadata
                .as_ref()
                .map(|m| m.deduplicated_name.clone())
                .unwrap_or_default(),
            provenance: tf_op_full_name_always(fused.metadata.as_ref()),
            num_cores: 1,
            occurrences: 1,
            long_name: expression,
            ..OpMetrics::default()
        };
        let nested = fused_children(module, fused, depth + 1, gaps);
        if !nested.is_empty() {
            child.children = Some(OpMetricsDb {
                metrics_db: nested,
                ..OpMetricsDb::default()
            });
        }
        children.push(child);
    }
    children
}

/// `UpdateOpMetricsDbFromHloModuleMap`: each op of `db` that is a fusion of a module of `map`
/// gets its fused instructions as children.
pub(crate) fn add_fused_children(db: &mut OpMetricsDb, map: &HloModuleMap, gaps: &mut Gaps) {
    let mut valid: HashMap<u64, bool> = HashMap::new();
    for op in &mut db.metrics_db {
        let Some((module, instruction)) = map.instruction(Some(op.hlo_module_id), &op.name) else {
            continue;
        };
        if !*valid
            .entry(op.hlo_module_id)
            .or_insert_with(|| fusions_valid(module))
        {
            continue;
        }
        let children = fused_children(module, instruction, 0, gaps);
        if children.is_empty() {
            continue;
        }
        op.children
            .get_or_insert_with(OpMetricsDb::default)
            .metrics_db
            .extend(children);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op_stats::hlo::xla::{HloComputationProto, LayoutProto, LiteralProto, TileProto};
    use crate::op_stats::hlo::{HloModuleProto, OpMetadata, ShapeProto};

    const F32: i32 = 11;

    fn shape(dims: &[i64]) -> ShapeProto {
        ShapeProto {
            element_type: F32,
            dimensions: dims.to_vec(),
            layout: Some(Box::new(LayoutProto {
                minor_to_major: (0..dims.len() as i64).rev().collect(),
                tiles: vec![TileProto {
                    dimensions: vec![8, 128],
                }],
                tail_padding_alignment_in_elements: 1,
                ..LayoutProto::default()
            })),
            ..ShapeProto::default()
        }
    }

    fn ins(id: i64, name: &str, opcode: &str, operands: &[i64]) -> HloInstructionProto {
        HloInstructionProto {
            id,
            name: name.into(),
            opcode: opcode.into(),
            shape: Some(shape(&[16, 256])),
            operand_ids: operands.to_vec(),
            ..HloInstructionProto::default()
        }
    }

    fn fusion(id: i64, name: &str, calls: i64, operands: &[i64]) -> HloInstructionProto {
        HloInstructionProto {
            fusion_kind: "kLoop".into(),
            called_computation_ids: vec![calls],
            ..ins(id, name, "fusion", operands)
        }
    }

    fn computation(
        id: i64,
        name: &str,
        instructions: Vec<HloInstructionProto>,
    ) -> HloComputationProto {
        HloComputationProto {
            id,
            name: name.into(),
            instructions,
            ..HloComputationProto::default()
        }
    }

    /// A program: `fusion.1` in the entry computation calls `fused_computation`, which holds a
    /// parameter, a constant, a nested fusion (calling `fused_computation.1`), a multiply and a
    /// tuple of its results.
    fn module() -> HloModuleProto {
        let mut constant = ins(11, "constant.1", "constant", &[]);
        constant.shape = Some(ShapeProto {
            element_type: F32,
            ..ShapeProto::default()
        });
        constant.literal = Some(LiteralProto {
            f32s: vec![0.5],
            ..LiteralProto::default()
        });
        let mut multiply = ins(13, "multiply.1", "multiply", &[10, 12]);
        multiply.metadata = Some(OpMetadata {
            op_name: "jit(f)/mul".into(),
            deduplicated_name: "multiply.0".into(),
            ..OpMetadata::default()
        });
        let mut tuple = ins(14, "tuple.1", "tuple", &[13, 12]);
        tuple.shape = Some(ShapeProto {
            element_type: 13,
            tuple_shapes: vec![shape(&[16, 256]), shape(&[16, 256])],
            ..ShapeProto::default()
        });
        HloModuleProto {
            name: "jit_f".into(),
            computations: vec![
                computation(
                    3,
                    "fused_computation.1",
                    vec![
                        ins(20, "param_0.1", "parameter", &[]),
                        ins(21, "negate.1", "negate", &[20]),
                    ],
                ),
                computation(
                    2,
                    "fused_computation",
                    vec![
                        ins(10, "param_0", "parameter", &[]),
                        constant,
                        fusion(12, "fusion.2", 3, &[10]),
                        multiply,
                        tuple,
                    ],
                ),
                computation(
                    1,
                    "main",
                    vec![
                        ins(1, "p", "parameter", &[]),
                        fusion(2, "fusion.1", 2, &[1]),
                    ],
                ),
            ],
            entry_computation_id: 1,
            ..HloModuleProto::default()
        }
    }

    fn db(names: &[&str]) -> OpMetricsDb {
        OpMetricsDb {
            metrics_db: names
                .iter()
                .map(|n| OpMetrics {
                    name: (*n).into(),
                    hlo_module_id: 7,
                    ..OpMetrics::default()
                })
                .collect(),
            ..OpMetricsDb::default()
        }
    }

    fn map(module: HloModuleProto) -> HloModuleMap {
        HloModuleMap::from_modules([(7, module)])
    }

    #[test]
    fn fused_instructions_in_order_without_parameters_and_tuples() {
        let mut ops = db(&["fusion.1", "p", "unknown"]);
        let mut gaps = Gaps::default();
        add_fused_children(&mut ops, &map(module()), &mut gaps);
        assert!(gaps.unprinted.is_empty());
        let children = &ops.metrics_db[0].children.as_ref().unwrap().metrics_db;
        let names: Vec<&str> = children.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["constant.1", "fusion.2", "multiply.1"]);
        let constant = &children[0];
        assert_eq!(constant.long_name, "%constant.1 = f32[] constant(0.5)");
        assert_eq!(constant.category, "non-fusion elementwise");
        assert_eq!(constant.provenance, ":");
        assert_eq!((constant.occurrences, constant.num_cores), (1, 1));
        let nested = &children[1];
        assert_eq!(nested.category, "loop fusion");
        assert_eq!(
            nested.long_name,
            "%fusion.2 = f32[16,256]{1,0:T(8,128)} fusion(f32[16,256]{1,0:T(8,128)} %param_0), kind=kLoop, calls=%fused_computation.1"
        );
        let inner = &nested.children.as_ref().unwrap().metrics_db;
        assert_eq!(inner.len(), 1);
        assert_eq!(inner[0].name, "negate.1");
        let multiply = &children[2];
        assert_eq!(multiply.provenance, "jit(f)/mul:");
        assert_eq!(multiply.deduplicated_name, "multiply.0");
        assert_eq!(
            multiply.long_name,
            "%multiply.1 = f32[16,256]{1,0:T(8,128)} multiply(f32[16,256]{1,0:T(8,128)} %param_0, f32[16,256]{1,0:T(8,128)} %fusion.2)"
        );
        // Ops that are not fusions, or not in the module, get nothing.
        assert!(ops.metrics_db[1].children.is_none());
        assert!(ops.metrics_db[2].children.is_none());
    }

    #[test]
    fn an_unprinted_instruction_is_named_and_left_without_text() {
        let mut m = module();
        m.computations[0].instructions[1].sharding = Some(Default::default());
        let mut ops = db(&["fusion.1"]);
        let mut gaps = Gaps::default();
        add_fused_children(&mut ops, &map(m), &mut gaps);
        assert_eq!(gaps.unprinted.iter().collect::<Vec<_>>(), ["negate"]);
        let children = &ops.metrics_db[0].children.as_ref().unwrap().metrics_db;
        let inner = &children[1].children.as_ref().unwrap().metrics_db;
        assert_eq!(inner[0].long_name, "");
    }

    #[test]
    fn missing_or_cyclic_fused_computations_give_no_children() {
        // The nested fusion calls a computation the module lacks.
        let mut m = module();
        m.computations[1].instructions[2].called_computation_ids = vec![99];
        let mut ops = db(&["fusion.1"]);
        add_fused_children(&mut ops, &map(m), &mut Gaps::default());
        assert!(ops.metrics_db[0].children.is_none());
        // The nested fusion calls its own computation.
        let mut m = module();
        m.computations[1].instructions[2].called_computation_ids = vec![2];
        let mut ops = db(&["fusion.1"]);
        add_fused_children(&mut ops, &map(m), &mut Gaps::default());
        assert!(ops.metrics_db[0].children.is_none());
        // Two computations calling each other.
        let mut m = module();
        m.computations[0].instructions[1] = fusion(21, "fusion.3", 2, &[20]);
        let mut ops = db(&["fusion.1", "fusion.2"]);
        add_fused_children(&mut ops, &map(m), &mut Gaps::default());
        assert!(ops.metrics_db.iter().all(|op| op.children.is_none()));
        // A fusion without a called computation.
        let mut m = module();
        m.computations[2].instructions[1]
            .called_computation_ids
            .clear();
        let mut ops = db(&["fusion.1"]);
        add_fused_children(&mut ops, &map(m), &mut Gaps::default());
        assert!(ops.metrics_db[0].children.is_none());
    }

    #[test]
    fn the_text_is_bounded() {
        // A fusion of many instructions each naming one operand of a large tuple shape, many
        // times: their text would be far larger than the module.
        let mut big = ins(10, "param_0", "parameter", &[]);
        big.shape = Some(ShapeProto {
            element_type: 13,
            tuple_shapes: vec![shape(&[1 << 40, 1 << 40]); 2_000],
            ..ShapeProto::default()
        });
        let mut instructions = vec![big];
        for i in 0..300 {
            instructions.push(ins(100 + i, &format!("gte.{i}"), "bitcast", &[10; 40]));
        }
        let m = HloModuleProto {
            computations: vec![
                computation(2, "fused", instructions),
                computation(
                    1,
                    "main",
                    vec![
                        ins(1, "p", "parameter", &[]),
                        fusion(2, "fusion.1", 2, &[1]),
                    ],
                ),
            ],
            ..HloModuleProto::default()
        };
        let mut ops = db(&["fusion.1"]);
        let mut gaps = Gaps {
            budget: 4 << 20,
            ..Gaps::default()
        };
        add_fused_children(&mut ops, &map(m), &mut gaps);
        assert!(gaps.over_budget);
        assert!(gaps.text_bytes <= gaps.budget + hlo_text::MAX_EXPRESSION_BYTES);
        let children = &ops.metrics_db[0].children.as_ref().unwrap().metrics_db;
        assert_eq!(children.len(), 300);
        assert!(
            children
                .iter()
                .all(|c| c.long_name.len() <= hlo_text::MAX_EXPRESSION_BYTES)
        );
        assert!(children.last().unwrap().long_name.is_empty());
    }

    #[test]
    fn deep_nesting_is_bounded() {
        // A chain of `n` computations, each but the last calling the next through a fusion.
        let chain = |n: i64| {
            let mut computations = Vec::new();
            for c in 0..n {
                let mut instructions = vec![ins(1000 * c + 1, &format!("p.{c}"), "parameter", &[])];
                if c + 1 < n {
                    instructions.push(fusion(
                        1000 * c + 2,
                        &format!("f.{c}"),
                        c + 1,
                        &[1000 * c + 1],
                    ));
                }
                computations.push(computation(c, &format!("c.{c}"), instructions));
            }
            HloModuleProto {
                computations,
                ..HloModuleProto::default()
            }
        };
        // Deeper than the bound: refused, without deep recursion.
        let mut ops = db(&["f.0"]);
        add_fused_children(
            &mut ops,
            &map(chain(MAX_FUSION_DEPTH as i64 + 10)),
            &mut Gaps::default(),
        );
        assert!(ops.metrics_db[0].children.is_none());
        // At the bound: built, and the OpStats file holding it still decodes.
        let mut ops = db(&["f.0"]);
        add_fused_children(
            &mut ops,
            &map(chain(MAX_FUSION_DEPTH as i64 + 1)),
            &mut Gaps::default(),
        );
        assert!(ops.metrics_db[0].children.is_some());
        let stats = crate::proto::OpStats {
            device_op_metrics_db: Some(ops),
            ..crate::proto::OpStats::default()
        };
        let bytes = prost::Message::encode_to_vec(&stats);
        assert!(crate::op_stats::decode(&bytes).is_ok());
    }
}
