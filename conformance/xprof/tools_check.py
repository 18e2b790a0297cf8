"""Checks `profkit xprof TOOL` against xprof 2.24.2's own tools, live, on every XSpace case.

Run through tools_check.sh (or check.sh), which provides the venv. The cases are every
conformance/xplane/<case>/input.xplane.pb that decodes and every
conformance/xplane-device/<case>/input.xplane.pb.gz. Each is copied as `<host>.xplane.pb` into a
folder of its own (xprof names the host after the file), xprof computes each tool in a child
process (`xspace_to_tool_data([path], TOOL, {"use_saved_result": False})`), and
`profkit xprof TOOL <path>` must write the same bytes.

Where profkit says on stderr that it does not reproduce part of a tool ("not reproduced: ..."),
the check compares what it does reproduce (for framework_op_stats: every host row, rank aside,
and every device cell but those of the column the note names; for hlo_stats and roofline_model:
the same rows, roofline_model's Total records only when the steps database is named, every cell
but those of the columns the notes name, see MAY_DIFFER) and reports the case as partial, with
profkit's note; a partial case whose reproduced part differs fails. For overview_page and
input_pipeline_analyzer (arrays of DataTables) a partial case names the tables that differ;
pod_viewer is compared once parsed, as xprof prints its maps in hash order.
op_profile (xprof's `group_by` program, category and
provenance: `op_profile:<grouping>`) is protobuf JSON: its notes end with the fields they touch
(`(op_profile fields: ...)`), and every other field of the parsed trees must be xprof's. The
renderer alone is checked too: op_profile of xprof's own OpStats (its cache, written with
`use_saved_result: True`), rendered by the example `op_profile_of_op_stats`, must be xprof's bytes.

`profkit convert IN OUT --to op-stats` must write an OpStats xprof takes as its cache: given it
(as `ALL_HOSTS.op_stats_v2.pb`, `use_saved_result: True`) xprof must render every tool it renders
from OpStats (framework_op_stats, overview_page, input_pipeline_analyzer, pod_viewer: op metrics,
steps database, tf-function stats) as from its own OpStats, byte for byte (pod_viewer, whose maps
xprof prints in hash order, once parsed). A case where profkit names a part of OpStats it does not
reproduce ("not reproduced: ...") and a tool differs is partial; a difference without one fails.

memory_viewer needs a module: for each HLO module xprof writes beside the input
(`xspace_to_tool_names`, `<module>(<program id>).hlo_proto.pb`) and each memory space of
MEMORY_SPACES, xprof's output (`{"module_name": ..., "memory_space": ...}`) must equal, once parsed
(xprof prints its map of buffer spans in hash order), `profkit xprof memory_viewer --module M
--memory-space N`.

With BLESS=1, xprof's output is saved in the case folder as `xprof.<tool>.json` (gzipped for the
device cases; the offline conformance runner compares profkit with it); memory_viewer's as
`xprof.memory_viewer/<module>.json` (memory space 0) and `<module>.space<N>.json` (another space,
saved only where xprof shows more than the module's names).
"""

import argparse
import concurrent.futures
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

TOOLS = [
    "framework_op_stats",
    "overview_page",
    "input_pipeline_analyzer",
    "pod_viewer",
    "kernel_stats",
    "hlo_stats",
    "roofline_model",
    "op_profile",
    "op_profile:category",
    "op_profile:provenance",
]
# The DataTable tools rendered from OpStats whose differences, where profkit names what it does
# not reproduce, are reported table by table.
PAGE_TOOLS = ["overview_page", "input_pipeline_analyzer"]
# The tools xprof renders from an OpStats: with profkit's OpStats as its cache they must be what
# xprof renders from its own (see `interop`).
OP_STATS_TOOLS = ["framework_op_stats", "overview_page", "input_pipeline_analyzer", "pod_viewer"]
CHILD_TIMEOUT_S = 300
# The memory spaces memory_viewer is checked in: 0 (a device's main memory, xprof's default) and
# the other XLA memory colors the TPU case's programs use.
MEMORY_SPACES = [0, 1, 2, 5, 6]


