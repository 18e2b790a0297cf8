//! libFuzzer entry point for the `paddle_nodetrees` target; the logic is in `profkit_fuzz::paddle::nodetrees`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::paddle::nodetrees::run(data));
