//! `TF_Status`: how a plugin sets it, and how profkit's host provides it.
//!
//! TensorFlow's `TF_Status` is opaque; a plugin reports an error by calling `TF_SetStatus`, which
//! lives in TensorFlow's own libraries (`libtensorflow_framework.so.2`, `libtensorflow_cc.so.2`).
//! A plugin that hard-links it only loads where TensorFlow is already loaded, because TensorFlow
//! opens plugins with `RTLD_NOW | RTLD_LOCAL` and every undefined symbol must resolve at once.
//!
//! **The choice made here.** A plugin built with this crate never links `TF_SetStatus`. On its first
//! call it looks the status functions up at run time with `dlsym(RTLD_DEFAULT, "TF_SetStatus")`
//! (and `TF_GetCode`, `TF_Message`), in the global scope of whatever process loaded it:
//!
//! - inside TensorFlow this finds TensorFlow's functions, so errors reach TensorFlow as usual;
//! - inside profkit's host it finds the host's own functions, which the host executable defines
//!   with [`crate::export_tf_status!`] and exports with `-Wl,--export-dynamic-symbol=TF_SetStatus`
//!   (executables export nothing to `dlsym` otherwise). Because the host exports the very names
//!   TensorFlow does, C plugins that do hard-link `TF_SetStatus` load in the host too. A shared
//!   library that embeds the host (the Python extension module) is promoted to the global scope
//!   before a plugin is loaded ([`promote_host_object`]), so the same holds there;
//! - anywhere else it finds nothing: the plugin still loads and works, but cannot report errors
//!   (a failed call then looks like success with no data).
//!
//! The host refuses to load plugins when the process does not export its status functions
//! ([`crate::Error::StatusNotExported`]) rather than host plugins that cannot report errors.
//!
//! The alternative, a profkit-specific symbol through which the host hands its functions to the
//! plugin, would let Rust plugins report errors without the linker flag, but C plugins that call
//! `TF_SetStatus` directly would still fail to load, and the plugin would need two code paths.

#![allow(non_camel_case_types)]

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::OnceLock;

use crate::abi::{Code, TF_Status};

/// `TF_SetStatus`: `void (*)(TF_Status*, TF_Code, const char*)`.
pub type TF_SetStatusFn = unsafe extern "C" fn(*mut TF_Status, c_int, *const c_char);
/// `TF_GetCode`: `TF_Code (*)(const TF_Status*)`.
pub type TF_GetCodeFn = unsafe extern "C" fn(*const TF_Status) -> c_int;
/// `TF_Message`: `const char* (*)(const TF_Status*)`.
pub type TF_MessageFn = unsafe extern "C" fn(*const TF_Status) -> *const c_char;

/// The names the host exports, for the linker flags.
pub const EXPORTED_SYMBOLS: [&str; 5] = [
    "TF_NewStatus",
    "TF_DeleteStatus",
    "TF_SetStatus",
    "TF_GetCode",
    "TF_Message",
];

/// The status functions found in the loading process.
#[derive(Clone, Copy, Debug)]
pub struct StatusFns {
    /// `TF_SetStatus`.
    pub set_status: TF_SetStatusFn,
    /// `TF_GetCode`, when present.
    pub get_code: Option<TF_GetCodeFn>,
    /// `TF_Message`, when present.
    pub message: Option<TF_MessageFn>,
}

