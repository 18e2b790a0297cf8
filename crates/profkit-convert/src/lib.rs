//! Conversions between the formats of machine-learning profilers, as the real tools make them.
//!
//! The XSpace is the hub: every format converts to it (Paddle's `Profile` and node trees and the
//! recorder's event model through [`events`], Poplar execution profiles through [`poplar`], XDL
//! datasets through [`xdl`], Chrome trace JSON through the `profkit-chrome` crate) and from it to
//! Chrome trace JSON exactly as xprof's trace viewer writes it (the `profkit-xprof` crate),
//! streamed plane by plane. Beside the hub: Paddle's legacy `Profile` to the timeline
//! `tools/timeline.py` writes, byte for byte ([`paddle`]); the XSpace back to the event model (so
//! Paddle's report works on any XSpace); detection of an input's format ([`detect`]); writing
//! XSpaces item by item and merging those of several hosts ([`merge`]).
//!
//! [`chrome`], [`trace_viewer`], [`xprof`] and [`text`] are the modules that moved to
//! `profkit-chrome`, `profkit-xprof` and `profkit-json`, re-exported under their old names for the
//! 0.x releases: new code should use those crates.
//!
//! ```
//! use profkit_convert::trace_viewer::{TraceViewerOptions, write_space};
//! use profkit_xplane::{PlaneBuilder, XPlane, XSpace};
//! let mut plane = XPlane::default();
//! let mut b = PlaneBuilder::new(&mut plane);
//! b.set_name("/host:CPU");
//! b.line(7).set_name("main").add_event("step").set_offset_ps(1_000_000).set_duration_ps(2_500_000);
//! let space = XSpace { planes: vec![plane], ..XSpace::default() };
//! let mut json = Vec::new();
//! write_space(&space, &mut json, &TraceViewerOptions::default())?;
//! let json = String::from_utf8(json).unwrap();
//! assert!(json.contains(r#"{"dur": 2.5, "name": "step", "ph": "X", "pid": 701, "tid": 7, "ts": 1.0},"#));
//! # Ok::<(), profkit_convert::Error>(())
//! ```

#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

/// Chrome trace JSON, read into an XSpace (moved to the `profkit-chrome` crate; kept here for
/// the 0.x releases).
pub use profkit_chrome as chrome;
pub mod detect;
mod error;
pub mod events;
pub mod merge;
pub mod paddle;
pub mod poplar;
/// Numbers and strings as the tools we reproduce print them (moved to `profkit_json::write`;
/// kept here for the 0.x releases).
pub use profkit_json::write as text;
/// xprof's trace viewer (moved to the `profkit-xprof` crate; kept here for the 0.x releases).
pub use profkit_xprof::trace_viewer;
pub mod xdl;
/// xprof's preprocessing (moved to the `profkit-xprof` crate; kept here for the 0.x releases).
pub use profkit_xprof::preprocess as xprof;

pub use error::{Error, Result};
