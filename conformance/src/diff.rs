//! A small line diff for golden-file mismatches: hunks with three lines of context, `-` for the
//! expectation and `+` for what the run produced, cut short after a screenful.

/// Lines of context around each change.
const CONTEXT: usize = 3;
/// Changed lines shown before the rest is summarised.
const MAX_CHANGED_LINES: usize = 60;
/// Above this many cells the longest-common-subsequence table is not built; the diff then shows
/// the span between the common prefix and the common suffix.
const MAX_TABLE_CELLS: usize = 4_000_000;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    Same,
    Removed,
    Added,
}

/// A unified-style diff of `expected` against `actual`, or an empty string when they are equal.
///
/// ```
/// let d = conformance::diff::diff("a\nb\nc\n", "a\nB\nc\n");
/// assert!(d.contains("-b\n+B"));
/// ```
pub fn diff(expected: &str, actual: &str) -> String {
    if expected == actual {
        return String::new();
    }
    let old: Vec<&str> = expected.lines().collect();
    let new: Vec<&str> = actual.lines().collect();
    let ops = edit_script(&old, &new);

    // Positions (in `ops`) of the changed lines, grouped into hunks joined when their context meets.
    let changed: Vec<usize> = (0..ops.len()).filter(|&i| ops[i].0 != Op::Same).collect();
    let mut out = String::new();
    if changed.is_empty() {
        // Same lines, different bytes: line endings or a final newline.
        out.push_str(&format!(
            "(the texts differ only in line endings or the final newline: expected {} bytes, actual {} bytes)\n",
            expected.len(),
            actual.len()
        ));
        return out;
    }
    let mut shown = 0;
    let mut hunk_start = 0;
    while hunk_start < changed.len() {
        let mut hunk_end = hunk_start;
        while hunk_end + 1 < changed.len()
            && changed[hunk_end + 1] - changed[hunk_end] <= 2 * CONTEXT + 1
        {
            hunk_end += 1;
        }
        let from = changed[hunk_start].saturating_sub(CONTEXT);
        let to = (changed[hunk_end] + CONTEXT + 1).min(ops.len());
        let (old_line, new_line) = ops[from].1;
        out.push_str(&format!(
            "@@ expected line {} / actual line {} @@\n",
            old_line + 1,
            new_line + 1
        ));
        for &(op, (oi, ni)) in &ops[from..to] {
            if shown >= MAX_CHANGED_LINES {
                let rest = changed.len() - shown;
                out.push_str(&format!("... and {rest} more changed lines\n"));
                return out;
            }
            match op {
                Op::Same => out.push_str(&format!(" {}\n", old.get(oi).copied().unwrap_or(""))),
                Op::Removed => {
                    shown += 1;
                    out.push_str(&format!("-{}\n", old.get(oi).copied().unwrap_or("")));
                }
                Op::Added => {
                    shown += 1;
                    out.push_str(&format!("+{}\n", new.get(ni).copied().unwrap_or("")));
                }
            }
        }
        hunk_start = hunk_end + 1;
    }
    out
}

/// The edit script as (operation, (index in old, index in new)) per line: for `Removed` the old
/// index is the line, for `Added` the new one; the other index says where the change sits.
fn edit_script(old: &[&str], new: &[&str]) -> Vec<(Op, (usize, usize))> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (a, b) = (
        &old[prefix..old.len() - suffix],
        &new[prefix..new.len() - suffix],
    );

    let mut ops: Vec<(Op, (usize, usize))> = (0..prefix).map(|i| (Op::Same, (i, i))).collect();
    if a.len().saturating_mul(b.len()) > MAX_TABLE_CELLS {
        ops.extend((0..a.len()).map(|i| (Op::Removed, (prefix + i, prefix))));
        ops.extend((0..b.len()).map(|j| (Op::Added, (prefix + a.len(), prefix + j))));
    } else {
        // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..].
        let width = b.len() + 1;
        let mut lcs = vec![0u32; (a.len() + 1) * width];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                lcs[i * width + j] = if a[i] == b[j] {
                    lcs[(i + 1) * width + j + 1] + 1
                } else {
                    lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            if i < a.len() && j < b.len() && a[i] == b[j] {
                ops.push((Op::Same, (prefix + i, prefix + j)));
                i += 1;
                j += 1;
            } else if i < a.len()
                && (j == b.len() || lcs[(i + 1) * width + j] >= lcs[i * width + j + 1])
            {
                ops.push((Op::Removed, (prefix + i, prefix + j)));
                i += 1;
            } else {
                ops.push((Op::Added, (prefix + i, prefix + j)));
                j += 1;
            }
        }
    }
    let (old_tail, new_tail) = (old.len() - suffix, new.len() - suffix);
    ops.extend((0..suffix).map(|k| (Op::Same, (old_tail + k, new_tail + k))));
    ops
}

#[cfg(test)]
mod tests {
    use super::diff;

    #[test]
    fn equal_texts_have_no_diff() {
        assert_eq!(diff("a\nb\n", "a\nb\n"), "");
    }

    #[test]
    fn a_changed_line_shows_with_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
        assert_eq!(
            diff(old, new),
            "@@ expected line 2 / actual line 2 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
        );
    }

    #[test]
    fn insertions_and_deletions_are_aligned() {
        let d = diff("a\nb\nc\n", "a\nx\nb\n");
        assert_eq!(d, "@@ expected line 1 / actual line 1 @@\n a\n+x\n b\n-c\n");
    }

    #[test]
    fn distant_changes_make_separate_hunks() {
        let old: String = (0..30).map(|i| format!("{i}\n")).collect();
        let new = old.replace("\n2\n", "\ntwo\n").replace("\n25\n", "\n25b\n");
        let d = diff(&old, &new);
        assert_eq!(d.matches("@@ expected").count(), 2, "{d}");
    }

    #[test]
    fn final_newline_only() {
        assert!(diff("a\n", "a").contains("final newline"));
    }

    #[test]
    fn long_diffs_are_cut() {
        let old: String = (0..200).map(|i| format!("{i}\n")).collect();
        let new: String = (0..200).map(|i| format!("x{i}\n")).collect();
        assert!(diff(&old, &new).contains("more changed lines"));
    }
}
