//! Writing a plugin in safe Rust: implement [`Profiler`], invoke [`crate::export_profiler!`], build
//! a `cdylib`.
//!
//! The macro exports `TF_InitProfiler`; everything behind it lives here and does what TensorFlow
//! needs (see `reference/plugin-abi.md`):
//!
//! - `TF_InitProfiler` fills the core-owned `TP_Profiler` and `TP_ProfilerFns` in place, never
//!   replacing the pointers to them, and refuses a device type that does not match `[A-Z][A-Z_]*`
//!   (the macro already refuses it at compile time: TensorFlow would abort the process);
//! - the profiler lives in a per-plugin global, never in the `TP_Profiler` that TensorFlow copies,
//!   and is created by [`Profiler::new`] on the first `start` (so a failure there is an error
//!   status for one session, not an abort of the process at import);
//! - `destroy_profiler` and `destroy_profiler_fns` free nothing, so calling them right after
//!   registration, and twice, is harmless;
//! - `collect_data_xspace` always writes the size on the first call (0 when nothing was
//!   recorded), serialises once and copies the identical bytes on the second call, and answers a
//!   too-small buffer with `FAILED_PRECONDITION`;
//! - `start` after `stop` begins a new session any number of times, dropping data a previous
//!   session left uncollected;
//! - no panic crosses the FFI boundary: every entry point catches it and reports `INTERNAL`; the
//!   profiler is then dropped and made anew by the next `start`.
//!
//! Errors reach TensorFlow through `TF_SetStatus`, found at run time ([`crate::status`]).

use std::any::Any;
use std::ffi::{CStr, CString};
use std::mem::MaybeUninit;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, OnceLock, PoisonError};

use profkit_xplane::XSpace;

use crate::abi::{
    Code, TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE, TF_ProfilerRegistrationParams, TF_Status,
    TP_MAJOR, TP_PROFILER_FNS_STRUCT_SIZE, TP_PROFILER_STRUCT_SIZE, TP_Profiler, TP_ProfilerFns,
    is_valid_device_type,
};
use crate::error::{Error, Result};
use crate::session::{Backend, Request, Session};

/// A device profiler, as a plugin author writes it. One value exists per loaded plugin; TensorFlow
/// calls `start`, `stop`, `collect` in that order for each profiling session, from one thread at a
/// time.
pub trait Profiler: Send + Sized + 'static {
    /// The device type reported to TensorFlow. It must match `[A-Z][A-Z_]*` (checked at compile
    /// time by [`crate::export_profiler!`]).
    const DEVICE_TYPE: &'static str;

    /// Makes the profiler, on the first `start` (and again after a panic). Without a device to
    /// profile, return a profiler that does nothing rather than an error.
    fn new() -> Result<Self>;

    /// Starts recording.
    fn start(&mut self) -> Result<()>;

    /// Stops recording.
    fn stop(&mut self) -> Result<()>;

    /// Hands over what the session recorded, `None` (or an empty XSpace) for nothing. Called once
    /// per session, after `stop`. Line timestamps are absolute nanoseconds since the Unix epoch:
    /// TensorFlow rebases them to the session start.
    fn collect(&mut self) -> Result<Option<XSpace>>;
}

impl<P: Profiler> Backend for P {
    fn start(&mut self) -> Result<()> {
        Profiler::start(self)
    }
    fn stop(&mut self) -> Result<()> {
        Profiler::stop(self)
    }
    fn collect(&mut self) -> Result<Option<XSpace>> {
        Profiler::collect(self)
    }
}

/// Panics at compile time (when used in a `const`) unless `device_type` matches `[A-Z][A-Z_]*`.
#[doc(hidden)]
pub const fn assert_device_type(device_type: &str) {
    assert!(
        is_valid_device_type(device_type),
        "Profiler::DEVICE_TYPE must match [A-Z][A-Z_]*, or TensorFlow aborts the process at import"
    );
}

/// The global state of one exported plugin. Made by [`crate::export_profiler!`].
#[doc(hidden)]
pub struct Slot<P> {
    state: Mutex<State<P>>,
    device_type: OnceLock<CString>,
}

struct State<P> {
    profiler: Option<P>,
    session: Session,
}

impl<P: Profiler> Default for Slot<P> {
    fn default() -> Self {
        Slot::new()
    }
}

