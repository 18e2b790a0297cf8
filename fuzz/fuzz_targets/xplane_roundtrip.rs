//! libFuzzer entry point for the `xplane_roundtrip` target; the logic is in
//! `profkit_fuzz::xplane::roundtrip`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::xplane::roundtrip::run(data));
