//! libFuzzer entry point for the `json_reader` target; the logic is in `profkit_fuzz::json::reader`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::json::reader::run(data));
