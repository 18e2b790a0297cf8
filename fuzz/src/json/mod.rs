//! Fuzz targets for `profkit-json`, the streaming JSON reader the JSON format crates share.
//!
//! | target        | input                   | what it checks                                      |
//! |---------------|-------------------------|-----------------------------------------------------|
//! | `json_reader` | any bytes, as JSON text | [`reader`]: against serde_json, errors, streaming   |

pub mod reader;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smoke;

    #[test]
    fn smoke_json_random() {
        smoke::run_random(131, smoke::scaled(300), 96, reader::run);
        let mut rng = smoke::XorShift::new(132);
        let alphabet = b"{}[],:\"\\u0123456789.-+eEtrufalsn \n";
        for _ in 0..smoke::scaled(600) {
            let n = rng.below(48);
            let input: Vec<u8> = (0..n)
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            reader::run(&input);
        }
    }

    #[test]
    fn smoke_json_mutated_seeds() {
        let seed = br#"{"a": [1, -2, 3.5e-1, "x\u00e9\n", true, null, {"b": []}], "c": {"d": 18446744073709551615}}"#;
        reader::run(seed);
        for cut in smoke::truncations(seed) {
            reader::run(cut);
        }
        for flipped in smoke::bit_flips(seed) {
            reader::run(&flipped);
        }
        for edited in smoke::havoc(seed, 133, smoke::scaled(200)) {
            reader::run(&edited);
        }
    }
}
