//! Inputs that once failed a target, kept as tests. Each says what was wrong and where it was
//! fixed. Inputs of `xplane_decode` are inline bytes; those of `xplane_builder` are written as the
//! operations they decode to, which stay readable when `arbitrary` changes its byte format.

use super::builder::{self, Int, LineEdit, LineId, Op, Which};
use super::decode;

/// The canonical JSON view read a double back 2 ulps off (`2^-33` printed as
/// `1.1641532182693481e-10`): serde_json's default float parser is not exact. Fixed by enabling
/// serde_json's `float_roundtrip` feature in `profkit-xplane`.
#[test]
fn json_view_reads_every_double_back_exactly() {
    // XSpace { planes: [XPlane { stats: [XStat { double_value: 2^-33 }] }] }
    let data = [
        0x0a, 0x0b, 0x32, 0x09, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe0, 0x3d,
    ];
    decode::run(&data);
}

/// `Summary::of` added occurrence counts in `u64` without care: three aggregated events of
/// `i64::MAX` occurrences overflowed. Fixed in `summary.rs` (the sum saturates).
#[test]
fn summary_of_huge_occurrence_counts() {
    // One line with three events of metadata "e", each with num_occurrences = i64::MAX.
    let data = [
        10, 57, 26, 44, 8, 1, 34, 12, 8, 1, 40, 255, 255, 255, 255, 255, 255, 255, 255, 127, 34,
        12, 8, 1, 40, 255, 255, 255, 255, 255, 255, 255, 255, 127, 34, 12, 8, 1, 40, 255, 255, 255,
        255, 255, 255, 255, 255, 127, 34, 9, 8, 1, 18, 5, 8, 1, 18, 1, 101,
    ];
    decode::run(&data);
}

/// A builder over a plane from a file whose metadata ids reach `i64::MAX` overflowed when it
/// created the next id (here while merging a named event into it). Fixed in `builder.rs`
/// (`next_id` takes the smallest free id instead).
#[test]
fn merge_into_a_plane_whose_ids_reach_i64_max() {
    // planes[0]: event_metadata { i64::MAX: { id: i64::MAX } };
    // planes[1]: one line with one event of metadata "x".
    let data = [
        10, 24, 34, 22, 8, 255, 255, 255, 255, 255, 255, 255, 255, 127, 18, 10, 8, 255, 255, 255,
        255, 255, 255, 255, 255, 127, 10, 21, 26, 8, 8, 1, 34, 4, 8, 1, 16, 0, 34, 9, 8, 1, 18, 5,
        8, 1, 18, 1, 120,
    ];
    decode::run(&data);
}

/// `normalize_timestamps` subtracted a negative start from a large timestamp and overflowed.
/// Fixed in `utils.rs` (the difference saturates, as `denormalize_timestamps` already did).
#[test]
fn normalize_with_a_negative_start() {
    let mut planes = Default::default();
    builder::apply(
        &mut planes,
        Op::EditLine(
            Which::A,
            LineId(1),
            vec![LineEdit::TimestampNs(Int(i64::MAX))],
        ),
    );
    builder::apply(&mut planes, Op::Normalize(Which::A, Int(-1)));
    assert_eq!(planes[0].lines[0].timestamp_ns, i64::MAX);
}

/// Found while `validate`'s overlap check was being rewritten: an event of zero duration asked
/// its ordered set for the empty range `start + 1..start`, which panics. Any builder-made event
/// has zero duration until one is set.
#[test]
fn validate_a_zero_duration_event() {
    // XSpace { planes: [XPlane { lines: [XLine { events: [XEvent { metadata_id: 1 }] }] }] }
    let data = [0x0a, 0x06, 0x1a, 0x04, 0x22, 0x02, 0x08, 0x01];
    decode::run(&data);
}
