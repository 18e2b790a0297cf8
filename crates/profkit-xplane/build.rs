//! Generates the XSpace types from `proto/` with prost, compiling the schema with protox so that no
//! system `protoc` is needed.
//!
//! The schema is read from the crate's own `proto/`, whose files are symbolic links to the
//! repository's top-level `proto/` (the one copy that is edited): `cargo package` stores a linked
//! file's content, so the packaged crate builds on its own, and the two cannot drift.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto_root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("proto");
    let file = "tensorflow/profiler/xplane.proto";
    println!("cargo:rerun-if-changed={}", proto_root.join(file).display());

    let fds = protox::compile([file], [&proto_root])?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    // The descriptor set is exported too, so peers (Python protobuf in the benchmark) can load the
    // exact schema we compile without protoc.
    std::fs::write(
        out_dir.join("xplane_descriptor_set.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;

    prost_build::Config::new()
        // Byte fields share the input buffer instead of copying it.
        .bytes(["."])
        // Ordered maps make encoding deterministic and the JSON view stable.
        .btree_map(["."])
        .compile_fds(fds)?;
    Ok(())
}
