//! The `profkit` binary hosts profiler plugins (`profkit plugin`), which find `TF_SetStatus` and
//! the other `TF_Status` functions with `dlsym(RTLD_DEFAULT, ...)` or link them directly, as they
//! would TensorFlow's. The binary defines them (`profkit_plugin::export_tf_status!` in
//! `src/plugin.rs`); executables export nothing to the dynamic loader unless told to.
fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if matches!(
        target_os.as_str(),
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd"
    ) {
        for symbol in [
            "TF_NewStatus",
            "TF_DeleteStatus",
            "TF_SetStatus",
            "TF_GetCode",
            "TF_Message",
        ] {
            println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol={symbol}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
