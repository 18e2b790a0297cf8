//! Target `paddle_profile`: arbitrary bytes into the legacy `Profile` decoders.
//!
//! The whole decode and the streaming reader agree: the same message when both succeed, a refusal
//! from both otherwise. A refusal says where: `Malformed` or `Truncated` at an offset within the
//! input (a truncation at its very end) with a path under `Profile`. What decodes re-encodes to
//! the same message, summarises and validates, and goes through the event model (every event a
//! span or a warning, the report's calls the spans) and back into a `Profile` that decodes.

use profkit_error::Truncation;
use profkit_events::Error;
use profkit_events::paddle::{Format, ReadOptions, legacy};

/// Runs the target on one input. Panics when a property does not hold.
pub fn run(data: &[u8]) {
    let _ = legacy::looks_like_profile(data);
    let _ = Format::detect(data);
    let whole = legacy::decode_profile(data);
    let streamed = legacy::ProfileReader::new(data, ReadOptions::default()).collect_profile();
    match (&whole, &streamed) {
        (Ok(a), Ok(b)) => super::assert_same_message(b, a, "the streaming reader disagrees"),
        (Ok(_), Err(e)) => panic!("only the streaming reader refuses: {e}"),
        (Err(e), Ok(_)) => panic!("only the whole decode refuses: {e}"),
        (Err(a), Err(b)) => {
            check_error(a, data, true);
            check_error(b, data, false);
        }
    }
    let Ok(profile) = whole else { return };
    let bytes = legacy::encode_profile(&profile);
    let again =
        legacy::decode_profile(&bytes).unwrap_or_else(|e| panic!("encode(p) does not decode: {e}"));
    super::assert_same_message(&again, &profile, "decode(encode(p)) != p");
    let _ = legacy::summarize(&profile);
    let _ = legacy::validate(&profile);
    let recording = legacy::to_recording(&profile);
    super::check_recording(&recording);
    let written = legacy::from_recording(&recording);
    let again = legacy::decode_profile(&legacy::encode_profile(&written))
        .expect("a written Profile decodes");
    super::assert_same_message(&again, &written, "a written Profile decodes to another");
}

/// An error of a decode of `data`: where it says it is must be in the input.
pub fn check_error(e: &Error, data: &[u8], whole: bool) {
    let len = data.len() as u64;
    match e {
        Error::Malformed {
            offset,
            path,
            reason,
        } => {
            assert!(*offset <= len, "{e}: offset past the input");
            assert!(
                path.starts_with("Profile") || path.starts_with("NodeTreesProto"),
                "{e}"
            );
            assert!(!reason.is_empty());
        }
        Error::Truncated(Truncation {
            offset,
            path,
            needed,
        }) => {
            if whole {
                assert_eq!(*offset, len, "{e}: a truncation not at the end");
            } else {
                assert!(*offset <= len, "{e}");
            }
            assert!(*needed > 0, "{e}");
            assert!(
                path.starts_with("Profile") || path.starts_with("NodeTreesProto"),
                "{e}"
            );
        }
        Error::TooLarge(profkit_error::OverLimit { offset, .. }) if !whole => {
            assert!(*offset <= len, "{e}")
        }
        other => panic!("unexpected error {other:?}"),
    }
}
