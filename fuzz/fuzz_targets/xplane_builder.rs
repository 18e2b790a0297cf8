//! libFuzzer entry point for the `xplane_builder` target; the logic is in
//! `profkit_fuzz::xplane::builder`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::xplane::builder::run(data));
