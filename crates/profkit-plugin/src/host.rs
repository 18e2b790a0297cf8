//! Running any plugin without TensorFlow: load it, register it exactly as TensorFlow does,
//! validate it as TensorFlow does (and more strictly), drive sessions, merge what it returns.
//!
//! [`Library::open`] opens the library with `RTLD_NOW | RTLD_LOCAL`, as TensorFlow does, and never
//! closes it (TensorFlow never unloads plugins, and plugins may leave threads behind).
//! [`Library::init`] calls `TF_InitProfiler` with pre-filled sizes, version 0.0.1, core-owned
//! structs and a fresh OK status; [`Registration`] holds what came back, with TensorFlow's checks
//! ([`Registration::tensorflow_problems`]) and profkit's stricter ones
//! ([`Registration::strict_problems`]). [`Registration::profiler`] copies the structs, as
//! TensorFlow's factory does, into a [`PluginProfiler`] that runs sessions and the two-call collect.
//!
//! Loading a plugin runs its code in this process: a plugin that breaks the ABI can corrupt memory
//! or crash the process. [`crate::check`] runs plugins in a child process for that reason. The
//! process must export its `TF_Status` functions ([`crate::status`]).

use std::ffi::{CStr, c_void};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use profkit_xplane::constants::{TASK_ENV_PLANE_NAME, stats as stat_names};
use profkit_xplane::{PlaneBuilder, XPlane, XSpace};

use crate::abi::{
    INIT_SYMBOL, TF_InitProfilerFn, TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE,
    TF_ProfilerRegistrationParams, TP_CollectDataXSpaceFn, TP_DestroyProfilerFn,
    TP_DestroyProfilerFnsFn, TP_MAJOR, TP_MINOR, TP_PATCH, TP_PROFILER_FNS_STRUCT_SIZE,
    TP_PROFILER_STRUCT_SIZE, TP_Profiler, TP_ProfilerFns, TP_StartStopFn, is_valid_device_type,
};
use crate::error::{Error, Result};
use crate::status::HostStatus;

/// The value `*size_in_bytes` holds before the first collect call, to see whether it was written.
pub const SIZE_SENTINEL: usize = usize::MAX - 0x5EED;

/// The largest XSpace the host accepts from a plugin, as protobuf's parsers do: 2 GiB.
pub const DEFAULT_MAX_XSPACE_SIZE: usize = 2 << 30;

/// A loaded plugin library.
#[derive(Debug)]
pub struct Library {
    path: PathBuf,
    init: TF_InitProfilerFn,
}

impl Library {
    /// Opens the library at `path` with `RTLD_NOW | RTLD_LOCAL` and finds `TF_InitProfiler`. The
    /// library stays loaded for the life of the process.
    pub fn open(path: impl AsRef<Path>) -> Result<Library> {
        let path = path.as_ref().to_path_buf();
        crate::status::promote_host_object();
        if !crate::status::host_exported() {
            return Err(Error::StatusNotExported);
        }
        use libloading::os::unix::{Library as Raw, RTLD_LOCAL, RTLD_NOW};
        // SAFETY: loading runs the library's initialisers, foreign code this host exists to run;
        // see the module docs.
        let raw =
            unsafe { Raw::open(Some(&path), RTLD_NOW | RTLD_LOCAL) }.map_err(|e| Error::Load {
                path: path.clone(),
                message: load_message(&e.to_string()),
            })?;
        // SAFETY: TF_InitProfiler has this type in the ABI; the pointer is copied out and stays
        // valid because the library is never unloaded (below).
        let init = unsafe { raw.get::<TF_InitProfilerFn>(b"TF_InitProfiler\0") }
            .map(|symbol| *symbol)
            .map_err(|_| Error::MissingSymbol {
                path: path.clone(),
                symbol: INIT_SYMBOL,
            })?;
        // Never dlclose: TensorFlow does not either, and threads the plugin started may still run.
        let _handle: *mut c_void = raw.into_raw();
        Ok(Library { path, init })
    }

