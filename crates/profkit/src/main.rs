//! `profkit`: inspect, validate and dump machine-learning profiler files.
//!
//! Exit codes: 0 success, 1 bad or invalid input, 2 usage error.

#![forbid(unsafe_code)]

mod format;
mod input;
mod xspace;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::format::Format;

/// Read, check and convert the files of machine-learning profilers.
#[derive(Parser)]
#[command(name = "profkit", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Summarise a profile: planes, lines, events, time span, busiest event names.
    Inspect {
        /// The file to read (`-` for standard input).
        file: PathBuf,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
        /// The file's format, when detection from its content is not wanted.
        #[arg(long, value_enum)]
        from: Option<Format>,
    },
    /// Print a profile's complete content as canonical JSON.
    Dump {
        /// The file to read (`-` for standard input).
        file: PathBuf,
        /// The file's format, when detection from its content is not wanted.
        #[arg(long, value_enum)]
        from: Option<Format>,
    },
    /// Check a profile; prints one line per problem and exits 1 when any is found.
    Validate {
        /// The file to read (`-` for standard input).
        file: PathBuf,
        /// Print the problems as JSON.
        #[arg(long)]
        json: bool,
        /// The file's format, when detection from its content is not wanted.
        #[arg(long, value_enum)]
        from: Option<Format>,
    },
}

/// Why a command did not succeed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The input could not be read or decoded: the message says what and where.
    BadInput(String),
    /// The input was read but is invalid; the problems were already printed.
    Invalid,
    /// Writing the output failed (for example a closed pipe).
    Output(std::io::Error),
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Inspect { file, json, from } => {
            let input = input::Input::open(&file, from)?;
            match input.format {
                Format::Xspace => xspace::inspect(input, json),
            }
        }
        Command::Dump { file, from } => {
            let input = input::Input::open(&file, from)?;
            match input.format {
                Format::Xspace => xspace::dump(input),
            }
        }
        Command::Validate { file, json, from } => {
            let input = input::Input::open(&file, from)?;
            match input.format {
                Format::Xspace => xspace::validate(input, json),
            }
        }
    }
}

fn main() -> ExitCode {
    // clap exits with 2 on usage errors and 0 for --help / --version.
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::BadInput(message)) => {
            eprintln!("profkit: {message}");
            ExitCode::from(1)
        }
        Err(Failure::Invalid) => ExitCode::from(1),
        Err(Failure::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(Failure::Output(e)) => {
            eprintln!("profkit: cannot write output: {e}");
            ExitCode::from(1)
        }
    }
}
