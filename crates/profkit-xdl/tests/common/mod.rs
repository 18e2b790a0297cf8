//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use profkit_xdl::{Column, FrameWriter, Header, Record};

/// A fresh, empty directory under the system temp dir, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::SeqCst);
        let dir =
            std::env::temp_dir().join(format!("profkit-xdl-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The repository's copy of the original writer's sample.
pub fn sample_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/xdl/original-writer")
}

/// A record with a float tensor, a double scalar and a bool vector.
pub fn record(step: i64) -> Record {
    let s = step as f32;
    Record::new(
        100 + step,
        step,
        1_700_000_000_000 + step,
        vec![
            Column::tensor(&[2, 3], &[0.0, s, 2.0 * s, 3.0 * s, 4.0 * s, 5.0 * s]).unwrap(),
            Column::scalar(step as f64 / 2.0),
            Column::vector(&[true, false]).unwrap(),
        ],
    )
}

pub const KEYS: [&str; 3] = ["w", "loss", "flag"];

/// A data file's bytes: the header, then the records.
pub fn data_file(records: &[Record]) -> Vec<u8> {
    let mut w = FrameWriter::new(Vec::new());
    w.write_message(&Header::new(KEYS)).unwrap();
    for r in records {
        w.write_message(r).unwrap();
    }
    w.into_inner()
}