    /// The library's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Calls `TF_InitProfiler` exactly as TensorFlow does: sizes pre-filled, version 0.0.1,
    /// pointers to core-owned structs, a fresh OK status.
    pub fn init(&self) -> Registration {
        // Core-owned structs are leaked: a plugin that kept pointers to them must not see them
        // freed (TensorFlow's live on its stack; this host is more forgiving).
        let profiler: &'static mut TP_Profiler = Box::leak(Box::new(TP_Profiler::core_prefilled()));
        let fns: &'static mut TP_ProfilerFns =
            Box::leak(Box::new(TP_ProfilerFns::core_prefilled()));
        let core_profiler: *mut TP_Profiler = profiler;
        let core_fns: *mut TP_ProfilerFns = fns;
        let mut params = TF_ProfilerRegistrationParams::core_prefilled(core_profiler, core_fns);
        let mut status = HostStatus::new();
        let started = Instant::now();
        // SAFETY: the arguments are what TensorFlow passes: live params pointing at live
        // core-owned structs, and a live status.
        unsafe { (self.init)(&mut params, status.as_ptr()) };
        let duration = started.elapsed();
        // SAFETY: the core-owned structs are live (leaked) and were only written by the plugin.
        let (profiler, profiler_fns) = unsafe { (core_profiler.read(), core_fns.read()) };
        Registration {
            library: self.path.clone(),
            status,
            params,
            profiler,
            profiler_fns,
            core_profiler,
            core_fns,
            duration,
        }
    }
}

/// Adds a hint to loader errors about the symbols the host is expected to provide.
fn load_message(message: &str) -> String {
    if message.contains("undefined symbol: TF_") && !message.contains("Status") {
        format!(
            "{message} (the plugin needs TensorFlow symbols beyond TF_Status, which only \
             TensorFlow provides)"
        )
    } else {
        message.to_owned()
    }
}

/// What `TF_InitProfiler` left behind: the status and the filled structs (copies of the core-owned
/// ones, taken right after the call).
#[derive(Debug)]
pub struct Registration {
    library: PathBuf,
    /// The status the plugin set.
    pub status: HostStatus,
    /// The registration params after the call.
    pub params: TF_ProfilerRegistrationParams,
    /// The core-owned `TP_Profiler` after the call.
    pub profiler: TP_Profiler,
    /// The core-owned `TP_ProfilerFns` after the call.
    pub profiler_fns: TP_ProfilerFns,
    core_profiler: *mut TP_Profiler,
    core_fns: *mut TP_ProfilerFns,
    /// How long the call took.
    pub duration: Duration,
}

impl Registration {
    /// The device type, if the pointer is set (lossily decoded).
    pub fn device_type(&self) -> Option<String> {
        if self.profiler.device_type.is_null() {
            return None;
        }
        // SAFETY: a non-null device_type is a NUL-terminated string owned by the plugin, which is
        // never unloaded; reading it is what TensorFlow's validation does.
        let c = unsafe { CStr::from_ptr(self.profiler.device_type) };
        Some(c.to_string_lossy().into_owned())
    }

