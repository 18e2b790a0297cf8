//! Generates the Paddle profile types from `proto/paddle/` with prost, compiling the schemas with
//! protox so that no system `protoc` is needed.
//!
//! The schema is read from the crate's own `proto/`, whose files are symbolic links to the
//! repository's top-level `proto/` (the one copy that is edited): `cargo package` stores a linked
//! file's content, so the packaged crate builds on its own, and the two cannot drift.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto_root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("proto");
    let files = ["paddle/profiler.proto", "paddle/nodetree.proto"];
    for file in files {
        println!("cargo:rerun-if-changed={}", proto_root.join(file).display());
    }

    let fds = protox::compile(files, [&proto_root])?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    // Exported so that tools (and tests) can load the exact schemas we compile.
    std::fs::write(
        out_dir.join("paddle_descriptor_set.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;

    prost_build::Config::new()
        // `profkit dump` prints the decoded messages as JSON.
        .type_attribute(".", "#[derive(serde::Serialize)]")
        .compile_fds(fds)?;
    Ok(())
}