impl<P: Profiler> Slot<P> {
    /// An empty slot, for a `static`.
    pub const fn new() -> Slot<P> {
        Slot {
            state: Mutex::new(State {
                profiler: None,
                session: Session::new(),
            }),
            device_type: OnceLock::new(),
        }
    }

    /// The device type as the C string `TP_Profiler::device_type` points to, for the life of the
    /// process.
    fn device_type(&self) -> Result<&CStr> {
        if !is_valid_device_type(P::DEVICE_TYPE) {
            return Err(Error::status(
                Code::INVALID_ARGUMENT,
                format!(
                    "device type {:?} does not match [A-Z][A-Z_]*",
                    P::DEVICE_TYPE
                ),
            ));
        }
        Ok(self
            .device_type
            .get_or_init(|| CString::new(P::DEVICE_TYPE).unwrap_or_default()))
    }

    fn with<R>(&self, f: impl FnOnce(&mut State<P>) -> R) -> R {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut state)
    }

    /// After a panic: the profiler is dropped (made anew by the next start), the session forgotten.
    fn reset(&self) {
        let old = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.session.reset();
            state.profiler.take()
        };
        self.state.clear_poison();
        // Its Drop may panic too; that must not cross the boundary either.
        let _ = catch_unwind(AssertUnwindSafe(move || drop(old)));
    }
}

impl<P: Profiler> State<P> {
    fn parts(&mut self) -> Result<(&mut P, &mut Session)> {
        let profiler = match &mut self.profiler {
            Some(profiler) => profiler,
            slot @ None => slot.insert(P::new()?),
        };
        Ok((profiler, &mut self.session))
    }

    fn start(&mut self) -> Result<()> {
        let (profiler, session) = self.parts()?;
        session.start(profiler)
    }

    fn stop(&mut self) -> Result<()> {
        match &mut self.profiler {
            Some(profiler) => self.session.stop(profiler),
            None => Ok(()),
        }
    }

    fn collect(&mut self, request: Request<'_>) -> crate::session::Reply {
        match &mut self.profiler {
            Some(profiler) => self.session.collect(profiler, request),
            None => crate::session::Reply {
                size: 0,
                error: None,
            },
        }
    }
}

/// Ties the macro's global to the profiler type. Implemented by [`crate::export_profiler!`].
#[doc(hidden)]
pub trait Export: 'static {
    /// The plugin author's profiler.
    type Profiler: Profiler;
    /// The plugin's global state.
    fn slot() -> &'static Slot<Self::Profiler>;
}

/// The message of a panic payload.
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    }
}

/// Runs `f`, turning a panic into an error (and resetting the plugin's state).
fn guard<E: Export, R>(call: &'static str, f: impl FnOnce() -> Result<R>) -> Result<R> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            // Dropping the payload runs foreign Drop code: keep that inside the boundary as well.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            E::slot().reset();
            Err(Error::Panic { call, message })
        }
    }
}

/// Reports `result` in `status`.
///
/// # Safety
/// `status` is null or a live status of the process that provides `TF_SetStatus`.
unsafe fn report(status: *mut TF_Status, result: Result<()>) {
    if let Err(error) = result {
        let code = error.code();
        let message = error.status_message();
        // Formatting and the C string are done; what is left cannot panic but a foreign
        // TF_SetStatus could unwind, which C code does not do.
        // SAFETY: per this function's contract.
        unsafe { crate::status::set(status, code, &message) };
    }
}

/// `start` of an exported plugin.
///
/// # Safety
/// Called by the core with a live status (or null).
unsafe extern "C" fn start<E: Export>(_profiler: *const TP_Profiler, status: *mut TF_Status) {
    let result = guard::<E, _>("start", || E::slot().with(|state| state.start()));
    // SAFETY: the status comes from the core.
    unsafe { report(status, result) };
}

/// `stop` of an exported plugin.
///
/// # Safety
/// Called by the core with a live status (or null).
unsafe extern "C" fn stop<E: Export>(_profiler: *const TP_Profiler, status: *mut TF_Status) {
    let result = guard::<E, _>("stop", || E::slot().with(|state| state.stop()));
    // SAFETY: the status comes from the core.
    unsafe { report(status, result) };
}

