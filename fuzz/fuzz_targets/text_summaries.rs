//! libFuzzer entry point for the `text_summaries` target; the logic is in
//! `profkit_fuzz::text::summaries`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::text::summaries::run(data));
