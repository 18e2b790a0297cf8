//! Which format a file holds, from its first bytes, with its name breaking ties.
//!
//! Each format has a quick content check (`looks_like_*` in its crate), made to be strict, but a
//! short or damaged file can pass more than one: an XSpace of empty planes frames like an XDL
//! data file, and a first field `0a` (field 1, length-delimited) opens an XSpace plane as well as
//! the version string of Paddle's node trees. [`candidates`] lists every format the content
//! fits, most specific check first, with the format the file name gives (as the producers name
//! their files: `<host>.xplane.pb`, `*.paddle_trace.pb`, XDL's `<phase>.<name>.<rank>.<index>`)
//! in front whenever the first bytes could start it. A caller reads the first candidate, and
//! when several remain can try the others to say what each made of the input.
//!
//! ```
//! use profkit_convert::detect::{Detected, candidates};
//! // Two empty planes: an XSpace, and also the framing of an XDL data file.
//! let bytes = [0x0a, 0x00, 0x0a, 0x00, 0x0a, 0x00];
//! assert_eq!(candidates(&bytes, "data.bin"), [Detected::Xdl, Detected::Xspace]);
//! assert_eq!(candidates(&bytes, "host.xplane.pb"), [Detected::Xspace, Detected::Xdl]);
//! ```

use std::fmt;

/// A format found by [`candidates`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Detected {
    /// TensorFlow / XLA profiler XSpace protobuf.
    Xspace,
    /// X-DeepLearning tensor trace (a data or `.meta` file).
    Xdl,
    /// Graphcore Poplar profile (JSON).
    Poplar,
    /// PaddlePaddle legacy profiler `Profile` protobuf.
    PaddleProfile,
    /// PaddlePaddle profiler node trees protobuf.
    PaddleNodeTrees,
    /// Chrome trace JSON.
    Chrome,
}

impl Detected {
    /// The format's name in messages.
    pub fn title(self) -> &'static str {
        match self {
            Detected::Xspace => "XSpace",
            Detected::Xdl => "XDL trace",
            Detected::Poplar => "Poplar profile",
            Detected::PaddleProfile => "Paddle Profile",
            Detected::PaddleNodeTrees => "Paddle node trees",
            Detected::Chrome => "Chrome trace JSON",
        }
    }
}

impl fmt::Display for Detected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.title())
    }
}

/// `file_name` without a trailing `.gz` (gzip is undone before the content is looked at).
fn plain(file_name: &str) -> &str {
    file_name.strip_suffix(".gz").unwrap_or(file_name)
}

/// The format a file name says, as the producers name their files: `*.xplane.pb` an XSpace,
/// `*.paddle_trace.pb` Paddle's node trees, an XDL data or meta file name an XDL trace. JSON
/// names say nothing (Chrome traces and Poplar profiles are both `.json`).
pub fn named(file_name: &str) -> Option<Detected> {
    let name = plain(file_name);
    if name.ends_with(".xplane.pb") {
        Some(Detected::Xspace)
    } else if name.ends_with(".paddle_trace.pb") {
        Some(Detected::PaddleNodeTrees)
    } else if profkit_xdl::parse_file_name(name).is_some() {
        Some(Detected::Xdl)
    } else {
        None
    }
}

/// Every format whose content check `prefix` (the first bytes of the input, gzip undone) passes,
/// most specific check first; `file_name` (empty when there is none) only decides for an empty
/// input and for XDL `.meta` files, whose content alone says little.
pub fn content_fits(prefix: &[u8], file_name: &str) -> Vec<Detected> {
    let name = plain(file_name);
    let mut fits = Vec::new();
    // XDL first: its check is the stricter one (a framed Header of UTF-8 keys).
    if profkit_xdl::looks_like_data_file(prefix)
        || (prefix.is_empty() && profkit_xdl::parse_file_name(name).is_some_and(|n| !n.is_meta))
        || (name.ends_with(".meta") && profkit_xdl::looks_like_meta(prefix))
    {
        fits.push(Detected::Xdl);
    }
    if profkit_poplar::looks_like_poplar(prefix).is_some() {
        fits.push(Detected::Poplar);
    } else if crate::chrome::looks_like_chrome(prefix) {
        fits.push(Detected::Chrome);
    }
    // Paddle's two protobufs before the XSpace: their first elements differ from a plane's in
    // field wire types, so on a whole first field the three never match the same bytes.
    match profkit_events::paddle::Format::detect(prefix) {
        Some(profkit_events::paddle::Format::NodeTrees) => fits.push(Detected::PaddleNodeTrees),
        Some(profkit_events::paddle::Format::Profile) => fits.push(Detected::PaddleProfile),
        None => {}
    }
    if profkit_xplane::looks_like_xspace(prefix)
        && (!prefix.is_empty() || name.ends_with(".xplane.pb"))
    {
        fits.push(Detected::Xspace);
    }
    fits
}

