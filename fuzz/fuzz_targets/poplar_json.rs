//! libFuzzer entry point for the `poplar_json` target; the logic is in `profkit_fuzz::poplar::json`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::poplar::json::run(data));
