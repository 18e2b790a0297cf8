//! libFuzzer entry point for the `xdl_record` target; the logic is in `profkit_fuzz::xdl::record`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::xdl::record::run(data));
