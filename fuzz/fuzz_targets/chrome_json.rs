//! libFuzzer entry point for the `chrome_json` target; the logic is in `profkit_fuzz::chrome::json`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::chrome::json::run(data));
