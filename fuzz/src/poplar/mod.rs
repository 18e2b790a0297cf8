//! Fuzz targets for `profkit-poplar`.
//!
//! | target             | input                   | what it checks                                        |
//! |--------------------|-------------------------|-------------------------------------------------------|
//! | `poplar_json`      | raw bytes, as JSON text | [`json`]: the reader against serde_json, errors, write-back |
//! | `poplar_roundtrip` | bytes that build a profile | [`roundtrip`]: writer then reader, generic path, fixed point |

pub mod generate;
pub mod json;
pub mod roundtrip;

use std::path::PathBuf;

/// The hand-written conformance inputs (and graph profiles), to mutate.
pub fn seed_files() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../conformance/poplar");
    let mut out = Vec::new();
    let Ok(cases) = std::fs::read_dir(&dir) else {
        return out;
    };
    let mut cases: Vec<PathBuf> = cases.filter_map(|e| e.ok().map(|e| e.path())).collect();
    cases.sort();
    for case in cases {
        let path = case.join("input.json");
        if let Ok(bytes) = std::fs::read(&path) {
            let name = case
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            out.push((name, bytes));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smoke;

    /// Inputs above this size get every 17th truncation and a sample of bit flips, to keep the
    /// smoke tests to seconds in a debug build.
    const SMALL: usize = 2_500;

    #[test]
    fn smoke_json_random() {
        smoke::run_random(71, smoke::scaled(300), 96, json::run);
        // Random bytes inside a plausible object reach the schema.
        let mut rng = smoke::XorShift::new(72);
        let alphabet = b"{}[],:\"0123456789.-eE \ntrufalsn";
        for _ in 0..smoke::scaled(400) {
            let n = rng.below(48);
            let body: Vec<u8> = (0..n)
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            let mut input = br#"{"profilerMode":"VERTICES","vertexCycles":["#.to_vec();
            input.extend_from_slice(&body);
            json::run(&input);
        }
    }

    #[test]
    fn smoke_json_mutated_seeds() {
        let seeds = seed_files();
        assert!(seeds.len() >= 20, "the conformance inputs are missing");
        for (i, (name, valid)) in seeds.iter().enumerate() {
            json::run(valid);
            let step = if valid.len() > SMALL { 17 } else { 1 };
            for prefix in smoke::truncations(valid).step_by(step) {
                json::run(prefix);
            }
            for (k, input) in smoke::bit_flips(valid).enumerate() {
                if valid.len() <= SMALL || k % 29 == 0 {
                    json::run(&input);
                }
            }
            let count = if valid.len() > SMALL { 30 } else { 100 };
            for input in smoke::havoc(valid, 80 + i as u64, smoke::scaled(count)) {
                json::run(&input);
            }
            let _ = name;
        }
    }

    #[test]
    fn smoke_roundtrip_random() {
        smoke::run_random(73, smoke::scaled(300), 1024, roundtrip::run);
        let built = (0..200u64)
            .filter(|&seed| {
                let mut rng = smoke::XorShift::new(seed + 1);
                roundtrip::build(&rng.bytes(2048)).is_some()
            })
            .count();
        assert!(
            built > 150,
            "most inputs of 2 KB should build a profile ({built})"
        );
    }

    #[test]
    fn smoke_roundtrip_long_inputs() {
        let mut rng = smoke::XorShift::new(74);
        for _ in 0..smoke::scaled(60) {
            let input = rng.bytes(4096);
            roundtrip::run(&input);
        }
    }
}
