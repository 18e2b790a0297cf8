"""Regenerates the OpStats fixtures: xprof 2.24.2's own OpStats for each case and the three tools
it renders from it (overview_page, input_pipeline_analyzer, pod_viewer).

Run with xprof's interpreter from the repository root:

    .oracle/xprof/bin/python conformance/xprof-tools/op_stats/make.py [--check]

For each case the input is copied as `host.xplane.pb` into a fresh folder; a child process asks
xprof for each tool with `use_saved_result: True`, so the first call writes
`ALL_HOSTS.op_stats_v2.pb` (its serialized OpStats) and every tool is rendered from it. The
OpStats is kept as `op_stats.pb.gz`, each tool's output as `<tool>.json.gz`. A second run, in
another fresh folder, must give the same bytes for every file (pod_viewer: the same once parsed,
its maps printing in hash order; the OpStats the same once parsed, each step's packed breakdown
decoded and the ops of each metrics database in one order, see `canonical`); `--check` only runs that comparison against the stored files.
"""

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

TOOLS = ["overview_page", "input_pipeline_analyzer", "pod_viewer"]
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

# (case, input path under conformance/): the real CPU profiles, the synthetic step cases, the real
# device profiles, a few CPU cases without steps, and the synthetic TPU cases with a step.
CASES = [
    ("real-jax-nested", "xplane/real-jax-nested/input.xplane.pb"),
    ("real-jax-plain", "xplane/real-jax-plain/input.xplane.pb"),
    ("real-jax-steps", "xplane/real-jax-steps/input.xplane.pb"),
    ("real-tf-data", "xplane/real-tf-data/input.xplane.pb"),
    ("real-tf-eager", "xplane/real-tf-eager/input.xplane.pb"),
    ("real-tf-fit", "xplane/real-tf-fit/input.xplane.pb"),
    ("real-tf-fnloop", "xplane/real-tf-fnloop/input.xplane.pb"),
    ("real-tf-nostep", "xplane/real-tf-nostep/input.xplane.pb"),
    ("real-tf-spe", "xplane/real-tf-spe/input.xplane.pb"),
    ("gpu-steps", "xplane/gpu-steps/input.xplane.pb"),
    ("gpu-steps-derived", "xplane/gpu-steps-derived/input.xplane.pb"),
    ("gpu-steps-ties", "xplane/gpu-steps-ties/input.xplane.pb"),
    ("device-gpu", "xplane-device/gpu/input.xplane.pb.gz"),
    ("device-rocm1", "xplane-device/rocm1/input.xplane.pb.gz"),
    ("device-tpu", "xplane-device/tpu/input.xplane.pb.gz"),
    ("host-grouping", "xplane/host-grouping/input.xplane.pb"),
    ("sample-myhost", "xplane/sample-myhost/input.xplane.pb"),
    ("nested-events", "xplane/nested-events/input.xplane.pb"),
    ("tpu-op-metrics", "xplane/tpu-op-metrics/input.xplane.pb"),
    ("tpu-ungrouped", "xplane/tpu-ungrouped/input.xplane.pb"),
    ("tpu-host-input", "xplane/tpu-host-input/input.xplane.pb"),
]


def child(path):
    from xprof.convert import raw_to_tool_data as r

    out = os.path.dirname(path)
    for tool in TOOLS:
        data, _ = r.xspace_to_tool_data([path], tool, {"use_saved_result": True})
        if data is None:
            continue
        if isinstance(data, str):
            data = data.encode("utf-8")
        with open(os.path.join(out, tool + ".json"), "wb") as f:
            f.write(data)
    return 0


def run(case, rel, tmp):
    d = tempfile.mkdtemp(prefix=case + ".", dir=tmp)
    host = os.path.join(d, "host.xplane.pb")
    src = os.path.join(REPO, "conformance", rel)
    if src.endswith(".gz"):
        with gzip.open(src) as s, open(host, "wb") as t:
            shutil.copyfileobj(s, t)
    else:
        shutil.copyfile(src, host)
    subprocess.run(
        [sys.executable, __file__, "--child", host], check=True, timeout=600, stderr=subprocess.DEVNULL
    )
    files = {"op_stats.pb": open(os.path.join(d, "ALL_HOSTS.op_stats_v2.pb"), "rb").read()}
    for tool in TOOLS:
        p = os.path.join(d, tool + ".json")
        if os.path.exists(p):
            files[tool + ".json"] = open(p, "rb").read()
    return files


def same(name, a, b):
    """Whether two outputs are the same: the same bytes, or for pod_viewer (maps in hash order) the
    same JSON, and for the OpStats (its maps serialized in hash order) the same message."""
    if a == b:
        return True
    if name == "pod_viewer.json":
        return json.loads(a) == json.loads(b)
    if name == "op_stats.pb":
        return canonical(a) == canonical(b)
    return False


def canonical(data):
    """An OpStats with each step's packed breakdown re-encoded deterministically (xprof writes
    the breakdown's maps in hash order, inside the `Any`, so two runs differ in those bytes) and
    the ops of its metrics databases in one order (xprof lists a TPU's device ops in the order
    its threads finish)."""
    from xprof.protobuf import op_stats_pb2, steps_db_pb2

    stats = op_stats_pb2.OpStats()
    stats.ParseFromString(data)
    for step in stats.step_db.step_sequence:
        for info in step.step_info_per_core.values():
            breakdown = steps_db_pb2.GenericStepBreakdown()
            if info.step_breakdown.Unpack(breakdown):
                info.step_breakdown.value = breakdown.SerializeToString(deterministic=True)
    dbs = [stats.host_op_metrics_db, stats.device_op_metrics_db, stats.hlo_metrics_db_complete_steps_only]
    # Each step's HLO op metrics too (a TPU step's, listed as the threads finish).
    dbs.extend(step.hlo_metrics_db for step in stats.step_db.step_sequence)
    for db in dbs:
        ops = sorted(db.metrics_db, key=lambda m: m.SerializeToString(deterministic=True))
        del db.metrics_db[:]
        db.metrics_db.extend(ops)
    return stats


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--child")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if args.child:
        return child(args.child)
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for case, rel in CASES:
            first = run(case, rel, tmp)
            second = run(case, rel, tmp)
            out = os.path.join(HERE, case)
            for name, data in first.items():
                if not same(name, data, second.get(name, b"")):
                    print(f"{case}: xprof is not deterministic in {name}")
                    failed = True
                stored = os.path.join(out, name + ".gz")
                if args.check:
                    old = gzip.open(stored).read() if os.path.exists(stored) else b""
                    if not same(name, data, old):
                        print(f"{case}: {name} differs from the stored fixture")
                        failed = True
                else:
                    os.makedirs(out, exist_ok=True)
                    with open(stored, "wb") as f:
                        # mtime 0: the same bytes each time.
                        with gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as g:
                            g.write(data)
            print(f"{case}: {', '.join(sorted(first))}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
