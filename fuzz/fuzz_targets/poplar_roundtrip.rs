//! libFuzzer entry point for the `poplar_roundtrip` target; the logic is in
//! `profkit_fuzz::poplar::roundtrip`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::poplar::roundtrip::run(data));
