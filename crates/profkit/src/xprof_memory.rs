//! `profkit xprof memory_viewer`: one XLA program's buffers in one memory space, as xprof's
//! memory viewer computes them (its JSON), its programs (`--list-modules`), or a summary for a
//! terminal (`--text`: the peak, and the largest buffers live there).

use std::io::Write;

use profkit_xplane::XSpace;
use profkit_xprof::proto::PreprocessResult;
use profkit_xprof::tools::memory_viewer;

use crate::Failure;

/// What memory_viewer was asked.
pub(crate) struct Options<'a> {
    pub module: Option<&'a str>,
    pub memory_space: i64,
    pub list_modules: bool,
    pub text: bool,
    pub rows: usize,
}

/// Writes the tool's output; returns its notes.
pub(crate) fn run(
    spaces: &[XSpace],
    options: &Options<'_>,
    w: &mut dyn Write,
) -> Result<Vec<String>, Failure> {
    if options.list_modules {
        for module in memory_viewer::modules(spaces) {
            writeln!(w, "{}", module.name).map_err(Failure::Output)?;
        }
        return Ok(Vec::new());
    }
    let Some(module) = options.module else {
        let names: Vec<String> = memory_viewer::modules(spaces)
            .into_iter()
            .map(|m| m.name)
            .collect();
        return Err(Failure::Usage(if names.is_empty() {
            "xprof memory_viewer: the inputs store no HLO module".into()
        } else {
            format!(
                "xprof memory_viewer: give --module NAME, one of: {}",
                names.join(", ")
            )
        }));
    };
    let viewer = memory_viewer::memory_viewer(spaces, module, options.memory_space)
        .map_err(|e| Failure::BadInput(format!("xprof memory_viewer: {e}")))?;
    if options.text {
        write_text(w, &viewer.result, options.memory_space, options.rows)?;
    } else {
        w.write_all(memory_viewer::to_json(&viewer.result).as_bytes())
            .map_err(Failure::Output)?;
    }
    Ok(viewer
        .missing
        .iter()
        .map(|m| format!("not reproduced: {m}"))
        .collect())
}

/// The peak and the largest buffers live there, `rows` at most.
fn write_text(
    w: &mut dyn Write,
    r: &PreprocessResult,
    memory_space: i64,
    rows: usize,
) -> Result<(), Failure> {
    let mut s = String::new();
    s.push_str(&format!(
        "module {} (entry computation {}), memory space {memory_space}\n",
        r.module_name, r.entry_computation_name
    ));
    s.push_str(&format!(
        "peak heap {:.3} MiB (unpadded {:.3} MiB) at program point {} of {}\n",
        r.peak_heap_mib,
        r.peak_unpadded_heap_mib,
        r.peak_heap_size_position,
        r.heap_sizes.len()
    ));
    s.push_str(&format!(
        "allocations {:.3} MiB: indefinite {:.3} MiB (parameters {:.3}, may-be live out {:.3}), non-reusable {:.3}\n",
        r.total_buffer_allocation_mib,
        r.indefinite_buffer_allocation_mib,
        r.entry_computation_parameters_mib,
        r.maybe_live_out_mib,
        r.non_reusable_mib,
    ));
    if r.max_scoped_vmem_allocation_mib > 0.0 {
        s.push_str(&format!(
            "largest scoped allocation {:.3} MiB ({})\n",
            r.max_scoped_vmem_allocation_mib, r.max_scoped_vmem_instruction_name
        ));
    }
    s.push_str("size MiB\tunpadded MiB\tcategory\tshape\tinstruction\top\n");
    for o in r.max_heap_by_size.iter().take(rows) {
        s.push_str(&format!(
            "{:.3}\t{:.3}\t{}\t{}\t{}\t{}\n",
            o.logical_buffer_size_mib,
            o.unpadded_shape_mib,
            if o.group_name.is_empty() {
                "-"
            } else {
                &o.group_name
            },
            if o.shape_string.is_empty() {
                &o.label
            } else {
                &o.shape_string
            },
            o.instruction_name,
            o.tf_op_name
        ));
    }
    if r.max_heap_by_size.len() > rows {
        s.push_str(&format!(
            "... {} more buffers (--rows N shows more)\n",
            r.max_heap_by_size.len() - rows
        ));
    }
    w.write_all(s.as_bytes()).map_err(Failure::Output)
}
