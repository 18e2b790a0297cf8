//! Generates xprof's OpStats types (`proto/xprof/`: OpStats and the messages it holds, and the
//! memory profile tool's `MemoryProfile`), and the part of XLA's HLO schema xprof's op metrics read
//! (`proto/xla/`), with
//! prost, compiling the schema with protox so that no system `protoc` is needed.
//!
//! The schema is read from the crate's own `proto/`, whose files are symbolic links to the
//! repository's top-level `proto/xprof/` (generated from xprof 2.24.2's own descriptors by
//! `conformance/xprof/protos.py`): `cargo package` stores a linked file's content, so the packaged
//! crate builds on its own.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto_root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("proto/xprof");
    // OpStats, and the memory profile and op profile tools' own messages (which OpStats does not
    // hold).
    let files = [
        "plugin/xprof/protobuf/op_stats.proto",
        "plugin/xprof/protobuf/memory_profile.proto",
        "plugin/xprof/protobuf/op_profile.proto",
        "plugin/xprof/protobuf/memory_viewer_preprocess.proto",
    ];
    println!("cargo:rerun-if-changed={}", proto_root.display());

    let fds = protox::compile(files, [&proto_root])?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    // Exported, so that the schema compiled here can be compared with xprof's own descriptors.
    std::fs::write(
        out_dir.join("op_stats_descriptor_set.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;
    prost_build::Config::new()
        // Ordered maps make encoding deterministic.
        .btree_map(["."])
        .compile_fds(fds)?;

    // The part of XLA's HLO schema that the op metrics read (package `xla`, into `xla.rs`).
    let xla_root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("proto/xla");
    println!("cargo:rerun-if-changed={}", xla_root.display());
    let xla = protox::compile(["xla/service/hlo_profile_subset.proto"], [&xla_root])?;
    prost_build::Config::new().compile_fds(xla)?;
    Ok(())
}
