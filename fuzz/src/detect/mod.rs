//! Fuzz target for format detection (`profkit_convert::detect`), which looks at the first bytes
//! of any input before any reader does.
//!
//! | target   | input                                   | what it checks                          |
//! |----------|-----------------------------------------|-----------------------------------------|
//! | `detect` | any bytes, as a file's first bytes      | no panic; candidates listed once each;  |
//! |          | under several names                     | the name's format first only if it fits |

use profkit_convert::detect::{Detected, candidates, content_fits, named};

/// The names an input is detected under: none, each producer's naming, a misleading one.
const NAMES: &[&str] = &[
    "",
    "input",
    "host.xplane.pb",
    "host.xplane.pb.gz",
    "run.paddle_trace.pb",
    "train.trace.0.1",
    "train.trace.0.1.meta",
    "trace.json",
];

/// Detects `data` (and each of its prefixes up to 16 bytes, as a short file) under every name.
pub fn run(data: &[u8]) {
    for cut in (0..=data.len().min(16)).chain(std::iter::once(data.len())) {
        let prefix = data.get(..cut).unwrap_or(data);
        for name in NAMES {
            check(prefix, name);
        }
    }
}

fn check(prefix: &[u8], name: &str) {
    let found = candidates(prefix, name);
    let fits = content_fits(prefix, name);
    for (i, d) in found.iter().enumerate() {
        assert!(
            !found[..i].contains(d),
            "{d} listed twice for {name:?}: {found:?}"
        );
    }
    // Every format the content fits is a candidate; the only other one is the name's, in front.
    for f in &fits {
        assert!(
            found.contains(f),
            "{f} fits but is no candidate for {name:?}"
        );
    }
    let extra: Vec<&Detected> = found.iter().filter(|d| !fits.contains(d)).collect();
    match extra.as_slice() {
        [] => {}
        [only] => {
            assert_eq!(Some(**only), named(name), "{only} for {name:?}");
            assert_eq!(found.first(), Some(*only), "{found:?} for {name:?}");
        }
        more => panic!("candidates {more:?} neither fit nor named for {name:?}"),
    }
    if let Some(by_name) = named(name) {
        if found.contains(&by_name) {
            assert_eq!(found.first(), Some(&by_name), "{found:?} for {name:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smoke;

    #[test]
    fn smoke_detect_random() {
        smoke::run_random(151, smoke::scaled(300), 64, run);
        // Bytes that start protobuf fields and XDL frames.
        let mut rng = smoke::XorShift::new(152);
        let alphabet = [
            0x0a, 0x00, 0x02, 0x05, 0x08, 0x12, 0x1a, 0x7b, 0x80, 0xff, b'h', b'{',
        ];
        for _ in 0..smoke::scaled(600) {
            let n = rng.below(24);
            let input: Vec<u8> = (0..n)
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            run(&input);
        }
    }

    #[test]
    fn smoke_detect_mutated_seeds() {
        let seeds: [&[u8]; 4] = [
            &[0x0a, 0x00, 0x0a, 0x00, 0x0a, 0x00],
            b"\x0a\x05hello",
            br#"{"traceEvents": [{"ph": "X"}]}"#,
            &[0x06, 0x00, 0x00, 0x00, 0x0a, 0x04, b'l', b'o', b's', b's'],
        ];
        for seed in seeds {
            run(seed);
            for flipped in smoke::bit_flips(seed) {
                run(&flipped);
            }
            for edited in smoke::havoc(seed, 153, smoke::scaled(100)) {
                run(&edited);
            }
        }
    }
}