    /// Why TensorFlow would refuse this registration (and abort the process), in the order
    /// TensorFlow checks; empty when it would accept it. TensorFlow stops at the first problem.
    pub fn tensorflow_problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if !self.status.code().is_ok() {
            problems.push(format!(
                "TF_InitProfiler returned {}: {}",
                self.status.code(),
                self.status.message()
            ));
            return problems;
        }
        let p = &self.params;
        if p.struct_size == 0 {
            problems.push(
                "'struct_size' field in TF_ProfilerRegistrationParams must be set to \
                 TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE"
                    .into(),
            );
        }
        for (set, field) in [
            (p.destroy_profiler.is_some(), "destroy_profiler"),
            (p.destroy_profiler_fns.is_some(), "destroy_profiler_fns"),
        ] {
            if !set {
                problems.push(format!(
                    "'{field}' field in TF_ProfilerRegistrationParams must be set"
                ));
            }
        }
        if self.profiler.struct_size == 0 {
            problems.push(
                "'struct_size' field in TP_Profiler must be set to TP_PROFILER_STRUCT_SIZE".into(),
            );
        }
        match self.device_type() {
            None => problems.push("'device_type' field in TP_Profiler must be set".into()),
            Some(device_type) if !is_valid_device_type(&device_type) => problems.push(format!(
                "device type {device_type:?} does not match [A-Z][A-Z_]*"
            )),
            Some(_) => {}
        }
        let f = &self.profiler_fns;
        if f.struct_size == 0 {
            problems.push(
                "'struct_size' field in TP_ProfilerFns must be set to TP_PROFILER_FNS_STRUCT_SIZE"
                    .into(),
            );
        }
        for (set, field) in [
            (f.start.is_some(), "start"),
            (f.stop.is_some(), "stop"),
            (f.collect_data_xspace.is_some(), "collect_data_xspace"),
        ] {
            if !set {
                problems.push(format!("'{field}' field in TP_ProfilerFns must be set"));
            }
        }
        problems
    }

    /// What profkit checks beyond TensorFlow: exact struct sizes of version 0.0.1, core-owned
    /// pointers and fields left alone, reserved fields left null.
    pub fn strict_problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for (name, got, want) in [
            (
                "TF_ProfilerRegistrationParams",
                self.params.struct_size,
                TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE,
            ),
            (
                "TP_Profiler",
                self.profiler.struct_size,
                TP_PROFILER_STRUCT_SIZE,
            ),
            (
                "TP_ProfilerFns",
                self.profiler_fns.struct_size,
                TP_PROFILER_FNS_STRUCT_SIZE,
            ),
        ] {
            if got != want {
                problems.push(format!(
                    "{name}.struct_size is {got}, not {want} (version {TP_MAJOR}.{TP_MINOR}.{TP_PATCH})"
                ));
            }
        }
        if self.params.profiler != self.core_profiler {
            problems.push(
                "params.profiler was replaced: the plugin must fill the core-owned TP_Profiler \
                 (TensorFlow reads its own struct and would find it empty)"
                    .into(),
            );
        }
        if self.params.profiler_fns != self.core_fns {
            problems.push(
                "params.profiler_fns was replaced: the plugin must fill the core-owned \
                 TP_ProfilerFns"
                    .into(),
            );
        }
        let p = &self.params;
        if (p.major_version, p.minor_version, p.patch_version) != (TP_MAJOR, TP_MINOR, TP_PATCH) {
            problems.push(format!(
                "the core-owned version was changed to {}.{}.{}",
                p.major_version, p.minor_version, p.patch_version
            ));
        }
        if !p.ext.is_null() {
            problems.push("params.ext (reserved) was set".into());
        }
        if !self.profiler_fns.ext.is_null() {
            problems.push("TP_ProfilerFns.ext (reserved) is not null".into());
        }
        problems
    }

    /// Calls `destroy_profiler` and `destroy_profiler_fns` on fresh copies of the structs, as
    /// TensorFlow does when a copy of its factory goes away (right after registration, and again
    /// later) while other copies stay in use. Does nothing for a callback that is null.
    pub fn destroy_copies(&self) {
        if let Some(destroy) = self.params.destroy_profiler {
            let mut copy = self.profiler;
            // SAFETY: the callback takes a TP_Profiler of the plugin's, which `copy` is.
            unsafe { destroy(&mut copy) };
        }
        if let Some(destroy) = self.params.destroy_profiler_fns {
            let mut copy = self.profiler_fns;
            // SAFETY: the callback takes a TP_ProfilerFns of the plugin's, which `copy` is.
            unsafe { destroy(&mut copy) };
        }
    }

    /// A profiler over copies of the structs, as TensorFlow's factory makes; refused when
    /// TensorFlow would refuse the registration.
    pub fn profiler(&self) -> Result<PluginProfiler> {
        let problems = self.tensorflow_problems();
        if !problems.is_empty() {
            return Err(Error::Invalid { problems });
        }
        self.profiler_unchecked().ok_or_else(|| Error::Invalid {
            problems: vec!["a function pointer is null".into()],
        })
    }

    /// A profiler over copies of the structs whenever its function pointers are set, even if
    /// TensorFlow would refuse the registration for other reasons (the checker uses this to
    /// report more than the first problem).
    pub fn profiler_unchecked(&self) -> Option<PluginProfiler> {
        Some(PluginProfiler {
            library: self.library.clone(),
            profiler: self.profiler,
            start: self.profiler_fns.start?,
            stop: self.profiler_fns.stop?,
            collect: self.profiler_fns.collect_data_xspace?,
            destroy_profiler: self.params.destroy_profiler,
            destroy_profiler_fns: self.params.destroy_profiler_fns,
            profiler_fns: self.profiler_fns,
            device_type: self.device_type().unwrap_or_default(),
            max_size: DEFAULT_MAX_XSPACE_SIZE,
        })
    }
}

