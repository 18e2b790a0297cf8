//! libFuzzer entry point for the `xplane_view` target; the logic is in
//! `profkit_fuzz::xplane::view`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::xplane::view::run(data));
