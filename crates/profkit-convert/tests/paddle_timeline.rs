//! Paddle's `tools/timeline.py` output, byte for byte.

use profkit_convert::paddle::{SINGLE_KEY, write_timeline};
use profkit_events::paddle::legacy::decode_profile;

fn repo(path: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

#[test]
fn sample_timeline_is_paddles() {
    let bytes = std::fs::read(repo("conformance/paddle/dygraph-cpu-total/input.pb")).unwrap();
    let profile = decode_profile(&bytes).unwrap();
    let mut out = Vec::new();
    write_timeline(&[(SINGLE_KEY.to_owned(), &profile)], &mut out).unwrap();
    let expected = std::fs::read(repo(
        "conformance/paddle/dygraph-cpu-total/paddle-timeline.json",
    ))
    .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out),
        String::from_utf8_lossy(&expected)
    );
}
