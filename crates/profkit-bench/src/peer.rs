//! A peer outside Rust (a Python script) that times its side of a comparison on request.
//!
//! The protocol: the script starts with its arguments and `--serve`, prints one JSON line (its
//! header: what it read, its versions; or `{"error": ...}`), then answers each command line on
//! its stdin with one line. The bench alternates one run of ours with one request to the peer,
//! so that load from elsewhere on the machine falls on both sides alike.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The interpreter to run a peer with: `$PROFKIT_PYTHON`, else `python` of the venv
/// `.oracle/<venv>` under the workspace root when it exists.
pub fn python(venv: &str) -> Option<PathBuf> {
    if let Some(p) = env_python() {
        return Some(p);
    }
    let python = crate::paths::workspace_root()
        .join(".oracle")
        .join(venv)
        .join("bin/python");
    python.exists().then_some(python)
}

/// The interpreter for a peer that needs nothing but Python's standard library:
/// `$PROFKIT_PYTHON`, else `python3` as found on `PATH`.
pub fn system_python() -> PathBuf {
    env_python().unwrap_or_else(|| PathBuf::from("python3"))
}

/// `$PROFKIT_PYTHON`, which overrides every peer's interpreter.
fn env_python() -> Option<PathBuf> {
    std::env::var_os("PROFKIT_PYTHON").map(PathBuf::from)
}

/// A running peer.
pub struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// The JSON line the peer printed first.
    pub header: serde_json::Value,
}

impl Peer {
    /// Starts `python script ARGS... --serve` and reads its header; a header with `error` is an
    /// error.
    pub fn start<S: AsRef<OsStr>>(
        python: &Path,
        script: &Path,
        args: &[S],
    ) -> Result<Peer, String> {
        let mut child = Command::new(python)
            .arg(script)
            .args(args)
            .arg("--serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("no pipes to the peer".into());
        };
        let mut peer = Peer {
            child,
            stdin: Some(stdin),
            stdout: BufReader::new(stdout),
            header: serde_json::Value::Null,
        };
        let header: serde_json::Value =
            serde_json::from_str(&peer.read_line()?).map_err(|e| format!("peer header: {e}"))?;
        if let Some(err) = header.get("error") {
            return Err(format!("{err}"));
        }
        peer.header = header;
        Ok(peer)
    }

    fn read_line(&mut self) -> Result<String, String> {
        let mut line = String::new();
        match self.stdout.read_line(&mut line) {
            Ok(0) => Err("the peer exited".into()),
            Ok(_) => Ok(line),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Sends one command line and returns the peer's answer line.
    pub fn ask(&mut self, command: &str) -> Result<String, String> {
        let stdin = self.stdin.as_mut().ok_or("the peer's stdin is closed")?;
        writeln!(stdin, "{command}").map_err(|e| e.to_string())?;
        stdin.flush().map_err(|e| e.to_string())?;
        self.read_line()
    }

    /// Sends one command and reads the answer as whitespace-separated numbers (seconds, as a
    /// timing answer gives them).
    pub fn numbers(&mut self, command: &str) -> Result<Vec<f64>, String> {
        let line = self.ask(command)?;
        line.split_whitespace()
            .map(|w| w.parse().map_err(|_| format!("peer answered {line:?}")))
            .collect()
    }

    /// Sends one command and reads (wall, CPU) seconds from the first two numbers of the answer,
    /// as a peer that times one run with both clocks gives them.
    pub fn wall_cpu(&mut self, command: &str) -> Result<(f64, f64), String> {
        let line = self.ask(command)?;
        let mut words = line.split_whitespace().map(str::parse::<f64>);
        match (words.next(), words.next()) {
            (Some(Ok(wall)), Some(Ok(cpu))) => Ok((wall, cpu)),
            _ => Err(format!("peer answered {line:?}")),
        }
    }

    /// Sends one command and reads the answer as JSON.
    pub fn json(&mut self, command: &str) -> Result<serde_json::Value, String> {
        let line = self.ask(command)?;
        serde_json::from_str(&line).map_err(|_| format!("peer answered {line:?}"))
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        // Closing stdin ends the peer's loop; waiting reaps it.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// The started peer, or `None` after printing `  Python peer skipped: WHY`: a bench goes on
/// without a peer it cannot start (no interpreter, a missing module, other data).
pub fn or_skip(peer: Result<Peer, String>) -> Option<Peer> {
    or_skip_as("Python peer", peer)
}

/// [`or_skip`] for a peer the bench names otherwise: prints `  LABEL skipped: WHY`.
pub fn or_skip_as(label: &str, peer: Result<Peer, String>) -> Option<Peer> {
    peer.map_err(|why| println!("  {label} skipped: {why}"))
        .ok()
}

/// Asks the peer, if there is one, with `ask`; on an error prints `  Python peer failed: WHY` and
/// drops the peer, so that the rest of the bench runs without it.
pub fn ask_or_drop<T>(
    peer: &mut Option<Peer>,
    ask: impl FnOnce(&mut Peer) -> Result<T, String>,
) -> Option<T> {
    ask_or_drop_as("Python peer", peer, ask)
}

/// [`ask_or_drop`] for a peer the bench names otherwise: prints `  LABEL failed: WHY`.
pub fn ask_or_drop_as<T>(
    label: &str,
    peer: &mut Option<Peer>,
    ask: impl FnOnce(&mut Peer) -> Result<T, String>,
) -> Option<T> {
    let answer = ask(peer.as_mut()?);
    answer
        .map_err(|why| {
            println!("  {label} failed: {why}");
            *peer = None;
        })
        .ok()
}
