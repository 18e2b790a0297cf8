//! Writes the encoded `FileDescriptorSet` of the OpStats schema this crate was built from to
//! standard output, for `conformance/xprof/protos.py --compare`, which checks it against xprof's
//! own descriptors.

use std::io::Write;

fn main() -> std::io::Result<()> {
    std::io::stdout().write_all(profkit_xprof::proto::DESCRIPTOR_SET)
}
