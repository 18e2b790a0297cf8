//! TSL's event grouping as xprof runs it before converting (`GroupTfEvents`, `GroupTpuEventsOSS`):
//! the event forest and its groups ([`forest`]), and the TPU device planes grouped by their steps
//! ([`tpu`]).

pub(crate) mod forest;
pub(crate) mod tpu;