fn global_symbol(name: &CStr) -> *mut c_void {
    // SAFETY: `name` is NUL-terminated; dlsym with RTLD_DEFAULT only reads the loader's tables.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

/// Looks the status functions up in the global scope of this process, now (see the module docs).
pub fn lookup() -> Option<StatusFns> {
    let set = global_symbol(c"TF_SetStatus");
    if set.is_null() {
        return None;
    }
    let get_code = global_symbol(c"TF_GetCode");
    let message = global_symbol(c"TF_Message");
    // SAFETY: these names are TensorFlow's C API, whose signatures are the types transmuted to; a
    // non-null dlsym result is the address of the function (function and data pointers have the
    // same representation on every platform with dlsym).
    unsafe {
        Some(StatusFns {
            set_status: std::mem::transmute::<*mut c_void, TF_SetStatusFn>(set),
            get_code: (!get_code.is_null())
                .then(|| std::mem::transmute::<*mut c_void, TF_GetCodeFn>(get_code)),
            message: (!message.is_null())
                .then(|| std::mem::transmute::<*mut c_void, TF_MessageFn>(message)),
        })
    }
}

/// The status functions, looked up once per process on first use.
pub fn resolved() -> Option<StatusFns> {
    static RESOLVED: OnceLock<Option<StatusFns>> = OnceLock::new();
    *RESOLVED.get_or_init(lookup)
}

/// Sets `status` through the resolved `TF_SetStatus`. Returns whether there was one to call.
///
/// # Safety
/// `status` is null or a live status of the process that provides `TF_SetStatus`.
pub(crate) unsafe fn set(status: *mut TF_Status, code: Code, message: &str) -> bool {
    let Some(fns) = resolved() else {
        return false;
    };
    if status.is_null() {
        return false;
    }
    let message = c_message(message);
    // SAFETY: `status` is live per this function's contract and `message` outlives the call.
    unsafe { (fns.set_status)(status, code.0, message.as_ptr()) };
    true
}

/// `message` as a C string, with interior NULs replaced.
fn c_message(message: &str) -> CString {
    CString::new(message.replace('\0', "\u{fffd}")).unwrap_or_default()
}

/// The tag at the start of every [`HostStatus`], checked before a pointer is trusted.
const HOST_STATUS_TAG: u64 = u64::from_le_bytes(*b"profkitS");

/// The `TF_Status` profkit's host gives plugins. Plugins reach it only through the exported
/// `TF_SetStatus`, `TF_GetCode` and `TF_Message` ([`crate::export_tf_status!`]).
#[repr(C)]
#[derive(Debug)]
pub struct HostStatus {
    tag: u64,
    code: Code,
    message: CString,
}

impl Default for HostStatus {
    fn default() -> Self {
        HostStatus {
            tag: HOST_STATUS_TAG,
            code: Code::OK,
            message: CString::default(),
        }
    }
}

impl HostStatus {
    /// A fresh OK status.
    pub fn new() -> HostStatus {
        HostStatus::default()
    }

    /// The pointer to pass to a plugin. It stays valid while `self` is neither moved nor dropped.
    pub fn as_ptr(&mut self) -> *mut TF_Status {
        (self as *mut HostStatus).cast()
    }

    /// The code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The message (lossily decoded).
    pub fn message(&self) -> String {
        self.message.to_string_lossy().into_owned()
    }

    /// Sets code and message.
    pub fn set(&mut self, code: Code, message: &str) {
        self.code = code;
        self.message = c_message(message);
    }

    /// Back to OK with no message.
    pub fn reset(&mut self) {
        self.set(Code::OK, "");
    }

    /// The status as a result of `call`.
    pub fn to_result(&self, call: &'static str) -> crate::Result<()> {
        if self.code.is_ok() {
            return Ok(());
        }
        Err(crate::Error::Call {
            call,
            code: self.code,
            message: self.message(),
        })
    }

    /// The host status behind `status`, if it is one.
    ///
    /// # Safety
    /// `status` is null or points to at least 8 readable bytes.
    unsafe fn from_ptr<'a>(status: *const TF_Status) -> Option<&'a mut HostStatus> {
        if status.is_null() || !status.cast::<u64>().is_aligned() {
            return None;
        }
        // SAFETY: non-null, aligned, and readable for 8 bytes per this function's contract.
        let tag = unsafe { status.cast::<u64>().read() };
        if tag != HOST_STATUS_TAG {
            return None;
        }
        // SAFETY: the tag says this is a HostStatus made by this module, and plugins use a status
        // only during the call it was passed to, while the host holds it exclusively.
        Some(unsafe { &mut *status.cast_mut().cast::<HostStatus>() })
    }
}

/// `TF_NewStatus` of the host.
#[doc(hidden)]
pub fn host_new_status() -> *mut TF_Status {
    Box::into_raw(Box::new(HostStatus::new())).cast()
}

/// `TF_DeleteStatus` of the host.
///
/// # Safety
/// `status` is null or came from [`host_new_status`] and is not used afterwards.
#[doc(hidden)]
pub unsafe fn host_delete_status(status: *mut TF_Status) {
    // SAFETY: per the contract, a non-null pointer is a status from host_new_status.
    if unsafe { HostStatus::from_ptr(status) }.is_some() {
        // SAFETY: it was made by Box::into_raw in host_new_status and is dropped once.
        drop(unsafe { Box::from_raw(status.cast::<HostStatus>()) });
    }
}

/// `TF_SetStatus` of the host. A pointer that is not a host status is ignored.
///
/// # Safety
/// `status` is null or a live status; `message` is null or a NUL-terminated string.
#[doc(hidden)]
pub unsafe fn host_set_status(status: *mut TF_Status, code: c_int, message: *const c_char) {
    // SAFETY: per the contract.
    let Some(status) = (unsafe { HostStatus::from_ptr(status) }) else {
        return;
    };
    let message = if message.is_null() {
        String::new()
    } else {
        // SAFETY: non-null and NUL-terminated per the contract.
        unsafe { CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned()
    };
    status.set(Code(code), &message);
}

/// `TF_GetCode` of the host; `TF_UNKNOWN` for a pointer that is not a host status.
///
/// # Safety
/// `status` is null or a live status.
#[doc(hidden)]
pub unsafe fn host_get_code(status: *const TF_Status) -> c_int {
    // SAFETY: per the contract.
    match unsafe { HostStatus::from_ptr(status) } {
        Some(status) => status.code.0,
        None => Code::UNKNOWN.0,
    }
}

/// `TF_Message` of the host; `""` for a pointer that is not a host status. The string lives until
/// the status is next set or deleted.
///
/// # Safety
/// `status` is null or a live status.
#[doc(hidden)]
pub unsafe fn host_message(status: *const TF_Status) -> *const c_char {
    // SAFETY: per the contract.
    match unsafe { HostStatus::from_ptr(status) } {
        Some(status) => status.message.as_ptr(),
        None => c"".as_ptr(),
    }
}

/// Puts the loaded object that holds the host's status functions into the process's global symbol
/// scope, so that plugins find them with `dlsym(RTLD_DEFAULT, ...)`. An executable that exports
/// them is there already. A shared library that embeds the host (the Python extension module,
/// which Python loads with `RTLD_LOCAL`) is not: its own lookups see its symbols, a plugin's do
/// not, and the plugin's errors would be lost.
pub fn promote_host_object() {
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    let ours = host_set_status as *const c_void;
    // SAFETY: dladdr only reads the loader's tables and fills `info`, which is large enough.
    if unsafe { libc::dladdr(ours, info.as_mut_ptr()) } == 0 {
        return;
    }
    // SAFETY: dladdr returned non-zero, so it filled `info` (zeroed before, so fully initialised).
    let info = unsafe { info.assume_init() };
    if info.dli_fname.is_null() {
        return;
    }
    // SAFETY: with RTLD_NOLOAD, dlopen only changes the flags of an object already loaded (no
    // initialiser runs); it returns null for one it cannot find by that name, such as the main
    // executable. The reference it takes is kept: the object holds this code, so it stays loaded.
    let _handle = unsafe {
        libc::dlopen(
            info.dli_fname,
            libc::RTLD_NOW | libc::RTLD_GLOBAL | libc::RTLD_NOLOAD,
        )
    };
}

/// Whether this process exports the host's status functions: `TF_SetStatus` resolves globally, to
/// a definition in the same executable or library as this crate's host code.
pub fn host_exported() -> bool {
    let found = global_symbol(c"TF_SetStatus");
    if found.is_null() {
        return false;
    }
    let ours = host_set_status as *const c_void;
    match (object_base(found), object_base(ours)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// The base address of the loaded object holding `address`.
fn object_base(address: *const c_void) -> Option<usize> {
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    // SAFETY: dladdr only reads the loader's tables and fills `info`, which is large enough.
    let found = unsafe { libc::dladdr(address, info.as_mut_ptr()) };
    if found == 0 {
        return None;
    }
    // SAFETY: dladdr returned non-zero, so it filled `info` (zeroed before, so fully initialised).
    let info = unsafe { info.assume_init() };
    Some(info.dli_fbase as usize)
}

/// Defines the host's `TF_NewStatus`, `TF_DeleteStatus`, `TF_SetStatus`, `TF_GetCode` and
/// `TF_Message` as exported symbols of the executable that invokes it, so plugins loaded by
/// [`crate::host`] find them with `dlsym(RTLD_DEFAULT, ...)` and C plugins that link them load.
///
/// Invoke it once, in the executable (never in a plugin), and link the executable with
/// `-Wl,--export-dynamic-symbol=NAME` for each name in
/// [`status::EXPORTED_SYMBOLS`](crate::status::EXPORTED_SYMBOLS), for example from its `build.rs`:
///
/// ```text
/// for name in ["TF_NewStatus", "TF_DeleteStatus", "TF_SetStatus", "TF_GetCode", "TF_Message"] {
///     println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol={name}");
/// }
/// ```
#[macro_export]
macro_rules! export_tf_status {
    () => {
        const _: () = {
            /// The host's `TF_NewStatus`.
            #[unsafe(no_mangle)]
            pub extern "C" fn TF_NewStatus() -> *mut $crate::abi::TF_Status {
                $crate::status::host_new_status()
            }

            /// The host's `TF_DeleteStatus`.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn TF_DeleteStatus(status: *mut $crate::abi::TF_Status) {
                // SAFETY: the C contract of TF_DeleteStatus is host_delete_status's.
                unsafe { $crate::status::host_delete_status(status) }
            }

            /// The host's `TF_SetStatus`.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn TF_SetStatus(
                status: *mut $crate::abi::TF_Status,
                code: ::std::ffi::c_int,
                message: *const ::std::ffi::c_char,
            ) {
                // SAFETY: the C contract of TF_SetStatus is host_set_status's.
                unsafe { $crate::status::host_set_status(status, code, message) }
            }

            /// The host's `TF_GetCode`.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn TF_GetCode(
                status: *const $crate::abi::TF_Status,
            ) -> ::std::ffi::c_int {
                // SAFETY: the C contract of TF_GetCode is host_get_code's.
                unsafe { $crate::status::host_get_code(status) }
            }

            /// The host's `TF_Message`.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn TF_Message(
                status: *const $crate::abi::TF_Status,
            ) -> *const ::std::ffi::c_char {
                // SAFETY: the C contract of TF_Message is host_message's.
                unsafe { $crate::status::host_message(status) }
            }
        };
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_status_functions_round_trip() {
        let mut status = HostStatus::new();
        let ptr = status.as_ptr();
        // SAFETY: `ptr` is a live host status and the message a C string literal.
        unsafe {
            host_set_status(ptr, Code::FAILED_PRECONDITION.0, c"too small".as_ptr());
            assert_eq!(host_get_code(ptr), 9);
            assert_eq!(CStr::from_ptr(host_message(ptr)), c"too small");
            host_set_status(ptr, 0, std::ptr::null());
        }
        assert!(status.code().is_ok());
        assert_eq!(status.message(), "");
    }

    #[test]
    fn foreign_pointers_are_ignored() {
        let mut not_a_status = [0u64; 4];
        let ptr = not_a_status.as_mut_ptr().cast::<TF_Status>();
        // SAFETY: the pointer is readable for 32 bytes; the functions only read the tag.
        unsafe {
            host_set_status(ptr, 3, c"x".as_ptr());
            assert_eq!(host_get_code(ptr), Code::UNKNOWN.0);
            host_set_status(std::ptr::null_mut(), 3, c"x".as_ptr());
            host_delete_status(ptr);
        }
        assert_eq!(not_a_status, [0; 4]);
    }

    #[test]
    fn new_and_delete() {
        let ptr = host_new_status();
        // SAFETY: `ptr` came from host_new_status and is deleted once.
        unsafe {
            assert_eq!(host_get_code(ptr), 0);
            host_delete_status(ptr);
        }
    }

    #[test]
    fn messages_with_nul_survive() {
        let mut status = HostStatus::new();
        status.set(Code::INTERNAL, "a\0b");
        assert_eq!(status.message(), "a\u{fffd}b");
        assert!(matches!(
            status.to_result("stop"),
            Err(crate::Error::Call { call: "stop", .. })
        ));
    }
}
