//! C and Rust agree on every size and offset of the ABI: a C program compiled against
//! `include/profkit_plugin.h` prints them and the test compares them with Rust's.

mod support;

use std::collections::BTreeMap;
use std::mem::{offset_of, size_of};

use profkit_plugin::abi::*;

const PROGRAM: &str = r#"
#include <stdio.h>
#include "profkit_plugin.h"
#define SIZE(T) printf("sizeof %s %zu\n", #T, sizeof(T))
#define OFF(T, F) printf("offset %s.%s %zu\n", #T, #F, offsetof(T, F))
int main(void) {
  SIZE(TP_Profiler); OFF(TP_Profiler, struct_size); OFF(TP_Profiler, ext); OFF(TP_Profiler, device_type);
  SIZE(TP_ProfilerFns); OFF(TP_ProfilerFns, struct_size); OFF(TP_ProfilerFns, ext);
  OFF(TP_ProfilerFns, start); OFF(TP_ProfilerFns, stop); OFF(TP_ProfilerFns, collect_data_xspace);
  SIZE(TF_ProfilerRegistrationParams); OFF(TF_ProfilerRegistrationParams, struct_size);
  OFF(TF_ProfilerRegistrationParams, ext); OFF(TF_ProfilerRegistrationParams, major_version);
  OFF(TF_ProfilerRegistrationParams, minor_version); OFF(TF_ProfilerRegistrationParams, patch_version);
  OFF(TF_ProfilerRegistrationParams, profiler); OFF(TF_ProfilerRegistrationParams, profiler_fns);
  OFF(TF_ProfilerRegistrationParams, destroy_profiler);
  OFF(TF_ProfilerRegistrationParams, destroy_profiler_fns);
  printf("const TP_PROFILER_STRUCT_SIZE %zu\n", (size_t)TP_PROFILER_STRUCT_SIZE);
  printf("const TP_PROFILER_FNS_STRUCT_SIZE %zu\n", (size_t)TP_PROFILER_FNS_STRUCT_SIZE);
  printf("const TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE %zu\n",
         (size_t)TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE);
  printf("const version %d.%d.%d\n", TP_MAJOR, TP_MINOR, TP_PATCH);
  printf("sizeof TF_Code %zu\n", sizeof(TF_Code));
  return 0;
}
"#;

fn c_layout() -> BTreeMap<String, String> {
    let dir = support::scratch();
    let source = dir.join("layout.c");
    std::fs::write(&source, PROGRAM).unwrap();
    let exe = dir.join("layout");
    support::compile(&exe, &[source.to_str().unwrap()]);
    let output = std::process::Command::new(&exe).output().unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

#[test]
#[cfg_attr(miri, ignore)]
fn c_and_rust_agree_on_every_size_and_offset() {
    let mut rust: BTreeMap<String, String> = BTreeMap::new();
    let mut put = |k: &str, v: usize| {
        rust.insert(k.to_owned(), v.to_string());
    };
    put("sizeof TP_Profiler", size_of::<TP_Profiler>());
    put(
        "offset TP_Profiler.struct_size",
        offset_of!(TP_Profiler, struct_size),
    );
    put("offset TP_Profiler.ext", offset_of!(TP_Profiler, ext));
    put(
        "offset TP_Profiler.device_type",
        offset_of!(TP_Profiler, device_type),
    );
    put("sizeof TP_ProfilerFns", size_of::<TP_ProfilerFns>());
    put(
        "offset TP_ProfilerFns.struct_size",
        offset_of!(TP_ProfilerFns, struct_size),
    );
    put("offset TP_ProfilerFns.ext", offset_of!(TP_ProfilerFns, ext));
    put(
        "offset TP_ProfilerFns.start",
        offset_of!(TP_ProfilerFns, start),
    );
    put(
        "offset TP_ProfilerFns.stop",
        offset_of!(TP_ProfilerFns, stop),
    );
    put(
        "offset TP_ProfilerFns.collect_data_xspace",
        offset_of!(TP_ProfilerFns, collect_data_xspace),
    );
    type P = TF_ProfilerRegistrationParams;
    put("sizeof TF_ProfilerRegistrationParams", size_of::<P>());
    put(
        "offset TF_ProfilerRegistrationParams.struct_size",
        offset_of!(P, struct_size),
    );
    put(
        "offset TF_ProfilerRegistrationParams.ext",
        offset_of!(P, ext),
    );
    put(
        "offset TF_ProfilerRegistrationParams.major_version",
        offset_of!(P, major_version),
    );
    put(
        "offset TF_ProfilerRegistrationParams.minor_version",
        offset_of!(P, minor_version),
    );
    put(
        "offset TF_ProfilerRegistrationParams.patch_version",
        offset_of!(P, patch_version),
    );
    put(
        "offset TF_ProfilerRegistrationParams.profiler",
        offset_of!(P, profiler),
    );
    put(
        "offset TF_ProfilerRegistrationParams.profiler_fns",
        offset_of!(P, profiler_fns),
    );
    put(
        "offset TF_ProfilerRegistrationParams.destroy_profiler",
        offset_of!(P, destroy_profiler),
    );
    put(
        "offset TF_ProfilerRegistrationParams.destroy_profiler_fns",
        offset_of!(P, destroy_profiler_fns),
    );
    put("const TP_PROFILER_STRUCT_SIZE", TP_PROFILER_STRUCT_SIZE);
    put(
        "const TP_PROFILER_FNS_STRUCT_SIZE",
        TP_PROFILER_FNS_STRUCT_SIZE,
    );
    put(
        "const TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE",
        TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE,
    );
    put("sizeof TF_Code", size_of::<Code>());
    rust.insert(
        "const version".into(),
        format!("{TP_MAJOR}.{TP_MINOR}.{TP_PATCH}"),
    );
    assert_eq!(c_layout(), rust);
}

#[test]
fn the_shipped_sizes_on_x86_64() {
    if cfg!(all(target_arch = "x86_64", target_pointer_width = "64")) {
        assert_eq!(
            (
                TP_PROFILER_STRUCT_SIZE,
                TP_PROFILER_FNS_STRUCT_SIZE,
                TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE
            ),
            (24, 40, 64)
        );
        assert_eq!(offset_of!(TF_ProfilerRegistrationParams, profiler), 32);
        assert_eq!(
            offset_of!(TF_ProfilerRegistrationParams, destroy_profiler),
            48
        );
    }
}
