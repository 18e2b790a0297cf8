//! libFuzzer entry point for the `arrow_events` target; the logic is in `profkit_fuzz::arrow::events`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::arrow::events::run(data));
