//! TSL's reading of framework op names (`ParseTfOpFullname`, `ParseTfNameScopes`,
//! `TfOpEventName`), and the `Framework Name Scope` / `Framework Ops` events xprof derives from
//! them (`ProcessTfOpEvent`).

use profkit_xplane::XPlane;

use super::builder::{Editor, Lines, Span, set_display_name_if_empty};

/// What kind of op a `tf_op` name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Category {
    Unknown,
    TensorFlow,
    Jax,
    TfData,
    Memcpy,
}

/// A parsed op name: its category, name and type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TfOp<'a> {
    pub category: Category,
    pub name: &'a str,
    pub op_type: &'a str,
}

// The patterns match ASCII only, so they are checked byte by byte: a byte of a multi-byte
// character is never ASCII, and fails as the character would.

/// `[A-Za-z0-9.][A-Za-z0-9_.\/>-]*`
pub(crate) fn is_tf_op_name(s: &str) -> bool {
    match s.as_bytes().split_first() {
        Some((&first, rest)) => {
            (first.is_ascii_alphanumeric() || first == b'.')
                && rest.iter().all(|&b| {
                    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'>' | b'-')
                })
        }
        None => false,
    }
}

/// `[A-Z_][a-zA-Z0-9_]*`
pub(crate) fn is_tf_op_type(s: &str) -> bool {
    match s.as_bytes().split_first() {
        Some((&first, rest)) => {
            (first.is_ascii_uppercase() || first == b'_')
                && rest.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_')
        }
        None => false,
    }
}

/// `[a-z_][a-z0-9_]*(\[.*\])?` (`.` not matching a newline).
pub(crate) fn is_jax_op_type(s: &str) -> bool {
    let (base, rest) = match s.find('[') {
        Some(i) => s.split_at(i),
        None => (s, ""),
    };
    let base_ok = match base.as_bytes().split_first() {
        Some((&first, rest)) => {
            (first.is_ascii_lowercase() || first == b'_')
                && rest
                    .iter()
                    .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        }
        None => false,
    };
    let rest_ok =
        rest.is_empty() || (rest.len() >= 2 && rest.ends_with(']') && !rest.contains('\n'));
    base_ok && rest_ok
}

/// `absl::SimpleAtoi` into an `int64`: optional surrounding whitespace and sign, digits.
fn is_integer(s: &str) -> bool {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && t.parse::<i64>().is_ok()
}

/// `DeriveOpType`: the last scope of a name without its numeric suffix (`MatMul_1` -> `MatMul`).
fn derive_op_type(full: &str) -> &str {
    let op_name = full.rsplit('/').next().unwrap_or(full);
    let suffix = op_name.rsplit('_').next().unwrap_or(op_name);
    if is_integer(suffix) && suffix.len() < op_name.len() {
        &op_name[..op_name.len() - suffix.len() - 1]
    } else {
        op_name
    }
}

fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len()
        && s.as_bytes()
            .iter()
            .zip(prefix.as_bytes())
            .all(|(a, b)| a.eq_ignore_ascii_case(b))
}

/// `ParseTfOpFullname`.
pub(crate) fn parse(full: &str) -> TfOp<'_> {
    let unknown = TfOp {
        category: Category::Unknown,
        name: full,
        op_type: "",
    };
    let Some((name, op_type)) = full.split_once(':') else {
        for (prefix, op_type) in [
            ("MEMCPYHToD", "MemcpyHToD"),
            ("MEMCPYDToH", "MemcpyDToH"),
            ("MEMCPYDToD", "MemcpyDToD"),
            ("MEMCPYHToH", "MemcpyHToH"),
        ] {
            if starts_with_ignore_case(full, prefix) {
                return TfOp {
                    category: Category::Memcpy,
                    name: full,
                    op_type,
                };
            }
        }
        return unknown;
    };
    if name == "Iterator" {
        return TfOp {
            category: Category::TfData,
            name: full,
            op_type: "Dataset",
        };
    }
    if is_tf_op_name(name) && is_tf_op_type(op_type) {
        return TfOp {
            category: Category::TensorFlow,
            name,
            op_type,
        };
    }
    let derived = if op_type.is_empty() {
        derive_op_type(name)
    } else {
        op_type
    };
    if is_jax_op_type(derived) {
        let end = derived.find('[').unwrap_or(derived.len());
        return TfOp {
            category: Category::Jax,
            name,
            op_type: &derived[..end],
        };
    }
    if op_type.is_empty() {
        return TfOp {
            category: Category::TensorFlow,
            name,
            op_type: derived,
        };
    }
    unknown
}