def memory_viewer_name(module, space):
    return f"{module}.json" if space == 0 else f"{module}.space{space}.json"


def child(path, out_dir, op_stats=None):
    """In the child: xprof's data for each tool, written as <tool>.json in out_dir; with
    op_stats (profkit's `--to op-stats` file), the OpStats tools rendered from it as xprof's cache
    (`ALL_HOSTS.op_stats_v2.pb` beside the input), written as <tool>.from-profkit.json, and
    xprof's own, computed afresh, as <tool>.fresh.json."""
    from xprof.convert import raw_to_tool_data as r

    def write(name, data):
        if data is None:
            return
        if isinstance(data, bytes):
            data = data.decode("utf-8")
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
            f.write(data)

    for tool in TOOLS:
        name, _, group_by = tool.partition(":")
        options = {"use_saved_result": False}
        if group_by:
            options["group_by"] = group_by
        data, _content_type = r.xspace_to_tool_data([path], name, options)
        write(tool + ".json", data)
    # memory_viewer, per module (xprof writes each module's HLO proto beside the input) and space.
    r.xspace_to_tool_names([path])
    os.makedirs(os.path.join(out_dir, "memory_viewer"))
    suffix = ".hlo_proto.pb"
    for file in sorted(os.listdir(os.path.dirname(path))):
        if not file.endswith(suffix) or file == "NO_MODULE" + suffix:
            continue
        module = file[: -len(suffix)]
        for space in MEMORY_SPACES:
            options = {"module_name": module, "memory_space": str(space)}
            data, _ = r.xspace_to_tool_data([path], "memory_viewer", options)
            write(os.path.join("memory_viewer", memory_viewer_name(module, space)), data)
    # xprof's own OpStats (its cache), to render op_profile from apart from how profkit builds it.
    own = os.path.join(out_dir, "own")
    os.makedirs(own)
    shutil.copyfile(path, os.path.join(own, os.path.basename(path)))
    r.xspace_to_tool_data([os.path.join(own, os.path.basename(path))], "op_profile", {"use_saved_result": True})
    # Left in its own folder: xprof clears files named as its caches where it computes afresh.
    if op_stats:
        cache = os.path.join(os.path.dirname(path), "ALL_HOSTS.op_stats_v2.pb")
        for tool in OP_STATS_TOOLS:
            data, _ = r.xspace_to_tool_data([path], tool, {"use_saved_result": False})
            write(tool + ".fresh.json", data)
            shutil.copyfile(op_stats, cache)
            data, _ = r.xspace_to_tool_data([path], tool, {"use_saved_result": True})
            write(tool + ".from-profkit.json", data)
            os.remove(cache)
    return 0


def interop(d, missing):
    """(status, message) of xprof's tools rendered from profkit's OpStats against its own."""
    same, different = [], []
    for tool in OP_STATS_TOOLS:
        a, b = os.path.join(d, tool + ".fresh.json"), os.path.join(d, tool + ".from-profkit.json")
        if rendered_same(tool, a, b):
            same.append(tool)
        else:
            different.append(tool)
    if different and not missing:
        return "FAIL", f"xprof renders {', '.join(different)} differently from profkit's OpStats"
    if different:
        return "partial", f"same from profkit's OpStats: {', '.join(same) or 'none'}; different: {', '.join(different)} ({missing})"
    if missing:
        return "ok", f"xprof renders {', '.join(same)} from profkit's OpStats as from its own (profkit's caveat: {missing})"
    return "ok", f"xprof renders {', '.join(same)} from profkit's OpStats as from its own"


def rendered_same(tool, a, b):
    """Whether xprof rendered the same from both OpStats: byte for byte, but for pod_viewer, whose
    maps xprof prints in hash order (two runs on one OpStats differ in key order): equal once
    parsed."""
    if not (os.path.exists(a) and os.path.exists(b)):
        return False
    x, y = open(a, "rb").read(), open(b, "rb").read()
    if tool == "pod_viewer":
        return json.loads(x) == json.loads(y)
    return x == y


def host_rows(text):
    """framework_op_stats' host rows, rank aside (the properties, which the device rows sway,
    aside too)."""
    tables = json.loads(text)
    return [[r["c"][1:] for r in t["rows"] if r["c"][1]["v"] == "Host"] for t in tables]


