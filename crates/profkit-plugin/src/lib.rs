//! TensorFlow's pluggable profiler C API: write profiler plugins in safe Rust, and load, run and
//! check any plugin without TensorFlow.
//!
//! A profiler plugin is a shared library exporting `TF_InitProfiler`. TensorFlow loads it, calls
//! `TF_InitProfiler` with core-owned structs for the plugin to fill ([`abi`]: `TP_Profiler` with the
//! device type, `TP_ProfilerFns` with `start`, `stop` and `collect_data_xspace`), then runs
//! profiling sessions: `start`, `stop`, and a two-call `collect_data_xspace` that first asks for
//! the size of the serialised XSpace, then for the bytes. Where the RFC and TensorFlow's code
//! differ, this crate follows the code.
//!
//! - [`plugin`]: implement [`plugin::Profiler`] and invoke [`export_profiler!`] in a `cdylib`;
//!   the generated code does everything TensorFlow relies on and keeps panics from crossing the
//!   FFI boundary.
//! - [`host`]: load a plugin, register it as TensorFlow does, validate it, drive sessions.
//! - [`check`]: the RFC's requirements as checks, with the plugin in a child process.
//! - [`status`]: how `TF_Status` reaches plugins. Plugins look `TF_SetStatus` up at run time with
//!   `dlsym(RTLD_DEFAULT)` (TensorFlow's inside TensorFlow); the host exports its own under the
//!   same names ([`export_tf_status!`]). The module docs explain the choice.
//!
//! ```
//! use profkit_plugin::{plugin::Profiler, PlaneBuilder, Result, XPlane, XSpace};
//!
//! struct Ticks { sessions: i64 }
//! impl Profiler for Ticks {
//!     const DEVICE_TYPE: &'static str = "TICKS";
//!     fn new() -> Result<Self> { Ok(Ticks { sessions: 0 }) }
//!     fn start(&mut self) -> Result<()> { self.sessions += 1; Ok(()) }
//!     fn stop(&mut self) -> Result<()> { Ok(()) }
//!     fn collect(&mut self) -> Result<Option<XSpace>> {
//!         let mut plane = XPlane::default();
//!         PlaneBuilder::new(&mut plane).set_name("/device:CUSTOM:0").add_stat("sessions", self.sessions);
//!         Ok(Some(XSpace { planes: vec![plane], ..Default::default() }))
//!     }
//! }
//! profkit_plugin::export_profiler!(Ticks); // exports TF_InitProfiler from the cdylib
//! ```
//!
//! This is the one crate of profkit allowed `unsafe`: every block carries a `// SAFETY:` comment
//! (enforced by clippy), and the logic behind the FFI entry points (device type check, the
//! session and collect state machine, the buffer copy) is plain Rust tested on its own.
//! Plugins and the host are for Unix-like systems with `dlopen` (tested on Linux).

#![allow(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod abi;
pub mod check;
mod error;
pub mod host;
pub mod plugin;
mod session;
pub mod status;

pub use error::{Error, Result};
/// The XSpace codec, builder and validation this crate uses, for plugin authors.
pub use profkit_xplane as xplane;
pub use profkit_xplane::{PlaneBuilder, StatValue, XEvent, XLine, XPlane, XSpace};