/// Whether `prefix` could be the start of `format` at all: its first tag is one of the
/// message's top-level fields with a wire type the field could have (an XSpace's four
/// length-delimited fields, the node trees' five fields), or an XDL frame length within the
/// frame limit. Looser than the content checks: it lets a name decide for a damaged file, which
/// then gets that format's own error, rather than being read as whatever its bytes happen to fit.
fn could_start(format: Detected, prefix: &[u8]) -> bool {
    let mut pos = 0;
    let tag = profkit_wire::read_varint(prefix, &mut pos).ok();
    let field = tag.map(profkit_wire::split_tag);
    match format {
        Detected::Xspace => {
            prefix.is_empty() || field.is_some_and(|(n, w)| (1..=4).contains(&n) && w == 2)
        }
        Detected::PaddleNodeTrees => {
            field.is_some_and(|(n, w)| matches!((n, w), (1, 2) | (2, 0) | (3..=5, 2)))
        }
        Detected::Xdl => match prefix.first_chunk::<4>() {
            Some(len) => u32::from_le_bytes(*len) <= 16 << 20,
            None => true,
        },
        _ => false,
    }
}

/// The formats to read the input as, in order: the one its name gives, when the first bytes
/// could start it, then every format the content fits ([`content_fits`]). Empty when nothing
/// fits.
pub fn candidates(prefix: &[u8], file_name: &str) -> Vec<Detected> {
    let fits = content_fits(prefix, file_name);
    let mut out = Vec::with_capacity(fits.len() + 1);
    if let Some(by_name) = named(file_name) {
        if fits.contains(&by_name) || could_start(by_name, prefix) {
            out.push(by_name);
        }
    }
    for f in fits {
        if !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plane_of_printable_bytes_named_xplane_is_an_xspace_first() {
        // field 1, 5 bytes "hello": node trees' version string, or a (broken) plane.
        let bytes = b"\x0a\x05hello";
        assert_eq!(candidates(bytes, "x.pb"), [Detected::PaddleNodeTrees]);
        assert_eq!(
            candidates(bytes, "host.xplane.pb"),
            [Detected::Xspace, Detected::PaddleNodeTrees]
        );
        assert_eq!(
            candidates(bytes, "host.xplane.pb.gz"),
            [Detected::Xspace, Detected::PaddleNodeTrees]
        );
    }

    #[test]
    fn a_name_does_not_override_content_that_cannot_start_its_format() {
        let json = br#"{"traceEvents": []}"#;
        assert_eq!(candidates(json, "host.xplane.pb"), [Detected::Chrome]);
        assert!(candidates(b"\xff\xff", "host.xplane.pb").is_empty());
        // A garbage file named as an XSpace, whose first field could be a plane: read as one.
        assert_eq!(
            candidates(b"\x0a\xff", "host.xplane.pb"),
            [Detected::Xspace]
        );
    }

    #[test]
    fn names() {
        assert_eq!(named("a.xplane.pb"), Some(Detected::Xspace));
        assert_eq!(named("a.paddle_trace.pb"), Some(Detected::PaddleNodeTrees));
        assert_eq!(named("train.trace.0.1"), Some(Detected::Xdl));
        assert_eq!(named("train.trace.0.1.meta"), Some(Detected::Xdl));
        assert_eq!(named("trace.json"), None);
    }
}