/// A registered plugin, driven as TensorFlow's `PluggableProfiler` drives it.
#[derive(Debug)]
pub struct PluginProfiler {
    library: PathBuf,
    profiler: TP_Profiler,
    profiler_fns: TP_ProfilerFns,
    start: TP_StartStopFn,
    stop: TP_StartStopFn,
    collect: TP_CollectDataXSpaceFn,
    destroy_profiler: Option<TP_DestroyProfilerFn>,
    destroy_profiler_fns: Option<TP_DestroyProfilerFnsFn>,
    device_type: String,
    max_size: usize,
}

/// What one `collect_data_xspace` call did.
#[derive(Debug)]
pub struct CollectCall {
    /// `*size_in_bytes` after the call; `None` when the first call left it unwritten.
    pub size: Option<usize>,
    /// The status: `Ok` or the error the plugin set.
    pub status: Result<()>,
    /// How long the call took.
    pub duration: Duration,
}

/// The result of TensorFlow's two-call collection.
#[derive(Debug, Default)]
pub struct Collected {
    /// The serialised XSpace (empty for size 0).
    pub bytes: Vec<u8>,
    /// The decoded XSpace.
    pub space: XSpace,
}

/// One profiling session.
#[derive(Debug)]
pub struct Profile {
    /// When `start` was called, in nanoseconds since the Unix epoch.
    pub start_time_ns: u64,
    /// When `stop` returned, in nanoseconds since the Unix epoch.
    pub stop_time_ns: u64,
    /// What the plugin returned, unchanged.
    pub collected: Collected,
}

impl PluginProfiler {
    /// The plugin's device type.
    pub fn device_type(&self) -> &str {
        &self.device_type
    }

    /// The library the plugin came from.
    pub fn library(&self) -> &Path {
        &self.library
    }

    /// Sets the largest XSpace accepted from the plugin ([`DEFAULT_MAX_XSPACE_SIZE`] by default).
    pub fn set_max_size(&mut self, max_size: usize) {
        self.max_size = max_size;
    }

    /// Calls `start` with a fresh status.
    pub fn start(&mut self) -> Result<()> {
        let mut status = HostStatus::new();
        // SAFETY: `start` was set by the plugin's TF_InitProfiler; it gets a pointer to this
        // copy of the TP_Profiler and a live status, as TensorFlow passes.
        unsafe { (self.start)(&self.profiler, status.as_ptr()) };
        status.to_result("start")
    }

    /// Calls `stop` with a fresh status.
    pub fn stop(&mut self) -> Result<()> {
        let mut status = HostStatus::new();
        // SAFETY: as in `start`.
        unsafe { (self.stop)(&self.profiler, status.as_ptr()) };
        status.to_result("stop")
    }

