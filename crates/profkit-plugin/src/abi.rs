//! The C ABI of TensorFlow's pluggable profiler, `pluggable_profiler.h`, as TensorFlow ships it.
//!
//! Three structs pass between the core and a plugin. The core owns [`TF_ProfilerRegistrationParams`]
//! and the [`TP_Profiler`] / [`TP_ProfilerFns`] it points to; the plugin's `TF_InitProfiler` fills the
//! `TP_` structs and the two destroy callbacks. Every struct starts with `struct_size`, the offset of
//! the end of its last field (`TF_OFFSET_OF_END`), and a reserved `ext` pointer.
//!
//! Where the RFC differs from the shipped header, this follows the header: the `TP_Profiler` field
//! the RFC calls `type` is `device_type`. The same layout in C is `include/profkit_plugin.h`.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_void};
use std::fmt;
use std::marker::{PhantomData, PhantomPinned};
use std::mem::{offset_of, size_of};

/// `TP_MAJOR`: the major version of the profiler C API.
pub const TP_MAJOR: i32 = 0;
/// `TP_MINOR`: the minor version of the profiler C API.
pub const TP_MINOR: i32 = 0;
/// `TP_PATCH`: the patch version of the profiler C API.
pub const TP_PATCH: i32 = 1;

/// TensorFlow's status object, opaque: only `TF_SetStatus`, `TF_GetCode` and `TF_Message` look
/// inside. See [`crate::status`] for how a plugin finds those functions.
#[repr(C)]
pub struct TF_Status {
    _opaque: [u8; 0],
    // Neither Send, Sync nor Unpin: it is foreign memory reached only through pointers.
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

/// `start` and `stop`: `void (*)(const TP_Profiler*, TF_Status*)`.
pub type TP_StartStopFn =
    unsafe extern "C" fn(profiler: *const TP_Profiler, status: *mut TF_Status);

/// `collect_data_xspace`: `void (*)(const TP_Profiler*, uint8_t* buffer, size_t* size_in_bytes, TF_Status*)`.
pub type TP_CollectDataXSpaceFn = unsafe extern "C" fn(
    profiler: *const TP_Profiler,
    buffer: *mut u8,
    size_in_bytes: *mut usize,
    status: *mut TF_Status,
);

/// `destroy_profiler`: `void (*)(TP_Profiler*)`.
pub type TP_DestroyProfilerFn = unsafe extern "C" fn(profiler: *mut TP_Profiler);

/// `destroy_profiler_fns`: `void (*)(TP_ProfilerFns*)`.
pub type TP_DestroyProfilerFnsFn = unsafe extern "C" fn(profiler_fns: *mut TP_ProfilerFns);

/// The plugin's entry point `TF_InitProfiler`: `void (*)(TF_ProfilerRegistrationParams*, TF_Status*)`.
pub type TF_InitProfilerFn =
    unsafe extern "C" fn(params: *mut TF_ProfilerRegistrationParams, status: *mut TF_Status);

/// The name of the plugin's entry point.
pub const INIT_SYMBOL: &str = "TF_InitProfiler";

/// The profiler object, filled by the plugin in core-owned memory. TensorFlow copies it and passes
/// a pointer to a copy to every call, so nothing the plugin needs may live in the struct itself.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TP_Profiler {
    /// The size of the struct as the plugin knows it ([`TP_PROFILER_STRUCT_SIZE`]).
    pub struct_size: usize,
    /// Free-form data of the plugin.
    pub ext: *mut c_void,
    /// The device type, a NUL-terminated string matching `[A-Z][A-Z_]*` (the RFC's `type`).
    pub device_type: *const c_char,
}

/// The plugin's functions, filled by the plugin in core-owned memory.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TP_ProfilerFns {
    /// The size of the struct as the plugin knows it ([`TP_PROFILER_FNS_STRUCT_SIZE`]).
    pub struct_size: usize,
    /// Reserved; null.
    pub ext: *mut c_void,
    /// Starts profiling.
    pub start: Option<TP_StartStopFn>,
    /// Stops profiling.
    pub stop: Option<TP_StartStopFn>,
    /// Writes the size of the serialised XSpace (buffer null), then the XSpace itself.
    pub collect_data_xspace: Option<TP_CollectDataXSpaceFn>,
}

