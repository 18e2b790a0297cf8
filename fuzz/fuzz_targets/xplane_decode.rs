//! libFuzzer entry point for the `xplane_decode` target; the logic is in
//! `profkit_fuzz::xplane::decode`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::xplane::decode::run(data));
