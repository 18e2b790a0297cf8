//! libFuzzer entry point for the `gzip` target; the logic is in `profkit_fuzz::gzip`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::gzip::run(data));
