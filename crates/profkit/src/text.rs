//! Names in the text summaries: clipped to [`NAME_CHARS`] characters with an ellipsis, so that a
//! column's width stays small whatever a file holds (a name of a million characters is valid
//! protobuf and valid JSON). The `--json` forms keep every name whole.

use std::borrow::Cow;

/// The most characters of a name the text summaries show.
pub(crate) const NAME_CHARS: usize = 120;

/// `name` cut to [`NAME_CHARS`] characters, the last of them an ellipsis when it was cut.
pub(crate) fn clip(name: &str) -> Cow<'_, str> {
    let mut chars = name.char_indices();
    match chars.nth(NAME_CHARS - 1) {
        Some((at, _)) if chars.next().is_some() => {
            let mut out = String::with_capacity(at + 3);
            out.push_str(name.get(..at).unwrap_or_default());
            out.push('…');
            Cow::Owned(out)
        }
        _ => Cow::Borrowed(name),
    }
}

/// The width of a column of clipped names.
pub(crate) fn width<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    names.map(|n| clip(n).chars().count()).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_clipped_with_an_ellipsis() {
        assert_eq!(clip("short"), "short");
        let exact = "x".repeat(NAME_CHARS);
        assert_eq!(clip(&exact), exact);
        let long = "é".repeat(1 << 20);
        let clipped = clip(&long);
        assert_eq!(clipped.chars().count(), NAME_CHARS);
        assert!(clipped.ends_with('…'));
        assert_eq!(width([long.as_str(), "a"].into_iter()), NAME_CHARS);
    }
}
