//! `--threads N` and `PROFKIT_THREADS`: the commands' output is the same whatever the count, and
//! a count that is no number is a usage error.

mod common;

use std::path::Path;
use std::process::Command;

fn case(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/xplane")
        .join(name)
        .join("input.xplane.pb")
        .display()
        .to_string()
}

#[test]
fn every_thread_count_writes_the_same_output() {
    for name in ["real-tf-fit", "real-jax-steps", "gpu-steps-derived"] {
        let input = case(name);
        for command in [
            vec!["convert", input.as_str(), "-", "--to", "chrome"],
            vec!["convert", input.as_str(), "-", "--to", "xspace"],
            vec!["report", input.as_str()],
            vec!["inspect", input.as_str()],
        ] {
            let runs: Vec<Vec<u8>> = ["1", "2", "5"]
                .iter()
                .map(|n| {
                    let mut args = command.clone();
                    args.extend(["--threads", n]);
                    let out = common::profkit(&args, None);
                    assert!(
                        out.status.success(),
                        "{args:?}: {}",
                        common::text(&out.stderr)
                    );
                    out.stdout
                })
                .collect();
            assert!(
                runs.windows(2).all(|w| w[0] == w[1]),
                "{command:?}: the output depends on the thread count"
            );
        }
    }
}

#[test]
fn the_environment_sets_the_thread_count_and_a_bad_one_is_a_usage_error() {
    let input = case("real-tf-fit");
    let run = |threads: &str| {
        Command::new(env!("CARGO_BIN_EXE_profkit"))
            .args(["convert", input.as_str(), "-", "--to", "chrome"])
            .env("PROFKIT_THREADS", threads)
            .output()
            .unwrap()
    };
    let one = run("1");
    assert!(one.status.success(), "{}", common::text(&one.stderr));
    assert_eq!(run("3").stdout, one.stdout);
    let bad = run("many");
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        common::text(&bad.stderr).contains("PROFKIT_THREADS"),
        "{}",
        common::text(&bad.stderr)
    );
}
