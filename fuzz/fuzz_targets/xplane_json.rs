//! libFuzzer entry point for the `xplane_json` target; the logic is in
//! `profkit_fuzz::xplane::json`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::xplane::json::run(data));