/// `ParseTfNameScopes`: the scopes of an op name (all but its last `/` part).
pub(crate) fn name_scopes(name: &str) -> Vec<&str> {
    let mut scopes: Vec<&str> = name.split('/').collect();
    scopes.pop();
    scopes
}

/// `TfOpEventName`: what a `Framework Ops` event is called.
pub(super) fn event_name(op: &TfOp<'_>) -> String {
    match op.category {
        Category::Unknown => op
            .name
            .trim_end_matches(|c: char| c.is_ascii_whitespace())
            .to_owned(),
        Category::TfData => {
            let last = op.name.rsplit("::").next().unwrap_or(op.name);
            format!("Iterator::{last}")
        }
        _ => op.op_type.to_owned(),
    }
}

/// The handles of a plane's `Framework Name Scope` and `Framework Ops` lines.
#[derive(Clone, Copy)]
pub(super) struct FrameworkLines {
    pub name_scope: usize,
    pub ops: usize,
}

/// `ProcessTfOpEvent`: one op's name scopes (TensorFlow and JAX ops) and the op itself, shown by
/// its type, over `span`.
pub(super) fn add_op_event(
    plane: &mut XPlane,
    editor: &mut Editor,
    lines: &mut Lines,
    framework: FrameworkLines,
    full: &str,
    span: Span,
    group: Option<i64>,
) {
    let op = parse(full);
    if matches!(op.category, Category::TensorFlow | Category::Jax) {
        let scopes: Vec<i64> = name_scopes(op.name)
            .into_iter()
            .map(|scope| editor.event_metadata(plane, scope))
            .collect();
        lines.expand_or_add_levels(
            plane,
            editor,
            framework.name_scope,
            &scopes,
            span,
            group,
            &[],
        );
    }
    let id = editor.event_metadata(plane, full);
    set_display_name_if_empty(plane, id, || event_name(&op));
    lines.expand_or_add(plane, editor, framework.ops, id, span, group, None);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories() {
        let tf = parse("model/dense/MatMul:MatMul");
        assert_eq!(tf.category, Category::TensorFlow);
        assert_eq!(tf.name, "model/dense/MatMul");
        assert_eq!(event_name(&tf), "MatMul");
        let jax = parse("jit(step)/transpose:transpose[permutation=(1, 0)]");
        assert_eq!(jax.category, Category::Jax);
        assert_eq!(jax.op_type, "transpose");
        let derived = parse("model/dense/MatMul_1:");
        assert_eq!(derived.category, Category::TensorFlow);
        assert_eq!(derived.op_type, "MatMul");
        let jax_derived = parse("jit(f)/add_2:");
        assert_eq!(jax_derived.category, Category::Jax);
        assert_eq!(jax_derived.op_type, "add");
        let data = parse("Iterator::Batch::Map");
        assert_eq!(data.category, Category::TfData);
        assert_eq!(event_name(&data), "Iterator::Map");
        let unknown = parse("relu6 ");
        assert_eq!(unknown.category, Category::Unknown);
        assert_eq!(event_name(&unknown), "relu6");
        assert_eq!(parse("MemcpyHToD").category, Category::Memcpy);
        assert_eq!(parse("a b:Op x").category, Category::Unknown);
        // The patterns are ASCII: a multi-byte character never matches a class.
        assert!(is_tf_op_name("a.b/c>d-e_f"));
        assert!(is_tf_op_name(".9"));
        assert!(!is_tf_op_name("é/MatMul"));
        assert!(!is_tf_op_name("a/é"));
        assert!(!is_tf_op_name("_a"));
        assert!(!is_tf_op_name(""));
        assert!(is_tf_op_type("_Op2"));
        assert!(!is_tf_op_type("Ünicode"));
        assert!(!is_tf_op_type("Opé"));
        assert!(is_jax_op_type("add_2[x=é]"));
        assert!(!is_jax_op_type("é"));
        assert!(!is_jax_op_type("Add"));
        assert!(!is_jax_op_type("add["));
        assert_eq!(name_scopes("a/b/c"), vec!["a", "b"]);
        assert!(name_scopes("c").is_empty());
    }
}
