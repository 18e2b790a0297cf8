"""Checks that real TensorFlow runs profkit's example profiler plugins and writes their planes.

Run through check.sh, which provides the venv and builds the plugins and profkit. TensorFlow runs in
a child process (a plugin that TensorFlow refuses aborts the whole process): it imports TensorFlow
with TF_PLUGGABLE_DEVICE_LIBRARY_PATH pointing at the plugin, profiles a few matmuls with
tf.profiler.experimental.start/stop, and exits. Then profkit reads the `.xplane.pb` TensorFlow wrote
under <logdir>/plugins/profile/<run>/ and the checks below look at what it says.

The same is done with profkit-tracing's plugin bridge (crates/profkit-tracing-plugin-example),
whose stand-in Rust library records `tracing` spans on a thread `rust-loader`: its spans must be in
the XSpace TensorFlow writes, on the host plane beside TensorFlow's own threads.
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

PLANE = "/device:CUSTOM:0"
CHILD_TIMEOUT_S = 300
LATER_CHECKS = [
    "profkit-reads",
    "plugin-plane",
    "plugin-events",
    "tensorflow-threads",
    "rebased",
    "plugin-check",
]

TENSORFLOW_SESSION = r"""
import sys
import tensorflow as tf

logdir = sys.argv[1]
a = tf.random.normal([768, 768])
b = tf.random.normal([768, 768])
tf.profiler.experimental.start(logdir)
for _ in range(40):
    a = tf.linalg.matmul(a, b)
    a = a / tf.norm(a)