    /// The first `collect_data_xspace` call: a null buffer, `*size_in_bytes` pre-set to
    /// [`SIZE_SENTINEL`] (TensorFlow leaves it uninitialised).
    pub fn collect_size(&mut self, status: &mut HostStatus) -> CollectCall {
        let mut size = SIZE_SENTINEL;
        let started = Instant::now();
        // SAFETY: `collect` was set by the plugin; a null buffer asks only for the size, written
        // to a live usize; the status is live.
        unsafe {
            (self.collect)(
                &self.profiler,
                std::ptr::null_mut(),
                &mut size,
                status.as_ptr(),
            )
        };
        CollectCall {
            size: (size != SIZE_SENTINEL).then_some(size),
            status: status.to_result("collect_data_xspace"),
            duration: started.elapsed(),
        }
    }

    /// The second `collect_data_xspace` call, telling the plugin the buffer holds `declared`
    /// bytes (at most `buffer.len()`; the rest of `buffer` can serve as a guard zone).
    pub fn collect_into(
        &mut self,
        buffer: &mut [u8],
        declared: usize,
        status: &mut HostStatus,
    ) -> CollectCall {
        let mut size = declared.min(buffer.len());
        let started = Instant::now();
        // SAFETY: `collect` was set by the plugin; `buffer` is writable for at least `size`
        // bytes, which is what the plugin is told; the status is live.
        unsafe {
            (self.collect)(
                &self.profiler,
                buffer.as_mut_ptr(),
                &mut size,
                status.as_ptr(),
            )
        };
        CollectCall {
            size: Some(size),
            status: status.to_result("collect_data_xspace"),
            duration: started.elapsed(),
        }
    }

    /// TensorFlow's collection: a size call, then a copy into a buffer of that size with the same
    /// status. Stricter than TensorFlow, it fails when the first call leaves the size unwritten,
    /// when either call sets an error, when the calls disagree on the size, and when the bytes do
    /// not parse as an XSpace.
    pub fn collect(&mut self) -> Result<Collected> {
        let mut status = HostStatus::new();
        let first = self.collect_size(&mut status);
        first.status?;
        let size = first.size.ok_or_else(|| Error::Call {
            call: "collect_data_xspace",
            code: crate::abi::Code::INTERNAL,
            message: "the first call did not write the size".into(),
        })?;
        if size == 0 {
            return Ok(Collected::default());
        }
        if size > self.max_size {
            return Err(Error::Call {
                call: "collect_data_xspace",
                code: crate::abi::Code::RESOURCE_EXHAUSTED,
                message: format!("asks for {size} bytes, over the limit of {}", self.max_size),
            });
        }
        let mut buffer = Vec::new();
        buffer.try_reserve_exact(size).map_err(|_| Error::Call {
            call: "collect_data_xspace",
            code: crate::abi::Code::RESOURCE_EXHAUSTED,
            message: format!("cannot allocate the {size} bytes it asks for"),
        })?;
        buffer.resize(size, 0);
        let second = self.collect_into(&mut buffer, size, &mut status);
        second.status?;
        let second_size = second.size.unwrap_or(size);
        if second_size != size {
            return Err(Error::SizeMismatch {
                first: size,
                second: second_size,
            });
        }
        let space = profkit_xplane::decode(buffer.clone())?;
        Ok(Collected {
            bytes: buffer,
            space,
        })
    }

    /// One session: `start`, `during`, `stop`, then the collection.
    pub fn session(&mut self, during: impl FnOnce()) -> Result<Profile> {
        let start_time_ns = now_ns();
        self.start()?;
        during();
        self.stop()?;
        let stop_time_ns = now_ns();
        let collected = self.collect()?;
        Ok(Profile {
            start_time_ns,
            stop_time_ns,
            collected,
        })
    }

    /// Calls the destroy callbacks on this profiler's own structs, as TensorFlow's factory does
    /// when it goes away. Using the profiler afterwards is the plugin's risk, as in TensorFlow.
    pub fn destroy(&mut self) {
        if let Some(destroy) = self.destroy_profiler {
            // SAFETY: the callback takes a TP_Profiler of the plugin's.
            unsafe { destroy(&mut self.profiler) };
        }
        if let Some(destroy) = self.destroy_profiler_fns {
            // SAFETY: the callback takes a TP_ProfilerFns of the plugin's.
            unsafe { destroy(&mut self.profiler_fns) };
        }
    }
}

