//! Target `paddle_nodetrees`: arbitrary bytes into the node trees decoders.
//!
//! As `paddle_profile`, for `NodeTreesProto`: the whole decode and the streaming reader agree,
//! refusals say where, and what decodes re-encodes to the same message, summarises, validates
//! (without running forever on cycles) and goes through the event model.

use profkit_events::paddle::{ReadOptions, nodetree};
use profkit_events::report::summary::{Forest, Summary, SummaryOptions};

/// Runs the target on one input. Panics when a property does not hold.
pub fn run(data: &[u8]) {
    let _ = nodetree::looks_like_node_trees(data);
    let whole = nodetree::decode_node_trees(data);
    let streamed = nodetree::NodeTreesReader::new(data, ReadOptions::default()).collect_trees();
    match (&whole, &streamed) {
        (Ok(a), Ok(b)) => super::assert_same_message(b, a, "the streaming reader disagrees"),
        (Ok(_), Err(e)) => panic!("only the streaming reader refuses: {e}"),
        (Err(e), Ok(_)) => panic!("only the whole decode refuses: {e}"),
        (Err(a), Err(b)) => {
            super::profile::check_error(a, data, true);
            super::profile::check_error(b, data, false);
        }
    }
    let Ok(trees) = whole else { return };
    let bytes = nodetree::encode_node_trees(&trees);
    let again = nodetree::decode_node_trees(&bytes)
        .unwrap_or_else(|e| panic!("encode(t) does not decode: {e}"));
    super::assert_same_message(&again, &trees, "decode(encode(t)) != t");
    let summary = nodetree::summarize(&trees);
    assert_eq!(summary.threads.len(), trees.thread_trees.len());
    let _ = nodetree::validate(&trees);
    let recording = nodetree::to_recording(&trees);
    super::check_recording(&recording);
    // Paddle's summary of the trees, and of their event model, never panics.
    let options = SummaryOptions {
        thread_sep: data.len() % 2 == 0,
        ..SummaryOptions::default()
    };
    let from_trees = Summary::new(&Forest::from_node_trees(&trees), options);
    let _ = from_trees.text();
    let from_events = Summary::new(&Forest::from_recording(&recording), options);
    let _ = from_events.text();
}