def differing_columns(ours, theirs):
    """The columns whose cells differ between two framework_op_stats outputs with the same rows
    (same ops, rank aside), or None when the rows are not the same ops."""
    columns = set()
    for a, b in zip(json.loads(ours), json.loads(theirs)):
        ids = [c["id"] for c in a["cols"]]
        if ids != [c["id"] for c in b["cols"]] or len(a["rows"]) != len(b["rows"]):
            return None
        for ra, rb in zip(a["rows"], b["rows"]):
            if ra["c"][3] != rb["c"][3]:
                return None
            columns.update(ids[i] for i, (x, y) in enumerate(zip(ra["c"], rb["c"])) if x != y)
    return columns


def differing_tables(ours, theirs):
    """The indices of the tables that differ between two outputs that are arrays of DataTables."""
    a, b = json.loads(ours), json.loads(theirs)
    if len(a) != len(b):
        return None
    return [i for i, (x, y) in enumerate(zip(a, b)) if x != y]


def note_fields(note):
    """The op_profile fields profkit's notes say it does not reproduce (`(op_profile fields: a, b)`
    at the end of each note)."""
    fields = set()
    for part in note.split("(op_profile fields: ")[1:]:
        fields.update(f.strip() for f in part.split(")")[0].split(","))
    return fields


