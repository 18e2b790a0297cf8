//! libFuzzer entry point for the `paddle_pairing` target; the logic is in `profkit_fuzz::paddle::pairing`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::paddle::pairing::run(data));
