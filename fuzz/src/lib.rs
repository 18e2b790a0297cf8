//! Fuzz targets for profkit's parsers and builders.
//!
//! Every target is a function from bytes to `()` that panics when a property fails. The logic
//! lives here, in a plain library, so that it is compiled, linted and exercised by `cargo test`
//! on stable: each target has smoke tests that run a few hundred deterministic inputs (see
//! [`smoke`]). The libFuzzer binaries in `fuzz_targets/` only forward their input to a function
//! of [`TARGETS`], and build only with the `libfuzzer` feature (`README.md` says how to run a
//! campaign and how to replay what it finds).
//!
//! ```
//! // Any bytes are a valid input; a panic is a finding.
//! for target in profkit_fuzz::TARGETS {
//!     (target.run)(b"\x0a\x02\x12\x00");
//! }
//! profkit_fuzz::xplane::builder::run(&[7; 64]);
//! ```

#![forbid(unsafe_code)]

pub mod arrow;
pub mod chrome;
pub mod detect;
pub mod gzip;
pub mod json;
pub mod paddle;
pub mod poplar;
pub mod smoke;
pub mod text;
pub mod wire;
pub mod xdl;
pub mod xplane;
pub mod xprof;

/// A fuzz target: the name of its libFuzzer binary and what it runs.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// The binary's name, as given to `cargo fuzz run`.
    pub name: &'static str,
    /// Runs the target on one input; panics on a finding.
    pub run: fn(&[u8]),
    /// Shows what an input means to the target (the operations or space it builds, the text it
    /// parses), for reading a failing input.
    pub describe: fn(&[u8]) -> String,
}

/// Every target, as the `[[bin]]` entries of `Cargo.toml` name them.
pub const TARGETS: &[Target] = &[
    Target {
        name: "xplane_decode",
        run: xplane::decode::run,
        describe: |data| format!("{:#?}", profkit_xplane::decode(data.to_vec())),
    },
    Target {
        name: "xplane_view",
        run: xplane::view::run,
        describe: |data| match profkit_xplane::XSpaceView::new(data) {
            Ok(view) => format!("{:#?}", view.to_owned_space()),
            Err(e) => e.to_string(),
        },
    },
    Target {
        name: "xplane_roundtrip",
        run: xplane::roundtrip::run,
        describe: xplane::roundtrip::describe,
    },
    Target {
        name: "xplane_builder",
        run: xplane::builder::run,
        describe: xplane::builder::describe,
    },
    Target {
        name: "xprof_tools",
        run: xprof::tools::run,
        describe: |data| format!("{:#?}", xprof::tools::space(data)),
    },
    Target {
        name: "xplane_json",
        run: xplane::json::run,
        describe: |data| String::from_utf8_lossy(data).into_owned(),
    },
    Target {
        name: "xdl_frames",
        run: xdl::frames::run,
        describe: |data| {
            let frames: Vec<_> = profkit_xdl::FrameReader::new(data, Default::default()).collect();
            format!("{frames:#?}")
        },
    },
    Target {
        name: "xdl_record",
        run: xdl::record::run,
        describe: |data| format!("{:#?}", profkit_xdl::decode_record(data.to_vec())),
    },
    Target {
        name: "poplar_json",
        run: poplar::json::run,
        describe: |data| String::from_utf8_lossy(data).into_owned(),
    },
    Target {
        name: "poplar_roundtrip",
        run: poplar::roundtrip::run,
        describe: poplar::roundtrip::describe,
    },
    Target {
        name: "paddle_profile",
        run: paddle::profile::run,
        describe: |data| {
            format!(
                "{:#?}",
                profkit_events::paddle::legacy::decode_profile(data)
            )
        },
    },
    Target {
        name: "paddle_nodetrees",
        run: paddle::nodetrees::run,
        describe: |data| {
            format!(
                "{:#?}",
                profkit_events::paddle::nodetree::decode_node_trees(data)
            )
        },
    },
    Target {
        name: "paddle_pairing",
        run: paddle::pairing::run,
        describe: paddle::pairing::describe,
    },
    Target {
        name: "chrome_json",
        run: chrome::json::run,
        describe: |data| String::from_utf8_lossy(data).into_owned(),
    },
    Target {
        name: "arrow_events",
        run: arrow::events::run,
        describe: |data| format!("{:#?}", profkit_xplane::decode(data.to_vec())),
    },
    Target {
        name: "json_reader",
        run: json::reader::run,
        describe: |data| String::from_utf8_lossy(data).into_owned(),
    },
    Target {
        name: "detect",
        run: detect::run,
        describe: |data| {
            format!(
                "{:?}",
                profkit_convert::detect::candidates(data, "host.xplane.pb")
            )
        },
    },
    Target {
        name: "gzip",
        run: gzip::run,
        describe: |data| format!("{data:02x?}"),
    },
    Target {
        name: "text_summaries",
        run: text::summaries::run,
        describe: text::summaries::describe,
    },
];

/// The target named `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    /// Replays inputs found by a campaign, on stable and without libFuzzer:
    /// `PROFKIT_FUZZ_REPLAY=fuzz/artifacts/xplane_decode/crash-... cargo test -p profkit-fuzz
    /// replay -- --nocapture`. The path (a file, or a directory of inputs such as a corpus) is
    /// absolute or relative to the repository root; the target is the path component that names
    /// one, or `PROFKIT_FUZZ_TARGET`.
    #[test]
    fn replay() {
        let Some(path) = std::env::var_os("PROFKIT_FUZZ_REPLAY") else {
            return;
        };
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let path = root.join(PathBuf::from(path));
        let name = std::env::var("PROFKIT_FUZZ_TARGET").ok().or_else(|| {
            path.components()
                .rev()
                .filter_map(|c| c.as_os_str().to_str())
                .find(|c| target(c).is_some())
                .map(str::to_owned)
        });
        let Some(target) = name.as_deref().and_then(target) else {
            panic!(
                "no target named in {} (set PROFKIT_FUZZ_TARGET)",
                path.display()
            );
        };
        let mut inputs = match std::fs::read_dir(&path) {
            Ok(dir) => dir.filter_map(|e| e.ok().map(|e| e.path())).collect(),
            Err(_) => vec![path.clone()],
        };
        inputs.sort();
        for input in inputs {
            let data = std::fs::read(&input).unwrap_or_else(|e| panic!("{}: {e}", input.display()));
            eprintln!(
                "{} on {}:\n{}",
                target.name,
                input.display(),
                (target.describe)(&data)
            );
            (target.run)(&data);
        }
    }

    #[test]
    fn every_target_has_a_binary() {
        let manifest = include_str!("../Cargo.toml");
        let bins: Vec<&str> = manifest
            .split("[[bin]]")
            .skip(1)
            .filter_map(|bin| bin.lines().find_map(|l| l.strip_prefix("name = ")))
            .map(|name| name.trim_matches('"'))
            .collect();
        let names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
        assert_eq!(bins, names, "the [[bin]] entries and TARGETS differ");
        for name in names {
            let path =
                Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("fuzz_targets/{name}.rs"));
            let source = std::fs::read_to_string(&path).unwrap_or_default();
            let module = name.replacen('_', "::", 1);
            assert!(
                source.contains(&format!("profkit_fuzz::{module}::run(data)")),
                "{} does not forward to {module}::run",
                path.display()
            );
        }
    }
}