impl Profile {
    /// The XSpace TensorFlow would write for this session with only this plugin: planes of the
    /// same name merged, line timestamps rebased to the session start, a `Task Environment`
    /// plane with the session's start and stop times, the host name, events sorted.
    pub fn into_xspace(self) -> XSpace {
        let mut space = XSpace::default();
        merge_planes_into(&mut space, self.collected.space.planes);
        let start = i64::try_from(self.start_time_ns).unwrap_or(i64::MAX);
        profkit_xplane::utils::normalize_space_timestamps(&mut space, start);
        let env =
            profkit_xplane::utils::find_or_add_plane_with_name(&mut space, TASK_ENV_PLANE_NAME);
        let mut builder = PlaneBuilder::new(env);
        builder
            .set_or_add_stat(stat_names::PROFILE_START_TIME, self.start_time_ns)
            .set_or_add_stat(stat_names::PROFILE_STOP_TIME, self.stop_time_ns);
        if let Some(host) = hostname() {
            space.hostnames.push(host);
        }
        profkit_xplane::utils::sort_space(&mut space);
        space
    }
}

/// Adds `planes` to `space` as TensorFlow does with planes from several profilers: a plane whose
/// name is already present is merged into it (TSL's `MergePlanes`), others are appended.
pub fn merge_planes_into(space: &mut XSpace, planes: Vec<XPlane>) {
    for plane in planes {
        match space.planes.iter_mut().find(|p| p.name == plane.name) {
            Some(existing) => profkit_xplane::utils::merge_planes(&plane, existing),
            None => space.planes.push(plane),
        }
    }
}

/// Now, in nanoseconds since the Unix epoch.
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// This machine's host name.
fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is writable for its whole length, which is what gethostname is told.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(buf.get(..end)?).into_owned();
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_planes_by_name() {
        let mut a = XPlane::default();
        PlaneBuilder::new(&mut a)
            .set_name("/device:CUSTOM:0")
            .line(1)
            .add_event("x");
        let mut b = a.clone();
        b.lines[0].id = 2;
        let mut c = XPlane::default();
        PlaneBuilder::new(&mut c).set_name("/device:CUSTOM:1");
        let mut space = XSpace::default();
        merge_planes_into(&mut space, vec![a, b, c]);
        assert_eq!(space.planes.len(), 2);
        assert_eq!(space.planes[0].lines.len(), 2);
    }

    #[test]
    #[cfg_attr(miri, ignore)] // gethostname
    fn a_profile_becomes_what_tensorflow_writes() {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/device:CUSTOM:0");
        b.line(1).set_timestamp_ns(1_000_500).add_event("x");
        let profile = Profile {
            start_time_ns: 1_000_000,
            stop_time_ns: 2_000_000,
            collected: Collected {
                bytes: Vec::new(),
                space: XSpace {
                    planes: vec![plane],
                    ..Default::default()
                },
            },
        };
        let space = profile.into_xspace();
        let custom =
            profkit_xplane::utils::find_plane_with_name(&space, "/device:CUSTOM:0").unwrap();
        assert_eq!(custom.lines[0].timestamp_ns, 500);
        assert!(profkit_xplane::utils::find_plane_with_name(&space, TASK_ENV_PLANE_NAME).is_some());
    }

    #[test]
    #[cfg_attr(miri, ignore)] // dlsym
    fn a_process_without_status_exports_cannot_host() {
        // This test binary does not invoke export_tf_status!.
        assert!(!crate::status::host_exported());
        let err = Library::open("/nonexistent/plugin.so").unwrap_err();
        assert!(matches!(err, Error::StatusNotExported), "{err}");
        assert!(err.to_string().contains("export_tf_status!"));
    }

    #[test]
    fn loader_hints() {
        assert!(load_message("x: undefined symbol: TF_AllocateOutput").contains("only"));
        assert_eq!(
            load_message("x: undefined symbol: foo"),
            "x: undefined symbol: foo"
        );
    }
}
