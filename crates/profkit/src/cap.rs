//! `validate`'s text output: at most [`PER_KIND`] problems of each kind, then a count of the
//! rest (`--all` prints every one). A damaged file can have a problem per event; ten say what is
//! wrong, the count says how much.

/// How many problems of one kind `validate` prints unless `--all` is given.
pub(crate) const PER_KIND: usize = 10;

/// Counts problems by kind and says which to print.
pub(crate) struct Cap {
    limit: Option<usize>,
    /// `--max-problems`: the most problems `--json` lists (the rest are counted).
    json_limit: Option<usize>,
    /// Each kind seen, in order of first appearance, with its count.
    kinds: Vec<(String, u64)>,
}

impl Cap {
    /// A cap of [`PER_KIND`], or none with `all`.
    pub(crate) fn new(all: bool) -> Cap {
        Cap {
            limit: (!all).then_some(PER_KIND),
            json_limit: None,
            kinds: Vec::new(),
        }
    }

    /// With `--max-problems`: at most `limit` problems in `--json`.
    pub(crate) fn json_limit(mut self, limit: Option<usize>) -> Cap {
        self.json_limit = limit;
        self
    }

    /// The `--max-problems` limit, if any.
    pub(crate) fn json_limit_value(&self) -> Option<usize> {
        self.json_limit
    }

    /// Whether `--json` lists the problem of this (0-based) index.
    pub(crate) fn json_lists(&self, index: usize) -> bool {
        self.json_limit.is_none_or(|l| index < l)
    }

    /// The problems `--json` lists, as JSON, and how many it leaves out.
    pub(crate) fn json_problems<T: serde::Serialize>(
        &self,
        problems: &[T],
    ) -> (serde_json::Value, Option<usize>) {
        let shown = self
            .json_limit
            .map_or(problems.len(), |l| l.min(problems.len()));
        let listed = problems.get(..shown).unwrap_or_default();
        (
            serde_json::to_value(listed).unwrap_or_default(),
            self.json_limit.map(|_| problems.len() - shown),
        )
    }

    /// Whether every problem is printed (`--all`).
    pub(crate) fn is_all(&self) -> bool {
        self.limit.is_none()
    }

    /// Counts a problem of `kind`; whether to print it.
    pub(crate) fn admit(&mut self, kind: &str) -> bool {
        let count = match self.kinds.iter_mut().find(|(k, _)| k == kind) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                self.kinds.push((kind.to_owned(), 1));
                1
            }
        };
        self.limit.is_none_or(|limit| count <= limit as u64)
    }

    /// One line per kind that went over the cap: `... and 1,234 more of this kind (Kind)`.
    pub(crate) fn rest(&self) -> Vec<String> {
        let Some(limit) = self.limit else {
            return Vec::new();
        };
        self.kinds
            .iter()
            .filter(|(_, n)| *n > limit as u64)
            .map(|(kind, n)| {
                format!(
                    "... and {} more of this kind ({kind}; --all prints them all)",
                    thousands(n - limit as u64)
                )
            })
            .collect()
    }
}

/// `doc` with `problems_not_listed` set when `--max-problems` was given.
pub(crate) fn with_not_listed(
    mut doc: serde_json::Value,
    not_listed: Option<usize>,
) -> serde_json::Value {
    if let (Some(n), Some(map)) = (not_listed, doc.as_object_mut()) {
        map.insert("problems_not_listed".into(), n.into());
    }
    doc
}

/// `n` with commas between groups of three digits.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_each_kind_and_counts_the_rest() {
        let mut cap = Cap::new(false);
        let shown = (0..1244).filter(|_| cap.admit("a")).count();
        assert_eq!(shown, PER_KIND);
        assert!(cap.admit("b"));
        assert_eq!(
            cap.rest(),
            ["... and 1,234 more of this kind (a; --all prints them all)"]
        );
        let mut all = Cap::new(true);
        assert_eq!((0..100).filter(|_| all.admit("a")).count(), 100);
        assert!(all.rest().is_empty());
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
