//! Running the `profkit` binary from integration tests.

#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `profkit` with `args`, feeding `stdin` (or nothing) to its standard input.
pub fn profkit(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_profkit"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut pipe = child.stdin.take().unwrap();
        if let Some(bytes) = stdin {
            // A command may exit before reading all of its input; that is its business.
            let _ = pipe.write_all(bytes);
        }
    }
    child.wait_with_output().unwrap()
}

/// Output bytes as text, for assertions and messages.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
