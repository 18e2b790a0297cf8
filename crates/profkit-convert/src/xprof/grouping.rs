//! TSL's event grouping as xprof runs it before converting (`GroupTfEvents`, `GroupTpuEventsOSS`).

pub(crate) mod eager;
pub(crate) mod tpu;
