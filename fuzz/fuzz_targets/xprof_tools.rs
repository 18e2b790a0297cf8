//! libFuzzer entry point for the `xprof_tools` target; the logic is in `profkit_fuzz::xprof::tools`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::xprof::tools::run(data));
