//! Fuzz targets for `profkit-arrow`.
//!
//! | target          | input                          | what it checks                                   |
//! |-----------------|--------------------------------|--------------------------------------------------|
//! | `arrow_events`  | any bytes, as an encoded XSpace | [`events`]: the events stream against the whole decode |

pub mod events;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smoke;

    #[test]
    fn smoke_arrow_random() {
        smoke::run_random(131, smoke::scaled(300), 96, events::run);
    }

    #[test]
    fn smoke_arrow_mutated_seeds() {
        let seeds = crate::xplane::seed_encodings();
        assert!(
            !seeds.is_empty(),
            "the XSpace conformance inputs are missing"
        );
        for (i, valid) in seeds.iter().enumerate() {
            events::run(valid);
            let step = if valid.len() > 2_500 { 499 } else { 1 };
            for cut in smoke::truncations(valid).step_by(step) {
                events::run(cut);
            }
            for edited in smoke::length_corruptions(valid) {
                events::run(&edited);
            }
            for edited in smoke::havoc(valid, 133 + i as u64, smoke::scaled(20)) {
                events::run(&edited);
            }
        }
    }
}
