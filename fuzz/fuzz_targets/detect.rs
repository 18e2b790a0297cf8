//! libFuzzer entry point for the `detect` target; the logic is in `profkit_fuzz::detect`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::detect::run(data));
