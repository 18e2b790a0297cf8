//! What the import says it left out or changed: warnings by kind, the first few of each kind kept
//! word for word and the rest counted.

use std::collections::BTreeMap;

use crate::WARNINGS_PER_KIND;

/// What kind of thing a warning is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum WarningKind {
    /// An `E` (or async end) without its begin.
    UnmatchedEnd,
    /// A begin never ended.
    UnendedBegin,
    /// A flow event with no slice to bind to.
    UnboundFlow,
    /// A counter without a numeric value.
    CounterWithoutValue,
    /// A complete event with a negative duration (taken as zero).
    NegativeDuration,
    /// An event with a key twice (among its members or its args): the last value is used, as
    /// most JSON readers do, but readers differ, so the event may mean something else elsewhere.
    DuplicateKey,
    /// Events of phases an XSpace has no place for (samples, objects, memory dumps).
    Unsupported,
    /// A string with a lone UTF-16 surrogate escape or bytes that are not UTF-8, kept with
    /// U+FFFD in their place.
    ReplacedText,
}

impl WarningKind {
    /// Whether a producer could write it (truncated traces leave begins open and ends without
    /// begins): `validate` counts the others as errors.
    pub fn is_error(self) -> bool {
        matches!(
            self,
            WarningKind::NegativeDuration | WarningKind::DuplicateKey
        )
    }
}

pub(crate) struct Warnings {
    pub(crate) kept: Vec<String>,
    pub(crate) counts: BTreeMap<WarningKind, u64>,
}

impl Warnings {
    pub(crate) fn push(&mut self, kind: WarningKind, message: impl FnOnce() -> String) {
        let count = self.counts.entry(kind).or_default();
        *count += 1;
        if *count as usize <= WARNINGS_PER_KIND {
            self.kept.push(message());
        }
    }

    pub(crate) fn finish(mut self) -> (Vec<String>, BTreeMap<WarningKind, u64>) {
        for (kind, &count) in &self.counts {
            if count as usize > WARNINGS_PER_KIND {
                self.kept.push(format!(
                    "... and {} more warnings like these ({kind:?})",
                    count as usize - WARNINGS_PER_KIND
                ));
            }
        }
        (self.kept, self.counts)
    }
}
