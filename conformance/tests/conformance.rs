//! Runs every conformance case; `BLESS=1` rewrites the expectations and generated inputs, and
//! `CONFORMANCE_CASE=<text>` keeps only the cases whose `<format>/<case>` contains the text.

use std::path::Path;

use conformance::{Mode, run_all};

#[test]
fn conformance_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let filter = std::env::var("CONFORMANCE_CASE").ok();
    let report = run_all(root, Mode::from_env(), filter.as_deref());
    assert!(
        report.failures.is_empty(),
        "conformance failures:\n{report}"
    );
    assert!(report.cases > 0, "no cases ran");
    println!("{report}");
}
