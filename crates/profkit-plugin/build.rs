//! The integration tests host plugins in the test binary itself, so the binary must export the
//! `TF_Status` functions that `profkit_plugin::export_tf_status!` defines there (see the crate docs:
//! executables export nothing to `dlsym` unless the linker is told to).
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let unix = matches!(
        target_os.as_str(),
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd"
    );
    // Cargo refuses link arguments for integration tests a package does not have.
    let has_tests = std::path::Path::new("tests").is_dir();
    if !unix || !has_tests {
        return;
    }
    for symbol in [
        "TF_NewStatus",
        "TF_DeleteStatus",
        "TF_SetStatus",
        "TF_GetCode",
        "TF_Message",
    ] {
        println!("cargo:rustc-link-arg-tests=-Wl,--export-dynamic-symbol={symbol}");
    }
}