/// `collect_data_xspace` of an exported plugin.
///
/// # Safety
/// Called by the core with `size_in_bytes` null or writable, and, when `buffer` is not null,
/// `buffer` writable for `*size_in_bytes` bytes.
unsafe extern "C" fn collect_data_xspace<E: Export>(
    _profiler: *const TP_Profiler,
    buffer: *mut u8,
    size_in_bytes: *mut usize,
    status: *mut TF_Status,
) {
    let mut written = false;
    let result = guard::<E, _>("collect_data_xspace", || {
        if size_in_bytes.is_null() {
            return Err(Error::status(
                Code::INVALID_ARGUMENT,
                "collect_data_xspace: size_in_bytes is null",
            ));
        }
        let request = if buffer.is_null() {
            // TensorFlow leaves the size uninitialised on this call: it is only written.
            Request::Size
        } else {
            // SAFETY: non-null, and readable per the contract when a buffer is given.
            let len = unsafe { size_in_bytes.read() };
            if isize::try_from(len).is_err() {
                return Err(Error::status(
                    Code::INVALID_ARGUMENT,
                    format!("collect_data_xspace: buffer size {len} is not a valid length"),
                ));
            }
            // SAFETY: the core's buffer is writable for `len` bytes and not otherwise used during
            // the call; MaybeUninit makes no claim that it is initialised.
            Request::Copy(unsafe {
                std::slice::from_raw_parts_mut(buffer.cast::<MaybeUninit<u8>>(), len)
            })
        };
        let reply = E::slot().with(|state| state.collect(request));
        // SAFETY: non-null and writable per the contract.
        unsafe { size_in_bytes.write(reply.size) };
        written = true;
        reply.error.map_or(Ok(()), Err)
    });
    if !written && !size_in_bytes.is_null() {
        // An error before the size was known (a panic): 0 makes TensorFlow return the status
        // instead of reading an uninitialised size.
        // SAFETY: non-null and writable per the contract.
        unsafe { size_in_bytes.write(0) };
    }
    // SAFETY: the status comes from the core.
    unsafe { report(status, result) };
}

/// `destroy_profiler`: nothing to free (the device type string lives as long as the process), so
/// it is harmless right after registration and when called twice.
unsafe extern "C" fn destroy_profiler(_profiler: *mut TP_Profiler) {}

/// `destroy_profiler_fns`: nothing to free.
unsafe extern "C" fn destroy_profiler_fns(_profiler_fns: *mut TP_ProfilerFns) {}

/// The body of the `TF_InitProfiler` that [`crate::export_profiler!`] exports.
///
/// # Safety
/// `params` is null or points to registration params whose `profiler` and `profiler_fns` are null
/// or point to writable structs, all valid for the duration of the call; `status` is null or a
/// live status of the loading process. This is what TensorFlow passes.
#[doc(hidden)]
pub unsafe fn init_profiler<E: Export>(
    params: *mut TF_ProfilerRegistrationParams,
    status: *mut TF_Status,
) {
    // Looked up now, while nothing else runs, rather than on a profiling thread later.
    let _ = crate::status::resolved();
    let result = guard::<E, _>("TF_InitProfiler", || {
        // SAFETY: per this function's contract.
        unsafe { fill::<E>(params) }
    });
    // SAFETY: per this function's contract.
    unsafe { report(status, result) };
}

/// Fills the core-owned structs in place.
///
/// # Safety
/// As [`init_profiler`].
unsafe fn fill<E: Export>(params: *mut TF_ProfilerRegistrationParams) -> Result<()> {
    if params.is_null() {
        return Err(Error::status(
            Code::INVALID_ARGUMENT,
            "TF_InitProfiler: params is null",
        ));
    }
    // SAFETY: non-null and valid for the call per the contract.
    let params = unsafe { &mut *params };
    if params.major_version != TP_MAJOR {
        return Err(Error::status(
            Code::FAILED_PRECONDITION,
            format!(
                "the core speaks profiler C API {}.{}.{}; this plugin was built for {TP_MAJOR}.x",
                params.major_version, params.minor_version, params.patch_version
            ),
        ));
    }
    if params.profiler.is_null() || params.profiler_fns.is_null() {
        return Err(Error::status(
            Code::INVALID_ARGUMENT,
            "TF_InitProfiler: params.profiler and params.profiler_fns must point to core-owned structs",
        ));
    }
    let device_type = E::slot().device_type()?;
    if params.struct_size == 0 {
        params.struct_size = TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE;
    }
    // SAFETY: non-null, writable and valid for the call per the contract; distinct from `params`.
    let profiler = unsafe { &mut *params.profiler };
    profiler.struct_size = TP_PROFILER_STRUCT_SIZE;
    profiler.ext = std::ptr::null_mut();
    profiler.device_type = device_type.as_ptr();
    // SAFETY: as above.
    let fns = unsafe { &mut *params.profiler_fns };
    fns.struct_size = TP_PROFILER_FNS_STRUCT_SIZE;
    fns.ext = std::ptr::null_mut();
    fns.start = Some(start::<E>);
    fns.stop = Some(stop::<E>);
    fns.collect_data_xspace = Some(collect_data_xspace::<E>);
    params.destroy_profiler = Some(destroy_profiler);
    params.destroy_profiler_fns = Some(destroy_profiler_fns);
    Ok(())
}

