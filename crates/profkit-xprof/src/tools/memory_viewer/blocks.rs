//! The temporary allocations drawn as blocks (xprof's `ConvertAllocationTimeline`, its data part:
//! the `bufferBlocks` of the result; the Graphviz drawing itself is not reproduced, but its node
//! numbering decides the blocks' colors).

use super::{Allocation, Snapshot, Wrapper, simulate, source_info};
use crate::Result;
use crate::proto::{BufferBlockProto, PreprocessResult};

/// The palette of the timeline's blocks (xprof's, shared with its frontend).
const COLORS: [&str; 209] = [
    "#e91e63", "#2196f3", "#81c784", "#4dd0e1", "#3f51b5", "#e53935", "#ff9100", "#b39ddb",
    "#90a4ae", "#26c6da", "#ad1457", "#03a9f4", "#2196f3", "#c2185b", "#795548", "#f9a825",
    "#00bfa5", "#880e4f", "#d500f9", "#ce93d8", "#ec407a", "#4caf50", "#ff8f00", "#ffca28",
    "#ab47bc", "#00e5ff", "#ff9800", "#40c4ff", "#1e88e5", "#9fa8da", "#bf360c", "#00b8d4",
    "#f57f17", "#64b5f6", "#e040fb", "#ffab91", "#4caf50", "#01579b", "#66bb6a", "#ef9a9a",
    "#558b2f", "#fb8c00", "#ff4081", "#00e676", "#388e3c", "#424242", "#6d4c41", "#c62828",
    "#616161", "#00897b", "#448aff", "#0d47a1", "#607d8b", "#673ab7", "#00c853", "#2e7d32",
    "#ffa726", "#5e35b1", "#ba68c8", "#8d6e63", "#00bcd4", "#ff6f00", "#f4511e", "#ff1744",
    "#9e9e9e", "#d81b60", "#4a148c", "#26a69a", "#689f38", "#7b1fa2", "#b0bec5", "#304ffe",
    "#f48fb1", "#ffd600", "#ffb74d", "#8bc34a", "#303f9f", "#5d4037", "#80cbc4", "#ffcc80",
    "#00acc1", "#3e2723", "#ff5252", "#ff7043", "#e91e63", "#ea80fc", "#e65100", "#d84315",
    "#212121", "#ff5722", "#1976d2", "#2962ff", "#bdbdbd", "#3949ab", "#69f0ae", "#d50000",
    "#ffd740", "#c0ca33", "#ff6e40", "#00b0ff", "#2979ff", "#e64a19", "#7c4dff", "#607d8b",
    "#009688", "#ffb300", "#c51162", "#ffc400", "#29b6f6", "#3d5afe", "#76ff03", "#cddc39",
    "#b388ff", "#5c6bc0", "#9e9d24", "#7cb342", "#ef5350", "#fdd835", "#ef6c00", "#4fc3f7",
    "#6200ea", "#004d40", "#ff8a65", "#ffab00", "#80deea", "#0097a7", "#7e57c2", "#ff6d00",
    "#1565c0", "#455a64", "#ffc107", "#4527a0", "#ff5722", "#f44336", "#f57c00", "#827717",
    "#a5d6a7", "#82b1ff", "#9c27b0", "#ff80ab", "#e1bee7", "#78909c", "#311b92", "#00695c",
    "#4e342e", "#3f51b5", "#651fff", "#9e9e9e", "#81d4fa", "#f8bbd0", "#b71c1c", "#0091ea",
    "#673ab7", "#a1887f", "#4db6ac", "#ffa000", "#6a1b9a", "#43a047", "#bcaaa4", "#546e7a",
    "#aeea00", "#e57373", "#ffccbc", "#006064", "#fbc02d", "#ffeb3b", "#8bc34a", "#039be5",
    "#8e24aa", "#80d8ff", "#009688", "#9ccc65", "#512da8", "#ffc107", "#757575", "#0277bd",
    "#ff3d00", "#33691e", "#03a9f4", "#00838f", "#ff8a80", "#283593", "#f50057", "#1a237e",
    "#90caf9", "#9c27b0", "#aa00ff", "#aed581", "#afb42b", "#9575cd", "#d32f2f", "#64dd17",
    "#f44336", "#795548", "#cddc39", "#ff9e80", "#7986cb", "#dd2c00", "#0288d1", "#ff9800",
    "#263238", "#00796b", "#42a5f5", "#8c9eff", "#1b5e20", "#ffab40", "#536dfe", "#00bcd4",
    "#f06292",
];

