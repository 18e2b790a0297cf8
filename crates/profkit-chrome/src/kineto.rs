//! PyTorch's profiler (Kineto): GPU activity on device planes, a stream a line, launches and
//! kernels linked by `correlation_id`, and `deviceProperties` as the GPU planes' stats.

use profkit_xplane::PlaneBuilder;
use profkit_xplane::constants::stats;

use crate::arg::{Arg, KeyArg};
use crate::space::json_stat;
use crate::trace::Trace;

/// The categories of Kineto's GPU activity.
pub(crate) fn is_gpu_category(cat: &str) -> bool {
    [
        "kernel",
        "gpu_memcpy",
        "gpu_memset",
        "gpu_user_annotation",
        "memcpy",
        "memset",
    ]
    .iter()
    .any(|c| cat.eq_ignore_ascii_case(c))
}

impl Trace {
    /// Kineto's `correlation` of a launch and its GPU activity as xprof's `correlation_id`, a
    /// uint64 as CUPTI writes it (xprof links launches to kernels by its `uint64_value`).
    pub(crate) fn correlation_ids(&mut self, stats: &mut [KeyArg]) {
        for stat in stats.iter_mut() {
            if stat.key == self.keys.correlation {
                stat.key = self.keys.correlation_id;
                // As CUPTI writes it (xprof links launches to kernels by its uint64 value).
                if let Arg::Int(i) = stat.arg() {
                    if let Ok(u) = u64::try_from(i) {
                        *stat = KeyArg::new(stat.key, Arg::Uint(u));
                    }
                }
            }
        }
    }

    pub(crate) fn device_stats(&self, builder: &mut PlaneBuilder<'_>, device: i64) {
        let Some(props) = self
            .device_properties
            .iter()
            .find(|p| p.get("id").and_then(serde_json::Value::as_i64) == Some(device))
        else {
            return;
        };
        if let Some(name) = props.get("name").and_then(serde_json::Value::as_str) {
            builder.add_stat(stats::DEVICE_TYPE_STRING, name);
        }
        if let Some(n) = props.get("numSms").and_then(serde_json::Value::as_u64) {
            builder.add_stat(stats::CORE_COUNT, n);
        }
        if let Some(n) = props
            .get("totalGlobalMem")
            .and_then(serde_json::Value::as_u64)
        {
            builder.add_stat(stats::MEMORY_SIZE, n);
        }
        for (key, value) in props {
            if key != "id" {
                builder.add_stat(key, json_stat(value));
            }
        }
    }
}
