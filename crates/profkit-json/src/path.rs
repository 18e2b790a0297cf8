//! JSON paths as profkit prints them: `memory.byTile.total[3]`, `programs[5].children[0]`,
//! `memory.byCategory["odd key"].total`.

/// Whether `key` can follow a dot in a path (a plain identifier).
fn is_plain(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Appends an object key to `path`.
pub fn push_key(path: &mut String, key: &str) {
    if is_plain(key) {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
    } else {
        path.push('[');
        path.push_str(&serde_json::Value::from(key).to_string());
        path.push(']');
    }
}

/// Appends an array index to `path`.
pub fn push_index(path: &mut String, index: usize) {
    path.push('[');
    path.push_str(&index.to_string());
    path.push(']');
}

/// `base` followed by `key`.
pub fn key(base: &str, key: &str) -> String {
    let mut path = base.to_owned();
    push_key(&mut path, key);
    path
}

/// `base` followed by `[index]`.
pub fn index(base: &str, index: usize) -> String {
    let mut path = base.to_owned();
    push_index(&mut path, index);
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        let mut p = String::new();
        push_key(&mut p, "memory");
        push_key(&mut p, "byCategory");
        push_key(&mut p, "odd key");
        push_key(&mut p, "total");
        push_index(&mut p, 3);
        assert_eq!(p, r#"memory.byCategory["odd key"].total[3]"#);
        assert_eq!(key("", "9lives"), r#"["9lives"]"#);
        assert_eq!(index("programs", 2), "programs[2]");
    }
}
