//! Loading and registration: `load` (the library opens as TensorFlow opens it), `init`
//! (`TF_InitProfiler` and TensorFlow's validation), `device-type`, and `abi` (stricter than
//! TensorFlow).

use super::text::fmt_duration;
use super::{Check, CheckId};
use crate::Result;
use crate::host::{Library, Registration};

pub(super) fn load_check(opened: &Result<Library>) -> Check {
    match opened {
        Ok(_) => Check::pass(
            CheckId::Load,
            "opened with RTLD_NOW | RTLD_LOCAL, as TensorFlow does; TF_InitProfiler found",
        ),
        Err(e) => Check::fail(CheckId::Load, e.to_string()),
    }
}

pub(super) fn init_check(registration: &Registration) -> Check {
    let problems = registration.tensorflow_problems();
    let took = fmt_duration(registration.duration);
    if problems.is_empty() {
        Check::pass(
            CheckId::Init,
            format!(
                "TF_InitProfiler returned OK in {took} and the registration passes \
                 TensorFlow's validation"
            ),
        )
    } else {
        Check::fail(
            CheckId::Init,
            format!(
                "TensorFlow would abort the process at import: {}",
                problems.join("; ")
            ),
        )
    }
}

pub(super) fn device_type_check(registration: &Registration) -> Check {
    match registration.device_type() {
        None => Check::fail(CheckId::DeviceType, "TP_Profiler.device_type is null"),
        Some(d) if crate::abi::is_valid_device_type(&d) => {
            Check::pass(CheckId::DeviceType, format!("{d:?} matches [A-Z][A-Z_]*"))
        }
        Some(d) => Check::fail(
            CheckId::DeviceType,
            format!("{d:?} does not match [A-Z][A-Z_]*: TensorFlow aborts the process at import"),
        ),
    }
}

pub(super) fn abi_check(registration: &Registration) -> Check {
    let strict = registration.strict_problems();
    if strict.is_empty() {
        Check::pass(
            CheckId::Abi,
            "struct sizes are those of version 0.0.1, the core-owned pointers and version are \
             untouched, reserved fields are null",
        )
    } else {
        Check::fail(CheckId::Abi, strict.join("; "))
    }
}
