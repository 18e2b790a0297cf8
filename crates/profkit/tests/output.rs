//! What `convert` and `merge` do to OUT: an input is never replaced, devices and FIFOs are
//! written through, links to files keep pointing at the new file, a failure or a signal leaves no
//! temporary file, and `--to xdl` appears whole or not at all.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
#[cfg(unix)]
use std::process::Stdio;

use common::{profkit, text};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("profkit-output-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn arg(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn temporaries(dir: &Path) -> Vec<String> {
    names(dir)
        .into_iter()
        .filter(|n| n.contains(".profkit-"))
        .collect()
}

const SAMPLE: &str = "conformance/xplane/sample-myhost/input.xplane.pb";
const XDL: &str = "conformance/xdl/original-writer/input";

fn refused(args: &[&str], input: &Path, original: &[u8]) {
    let run = profkit(args, None);
    assert_eq!(
        run.status.code(),
        Some(2),
        "{args:?}: {}",
        text(&run.stderr)
    );
    assert!(
        text(&run.stderr).contains("the output is an input"),
        "{args:?}: {}",
        text(&run.stderr)
    );
    assert_eq!(std::fs::read(input).unwrap(), original, "{args:?}");
}

#[test]
fn an_input_is_never_the_output() {
    let dir = scratch("same");
    let a = dir.join("a.xplane.pb");
    std::fs::copy(repo(SAMPLE), &a).unwrap();
    let original = std::fs::read(&a).unwrap();
    refused(
        &["convert", arg(&a), arg(&a), "--to", "chrome"],
        &a,
        &original,
    );
    refused(&["convert", arg(&a), arg(&a)], &a, &original);
    refused(&["merge", arg(&a), arg(&a), arg(&a)], &a, &original);
    // The same file by another name: a path with `.` in it, a hard link, a symbolic link.
    let dotted = dir.join(".").join("a.xplane.pb");
    refused(&["merge", arg(&a), arg(&dotted)], &a, &original);
    let hard = dir.join("hard.xplane.pb");
    std::fs::hard_link(&a, &hard).unwrap();
    refused(
        &["convert", arg(&a), arg(&hard), "--to", "chrome"],
        &a,
        &original,
    );
    #[cfg(unix)]
    {
        let link = dir.join("link.xplane.pb");
        std::os::unix::fs::symlink("a.xplane.pb", &link).unwrap();
        refused(&["merge", arg(&link), arg(&a), arg(&a)], &a, &original);
        refused(&["convert", arg(&a), arg(&link)], &a, &original);
        // Standard input redirected from OUT.
        let run = Command::new(env!("CARGO_BIN_EXE_profkit"))
            .args(["convert", "-", arg(&a), "--from", "xspace"])
            .stdin(std::fs::File::open(&a).unwrap())
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(2), "{}", text(&run.stderr));
        assert!(text(&run.stderr).contains("the same file as the input -"));
    }
    // A file of an XDL dataset given as its directory.
    let dataset = dir.join("dataset");
    std::fs::create_dir(&dataset).unwrap();
    for entry in std::fs::read_dir(repo(XDL)).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dataset.join(entry.file_name())).unwrap();
    }
    let data = dataset.join("train.trace.0.2");
    let bytes = std::fs::read(&data).unwrap();
    refused(
        &["convert", arg(&dataset), arg(&data), "--to", "chrome"],
        &data,
        &bytes,
    );
    let timeline = dir.join("p.pb");
    std::fs::copy(
        repo("conformance/paddle/dygraph-cpu-total/input.pb"),
        &timeline,
    )
    .unwrap();
    let profile = std::fs::read(&timeline).unwrap();
    let keyed = format!("trainer0={}", arg(&timeline));
    refused(
        &["convert", &keyed, arg(&timeline), "--to", "paddle-timeline"],
        &timeline,
        &profile,
    );
    // Another output still works, and nothing was left beside the input.
    let run = profkit(
        &["merge", arg(&a), arg(&hard), arg(&dir.join("m.pb"))],
        None,
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(temporaries(&dir).is_empty(), "{:?}", names(&dir));
    let _ = std::fs::remove_dir_all(dir);
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

/// Converts the sample to Chrome JSON into `out` (a FIFO or a link to one) while `cat` reads the
/// FIFO, and returns what `cat` read.
#[cfg(unix)]
fn through_fifo(out: &Path, fifo: &Path) -> Vec<u8> {
    use std::os::unix::fs::FileTypeExt;
    let cat = Command::new("cat")
        .arg(fifo)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let run = profkit(
        &["convert", arg(&repo(SAMPLE)), arg(out), "--to", "chrome"],
        None,
    );
    let still_fifo = std::fs::symlink_metadata(fifo).is_ok_and(|m| m.file_type().is_fifo());
    if !run.status.success() || !still_fifo {
        // `cat` would wait for a writer that never comes.
        let _ = Command::new("kill").arg(cat.id().to_string()).status();
        panic!(
            "{}: status {:?}, still a FIFO: {still_fifo}: {}",
            out.display(),
            run.status,
            text(&run.stderr)
        );
    }
    cat.wait_with_output().unwrap().stdout
}

#[cfg(unix)]
#[test]
fn devices_fifos_and_links_are_written_through() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch("through");
    let golden = std::fs::read(repo("conformance/xplane/sample-myhost/chrome.json")).unwrap();

    let fifo = dir.join("fifo.json");
    mkfifo(&fifo);
    assert_eq!(through_fifo(&fifo, &fifo), golden);
    let link = dir.join("to-fifo.json");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    assert_eq!(through_fifo(&link, &fifo), golden);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );

    // A link to a regular file: the file is replaced, the link stays, the mode carries over.
    let file = dir.join("file.json");
    std::fs::write(&file, "old").unwrap();
    let mut mode = std::fs::metadata(&file).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o640);
    std::fs::set_permissions(&file, mode).unwrap();
    let to_file = dir.join("to-file.json");
    std::os::unix::fs::symlink("file.json", &to_file).unwrap();
    let run = profkit(&["convert", arg(&repo(SAMPLE)), arg(&to_file)], None);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        std::fs::symlink_metadata(&to_file)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&file).unwrap(), golden);
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&file).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o640);
    // A dangling link: its target is created.
    let dangling = dir.join("dangling.json");
    std::os::unix::fs::symlink("made.json", &dangling).unwrap();
    let run = profkit(&["convert", arg(&repo(SAMPLE)), arg(&dangling)], None);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(dir.join("made.json")).unwrap(), golden);
    assert!(temporaries(&dir).is_empty(), "{:?}", names(&dir));

    // Devices (only once the FIFO cases showed that OUT is opened, not replaced: an old profkit
    // run as root would replace the device node itself).
    let run = profkit(
        &["convert", arg(&repo(SAMPLE)), "/dev/null", "--to", "chrome"],
        None,
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
    if Path::new("/dev/full").exists() {
        for to in ["chrome", "xspace"] {
            let run = profkit(
                &["convert", arg(&repo(SAMPLE)), "/dev/full", "--to", to],
                None,
            );
            assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
            assert!(
                text(&run.stderr).contains("/dev/full: No space left on device"),
                "{}",
                text(&run.stderr)
            );
            assert!(
                std::fs::metadata("/dev/full")
                    .unwrap()
                    .file_type()
                    .is_char_device()
            );
        }
        // Standard output on a full device: the error at the last flush is not lost.
        let run = Command::new(env!("CARGO_BIN_EXE_profkit"))
            .args(["convert", arg(&repo(SAMPLE)), "-", "--to", "chrome"])
            .stdout(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            )
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
        assert!(
            text(&run.stderr).contains("No space left on device"),
            "{}",
            text(&run.stderr)
        );
    }
    // `/dev/stdout` is whatever standard output is: a pipe, or a file a shell opened for
    // appending.
    if Path::new("/dev/stdout").exists() {
        let run = profkit(
            &[
                "convert",
                arg(&repo(SAMPLE)),
                "/dev/stdout",
                "--to",
                "chrome",
            ],
            None,
        );
        assert!(run.status.success(), "{}", text(&run.stderr));
        assert_eq!(run.stdout, golden);
        let appended = dir.join("appended.json");
        std::fs::write(&appended, "before\n").unwrap();
        let run = Command::new(env!("CARGO_BIN_EXE_profkit"))
            .args([
                "convert",
                arg(&repo(SAMPLE)),
                "/dev/stdout",
                "--to",
                "chrome",
            ])
            .stdout(
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(&appended)
                    .unwrap(),
            )
            .output()
            .unwrap();
        assert!(run.status.success(), "{}", text(&run.stderr));
        assert_eq!(
            std::fs::read(&appended).unwrap(),
            [b"before\n", &golden[..]].concat()
        );
    }
    // A directory is not a file to write.
    let run = profkit(
        &["convert", arg(&repo(SAMPLE)), arg(&dir), "--to", "chrome"],
        None,
    );
    assert_eq!(run.status.code(), Some(2), "{}", text(&run.stderr));
    assert!(
        text(&run.stderr).contains("is a directory"),
        "{}",
        text(&run.stderr)
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Runs `args` with its input blocked on a FIFO that the test holds open, waits for a temporary
/// output to appear in `dir`, sends `signal` and checks that the process died of it and left
/// nothing behind in `dir`.
#[cfg(unix)]
fn interrupted(args: &[&str], fifo: &Path, prefix: &[u8], signal: (&str, i32), dir: &Path) {
    use std::io::Write;
    use std::os::unix::process::ExitStatusExt;
    let before = names(dir);
    let mut child = Command::new(env!("CARGO_BIN_EXE_profkit"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Opened for reading and writing, so this open does not wait for profkit; profkit's reads
    // then wait for data that never comes.
    let mut held = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(fifo)
        .unwrap();
    held.write_all(prefix).unwrap();
    // Not a timing assertion: a bound so that a regression fails instead of hanging.
    let mut waited = 0;
    while names(dir) == before {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            panic!(
                "{args:?} ended ({:?}) before writing anything: {}",
                out.status,
                text(&out.stderr)
            );
        }
        assert!(waited < 6000, "{args:?}: no temporary output appeared");
        std::thread::sleep(std::time::Duration::from_millis(10));
        waited += 1;
    }
    let status = Command::new("kill")
        .args([&format!("-{}", signal.0), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut waited = 0;
    while child.try_wait().unwrap().is_none() {
        if waited == 6000 {
            let _ = child.kill();
            panic!("{args:?} did not end on SIG{}", signal.0);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        waited += 1;
    }
    let out = child.wait_with_output().unwrap();
    drop(held);
    assert_eq!(
        out.status.signal(),
        Some(signal.1),
        "{args:?}: {:?} {}",
        out.status,
        text(&out.stderr)
    );
    assert_eq!(names(dir), before, "{args:?} left files behind");
}

#[cfg(unix)]
#[test]
fn signals_leave_no_temporary_output() {
    let dir = scratch("signals");
    let fifo = dir.join("input.xplane.pb");
    mkfifo(&fifo);
    let sample = std::fs::read(repo(SAMPLE)).unwrap();
    let prefix = sample.get(..4).unwrap();
    let out = dir.join("out.xplane.pb");
    interrupted(
        &["convert", arg(&fifo), arg(&out), "--from", "xspace"],
        &fifo,
        prefix,
        ("INT", 2),
        &dir,
    );
    // (merge seeks its inputs, which a FIFO cannot do; it writes through the same code.)
    interrupted(
        &["convert", arg(&fifo), arg(&out), "--from", "xspace"],
        &fifo,
        prefix,
        ("TERM", 15),
        &dir,
    );
    // An existing OUT is left as it was.
    std::fs::write(&out, "before").unwrap();
    interrupted(
        &["convert", arg(&fifo), arg(&out), "--from", "xspace"],
        &fifo,
        prefix,
        ("HUP", 1),
        &dir,
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"before");

    // --to xdl: the dataset's second data file is a FIFO, so the first is written (into the
    // temporary directory) before the conversion blocks.
    let dataset = dir.join("dataset");
    std::fs::create_dir(&dataset).unwrap();
    for name in ["train.trace.0.1", "train.trace.0.1.meta"] {
        std::fs::copy(repo(XDL).join(name), dataset.join(name)).unwrap();
    }
    let second = dataset.join("train.trace.0.2");
    mkfifo(&second);
    let header = std::fs::read(repo(XDL).join("train.trace.0.2")).unwrap();
    let rewritten = dir.join("rewritten");
    interrupted(
        &["convert", arg(&dataset), arg(&rewritten), "--to", "xdl"],
        &second,
        header.get(..4).unwrap(),
        ("TERM", 15),
        &dir,
    );
    // Into an existing directory: its hidden temporary directory goes too.
    std::fs::create_dir(&rewritten).unwrap();
    std::fs::write(rewritten.join("keep"), "kept").unwrap();
    interrupted(
        &["convert", arg(&dataset), arg(&rewritten), "--to", "xdl"],
        &second,
        header.get(..4).unwrap(),
        ("INT", 2),
        &rewritten,
    );
    assert_eq!(names(&rewritten), ["keep"]);

    // --to parquet: the host's hidden staging directory in the dataset goes too.
    let parquet = dir.join("parquet");
    std::fs::create_dir(&parquet).unwrap();
    // Into a new dataset (the second): the directory the command made goes too.
    let new = parquet.join("new");
    for (out, signal) in [(&parquet, ("TERM", 15)), (&new, ("INT", 2))] {
        interrupted(
            &[
                "convert",
                arg(&fifo),
                arg(out),
                "--to",
                "parquet",
                "--from",
                "xspace",
            ],
            &fifo,
            prefix,
            signal,
            &parquet,
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn xdl_output_appears_whole_or_not_at_all() {
    let dir = scratch("xdl");
    // A dataset whose last file breaks off: the first two files read well.
    let broken = dir.join("broken");
    std::fs::create_dir(&broken).unwrap();
    for entry in std::fs::read_dir(repo(XDL)).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), broken.join(entry.file_name())).unwrap();
    }
    let last = broken.join("train.trace.0.3");
    let bytes = std::fs::read(&last).unwrap();
    std::fs::write(&last, bytes.get(..100).unwrap()).unwrap();

    let out = dir.join("out");
    let run = profkit(
        &[
            "convert",
            arg(&broken),
            arg(&out),
            "--to",
            "xdl",
            "--max-file-mb",
            "0.0003",
        ],
        None,
    );
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    assert!(
        text(&run.stderr).contains("nothing was written"),
        "{}",
        text(&run.stderr)
    );
    assert_eq!(names(&dir), ["broken"], "a failed --to xdl leaves nothing");

    // Into an existing directory, with --overwrite: the old dataset stays as it was.
    let run = profkit(
        &[
            "convert",
            arg(&repo(XDL)),
            arg(&out),
            "--to",
            "xdl",
            "--max-file-mb",
            "0.0003",
        ],
        None,
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let before: Vec<(String, Vec<u8>)> = names(&out)
        .into_iter()
        .map(|n| (n.clone(), std::fs::read(out.join(&n)).unwrap()))
        .collect();
    assert_eq!(before.len(), 6);
    let run = profkit(
        &[
            "convert",
            arg(&broken),
            arg(&out),
            "--to",
            "xdl",
            "--overwrite",
        ],
        None,
    );
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    let after: Vec<(String, Vec<u8>)> = names(&out)
        .into_iter()
        .map(|n| (n.clone(), std::fs::read(out.join(&n)).unwrap()))
        .collect();
    assert_eq!(after, before);
    // A good rewrite with --overwrite replaces the dataset's files (one file now) and keeps
    // what else is there.
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let run = profkit(
        &[
            "convert",
            arg(&repo(XDL)),
            arg(&out),
            "--to",
            "xdl",
            "--overwrite",
        ],
        None,
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_eq!(
        names(&out),
        ["notes.txt", "train.trace.0.1", "train.trace.0.1.meta"]
    );
    assert_eq!(names(&dir), ["broken", "out"]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn xdl_output_must_be_a_directory() {
    let dir = scratch("xdl-dash");
    let run = Command::new(env!("CARGO_BIN_EXE_profkit"))
        .args(["convert", arg(&repo(XDL)), "-", "--to", "xdl"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2), "{}", text(&run.stderr));
    assert!(
        text(&run.stderr).contains("standard output cannot hold"),
        "{}",
        text(&run.stderr)
    );
    assert!(names(&dir).is_empty(), "{:?}", names(&dir));
    let file = dir.join("file");
    std::fs::write(&file, "x").unwrap();
    for out in [arg(&file), "/dev/full"] {
        let run = profkit(&["convert", arg(&repo(XDL)), out, "--to", "xdl"], None);
        assert_eq!(run.status.code(), Some(2), "{}", text(&run.stderr));
        assert!(
            text(&run.stderr).contains(&format!("{out}: is not a directory")),
            "{}",
            text(&run.stderr)
        );
    }
    assert_eq!(names(&dir), ["file"]);
    let _ = std::fs::remove_dir_all(dir);
}

#[cfg(unix)]
#[test]
fn a_read_error_is_not_called_a_write_error() {
    use std::io::Write;
    let dir = scratch("read-error");
    let fifo = dir.join("input.xplane.pb");
    mkfifo(&fifo);
    // Held open for reading and writing, so neither this open nor profkit's waits; merge then
    // fails when it seeks its input, which a FIFO cannot do.
    let mut held = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    let sample = std::fs::read(repo(SAMPLE)).unwrap();
    held.write_all(sample.get(..4).unwrap()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_profkit"))
        .args(["merge", arg(&fifo), arg(&dir.join("out.pb"))])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Not a timing assertion: a bound so that a merge that waits for more input fails instead
    // of hanging.
    let mut waited = 0;
    while child.try_wait().unwrap().is_none() {
        if waited == 6000 {
            let _ = child.kill();
            panic!("merge of a FIFO waited for more input instead of failing");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        waited += 1;
    }
    let run = child.wait_with_output().unwrap();
    drop(held);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    let message = text(&run.stderr);
    assert!(
        message.contains("cannot read the input") && !message.contains("cannot write"),
        "{message}"
    );
    assert_eq!(names(&dir), ["input.xplane.pb"]);
    let _ = std::fs::remove_dir_all(dir);
}