_ = a.numpy()
tf.profiler.experimental.stop()
print("profiled", flush=True)
"""


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, ok, detail):
        print(f"{'pass' if ok else 'FAIL'}  {name}: {detail}", flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        return ok


def run_tensorflow(plugin, logdir):
    env = dict(os.environ)
    env["TF_PLUGGABLE_DEVICE_LIBRARY_PATH"] = plugin
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    return subprocess.run(
        [sys.executable, "-c", TENSORFLOW_SESSION, logdir],
        env=env,
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT_S,
    )


def tracing_checks(checks, profkit, plugin):
    """profkit-tracing's plugin bridge: the Rust library's spans in TensorFlow's own profile."""
    with tempfile.TemporaryDirectory(prefix="profkit-tf-tracing-") as logdir:
        proc = run_tensorflow(plugin, logdir)
        files = sorted(glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb")))
        ran = checks.check(
            "tracing-tensorflow",
            proc.returncode == 0 and "profiled" in proc.stdout and len(files) == 1,
            "TensorFlow loaded the tracing plugin and wrote one .xplane.pb"
            if proc.returncode == 0
            else f"the TensorFlow process ended with {proc.returncode}: {last_words(proc.stderr)}",
        )
        if not ran:
            for name in ["tracing-spans", "tracing-beside-tensorflow"]:
                checks.check(name, False, "not run: no .xplane.pb to read")
            return
        dump, error = profkit_json(profkit, "dump", files[0])
        loader = []
        host_lines = []
        hosts = [p for p in (dump or {}).get("planes", []) if p.get("name") == "/host:CPU"]
        for p in hosts:
            metadata = {str(k): v.get("name", "") for k, v in p.get("event_metadata", {}).items()}
            for line in p.get("lines", []):
                host_lines.append(line.get("name", ""))
                if line.get("name") == "rust-loader":
                    loader += [
                        metadata.get(str(e.get("metadata_id")), e.get("name", ""))
                        for e in line.get("events", [])
                    ]
        spans = sorted(set(loader))
        checks.check(
            "tracing-spans",
            "load_batch" in spans and "decode" in spans,
            f"{len(loader)} events of the Rust library's thread rust-loader ({', '.join(spans)})"
            if loader
            else f"no rust-loader line on /host:CPU ({error or 'lines: ' + ', '.join(host_lines)})",
        )
        others = [n for n in host_lines if n and n != "rust-loader"]
        checks.check(
            "tracing-beside-tensorflow",
            bool(loader) and bool(others) and len(hosts) == 1,
            f"on TensorFlow's one host plane, with {len(others)} of its own threads"
            if others and len(hosts) == 1
            else f"{len(hosts)} host planes, TensorFlow's threads {others}",
        )


def profkit_json(profkit, *args):
    proc = subprocess.run([profkit, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        return None, proc.stderr.strip() or proc.stdout.strip()
    return json.loads(proc.stdout), None


def last_words(text, lines=5):
    return " | ".join(line for line in text.strip().splitlines()[-lines:])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--plugin", required=True)
    parser.add_argument("--profkit", required=True)
    parser.add_argument("--tracing-plugin")
    args = parser.parse_args()
    checks = Checks()
    if args.tracing_plugin:
        tracing_checks(checks, args.profkit, args.tracing_plugin)

    with tempfile.TemporaryDirectory(prefix="profkit-tf-") as logdir:
        proc = run_tensorflow(args.plugin, logdir)
        ran = checks.check(
            "tensorflow",
            proc.returncode == 0 and "profiled" in proc.stdout,
            "TensorFlow loaded the plugin and profiled a session"
            if proc.returncode == 0
            else f"the TensorFlow process ended with {proc.returncode}: {last_words(proc.stderr)}",
        )
        files = sorted(glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb")))
        found = checks.check(
            "xplane-written",
            ran and len(files) == 1,
            f"TensorFlow wrote {os.path.relpath(files[0], logdir)}"
            if len(files) == 1
            else f"expected one .xplane.pb under plugins/profile/, found {len(files)}",
        )
        if not found:
            for name in LATER_CHECKS:
                checks.check(name, False, "not run: no .xplane.pb to read")
            print(f"{checks.passed} passed, {checks.failed} failed")
            return 1
        path = files[0]

        summary, error = profkit_json(args.profkit, "inspect", "--json", path)
        checks.check(
            "profkit-reads",
            summary is not None,
            "profkit inspect read the file" if summary else f"profkit inspect failed: {error}",
        )
        planes = {p["name"]: p for p in (summary or {}).get("summary", {}).get("planes", [])}
        plane = planes.get(PLANE)
        checks.check(
            "plugin-plane",
            plane is not None and "/host:CPU" in planes,
            f"{PLANE} sits beside TensorFlow's own planes ({', '.join(sorted(planes))})"
            if plane
            else f"no {PLANE} among {sorted(planes)}",
        )
        checks.check(
            "plugin-events",
            bool(plane) and plane["lines"] > 0 and plane["events"] > 0,
            f"{plane['lines']} lines, {plane['events']} events "
            f"({', '.join(e['name'] for e in plane['top_events'])})"
            if plane
            else "no plane",
        )

        dump, error = profkit_json(args.profkit, "dump", path)
        lines = []
        for p in (dump or {}).get("planes", []):
            if p.get("name") == PLANE:
                lines = p.get("lines", [])
        names = [line.get("name", "") for line in lines if line.get("events")]
        tf_threads = [n for n in names if n and n != "profkit-sampler" and not n.startswith("CPU ")]
        checks.check(
            "tensorflow-threads",
            bool(tf_threads),
            f"{len(tf_threads)} threads of the TensorFlow process seen running "
            f"({', '.join(sorted(set(tf_threads)))})"
            if tf_threads
            else f"no thread of the TensorFlow process among the lines {names}",
        )
        stamps = [int(line.get("timestamp_ns", 0)) for line in lines]
        rebased = bool(stamps) and all(0 <= t < 3_600 * 10**9 for t in stamps)
        checks.check(
            "rebased",
            rebased,
            "TensorFlow rebased the plugin's absolute line timestamps to the session start"
            if rebased
            else f"line timestamps {stamps[:4]} are not session-relative",
        )

        proc = subprocess.run(
            [args.profkit, "plugin", "check", args.plugin, "--sessions", "5"],
            capture_output=True,
            text=True,
        )
        checks.check(
            "plugin-check",
            proc.returncode == 0,
            proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr.strip(),
        )

    print(f"{checks.passed} passed, {checks.failed} failed")
    return 0 if checks.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
