//! Telling a Poplar profile from other JSON by the first bytes of a file.

use crate::profile::Shape;

/// The top-level keys of a graph profile.
const GRAPH_KEYS: &[&str] = &[
    "computeSets",
    "controlPrograms",
    "exchanges",
    "externalExchanges",
    "functionPrograms",
    "graph",
    "hostExchanges",
    "memory",
    "optimizationInfo",
    "programs",
    "target",
    "vertexTypes",
];

/// The top-level keys of an execution profile.
const EXECUTION_KEYS: &[&str] = &[
    "computeSetCycles",
    "computeSetCyclesByTile",
    "externalExchangeCycles",
    "hostExchangeCycles",
    "profilerMode",
    "programTrace",
    "simulation",
    "vertexComputeSet",
    "vertexCycles",
    "vertexType",
];

/// The top-level keys found in `prefix` (a JSON object, possibly cut short), and whether the
/// object ended within it. `None` when the prefix does not start an object.
fn top_level_keys(prefix: &[u8]) -> Option<(Vec<String>, bool)> {
    let text = prefix.strip_prefix(b"\xef\xbb\xbf").unwrap_or(prefix);
    let start = text.iter().position(|b| !b.is_ascii_whitespace())?;
    if text.get(start) != Some(&b'{') {
        return None;
    }
    let mut keys = Vec::new();
    let mut depth = 0usize;
    let mut i = start;
    // A string at depth 1 that is followed by a colon is a key.
    while let Some(&b) = text.get(i) {
        match b {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some((keys, true));
                }
            }
            b'"' => {
                let from = i + 1;
                let mut j = from;
                let mut escaped = false;
                loop {
                    match text.get(j) {
                        None => return Some((keys, false)),
                        Some(b'\\') if !escaped => escaped = true,
                        Some(b'"') if !escaped => break,
                        Some(_) => escaped = false,
                    }
                    j += 1;
                }
                let is_key = depth == 1
                    && text
                        .get(j + 1..)
                        .and_then(|rest| rest.iter().find(|b| !b.is_ascii_whitespace()))
                        == Some(&b':');
                if is_key {
                    keys.push(
                        String::from_utf8_lossy(text.get(from..j).unwrap_or_default()).into_owned(),
                    );
                }
                i = j;
            }
            _ => {}
        }
        i += 1;
    }
    Some((keys, false))
}

/// Whether the first bytes of a file look like a Poplar profile, and of which shape.
///
/// A JSON object is a Poplar profile when its top-level keys include `graphProfile` or
/// `executionProfile` (a combined profile), `profilerMode` (an execution profile), or `target`
/// with `graph`, `memory` or `programs` (a graph profile). Profiles of large graphs put megabytes
/// of per-tile arrays before those keys (Poplar sorts keys), so when `prefix` ends inside the
/// object it is enough that every top-level key seen is one of a graph (or an execution)
/// profile's; a whole object whose keys are all a graph profile's is one when it has `target`.
pub fn looks_like_poplar(prefix: &[u8]) -> Option<Shape> {
    let (keys, complete) = top_level_keys(prefix)?;
    let has = |k: &str| keys.iter().any(|key| key == k);
    if has("graphProfile") || has("executionProfile") {
        return Some(Shape::Combined);
    }
    if has("profilerMode") {
        return Some(Shape::Execution);
    }
    let all_graph_keys = !keys.is_empty() && keys.iter().all(|k| GRAPH_KEYS.contains(&k.as_str()));
    if has("target") && (has("graph") || has("memory") || has("programs") || all_graph_keys) {
        return Some(Shape::Graph);
    }
    if complete || keys.is_empty() {
        return None;
    }
    if keys.iter().all(|k| GRAPH_KEYS.contains(&k.as_str())) {
        return Some(Shape::Graph);
    }
    if keys.iter().all(|k| EXECUTION_KEYS.contains(&k.as_str())) {
        return Some(Shape::Execution);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(
            looks_like_poplar(br#"{"profilerMode":"NONE"}"#),
            Some(Shape::Execution)
        );
        assert_eq!(
            looks_like_poplar(br#" {"executionProfile":{}, "graphProfile": {"#),
            Some(Shape::Combined)
        );
        assert_eq!(
            looks_like_poplar(br#"{"graph":{},"memory":{},"target":{"type":"IPU"}}"#),
            Some(Shape::Graph)
        );
        assert_eq!(
            looks_like_poplar(br#"{"target":{"numTiles":2}}"#),
            Some(Shape::Graph)
        );
        // Cut inside the first, long section of a sorted graph profile.
        assert_eq!(
            looks_like_poplar(br#"{"computeSets":{"names":["a\"b","#),
            Some(Shape::Graph)
        );
        assert_eq!(
            looks_like_poplar(br#"{"computeSetCyclesByTile":[[1,2,3"#),
            Some(Shape::Execution)
        );
    }

    #[test]
    fn other_json_is_not_poplar() {
        assert_eq!(looks_like_poplar(br#"{"target":{},"data":[]}"#), None);
        assert_eq!(looks_like_poplar(br#"{"graph":{},"vertexTypes":{}}"#), None);
        assert_eq!(looks_like_poplar(br#"{"traceEvents":[{"ph":"X""#), None);
        assert_eq!(looks_like_poplar(br#"[{"profilerMode":"NONE"}]"#), None);
        assert_eq!(looks_like_poplar(b"\x0a\x02\x12\x00"), None);
        assert_eq!(looks_like_poplar(b""), None);
        assert_eq!(looks_like_poplar(b"{"), None);
    }
}