/// Exports `TF_InitProfiler` for a [`Profiler`](crate::plugin::Profiler) from a `cdylib`.
///
/// ```
/// use profkit_plugin::plugin::Profiler;
/// use profkit_plugin::{Result, XSpace};
///
/// struct Nothing;
/// impl Profiler for Nothing {
///     const DEVICE_TYPE: &'static str = "MY_DEVICE";
///     fn new() -> Result<Self> { Ok(Nothing) }
///     fn start(&mut self) -> Result<()> { Ok(()) }
///     fn stop(&mut self) -> Result<()> { Ok(()) }
///     fn collect(&mut self) -> Result<Option<XSpace>> { Ok(None) }
/// }
/// profkit_plugin::export_profiler!(Nothing);
/// ```
///
/// A device type that TensorFlow would refuse does not compile:
///
/// ```compile_fail
/// # use profkit_plugin::{plugin::Profiler, Result, XSpace};
/// struct Bad;
/// impl Profiler for Bad {
///     const DEVICE_TYPE: &'static str = "MyDevice";
///     fn new() -> Result<Self> { Ok(Bad) }
///     fn start(&mut self) -> Result<()> { Ok(()) }
///     fn stop(&mut self) -> Result<()> { Ok(()) }
///     fn collect(&mut self) -> Result<Option<XSpace>> { Ok(None) }
/// }
/// profkit_plugin::export_profiler!(Bad);
/// ```
///
/// The generated code is one exported function that hands its arguments to this crate, which holds
/// all of the plugin's `unsafe` code; the crate invoking the macro needs none of its own.
#[macro_export]
macro_rules! export_profiler {
    ($profiler:ty) => {
        const _: () = {
            const _: () = $crate::plugin::assert_device_type(
                <$profiler as $crate::plugin::Profiler>::DEVICE_TYPE,
            );

            static SLOT: $crate::plugin::Slot<$profiler> = $crate::plugin::Slot::new();

            struct Exported;

            impl $crate::plugin::Export for Exported {
                type Profiler = $profiler;
                fn slot() -> &'static $crate::plugin::Slot<$profiler> {
                    &SLOT
                }
            }

            /// The plugin's entry point, called by TensorFlow (or profkit's host) once at load.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn TF_InitProfiler(
                params: *mut $crate::abi::TF_ProfilerRegistrationParams,
                status: *mut $crate::abi::TF_Status,
            ) {
                // SAFETY: TF_InitProfiler's C contract is init_profiler's, passed on unchanged.
                unsafe { $crate::plugin::init_profiler::<Exported>(params, status) }
            }
        };
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::TP_PROFILER_STRUCT_SIZE;

    /// Counts calls; panics in collect on request.
    struct Counting {
        sessions: u32,
    }

    static PANIC_IN_COLLECT: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);
    static MADE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

    impl Profiler for Counting {
        const DEVICE_TYPE: &'static str = "COUNTING";
        fn new() -> Result<Self> {
            MADE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(Counting { sessions: 0 })
        }
        fn start(&mut self) -> Result<()> {
            self.sessions += 1;
            Ok(())
        }
        fn stop(&mut self) -> Result<()> {
            Ok(())
        }
        fn collect(&mut self) -> Result<Option<XSpace>> {
            if PANIC_IN_COLLECT.load(std::sync::atomic::Ordering::SeqCst) {
                panic!("boom in collect");
            }
            let mut plane = profkit_xplane::XPlane::default();
            profkit_xplane::PlaneBuilder::new(&mut plane)
                .set_name("/device:CUSTOM:0")
                .add_stat("sessions", self.sessions);
            Ok(Some(XSpace {
                planes: vec![plane],
                ..Default::default()
            }))
        }
    }

    crate::export_profiler!(Counting);

    // The exported function sits in an anonymous const; reach it by its symbol, as a host does.
    unsafe extern "C" {
        fn TF_InitProfiler(params: *mut TF_ProfilerRegistrationParams, status: *mut TF_Status);
    }

    /// Runs init as the core does and returns the filled structs.
    fn init() -> (TF_ProfilerRegistrationParams, TP_Profiler, TP_ProfilerFns) {
        let mut profiler = TP_Profiler::core_prefilled();
        let mut fns = TP_ProfilerFns::core_prefilled();
        let mut params = TF_ProfilerRegistrationParams::core_prefilled(&mut profiler, &mut fns);
        // SAFETY: the params point at live core-owned structs; a null status is allowed.
        unsafe { TF_InitProfiler(&mut params, std::ptr::null_mut()) };
        assert_eq!(params.profiler, &raw mut profiler, "core pointer kept");
        (params, profiler, fns)
    }

    #[test]
    #[cfg_attr(miri, ignore)] // dlsym for the status functions
    fn init_fills_structs_in_place() {
        let (params, profiler, fns) = init();
        assert_eq!(profiler.struct_size, TP_PROFILER_STRUCT_SIZE);
        // SAFETY: the device type is a C string that lives as long as the process.
        let device = unsafe { CStr::from_ptr(profiler.device_type) };
        assert_eq!(device, c"COUNTING");
        assert!(fns.start.is_some() && fns.stop.is_some() && fns.collect_data_xspace.is_some());
        assert!(params.destroy_profiler.is_some() && params.destroy_profiler_fns.is_some());
    }

    #[test]
    #[cfg_attr(miri, ignore)] // dlsym for the status functions
    fn sessions_through_the_c_functions_and_a_caught_panic() {
        let (params, profiler, fns) = init();
        let copy = profiler;
        // Destroy early and twice on a copy, as TensorFlow may.
        // SAFETY: the callbacks take a pointer to a struct of the plugin's kind.
        unsafe {
            let mut gone = profiler;
            params.destroy_profiler.unwrap()(&mut gone);
            params.destroy_profiler.unwrap()(&mut gone);
            let mut gone_fns = fns;
            params.destroy_profiler_fns.unwrap()(&mut gone_fns);
        }
        let (start, stop, collect) = (
            fns.start.unwrap(),
            fns.stop.unwrap(),
            fns.collect_data_xspace.unwrap(),
        );
        for round in 0..3 {
            let mut size = usize::MAX;
            // SAFETY: the functions were filled by init; size and buffer are live and sized.
            unsafe {
                start(&copy, std::ptr::null_mut());
                stop(&copy, std::ptr::null_mut());
                collect(&copy, std::ptr::null_mut(), &mut size, std::ptr::null_mut());
            }
            assert!(size > 0 && size < 1000, "round {round}: {size}");
            let mut buf = vec![0u8; size];
            let mut second = size;
            // SAFETY: as above.
            unsafe { collect(&copy, buf.as_mut_ptr(), &mut second, std::ptr::null_mut()) };
            assert_eq!(second, size);
            assert_eq!(profkit_xplane::decode(buf).unwrap().planes.len(), 1);
        }
        PANIC_IN_COLLECT.store(true, std::sync::atomic::Ordering::SeqCst);
        let made = MADE.load(std::sync::atomic::Ordering::SeqCst);
        let mut size = 12345;
        // SAFETY: as above.
        unsafe {
            start(&copy, std::ptr::null_mut());
            stop(&copy, std::ptr::null_mut());
            collect(&copy, std::ptr::null_mut(), &mut size, std::ptr::null_mut());
        }
        assert_eq!(size, 0, "a panic leaves size 0");
        PANIC_IN_COLLECT.store(false, std::sync::atomic::Ordering::SeqCst);
        // SAFETY: as above.
        unsafe {
            start(&copy, std::ptr::null_mut());
            stop(&copy, std::ptr::null_mut());
            collect(&copy, std::ptr::null_mut(), &mut size, std::ptr::null_mut());
        }
        assert!(size > 0, "restarted after the panic");
        assert_eq!(
            MADE.load(std::sync::atomic::Ordering::SeqCst),
            made + 1,
            "the profiler was made anew"
        );
    }

    #[test]
    fn panic_messages() {
        assert_eq!(panic_message(&"x"), "x");
        assert_eq!(panic_message(&String::from("y")), "y");
        assert_eq!(panic_message(&3_u8), "a panic with a non-string payload");
    }
}