/// What the core passes to `TF_InitProfiler`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TF_ProfilerRegistrationParams {
    /// The size of the struct as the core knows it ([`TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE`]).
    pub struct_size: usize,
    /// Reserved; null.
    pub ext: *mut c_void,
    /// [`TP_MAJOR`], set by the core.
    pub major_version: i32,
    /// [`TP_MINOR`], set by the core.
    pub minor_version: i32,
    /// [`TP_PATCH`], set by the core.
    pub patch_version: i32,
    /// Core-owned; the plugin fills the struct it points to and must not replace the pointer.
    pub profiler: *mut TP_Profiler,
    /// Core-owned; the plugin fills the struct it points to and must not replace the pointer.
    pub profiler_fns: *mut TP_ProfilerFns,
    /// Set by the plugin: cleans up what the plugin allocated inside a `TP_Profiler`.
    pub destroy_profiler: Option<TP_DestroyProfilerFn>,
    /// Set by the plugin: cleans up what the plugin allocated inside a `TP_ProfilerFns`.
    pub destroy_profiler_fns: Option<TP_DestroyProfilerFnsFn>,
}

/// `TP_PROFILER_STRUCT_SIZE`: the offset of the end of `device_type` (24 on LP64).
pub const TP_PROFILER_STRUCT_SIZE: usize =
    offset_of!(TP_Profiler, device_type) + size_of::<*const c_char>();

/// `TP_PROFILER_FNS_STRUCT_SIZE`: the offset of the end of `collect_data_xspace` (40 on LP64).
pub const TP_PROFILER_FNS_STRUCT_SIZE: usize =
    offset_of!(TP_ProfilerFns, collect_data_xspace) + size_of::<Option<TP_CollectDataXSpaceFn>>();

/// `TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE`: the offset of the end of `destroy_profiler_fns`
/// (64 on LP64).
pub const TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE: usize =
    offset_of!(TF_ProfilerRegistrationParams, destroy_profiler_fns)
        + size_of::<Option<TP_DestroyProfilerFnsFn>>();

impl TP_Profiler {
    /// The struct as the core hands it to `TF_InitProfiler`: its size set, everything else null.
    pub const fn core_prefilled() -> TP_Profiler {
        TP_Profiler {
            struct_size: TP_PROFILER_STRUCT_SIZE,
            ext: std::ptr::null_mut(),
            device_type: std::ptr::null(),
        }
    }
}

impl TP_ProfilerFns {
    /// The struct as the core hands it to `TF_InitProfiler`: its size set, everything else null.
    pub const fn core_prefilled() -> TP_ProfilerFns {
        TP_ProfilerFns {
            struct_size: TP_PROFILER_FNS_STRUCT_SIZE,
            ext: std::ptr::null_mut(),
            start: None,
            stop: None,
            collect_data_xspace: None,
        }
    }
}

impl TF_ProfilerRegistrationParams {
    /// The params as the core hands them to `TF_InitProfiler`: size and version set, pointing at
    /// the core-owned `profiler` and `profiler_fns`, the destroy callbacks null.
    pub const fn core_prefilled(
        profiler: *mut TP_Profiler,
        profiler_fns: *mut TP_ProfilerFns,
    ) -> TF_ProfilerRegistrationParams {
        TF_ProfilerRegistrationParams {
            struct_size: TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE,
            ext: std::ptr::null_mut(),
            major_version: TP_MAJOR,
            minor_version: TP_MINOR,
            patch_version: TP_PATCH,
            profiler,
            profiler_fns,
            destroy_profiler: None,
            destroy_profiler_fns: None,
        }
    }
}

/// A `TF_Code`: the status codes of TensorFlow (and absl), 0 for OK.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Code(pub c_int);

