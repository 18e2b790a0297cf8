//! The `profkit` command: the CLI of [`profkit::run_args`] on this process's arguments.

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    profkit::run_args(std::env::args_os())
}