def op_profile_difference(a, b, fields, path="$"):
    """The first path where two op profiles differ outside the fields named (None when they agree
    there)."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = set(a) | set(b)
        for k in sorted(keys - fields):
            if k not in a or k not in b:
                return f"{path}.{k} present on one side only"
            d = op_profile_difference(a[k], b[k], fields, f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items, xprof {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = op_profile_difference(x, y, fields, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {a!r}, xprof {b!r}"


def compare(tool, ours, theirs, note):
    """(status, message): status is "ok", "partial" or "FAIL"."""
    if tool == "pod_viewer" and ours != theirs and json.loads(ours) == json.loads(theirs):
        # xprof prints its maps in hash order: the same once parsed is the same.
        message = f"{len(ours)} bytes, identical once parsed (xprof's maps in hash order)"
        return "ok", message + (f" (profkit's caveat: {note})" if note else "")
    if ours == theirs and not note:
        return "ok", f"{len(ours)} bytes, identical"
    if ours == theirs and "the tool lacks" not in note:
        # A caveat that changed nothing here (tensor core use shown as 0, and 0 it is).
        return "ok", f"{len(ours)} bytes, identical (profkit's caveat: {note})"
    if ours == theirs:
        return "FAIL", f"identical, yet profkit says: {note}"
    if note and tool == "framework_op_stats":
        if host_rows(ours) != host_rows(theirs):
            return "FAIL", f"host rows differ; {note}"
        # The device rows too, cell by cell: every cell that differs must be in a column the note
        # names (TensorCore utilisation), and the rows must be the same ops.
        differing = differing_columns(ours, theirs)
        if differing is None:
            return "partial", f"host rows identical, device rows not the same ops; {note}"
        if differing and not all("tensorcore" in c and "TensorCore" in note for c in differing):
            return "FAIL", f"device cells differ in {sorted(differing)}; {note}"
        shown = f"device rows identical but {sorted(differing)}" if differing else "device rows identical"
        return "partial", f"host rows identical, {shown}; {note}"
    if note and tool in PAGE_TOOLS:
        tables = differing_tables(ours, theirs)
        if tables is None:
            return "partial", f"not the same tables; {note}"
        return "partial", f"tables {tables} differ, the others identical; {note}"
    if note and tool == "pod_viewer":
        return "partial", f"differs; {note}"
    if note and tool in ("hlo_stats", "roofline_model"):
        return compare_named(tool, ours, theirs, note)
    ours_j, theirs_j = json.loads(ours), json.loads(theirs)
    if tool.startswith("op_profile") and note:
        # The rest: every field but those the notes name must be xprof's.
        fields = note_fields(note)
        if "all" in fields:
            return "partial", f"not compared; {note}"
        d = op_profile_difference(ours_j, theirs_j, fields)
        if d:
            return "FAIL", f"differs outside the fields named: {d}; {note}"
        return "partial", f"identical but {sorted(fields)}; {note}"
    if ours_j == theirs_j:
        return "FAIL", "same JSON values, different text (number formatting?)"
    return "FAIL", f"differs ({len(ours)} bytes profkit, {len(theirs)} xprof)"


# The cells each note of hlo_stats and roofline_model may leave different (by column id); any
# other cell must be the same. A row is known by the columns of ROW_KEY, which must match.
MAY_DIFFER = {
    # GPU HLO ops whose expression profkit does not print: their name, text, and the flags the
    # text sets.
    "XLA's printer": {
        "hlo_op_name", "hlo_op_expression", "hlo_rematerialization", "outside_compilation",
    },
    # Opcodes the cost model misses: their FLOPs and bytes, hence every rate.
    "XLA's cost model": {
        "model_flop_rate", "normalized_flop_rate", "measured_flop_rate", "measured_memory_bw",
        "hbm_bw", "operational_intensity", "hbm_operational_intensity", "vmem_write_bw",
        "vmem_write_operational_intensity", "bottleneck_operational_intensity", "bound_by",
        "optimal_flop_rate", "roofline_efficiency", "compute_efficiency", "max_mem_bw_utilization",
    },
    # The GPU's peaks: every bound and efficiency, and the table's peak properties.
    "peaks": {
        "bound_by", "bottleneck_operational_intensity", "optimal_flop_rate", "roofline_efficiency",
        "compute_efficiency", "max_mem_bw_utilization",
    },
}
ROW_KEY = {
    "hlo_stats": ["rank", "program_id", "category", "tf_op_name", "occurrences", "total_time"],
    "roofline_model": ["step", "rank", "category", "operation", "occurrences", "total_time"],
}


def compare_named(tool, ours, theirs, note):
    """(status, message) of an hlo_stats or roofline_model output profkit says it reproduces in
    part: the same rows (roofline_model: its Total records; the steps database's records and
    diagnostics are the part named), each cell the same but in the columns the notes name."""
    allowed = set()
    for key, columns in MAY_DIFFER.items():
        if key in note:
            allowed |= columns
    a, b = json.loads(ours), json.loads(theirs)
    if tool == "hlo_stats":
        a, b = [a], [b]
    else:
        a, b = a[:1], b[:1]
        for t in a + b:
            t["rows"] = [r for r in t["rows"] if r["c"][0]["v"] == "Total"]
    differing = set()
    for x, y in zip(a, b):
        ids = [c["id"] for c in y["cols"]]
        if [c["id"] for c in x["cols"]] != ids:
            return "FAIL", f"columns differ; {note}"
        if len(x["rows"]) != len(y["rows"]):
            return "FAIL", f"{len(x['rows'])} rows, xprof {len(y['rows'])}; {note}"
        key = [ids.index(k) for k in ROW_KEY[tool]]
        for ra, rb in zip(x["rows"], y["rows"]):
            if [ra["c"][i] for i in key] != [rb["c"][i] for i in key]:
                return "FAIL", f"rows are not the same ops ({[rb['c'][i]['v'] for i in key]}); {note}"
            differing.update(ids[i] for i, (p, q) in enumerate(zip(ra["c"], rb["c"])) if p != q)
        for k in set(x.get("p", {})) | set(y.get("p", {})):
            if x.get("p", {}).get(k) != y.get("p", {}).get(k):
                if not ("peaks" in note and k.startswith(("peak_", "hbm_", "vmem_", "cmem_"))) and not (
                    "device type" in note and k == "device_type"
                ):
                    return "FAIL", f"table property {k} differs; {note}"
                differing.add("p." + k)
    unexplained = sorted(c for c in differing if c not in allowed and not c.startswith("p."))
    if unexplained:
        return "FAIL", f"cells differ in {unexplained}; {note}"
    shown = f"the rest identical but {sorted(differing)}" if differing else "the rest identical"
    scope = "Total records" if tool == "roofline_model" else "rows"
    return "partial", f"{scope}: {shown}; {note}"


def memory_viewer(case_dir, d, host, gzipped, blessing):
    """Results of memory_viewer on every module and memory space xprof answered for: one line for
    the case, a FAIL line per output that differs."""
    mv = os.path.join(d, "memory_viewer")
    if not os.path.isdir(mv):
        return [("memory_viewer", "FAIL", "xprof's child did not get to memory_viewer")]
    files = sorted(os.listdir(mv))
    if not files:
        return []
    profkit = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO[0], "target")), "debug", "profkit")
    results, same, exact = [], 0, 0
    saved_dir = os.path.join(case_dir, "xprof.memory_viewer")
    for file in files:
        stem = file[: -len(".json")]
        module, space = stem, 0
        head, _, tail = stem.rpartition(".space")
        if head and tail.isdigit():
            module, space = head, int(tail)
        theirs = open(os.path.join(mv, file), encoding="utf-8").read()
        proc = subprocess.run(
            [profkit, "xprof", "memory_viewer", host, "--module", module, "--memory-space", str(space)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        note = " ".join(
            line.removeprefix("profkit: ") for line in proc.stderr.splitlines() if "not reproduced" in line
        )
        label = f"memory_viewer {module} space {space}"
        if proc.returncode != 0:
            results.append((label, "FAIL", f"profkit failed: {proc.stderr.strip()}"))
        elif json.loads(proc.stdout) != json.loads(theirs):
            status = "partial" if note else "FAIL"
            results.append((label, status, "differs once parsed" + (f"; {note}" if note else "")))
        else:
            same += 1
            exact += proc.stdout == theirs
        if blessing:
            trivial = set(json.loads(theirs)) <= {"moduleName", "entryComputationName"}
            if space == 0 or not trivial:
                os.makedirs(saved_dir, exist_ok=True)
                saved = os.path.join(saved_dir, file)
                if gzipped:
                    with open(os.path.join(mv, file), "rb") as src, gzip.GzipFile(saved + ".gz", "wb", mtime=0) as dst:
                        shutil.copyfileobj(src, dst)
                else:
                    shutil.copyfile(os.path.join(mv, file), saved)
    results.append(
        (
            "memory_viewer",
            "ok" if same == len(files) else "FAIL",
            f"{same} of {len(files)} module outputs identical once parsed ({exact} byte for byte; "
            "xprof prints its span map in hash order)",
        )
    )
    return results


REPO = [""]


def cases(repo):
    """(name, copy function) for each case."""
    found = []
    xplane = os.path.join(repo, "conformance", "xplane")
    for case in sorted(os.listdir(xplane)):
        path = os.path.join(xplane, case, "input.xplane.pb")
        if os.path.exists(path) and not os.path.exists(os.path.join(xplane, case, "error.txt")):
            found.append((os.path.join(xplane, case), path, False))
    device = os.path.join(repo, "conformance", "xplane-device")
    for case in sorted(os.listdir(device)):
        path = os.path.join(device, case, "input.xplane.pb.gz")
        if os.path.exists(path):
            found.append((os.path.join(device, case), path, True))
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo")
    parser.add_argument("--child", nargs="+")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    if args.child:
        return child(*args.child)
    repo = args.repo
    REPO[0] = repo
    blessing = os.environ.get("BLESS") == "1"
    only = os.environ.get("CONFORMANCE_CASE", "")
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(repo, "target"))
    subprocess.run(["cargo", "build", "-q", "-p", "profkit"], cwd=repo, check=True)
    subprocess.run(
        ["cargo", "build", "-q", "-p", "profkit-xprof", "--example", "op_profile_of_op_stats"], cwd=repo, check=True
    )
    profkit = os.path.join(target, "debug", "profkit")
    renderer = os.path.join(target, "debug", "examples", "op_profile_of_op_stats")
    start = time.monotonic()
    counts = {"ok": 0, "partial": 0, "FAIL": 0}
    with tempfile.TemporaryDirectory() as tmp:
        work = []
        for case_dir, path, gzipped in cases(repo):
            name = os.path.basename(case_dir)
            if only and only not in name:
                continue
            d = os.path.join(tmp, name)
            os.makedirs(d)
            host = os.path.join(d, "host.xplane.pb")
            if gzipped:
                with gzip.open(path) as src, open(host, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            else:
                shutil.copyfile(path, host)
            work.append((case_dir, name, d, host, gzipped))

        def run(item):
            case_dir, name, d, host, gzipped = item
            # profkit's OpStats, outside the folder (xprof clears its caches there).
            op_stats = os.path.join(tmp, name + ".op_stats_v2.pb")
            made = subprocess.run(
                [profkit, "convert", host, op_stats, "--to", "op-stats"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                check=False,
            )
            missing = " ".join(
                line.removeprefix("profkit: ") for line in made.stderr.splitlines() if "not reproduced" in line
            )
            extra = [op_stats] if made.returncode == 0 else []
            with open(os.path.join(d, "xprof.log"), "w", encoding="utf-8") as log:
                try:
                    code = subprocess.run(
                        [sys.executable, os.path.abspath(__file__), "--child", host, d, *extra],
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        timeout=CHILD_TIMEOUT_S,
                        check=False,
                    ).returncode
                except subprocess.TimeoutExpired:
                    code = "timeout"
            results = []
            for tool in TOOLS:
                theirs_path = os.path.join(d, tool + ".json")
                if not os.path.exists(theirs_path):
                    results.append((tool, "FAIL", f"xprof returned nothing (exit {code})"))
                    continue
                theirs = open(theirs_path, encoding="utf-8").read()
                name, _, group_by = tool.partition(":")
                proc = subprocess.run(
                    [profkit, "xprof", name, host, "-o", os.path.join(d, "ours." + tool + ".json")]
                    + (["--group-by", group_by] if group_by else []),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    check=False,
                )
                if proc.returncode != 0:
                    results.append((tool, "FAIL", f"profkit failed: {proc.stderr.strip()}"))
                    continue
                ours = open(os.path.join(d, "ours." + tool + ".json"), encoding="utf-8").read()
                note = " ".join(
                    line.removeprefix("profkit: ")
                    for line in proc.stderr.splitlines()
                    if "not reproduced" in line
                )
                status, message = compare(tool, ours, theirs, note)
                results.append((tool, status, message))
                own_op_stats = os.path.join(d, "own", "ALL_HOSTS.op_stats_v2.pb")
                if tool.startswith("op_profile") and os.path.exists(own_op_stats):
                    # The renderer alone: op_profile of xprof's own OpStats must be xprof's bytes.
                    rendered = subprocess.run(
                        [renderer, own_op_stats, group_by or "program"],
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        check=False,
                    )
                    if rendered.returncode != 0:
                        results.append((tool + " of xprof's OpStats", "FAIL", rendered.stderr.decode().strip()))
                    elif rendered.stdout.decode("utf-8") != theirs:
                        results.append((tool + " of xprof's OpStats", "FAIL", "differs from xprof's rendering"))
                    else:
                        results.append((tool + " of xprof's OpStats", "ok", f"{len(theirs)} bytes, identical"))
                if blessing:
                    saved = os.path.join(case_dir, f"xprof.{tool.replace(':', '.')}.json")
                    if gzipped:
                        with open(theirs_path, "rb") as src, gzip.GzipFile(saved + ".gz", "wb", mtime=0) as dst:
                            shutil.copyfileobj(src, dst)
                    else:
                        shutil.copyfile(theirs_path, saved)
            results.extend(memory_viewer(case_dir, d, host, gzipped, blessing))
            if made.returncode != 0:
                results.append(("op-stats", "FAIL", f"profkit convert --to op-stats failed: {made.stderr.strip()}"))
            else:
                status, message = interop(d, missing)
                results.append(("op-stats", status, message))
            return results

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            all_results = list(pool.map(run, work))
        for (_, name, _, _, _), results in zip(work, all_results):
            for tool, status, message in results:
                counts[status] += 1
                print(f"{status:<7} {name} ({tool}): {message}")
    print(f"checked in {time.monotonic() - start:.1f} s")
    print(f"{counts['ok']} identical, {counts['partial']} partial (named), {counts['FAIL']} failed")
    return 1 if counts["FAIL"] or counts["ok"] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