impl Code {
    /// `TF_OK`.
    pub const OK: Code = Code(0);
    /// `TF_CANCELLED`.
    pub const CANCELLED: Code = Code(1);
    /// `TF_UNKNOWN`.
    pub const UNKNOWN: Code = Code(2);
    /// `TF_INVALID_ARGUMENT`.
    pub const INVALID_ARGUMENT: Code = Code(3);
    /// `TF_DEADLINE_EXCEEDED`.
    pub const DEADLINE_EXCEEDED: Code = Code(4);
    /// `TF_NOT_FOUND`.
    pub const NOT_FOUND: Code = Code(5);
    /// `TF_ALREADY_EXISTS`.
    pub const ALREADY_EXISTS: Code = Code(6);
    /// `TF_PERMISSION_DENIED`.
    pub const PERMISSION_DENIED: Code = Code(7);
    /// `TF_RESOURCE_EXHAUSTED`.
    pub const RESOURCE_EXHAUSTED: Code = Code(8);
    /// `TF_FAILED_PRECONDITION`: what a too-small collect buffer gets.
    pub const FAILED_PRECONDITION: Code = Code(9);
    /// `TF_ABORTED`.
    pub const ABORTED: Code = Code(10);
    /// `TF_OUT_OF_RANGE`.
    pub const OUT_OF_RANGE: Code = Code(11);
    /// `TF_UNIMPLEMENTED`.
    pub const UNIMPLEMENTED: Code = Code(12);
    /// `TF_INTERNAL`: what a panic inside a plugin call becomes.
    pub const INTERNAL: Code = Code(13);
    /// `TF_UNAVAILABLE`.
    pub const UNAVAILABLE: Code = Code(14);
    /// `TF_DATA_LOSS`.
    pub const DATA_LOSS: Code = Code(15);
    /// `TF_UNAUTHENTICATED`.
    pub const UNAUTHENTICATED: Code = Code(16);

    /// Whether this is `TF_OK`.
    pub const fn is_ok(self) -> bool {
        self.0 == 0
    }

    /// The code's name as TensorFlow prints it, `None` for a value outside 0..=16.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "OK",
            1 => "CANCELLED",
            2 => "UNKNOWN",
            3 => "INVALID_ARGUMENT",
            4 => "DEADLINE_EXCEEDED",
            5 => "NOT_FOUND",
            6 => "ALREADY_EXISTS",
            7 => "PERMISSION_DENIED",
            8 => "RESOURCE_EXHAUSTED",
            9 => "FAILED_PRECONDITION",
            10 => "ABORTED",
            11 => "OUT_OF_RANGE",
            12 => "UNIMPLEMENTED",
            13 => "INTERNAL",
            14 => "UNAVAILABLE",
            15 => "DATA_LOSS",
            16 => "UNAUTHENTICATED",
            _ => return None,
        })
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "code {}", self.0),
        }
    }
}

impl fmt::Debug for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Whether `device_type` fully matches `[A-Z][A-Z_]*`, the check TensorFlow applies after
/// `TF_InitProfiler` (and aborts the process on): "GPU" and "MY_DEVICE" pass, "MyDeviceType",
/// "xpu" and "GPU2" do not.
pub const fn is_valid_device_type(device_type: &str) -> bool {
    let bytes = device_type.as_bytes();
    if bytes.is_empty() || !bytes[0].is_ascii_uppercase() {
        return false;
    }
    let mut i = 1;
    while i < bytes.len() {
        if !(bytes[i].is_ascii_uppercase() || bytes[i] == b'_') {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_the_shipped_header_on_lp64() {
        if size_of::<usize>() == 8 {
            assert_eq!(TP_PROFILER_STRUCT_SIZE, 24);
            assert_eq!(TP_PROFILER_FNS_STRUCT_SIZE, 40);
            assert_eq!(TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE, 64);
            assert_eq!(offset_of!(TF_ProfilerRegistrationParams, profiler), 32);
        }
    }

    #[test]
    fn device_types_as_tensorflow_judges_them() {
        for ok in ["GPU", "MY_DEVICE", "X", "A_", "PROFKIT_SAMPLER"] {
            assert!(is_valid_device_type(ok), "{ok}");
        }
        for bad in [
            "",
            "MyDeviceType",
            "xpu",
            "GPU2",
            "_GPU",
            "GPU-X",
            "GPU ",
            "ÄPU",
        ] {
            assert!(!is_valid_device_type(bad), "{bad}");
        }
    }

    #[test]
    fn codes_print_their_names() {
        assert_eq!(Code::FAILED_PRECONDITION.to_string(), "FAILED_PRECONDITION");
        assert_eq!(Code(99).to_string(), "code 99");
        assert!(Code::OK.is_ok() && !Code::INTERNAL.is_ok());
    }
}
