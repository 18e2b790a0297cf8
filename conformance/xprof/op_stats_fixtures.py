"""Saves xprof 2.24.2's own OpStats of a few cases as `xprof.op_stats.pb` in their folders, for
profkit-xprof's `op_stats_steps` test (the steps database, tf-function stats, core details and
precision stats compared exactly, offline).

Run with xprof's venv: `.oracle/xprof/bin/python conformance/xprof/op_stats_fixtures.py --repo .`.
Each input is copied as `host.xplane.pb` into a folder of its own, xprof renders overview_page in a
child process with `use_saved_result: True`, which writes its OpStats cache
(`ALL_HOSTS.op_stats_v2.pb`); that is saved. For the cases in STRIPPED (large device profiles)
only the fields the test compares are kept.
"""

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile

CASES = [
    "xplane/real-tf-fnloop",
    "xplane/real-tf-fit",
    "xplane/real-jax-steps",
    "xplane/gpu-steps",
    "xplane/host-grouping",
    "xplane/tpu-op-metrics",
    "xplane/tpu-fusions",
    "xplane-device/gpu",
]
STRIPPED = {"xplane-device/gpu"}
KEPT = ["step_db", "tf_function_db", "hlo_metrics_db_complete_steps_only"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", default=".")
    args = parser.parse_args()
    from xprof.protobuf import op_stats_pb2

    for case in CASES:
        folder = os.path.join(args.repo, "conformance", case)
        with tempfile.TemporaryDirectory() as tmp:
            host = os.path.join(tmp, "host.xplane.pb")
            src = os.path.join(folder, "input.xplane.pb")
            if os.path.exists(src):
                shutil.copyfile(src, host)
            else:
                with gzip.open(src + ".gz") as a, open(host, "wb") as b:
                    shutil.copyfileobj(a, b)
            code = (
                "from xprof.convert import raw_to_tool_data as r\n"
                f"r.xspace_to_tool_data([{host!r}], 'overview_page', {{'use_saved_result': True}})\n"
            )
            subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
            data = open(os.path.join(tmp, "ALL_HOSTS.op_stats_v2.pb"), "rb").read()
        if case in STRIPPED:
            full = op_stats_pb2.OpStats.FromString(data)
            kept = op_stats_pb2.OpStats()
            for field in KEPT:
                if full.HasField(field):
                    getattr(kept, field).CopyFrom(getattr(full, field))
            for core, details in full.core_id_to_details.items():
                kept.core_id_to_details[core].CopyFrom(details)
            kept.device_op_metrics_db.precision_stats.CopyFrom(full.device_op_metrics_db.precision_stats)
            data = kept.SerializeToString(deterministic=True)
        with open(os.path.join(folder, "xprof.op_stats.pb"), "wb") as f:
            f.write(data)
        print(f"{case}: {len(data)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
