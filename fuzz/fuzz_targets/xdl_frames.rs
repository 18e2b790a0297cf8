//! libFuzzer entry point for the `xdl_frames` target; the logic is in `profkit_fuzz::xdl::frames`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| profkit_fuzz::xdl::frames::run(data));