/// The side of the timeline's drawing, in points.
const GRAPH_SIZE: f64 = 4096.0;

/// The temporary allocations' blocks (xprof's `ConvertAllocationTimeline`): each allocation as a
/// white block, stacked, and each canonical buffer with a span in it at its offset, across its
/// span. A block's color is its buffer's at the peak, else the palette's at the drawing's node
/// count (nodes under a point tall or wide are not drawn, hence not counted).
pub(super) fn blocks(
    wrapper: &Wrapper<'_>,
    sim: &simulate::Sim,
    snapshot: &Snapshot,
    color: i64,
    result: &mut PreprocessResult,
) -> Result<()> {
    let traces = wrapper.traces();
    let temporary: Vec<&Allocation<'_>> = wrapper
        .allocations_of(color)
        .filter(|a| !a.is_indefinite())
        .collect();
    let mut offsets = Vec::new();
    let (mut total_y, mut total_x) = (0_u64, 0_u64);
    for allocation in &temporary {
        let Some(trace) = allocation.trace else {
            continue;
        };
        offsets.push(total_y);
        total_y = total_y.wrapping_add(allocation.proto.size as u64);
        if let Some(t) = traces.get(trace) {
            total_x = total_x.max(t.events.len() as u64);
        }
    }
    if total_y == 0 || total_x == 0 {
        return Ok(());
    }
    let scale_x = GRAPH_SIZE / total_x as f64;
    let scale_y = GRAPH_SIZE / total_y as f64;
    let mut node = 0_usize;
    // A node of the drawing counts only when it is at least a point wide and tall.
    let rect = |node: &mut usize, width: u64, height: u64| {
        if !(width as f64 * scale_x < 1.0 || height as f64 * scale_y < 1.0) {
            *node += 1;
        }
    };
    let frames = wrapper.stack_frames();
    let with_trace = temporary.iter().filter(|a| a.trace.is_some());
    for (k, allocation) in with_trace.enumerate() {
        let Some(&offset) = offsets.get(k) else {
            break;
        };
        let size = allocation.proto.size;
        result.buffer_blocks.push(BufferBlockProto {
            logical_buffer_id: -1,
            name: allocation.category().to_owned(),
            offset: offset as f64,
            size: size as u64 as f64,
            start_step: 0,
            end_step: total_x as i32,
            category: allocation.category().to_owned(),
            color: "#ffffff".to_owned(),
            ..BufferBlockProto::default()
        });
        rect(&mut node, total_x, size as u64);
        for assigned in &allocation.proto.assigned {
            let Some(b) = wrapper.buffer(assigned.logical_buffer_id) else {
                continue;
            };
            let Some(state) = sim.state.get(b) else {
                continue;
            };
            let Some((start, end)) = state.span else {
                continue;
            };
            let buffer = &wrapper.buffers[b];
            wrapper.spend(buffer.shape_string.len() + buffer.instruction.name.len())?;
            let width = end.wrapping_sub(start);
            let y = offset.wrapping_add(buffer.offset as u64);
            let height = buffer.proto.size as u64;
            let palette = match snapshot.colors.get(&buffer.proto.id) {
                Some(&c) => COLORS[c.rem_euclid(COLORS.len() as i32) as usize],
                None => COLORS[node % COLORS.len()],
            };
            result.buffer_blocks.push(BufferBlockProto {
                logical_buffer_id: buffer.proto.id as i32,
                name: buffer.name_with_index(),
                offset: y as f64,
                size: height as f64,
                start_step: start as i32,
                end_step: end as i32,
                tf_op_name: buffer.op_name().to_owned(),
                category: wrapper.allocations[buffer.allocation].category().to_owned(),
                source_info: source_info(buffer.instruction, frames),
                shape_string: buffer.shape_string.to_string(),
                unpadded_size: buffer.unpadded as u64 as f64,
                color: palette.to_owned(),
            });
            rect(&mut node, width, height);
        }
    }
    Ok(())
}
