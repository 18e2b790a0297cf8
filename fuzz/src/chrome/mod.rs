//! Fuzz targets for `profkit-convert`'s Chrome trace reader.
//!
//! | target        | input                        | what it checks                                   |
//! |---------------|------------------------------|--------------------------------------------------|
//! | `chrome_json` | raw bytes, as Chrome trace JSON | [`json`]: the reader against serde_json, errors, the round trip through XSpace |

pub mod json;

use std::path::PathBuf;

/// The conformance inputs under `conformance/chrome/`, to mutate.
pub fn seed_files() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../conformance/chrome");
    let mut out = Vec::new();
    let Ok(cases) = std::fs::read_dir(&dir) else {
        return out;
    };
    let mut cases: Vec<PathBuf> = cases.filter_map(|e| e.ok().map(|e| e.path())).collect();
    cases.sort();
    for case in cases {
        if let Ok(bytes) = std::fs::read(case.join("input.json")) {
            out.push((case.display().to_string(), bytes));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smoke;

    #[test]
    fn smoke_chrome_random() {
        smoke::run_random(91, smoke::scaled(300), 96, json::run);
        // Random bytes inside a plausible event array reach the event handling.
        let mut rng = smoke::XorShift::new(92);
        let alphabet = b"{}[],:\"0123456789.-eE \nphtsdurXBEiICMnamepid";
        for _ in 0..smoke::scaled(400) {
            let n = rng.below(64);
            let body: Vec<u8> = (0..n)
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            let mut input = br#"{"traceEvents":[{"ph":"X","ts":1,"dur":2,"name":"a"},"#.to_vec();
            input.extend_from_slice(&body);
            json::run(&input);
        }
    }

    #[test]
    fn smoke_chrome_mutated_seeds() {
        let seeds = seed_files();
        assert!(seeds.len() >= 5, "the conformance inputs are missing");
        for (i, (_, valid)) in seeds.iter().enumerate() {
            json::run(valid);
            let step = if valid.len() > 2_500 { 1_499 } else { 1 };
            for cut in smoke::truncations(valid).step_by(step) {
                json::run(cut);
            }
            for flipped in smoke::bit_flips(valid).step_by(step * 7) {
                json::run(&flipped);
            }
            for edited in smoke::havoc(valid, 93 + i as u64, smoke::scaled(40)) {
                json::run(&edited);
            }
        }
    }
}
