//! The `profkit` command: the CLI of [`profkit::run_args`] on this process's arguments.

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    allocator::tune();
    profkit::run_args(std::env::args_os())
}

/// glibc's allocator, tuned for the command's memory: every block of 128 KiB or more is mapped on
/// its own and given back to the system when freed (1 MiB left the Parquet writer's pages and
/// builders, a few hundred KiB each, in the heap: 4 MB more at its peak). By default glibc raises
/// that threshold as
/// big blocks are freed (up to 32 MiB), after which the big buffers of one phase of a command
/// (the grouping forest, a plane's lines, the writer's buffers) stay in the heap when freed and
/// the next phase's peak stacks on them: `xprof framework_op_stats` of a 14.3 MB profile peaked at
/// 61 MB instead of 49, `convert --to chrome` at 57 MB instead of 46.
///
/// The threshold is one of glibc's tunables, read from the environment when a process starts, so
/// the command starts itself again (the same process: `exec`) with `GLIBC_TUNABLES` set, unless
/// it already sets the threshold (then as given: the user's choice, or the second start). When
/// that cannot be done the command runs as it is.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod allocator {
    use std::ffi::OsString;
    use std::os::unix::process::CommandExt;

    const TUNABLES: &str = "GLIBC_TUNABLES";
    const THRESHOLD: &str = "glibc.malloc.mmap_threshold";
    /// 128 KiB: below it, blocks come from the heap as before.
    const BYTES: u32 = 1 << 17;

    pub(super) fn tune() {
        let tunables = std::env::var_os(TUNABLES).unwrap_or_default();
        let Some(text) = tunables.to_str() else {
            return;
        };
        if text.contains(THRESHOLD) {
            return;
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let mut tuned = OsString::from(text);
        if !text.is_empty() {
            tuned.push(":");
        }
        tuned.push(format!("{THRESHOLD}={BYTES}"));
        let mut args = std::env::args_os();
        let arg0 = args.next().unwrap_or_else(|| exe.clone().into_os_string());
        // Returns only when the new start fails; the command then goes on untuned.
        let _failed = std::process::Command::new(&exe)
            .arg0(arg0)
            .args(args)
            .env(TUNABLES, tuned)
            .exec();
    }
}
