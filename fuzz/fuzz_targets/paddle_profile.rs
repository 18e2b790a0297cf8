//! libFuzzer entry point for the `paddle_profile` target; the logic is in `profkit_fuzz::paddle::profile`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::paddle::profile::run(data));
