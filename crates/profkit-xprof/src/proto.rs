//! xprof's OpStats and the messages it holds (package `tensorflow.profiler`), as prost types
//! generated from `proto/xprof/`, the schema of xprof 2.24.2 (written from xprof's own
//! descriptors, checked against them in CI): what xprof caches as `<run>/ALL_HOSTS.op_stats_v2.pb`
//! and computes its tools from.

#![allow(missing_docs, clippy::all, clippy::pedantic)]

include!(concat!(env!("OUT_DIR"), "/tensorflow.profiler.rs"));

/// The op profile tool's messages (package `tensorflow.profiler.op_profile`).
pub mod op_profile {
    include!(concat!(
        env!("OUT_DIR"),
        "/tensorflow.profiler.op_profile.rs"
    ));
}

/// The part of XLA's HLO schema (package `xla`) profkit reads from the HLO protos an XSpace stores:
/// modules, instructions, shapes and layouts, and the buffer assignment the memory viewer shows
/// (`proto/xla/`, XLA's names and field numbers).
pub use crate::op_stats::hlo::xla;

/// The encoded `FileDescriptorSet` of the schema these types were generated from.
pub const DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/op_stats_descriptor_set.bin"));

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;

    #[test]
    fn op_stats_round_trips() {
        let mut stats = OpStats::default();
        stats.run_environment = Some(RunEnvironment {
            host_count: 2,
            device_type: "GPU".into(),
            ..RunEnvironment::default()
        });
        let bytes = stats.encode_to_vec();
        assert_eq!(OpStats::decode(bytes.as_slice()).unwrap(), stats);
        let set = prost_types::FileDescriptorSet::decode(DESCRIPTOR_SET).unwrap();
        assert!(
            set.file
                .iter()
                .any(|f| f.name() == "plugin/xprof/protobuf/op_stats.proto")
        );
    }
}
