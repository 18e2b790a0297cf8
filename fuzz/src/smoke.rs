//! Deterministic inputs for running the targets inside plain `cargo test`.
//!
//! A real campaign needs nightly and libFuzzer; these few hundred inputs per target need
//! neither, so every CI run on stable still exercises the target logic. The generator is a fixed
//! xorshift, so a failure reproduces on every run and machine.

use crate::wire;

/// The environment variable that sets how many random inputs each smoke test runs (CI runs more
/// than the default, in release mode).
pub const ITERATIONS_VAR: &str = "PROFKIT_FUZZ_ITERATIONS";

/// Random inputs per smoke test when [`ITERATIONS_VAR`] is unset.
pub const DEFAULT_ITERATIONS: usize = 300;

/// `count` scaled by the ratio of [`ITERATIONS_VAR`] to [`DEFAULT_ITERATIONS`] (at least 1), or
/// `count` itself when the variable is unset or not a number.
pub fn scaled(count: usize) -> usize {
    match std::env::var(ITERATIONS_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        Some(n) => count.saturating_mul(n).div_ceil(DEFAULT_ITERATIONS).max(1),
        None => count,
    }
}

/// Marsaglia's xorshift64*: small, fast and good enough to pick fuzz inputs.
#[derive(Clone, Debug)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator from `seed` (zero is replaced, as xorshift would stay at zero).
    pub fn new(seed: u64) -> Self {
        XorShift(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`0` when `n` is zero).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }

    /// `len` random bytes.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next_u64() as u8).collect()
    }
}

/// Runs `target` on `count` random inputs of up to `max_len` bytes drawn from `seed`.
pub fn run_random(seed: u64, count: usize, max_len: usize, mut target: impl FnMut(&[u8])) {
    let mut rng = XorShift::new(seed);
    for _ in 0..count {
        let len = rng.below(max_len + 1);
        let input = rng.bytes(len);
        target(&input);
    }
}

/// Every prefix of `valid`, shortest first (the empty one included, `valid` itself not).
pub fn truncations(valid: &[u8]) -> impl Iterator<Item = &[u8]> {
    (0..valid.len()).filter_map(|len| valid.get(..len))
}

/// `valid` with one bit flipped: for each byte its continuation bit (which makes or breaks
/// varints) and one other bit, rotating through the low seven (tags, wire types, lengths, data).
pub fn bit_flips(valid: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    (0..valid.len() * 2).map(|i| {
        let (at, which) = (i / 2, i % 2);
        let bit = if which == 0 { 7 } else { at % 7 };
        let mut input = valid.to_vec();
        if let Some(byte) = input.get_mut(at) {
            *byte ^= 1 << bit;
        }
        input
    })
}

/// `valid` with each length prefix of its length-delimited fields (found by
/// [`wire::length_prefixes`]) replaced by wrong lengths: one byte short and long, zero, far past
/// the end, the largest varint, an overlong encoding of the right value, and a varint that never
/// ends within 10 bytes.
pub fn length_corruptions(valid: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for prefix in wire::length_prefixes(valid) {
        let right = prefix.value;
        let mut overlong = wire::encode_varint(right);
        if let Some(last) = overlong.last_mut() {
            *last |= 0x80;
        }
        overlong.push(0);
        let replacements = [
            wire::encode_varint(right.saturating_sub(1)),
            wire::encode_varint(right + 1),
            wire::encode_varint(0),
            wire::encode_varint(right + 1_000_000),
            wire::encode_varint(u64::from(u32::MAX)),
            wire::encode_varint(u64::MAX),
            overlong,
            vec![0xff; 11],
        ];
        for replacement in replacements {
            let (Some(head), Some(tail)) = (valid.get(..prefix.start), valid.get(prefix.end..))
            else {
                continue;
            };
            out.push([head, &replacement, tail].concat());
        }
    }
    out
}

/// `count` inputs each made from `valid` by a few random edits (overwrite, insert, delete,
/// duplicate a span), to reach states one edit cannot.
pub fn havoc(valid: &[u8], seed: u64, count: usize) -> Vec<Vec<u8>> {
    let mut rng = XorShift::new(seed);
    (0..count)
        .map(|_| {
            let mut input = valid.to_vec();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(input.len() + 1);
                match rng.below(4) {
                    0 => {
                        if let Some(byte) = input.get_mut(at) {
                            *byte = rng.next_u64() as u8;
                        }
                    }
                    1 => input.insert(at, rng.next_u64() as u8),
                    2 => {
                        if at < input.len() {
                            input.remove(at);
                        }
                    }
                    _ => {
                        let len = rng.below(input.len() - at + 1);
                        let span: Vec<u8> = input.get(at..at + len).unwrap_or_default().to_vec();
                        let to = rng.below(input.len() + 1);
                        input.splice(to..to, span);
                    }
                }
            }
            input
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xorshift_is_deterministic() {
        let (mut a, mut b) = (XorShift::new(7), XorShift::new(7));
        assert!((0..100).all(|_| a.next_u64() == b.next_u64()));
        assert_ne!(XorShift::new(0).next_u64(), 0);
    }

    #[test]
    fn mutations_differ_from_the_input() {
        let valid = [0x0a, 0x02, 0x08, 0x01];
        assert_eq!(truncations(&valid).count(), 4);
        assert!(bit_flips(&valid).all(|m| m != valid));
        let corrupted = length_corruptions(&valid);
        assert_eq!(corrupted.len(), 8);
        assert!(corrupted.iter().all(|m| m[..] != valid));
    }
}
