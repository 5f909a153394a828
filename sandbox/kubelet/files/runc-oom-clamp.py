# runc as the sandbox nodes run it: this machine gives no process CAP_SYS_RESOURCE (CapBnd lacks
# bit 24, on the host as in every node), so no process may lower its oom_score_adj, and runc
# fails "failed to update /proc/self/oom_score_adj: Permission denied" for what the kubelet asks
# of a pod sandbox (-998) and of Guaranteed or node-critical containers (-997). A negative
# oomScoreAdj in the bundle is raised to this process's own value; everything else goes to the
# distribution's runc unchanged. Run by /usr/local/sbin/runc (files/runc), ahead of /usr/sbin/runc on
# PATH, so that containerd's shim and the Ascend Docker Runtime both find it.
import json
import os
import sys

REAL_RUNC = "/usr/sbin/runc"


def bundle(argv):
    for index, arg in enumerate(argv):
        if arg in ("--bundle", "-b") and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("--bundle="):
            return arg.split("=", 1)[1]
    return os.getcwd()


def clamp(config_path):
    with open("/proc/self/oom_score_adj") as handle:
        floor = int(handle.read())
    with open(config_path) as handle:
        spec = json.load(handle)
    process = spec.get("process") or {}
    if process.get("oomScoreAdj", floor) >= floor:
        return
    process["oomScoreAdj"] = floor
    with open(config_path + ".tmp", "w") as handle:
        json.dump(spec, handle)
    os.rename(config_path + ".tmp", config_path)


argv = sys.argv[1:]
if "create" in argv or "run" in argv:
    command = argv.index("create") if "create" in argv else argv.index("run")
    path = os.path.join(bundle(argv[command + 1:]), "config.json")
    if os.path.exists(path):
        clamp(path)
os.execv(REAL_RUNC, [REAL_RUNC] + argv)
