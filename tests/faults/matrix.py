#!/usr/bin/env python
"""The fault matrix (`make faults`): inject each fault of tests/faults/rows.py into a simulated
node, run the part of the chain it concerns, and check that the run fails with a message naming
the host, the component, the cause and the fix, that the files the row lists survive byte for
byte, and that after the fault is removed a rerun converges.

Three lanes run side by side, each on its own node of tests/faults/inventory: `host` (preflight,
firmware and driver, CANN), `engine` (container engines, then Kubernetes) and `fleet` (site.yml
over a healthy node and the row's own bad node: the healthy one must finish, the bad one be named
with its stage and the retry command). Rows within a lane run in order, each starting from the
state the previous one left. Results go to
.cache/faults/results.json, each row's full log to .cache/faults/logs/<row>.log; the exit status
is 1 when any row failed.
"""
import argparse
import importlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO_ROOT / "tests" / "k8s"))

# tests/faults/rows.py, found through sys.path above
matrix_rows = importlib.import_module("rows")

INVENTORY = HERE / "inventory"
PLAYBOOKS = HERE / "playbooks"
FLEET = REPO_ROOT / "sandbox" / "fleet.py"
PACKAGE_BUILDER = REPO_ROOT / "sandbox" / "packages" / "build.py"
STATE = REPO_ROOT / ".cache" / "faults"
LOGS = STATE / "logs"
PACKAGES = STATE / "packages"
CONTROLPLANE_DIR = STATE / "controlplane"
RESULTS = STATE / "results.json"
PLAYBOOK_TIMEOUT = 1200

# What a failed run's output shows for a host: Ansible's failure line (also for a task delegated
# to the controller) and everything up to the next task or the recap.
FAILURE_START = r"^(?:fatal|failed): \[%s(?: -> [^\]]+)?\]"
RECAP = re.compile(r"^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)


class RowError(Exception):
    """A step of a row could not be carried out (not the fault's expected failure)."""


def base_environment():
    env = dict(os.environ)
    venv_bin = str(REPO_ROOT / ".venv" / "bin")
    env.update({
        "PATH": venv_bin + os.pathsep + env.get("PATH", ""),
        "CONTAINERS_CONF": str(REPO_ROOT / "sandbox" / "podman" / "containers.conf"),
        "ANSIBLE_COLLECTIONS_PATH": str(REPO_ROOT / ".cache" / "collections"),
        # ansible-playbook refuses a locale without UTF-8; C.UTF-8 keeps the C messages.
        "LC_ALL": "C.UTF-8",
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_FORCE_COLOR": "0",
        "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.default",
        "PYTHONDONTWRITEBYTECODE": "1",
    })
    return env


ENV = base_environment()
PYTHON = str(REPO_ROOT / ".venv" / "bin" / "python") if (REPO_ROOT / ".venv" / "bin" / "python").exists() else sys.executable


class Log:
    """One row's (or one lane's set-up) log file, also echoed in short to the terminal."""

    lock = threading.Lock()

    def __init__(self, name):
        LOGS.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.path = LOGS / ("%s.log" % name)
        self.stream = open(str(self.path), "w", encoding="utf-8")

    def write(self, text):
        self.stream.write(text if text.endswith("\n") else text + "\n")
        self.stream.flush()

    def say(self, text):
        self.write("== " + text)
        with Log.lock:
            print("[%s] %s" % (self.name, text), flush=True)

    def close(self):
        self.stream.close()


def run(log, argv, check=True, timeout=600, input_text=None):
    log.write("$ " + " ".join(str(part) for part in argv))
    try:
        result = subprocess.run([str(part) for part in argv], cwd=str(REPO_ROOT), env=ENV, check=False,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                                timeout=timeout, input=input_text)
    except subprocess.TimeoutExpired:
        raise RowError("`%s` did not finish within %d s" % (" ".join(str(a) for a in argv), timeout))
    log.write(result.stdout)
    if result.stderr.strip():
        log.write("[stderr]\n" + result.stderr)
    log.write("[exit %d]" % result.returncode)
    if check and result.returncode != 0:
        command = " ".join(str(a) for a in argv)
        raise RowError("`%s` exited %d: %s" % (command, result.returncode, (result.stderr or result.stdout).strip()[-600:]))
    return result


def fleet(log, *args, check=True, timeout=600):
    return run(log, [PYTHON, FLEET, "--inventory", INVENTORY] + list(args), check=check, timeout=timeout)


def bring_up(log, hosts, attempts=6):
    """fleet.py up, retrying a node whose systemd came up degraded.

    On a host crowded with systemd containers a node's path unit can fail for want of inotify
    instances (fs.inotify.max_user_instances); restarting the failed units once others have
    settled lets the node finish booting.
    """
    for attempt in range(1, attempts + 1):
        result = fleet(log, "up", "--limit", ",".join(hosts), check=False, timeout=900)
        if result.returncode == 0:
            return
        if "systemd is degraded" not in result.stderr or attempt == attempts:
            raise RowError("fleet.py up failed: %s" % result.stderr.strip()[-800:])
        log.say("a node came up degraded (attempt %d): restarting its failed units" % attempt)
        time.sleep(10 * attempt)
        for host in hosts:
            node_exec(log, host, ["sh", "-c", "units=$(systemctl --failed --no-legend --plain | cut -d' ' -f1); "
                                              "systemctl reset-failed; [ -z \"$units\" ] || systemctl restart $units"],
                      check=False)


def node_exec(log, host, argv, check=True, timeout=300):
    return fleet(log, "exec", host, "--", *argv, check=check, timeout=timeout)


# ---------------------------------------------------------------------------------------------
# Packages: the stack, the older driver and the aarch64 builds some rows need, and damaged copies


def build_packages(log):
    if PACKAGES.exists():
        shutil.rmtree(str(PACKAGES))
    PACKAGES.mkdir(parents=True)
    for component, chip, version, arch in matrix_rows.PACKAGES:
        run(log, [PYTHON, PACKAGE_BUILDER, "--component", component, "--chip", chip, "--version", version,
                  "--arch", arch, "--out", PACKAGES])
    write_sha256sums(PACKAGES)
    for name, damage in matrix_rows.DAMAGED_PACKAGE_DIRS.items():
        target = Path(str(PACKAGES) + "-" + name)
        if target.exists():
            shutil.rmtree(str(target))
        shutil.copytree(str(PACKAGES), str(target))
        file_name = damage["file"]
        if damage["kind"] == "flip-byte":
            data = bytearray((target / file_name).read_bytes())
            data[-64] ^= 0xFF
            (target / file_name).write_bytes(bytes(data))
            if damage.get("matching_checksum"):
                write_sha256sums(target)
        elif damage["kind"] == "missing":
            for name in [file_name] if isinstance(file_name, str) else file_name:
                (target / name).unlink()
        elif damage["kind"] == "no-checksum":
            sums = target / "SHA256SUMS"
            sums.write_text("".join(line + "\n" for line in sums.read_text().splitlines()
                                    if not line.endswith("  " + file_name)))
        else:
            raise RowError("unknown package damage %r" % damage["kind"])
        log.write("damaged copy %s: %s %s" % (target, damage["kind"], file_name))


def write_sha256sums(directory):
    lines = []
    for path in sorted(Path(directory).glob("*.run")):
        lines.append("%s  %s\n" % (hashlib.sha256(path.read_bytes()).hexdigest(), path.name))
    (Path(directory) / "SHA256SUMS").write_text("".join(lines))


# ---------------------------------------------------------------------------------------------
# Snapshots of what must survive a failed run

SNAPSHOT_SCRIPT = r"""
import hashlib, json, os, stat, sys
def entry(path):
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return {"type": "link", "target": os.readlink(path)}
    if stat.S_ISDIR(st.st_mode):
        return {"type": "dir", "mode": oct(st.st_mode & 0o7777)}
    with open(path, "rb") as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()
    return {"type": "file", "mode": oct(st.st_mode & 0o7777), "sha256": digest}
out = {}
for top in sys.argv[1:]:
    if not os.path.lexists(top):
        out[top] = {"type": "absent"}
        continue
    out[top] = entry(top)
    if os.path.isdir(top) and not os.path.islink(top):
        for root, dirs, files in os.walk(top):
            for name in sorted(dirs + files):
                path = os.path.join(root, name)
                out[path] = entry(path)
print(json.dumps(out, sort_keys=True))
"""


def snapshot(log, host, paths, plane):
    state = {}
    node_paths = [path for path in paths if not path.startswith("k8s:")]
    if node_paths:
        result = node_exec(log, host, ["python3", "-c", SNAPSHOT_SCRIPT] + node_paths)
        state.update(json.loads(result.stdout))
    for path in paths:
        if path.startswith("k8s:"):
            state[path] = k8s_object_state(plane, path[len("k8s:"):])
    return state


def k8s_object_state(plane, api_path):
    if plane is None:
        raise RowError("the row checks %s but no control plane runs" % api_path)
    status, body = plane.request("GET", api_path)
    if status != 200:
        return {"status": status}
    return {"labels": body["metadata"].get("labels", {}), "taints": body.get("spec", {}).get("taints", [])}


def compare_snapshots(before, after):
    changes = []
    for path in sorted(set(before) | set(after)):
        if before.get(path) != after.get(path):
            changes.append("%s: %s -> %s" % (path, short(before.get(path, "absent")), short(after.get(path, "absent"))))
    return changes


def short(value):
    text = json.dumps(value, sort_keys=True)
    return text if len(text) < 160 else text[:157] + "..."


# ---------------------------------------------------------------------------------------------
# Playbook runs


def playbook_argv(host, name, extra_vars, peers=()):
    limit = ",".join([host] + list(peers))
    argv = ["ansible-playbook", "--inventory", INVENTORY, "--limit", limit, PLAYBOOKS / ("%s.yml" % name)]
    if extra_vars:
        argv += ["--extra-vars", json.dumps(extra_vars)]
    return argv


def run_playbook(log, host, name, extra_vars=None, during=None, lane=None, peers=()):
    argv = playbook_argv(host, name, extra_vars or {}, peers)
    log.write("$ " + " ".join(str(part) for part in argv))
    started = time.monotonic()
    process = subprocess.Popen([str(part) for part in argv], cwd=str(REPO_ROOT), env=ENV,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    collected = {}

    def drain(name, stream):
        collected[name] = stream.read()

    readers = [threading.Thread(target=drain, args=(key, getattr(process, key))) for key in ("stdout", "stderr")]
    for reader in readers:
        reader.start()
    try:
        if during:
            during(log, host, process, lane)
        process.wait(timeout=PLAYBOOK_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise RowError("ansible-playbook %s did not finish within %d s" % (name, PLAYBOOK_TIMEOUT))
    finally:
        for reader in readers:
            reader.join()
    output = collected.get("stdout", "") + "\n" + collected.get("stderr", "")
    log.write(output)
    log.write("[exit %d after %.0f s]" % (process.returncode, time.monotonic() - started))
    recaps = {}
    for found in RECAP.finditer(collected.get("stdout", "")):
        recaps[found.group(1)] = {"ok": int(found.group(2)), "changed": int(found.group(3)),
                                  "unreachable": int(found.group(4)), "failed": int(found.group(5))}
    return {"rc": process.returncode, "output": output, "recap": recaps.get(host), "recaps": recaps}


def failure_text(host, output):
    """The failure lines the operator reads for HOST, each up to the next task, play or recap."""
    start = re.compile(FAILURE_START % re.escape(host), re.M)
    blocks = []
    for found in start.finditer(output):
        rest = output[found.start():]
        end = re.search(r"^(?:TASK \[|PLAY \[|PLAY RECAP|RUNNING HANDLER \[)", rest, re.M)
        blocks.append(rest[:end.start()] if end else rest)
    # ansible-core 2.19 repeats a task failure as an [ERROR] block on stderr.
    for found in re.finditer(r"^\[ERROR\]: .*?(?=^\S|\Z)", output, re.M | re.S):
        if host in found.group(0):
            blocks.append(found.group(0))
    return "\n".join(blocks)


def stop_node_during_install(log, host, process, lane):
    """Stops the node (podman stop) once an installer runs in it: the node goes away mid-run."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and process.poll() is None:
        probe = node_exec(log, host, ["pgrep", "-f", "installer.py"], check=False, timeout=60)
        if probe.returncode == 0:
            log.say("an installer runs in %s: stopping the node" % host)
            run(log, [REPO_ROOT / "sandbox" / "podman.sh", "stop", "--time", "2", host])
            return
        time.sleep(1)
    raise RowError("no installer started in %s while the playbook ran, so the node was never taken away" % host)


def descendants(pid):
    """The pids of every process below ``pid`` (from /proc's parent links), children first."""
    children = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat_text = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat_text.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, queue = [], list(children.get(pid, []))
    while queue:
        child = queue.pop(0)
        found.append(child)
        queue.extend(children.get(child, []))
    return found


def kill_controller_during_install(log, host, process, lane):
    """SIGKILL to ansible-playbook (then to every process it started: its workers and SSH clients, as when
    the controller machine dies) once the driver installer runs in the node."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and process.poll() is None:
        probe = node_exec(log, host, ["pgrep", "-f", r"npu-driver_\S+\.run --nox11 --full"], check=False, timeout=60)
        if probe.returncode == 0:
            workers = descendants(process.pid)
            log.say("the driver installer runs in %s: SIGKILL to ansible-playbook (pid %d) and its %d processes"
                    % (host, process.pid, len(workers)))
            os.kill(process.pid, signal.SIGKILL)
            for pid in workers:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            return
        time.sleep(1)
    raise RowError("no driver installer started in %s while the playbook ran, so the controller was never killed" % host)


DURING = {"stop_node_during_install": stop_node_during_install,
          "kill_controller_during_install": kill_controller_during_install}


# ---------------------------------------------------------------------------------------------
# Actions: injecting and removing faults, resets between rows


class Lane:
    def __init__(self, name, host, steps):
        self.name = name
        # The lane's own node; `host` is the node the current row injects its fault into (a fleet
        # row's own bad node, the lane's node then being a healthy peer beside it).
        self.node = host
        self.host = host
        self.steps = steps
        self.plane = None
        self.results = []
        self.background = None


def do_action(log, lane, action):
    kind, args = action[0], action[1:]
    host = lane.host
    if kind == "fault":
        fleet(log, "fault", "set", host, *["%s=%s" % (key, json.dumps(value)) for key, value in args[0].items()])
    elif kind == "clear":
        fleet(log, "fault", "clear", host)
    elif kind == "headers":
        wait_for_headers(log, host, present=args[0])
    elif kind == "exec":
        node_exec(log, host, args[0])
    elif kind == "reboot":
        if fleet(log, "reboot", host, check=False).returncode != 0:
            bring_up(log, [host])
    elif kind == "start":
        bring_up(log, [host])
    elif kind == "stop":
        run(log, [REPO_ROOT / "sandbox" / "podman.sh", "stop", "--time", "2", host])
    elif kind == "playbook":
        result = run_playbook(log, host, args[0], args[1] if len(args) > 1 else {})
        if result["rc"] != 0:
            raise RowError("playbook %s failed (exit %d); see %s" % (args[0], result["rc"], log.path))
    elif kind == "hide_pci":
        sysfs = REPO_ROOT / ".cache" / "sandbox" / "nodes" / host / "sysfs"
        hidden = STATE / "hidden-pci" / host
        hidden.mkdir(parents=True, exist_ok=True)
        shutil.move(str(sysfs / args[0]), str(hidden / args[0]))
        log.write("moved %s out of %s" % (args[0], sysfs))
    elif kind == "restore_pci":
        sysfs = REPO_ROOT / ".cache" / "sandbox" / "nodes" / host / "sysfs"
        shutil.move(str(STATE / "hidden-pci" / host / args[0]), str(sysfs / args[0]))
        log.write("moved %s back into %s" % (args[0], sysfs))
    elif kind == "save":
        saved = STATE / "saved" / host
        saved.mkdir(parents=True, exist_ok=True)
        run(log, [REPO_ROOT / "sandbox" / "podman.sh", "cp", "%s:%s" % (host, args[0]), saved / Path(args[0]).name])
    elif kind == "restore":
        saved = STATE / "saved" / host / Path(args[0]).name
        run(log, [REPO_ROOT / "sandbox" / "podman.sh", "cp", saved, "%s:%s" % (host, args[0])])
    elif kind == "controlplane_up":
        start_control_plane(log, lane)
    elif kind == "k8s_patch_status":
        patch_node_status(log, lane, args[0])
    elif kind == "dead_kubeconfig":
        write_dead_kubeconfig(log, lane)
    elif kind == "probe_image":
        fleet(log, "probe-image", *(args[0] if args else [host]))
    elif kind == "mirror":
        package_mirror(log, host, args[0])
    elif kind == "background_playbook":
        start_background_playbook(log, lane, args[0], args[1] if len(args) > 1 else {})
    elif kind == "wait_background":
        wait_background_playbook(log, lane)
    else:
        raise RowError("unknown action %r" % (kind,))


MIRROR_SCRIPT = REPO_ROOT / "molecule" / "host_stack_upgrade" / "package_mirror.py"
MIRROR_STATE = STATE / "mirror"


def package_mirror(log, host, step):
    """A plain-http mirror of the rows' packages on the controller, at the address the node knows
    it by (host.containers.internal) and rows.MIRROR_PORT: "start" it, "stop" it, or check it is
    "untouched" (no request reached it, so nothing was fetched before the refusal)."""
    if step == "start":
        found = node_exec(log, host, ["getent", "ahostsv4", "host.containers.internal"])
        address = found.stdout.split()[0]
        run(log, [sys.executable, MIRROR_SCRIPT, "start", "--root", PACKAGES, "--bind", address,
                  "--port", str(matrix_rows.MIRROR_PORT), "--state-dir", MIRROR_STATE])
        (MIRROR_STATE / "access.log").write_text("")
    elif step == "stop":
        run(log, [sys.executable, MIRROR_SCRIPT, "stop", "--state-dir", MIRROR_STATE], check=False)
    elif step == "untouched":
        log_path = MIRROR_STATE / "access.log"
        requests = log_path.read_text().splitlines() if log_path.exists() else []
        if requests:
            raise RowError("the refused run still sent %d request(s) to the mirror: %s" % (len(requests), requests[:5]))
        log.write("no request reached the mirror")
    else:
        raise RowError("unknown mirror step %r" % (step,))


def start_background_playbook(log, lane, name, extra_vars):
    """Starts a playbook run against the lane's node that goes on while the row's own run meets it."""
    holder = {}
    thread = threading.Thread(target=lambda: holder.update(result=run_playbook(log, lane.host, name, extra_vars)))
    thread.start()
    lane.background = (name, thread, holder)
    log.write("started %s in the background" % name)


def wait_background_playbook(log, lane):
    """Waits for the background run; it must have succeeded (it held the node first)."""
    name, thread, holder = lane.background
    thread.join(PLAYBOOK_TIMEOUT)
    lane.background = None
    result = holder.get("result")
    if result is None or result["rc"] != 0:
        raise RowError("the background run of %s did not succeed (%s); see %s"
                       % (name, "exit %d" % result["rc"] if result else "no result", log.path))


def wait_for_headers(log, host, present):
    """The node's apt offers linux-headers-$(uname -r) (present) or no longer does."""
    for _attempt in range(60):
        result = node_exec(log, host, ["sh", "-c", 'apt-cache policy "linux-headers-$(uname -r)"'], check=False)
        candidate = re.search(r"Candidate: (?!\(none\))\S+", result.stdout) is not None
        if candidate == present:
            return
        time.sleep(2)
    raise RowError("%s: apt still %s the kernel headers after 2 minutes"
                   % (host, "does not offer" if present else "offers"))


def start_control_plane(log, lane):
    from controlplane import ControlPlane, nodes_from_inventory
    run(log, ["bash", REPO_ROOT / "tests" / "k8s" / "build.sh"], timeout=7200)
    plane = ControlPlane(CONTROLPLANE_DIR, nodes_from_inventory(str(INVENTORY)))
    plane.up()
    lane.plane = plane
    log.write("control plane up at %s" % plane.server)


def patch_node_status(log, lane, capacity):
    """Replaces the NPU resources the node advertises (what the device plugin publishes)."""
    status, body = lane.plane.request("GET", "/api/v1/nodes/%s" % lane.host)
    if status != 200:
        raise RowError("reading Node %s returned %s" % (lane.host, status))
    new_status = {"capacity": dict(body["status"]["capacity"]), "allocatable": dict(body["status"]["allocatable"])}
    for section in new_status.values():
        for resource in [name for name in section if "/" in name]:
            del section[resource]
        section.update(capacity)
    # A JSON patch: a merge patch cannot remove a resource from these maps reliably.
    operations = [{"op": "replace", "path": "/status/" + key, "value": value} for key, value in new_status.items()]
    status, body = lane.plane.request("PATCH", "/api/v1/nodes/%s/status" % lane.host, operations,
                                      content_type="application/json-patch+json")
    if status != 200:
        raise RowError("patching Node %s status returned %s: %s" % (lane.host, status, body))
    log.write("Node %s now advertises %s" % (lane.host, body["status"]["allocatable"]))


def write_dead_kubeconfig(log, lane):
    """A copy of the kubeconfig whose server is a loopback port nothing listens on."""
    from controlplane import free_loopback_ports
    port = free_loopback_ports(1)[0]
    text = (CONTROLPLANE_DIR / "kubeconfig").read_text()
    dead = re.sub(r"server: https://127\.0\.0\.1:\d+", "server: https://127.0.0.1:%d" % port, text)
    (STATE / "dead-kubeconfig").write_text(dead)
    log.write("dead kubeconfig points at 127.0.0.1:%d" % port)


# ---------------------------------------------------------------------------------------------
# One row


def run_row(lane, row):
    log = Log(row["id"])
    started = time.monotonic()
    lane.host = row.get("host", lane.node)
    peers = [lane.node] if lane.host != lane.node else []
    result = {"id": row["id"], "fault": row["fault"], "lane": lane.name, "host": lane.host,
              "playbook": row["run"][0], "outcome": "not run", "survived": "not checked",
              "recovery": "not run", "problems": [], "passed": False, "log": str(log.path)}
    log.say("%s: %s" % (row["id"], row["fault"]))
    try:
        for action in row.get("before", []):
            do_action(log, lane, action)
        # Taken once the fault is in place: a fault may be a damaged file the run must leave as is.
        for action in row.get("inject", []):
            do_action(log, lane, action)
        before = snapshot(log, lane.host, row["survive"], lane.plane)
        run_name, run_vars = row["run"][0], row["run"][1] if len(row["run"]) > 1 else {}
        during = DURING[row["during"]] if row.get("during") else None
        failed_run = run_playbook(log, lane.host, run_name, run_vars, during=during, lane=lane, peers=peers)
        text = failure_text(lane.host, failed_run["output"])
        log.write("---- failure text seen ----\n" + (text or "(none)"))
        # The callback folds long messages at any space, so patterns are matched on one line.
        flat = re.sub(r"\s+", " ", text)
        unmatched = [key for key in ("host", "component", "cause", "fix")
                     if isinstance(row.get("expect"), dict) and not re.search(row["expect"][key], flat, re.S | re.I)]
        recap = failed_run["recap"]
        if row.get("expect") == "killed":
            # The controller was killed on purpose: nothing was left to print a message.
            if failed_run["rc"] != -signal.SIGKILL:
                result["outcome"] = "not killed (exit %d)" % failed_run["rc"]
                result["problems"].append("the run was to be killed with SIGKILL; it exited %d" % failed_run["rc"])
            else:
                result["outcome"] = "killed as intended"
        elif row.get("expect") is None:
            # A row of a situation the operator's node is in, not of a failure: the run must
            # succeed, and still lose nothing.
            if failed_run["rc"] != 0 or recap is None or recap["failed"] or recap["unreachable"]:
                result["outcome"] = "FAILED (exit %d)" % failed_run["rc"]
                result["problems"].append("the run was to succeed: %s"
                                          % compact(text or failed_run["output"][-600:]))
            else:
                result["outcome"] = "succeeded as expected"
        elif failed_run["rc"] == 0:
            result["outcome"] = "did not fail"
            result["problems"].append("the run with the fault exited 0")
        elif not text:
            result["outcome"] = "failed, no failure message for %s" % lane.host
            result["problems"].append("exit %d but no failure line for %s" % (failed_run["rc"], lane.host))
        elif unmatched:
            result["outcome"] = "failed, message lacks " + ", ".join(unmatched)
            result["problems"].append("message lacks %s (expected %s); it says: %s" % (
                ", ".join(unmatched), "; ".join("%s=/%s/" % (key, row["expect"][key]) for key in unmatched),
                compact(text)))
        else:
            result["outcome"] = "failed as expected"
        result["problems"].extend(fleet_problems(row, failed_run, peers, "the failed run"))
        result["message"] = compact(text)
        for action in row.get("reach", []):
            do_action(log, lane, action)
        after = snapshot(log, lane.host, row["survive"], lane.plane)
        changes = compare_snapshots(before, after)
        if changes:
            result["survived"] = "CHANGED: %d path(s)" % len(changes)
            result["problems"].append("changed by the failed run: " + "; ".join(changes[:8]))
        else:
            result["survived"] = "%d path(s) intact" % len(before)
        for action in row.get("remove", []):
            do_action(log, lane, action)
        rerun_name, rerun_vars = row["rerun"][0], row["rerun"][1] if len(row["rerun"]) > 1 else {}
        rerun = run_playbook(log, lane.host, rerun_name, rerun_vars, peers=peers)
        recap = rerun["recap"]
        result["problems"].extend(fleet_problems({}, rerun, peers, "the rerun", converged=True))
        wanted_changed = row.get("rerun_changed")
        if rerun["rc"] != 0 or recap is None or recap["failed"] or recap["unreachable"]:
            result["recovery"] = "rerun FAILED (exit %d)" % rerun["rc"]
            result["problems"].append("the rerun without the fault did not converge: %s"
                                      % compact(failure_text(lane.host, rerun["output"]) or rerun["output"][-600:]))
        elif wanted_changed is not None and recap["changed"] != wanted_changed:
            result["recovery"] = "rerun changed=%d, wanted %d" % (recap["changed"], wanted_changed)
            result["problems"].append("the rerun converged but reported changed=%d, wanted changed=%d"
                                      % (recap["changed"], wanted_changed))
        else:
            result["recovery"] = "%s converged (changed=%d)" % (rerun_name, recap["changed"])
        for pattern in row.get("rerun_output", []):
            if not re.search(pattern, rerun["output"], re.S):
                result["problems"].append("the rerun's output lacks /%s/" % pattern)
        for action in row.get("after", []):
            do_action(log, lane, action)
    except RowError as error:
        result["problems"].append("could not carry out the row: %s" % error)
        if result["outcome"] == "not run":
            result["outcome"] = "ERROR"
    except Exception as error:
        # A bug or an environment problem in one row must not hide the others' results.
        result["problems"].append("driver error: %r" % error)
        result["outcome"] = result["outcome"] if result["outcome"] != "not run" else "ERROR"
    if lane.background is not None:
        # The row stopped before its wait_background: the next row must not start beside that run.
        log.write("waiting for the background run the row left behind")
        lane.background[1].join(PLAYBOOK_TIMEOUT)
        lane.background = None
    result["passed"] = (not result["problems"]
                        and result["outcome"] in ("failed as expected", "succeeded as expected", "killed as intended")
                        and result["survived"].endswith("intact") and "converged" in result["recovery"])
    result["seconds"] = round(time.monotonic() - started)
    verdict = "PASS" if result["passed"] else "FAIL"
    log.say("%s: %s (%s; %s; %s) in %d s" % (row["id"], verdict, result["outcome"], result["survived"], result["recovery"],
                                             result["seconds"]))
    for problem in result["problems"]:
        log.write("problem: " + problem)
    log.close()
    return result


def fleet_problems(row, run_result, peers, what, converged=False):
    """What a fleet row's run got wrong beside the bad node: a summary line missing, or a healthy
    peer that did not finish (or, on the rerun, changed something)."""
    problems = []
    flat = re.sub(r"\s+", " ", run_result["output"])
    for pattern in row.get("summary", []):
        if not re.search(pattern, flat, re.I):
            problems.append("%s's output lacks /%s/" % (what, pattern))
    for peer in peers:
        recap = run_result["recaps"].get(peer)
        if recap is None or recap["failed"] or recap["unreachable"]:
            problems.append("the healthy node %s did not finish %s: %s" % (peer, what, recap))
        elif converged and recap["changed"]:
            problems.append("the healthy node %s changed %d thing(s) in %s" % (peer, recap["changed"], what))
    return problems


def compact(text):
    return re.sub(r"\s+", " ", text or "").strip()[:1500]


def run_lane(lane, selected, reuse=False):
    setup_log = Log("setup-%s" % lane.name)
    for step in lane.steps:
        if step.get("row"):
            row = step["row"]
            if selected and row["id"] not in selected:
                continue
            lane.results.append(run_row(lane, row))
            continue
        if reuse or (selected and not (set(step.get("for", [])) & set(selected))):
            continue
        setup_log.say("set-up: %s" % step["name"])
        try:
            for action in step["actions"]:
                do_action(setup_log, lane, action)
        except Exception as error:
            setup_log.say("set-up FAILED: %s: %s (see %s)" % (step["name"], error, setup_log.path))
            for later in lane.steps[lane.steps.index(step):]:
                if later.get("row") and (not selected or later["row"]["id"] in selected):
                    lane.results.append({"id": later["row"]["id"], "fault": later["row"]["fault"],
                                         "lane": lane.name, "host": lane.host, "playbook": later["row"]["run"][0],
                                         "outcome": "not run", "survived": "not checked", "recovery": "not run",
                                         "problems": ["lane set-up %r failed: %s" % (step["name"], error)],
                                         "passed": False, "seconds": 0})
            break
    setup_log.close()


# ---------------------------------------------------------------------------------------------
# Table and main


def print_table(results):
    headers = ("#", "fault", "outcome", "survived", "recovery", "result")
    table = [headers] + [(row["id"], row["fault"], row["outcome"], row["survived"], row["recovery"],
                          "PASS" if row["passed"] else "FAIL") for row in results]
    widths = [min(max(len(str(line[column])) for line in table), 60) for column in range(len(headers))]
    print()
    for line in table:
        print("  ".join(str(cell)[:widths[index]].ljust(widths[index]) for index, cell in enumerate(line)).rstrip())
    failed = [row for row in results if not row["passed"]]
    print("\n%d of %d rows passed" % (len(results) - len(failed), len(results)))
    for row in failed:
        print("\nFAIL %s (%s), log %s" % (row["id"], row["fault"], row.get("log", "-")))
        for problem in row["problems"]:
            print("  - " + problem)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated row ids (their lane's set-up runs too)")
    parser.add_argument("--keep", action="store_true", help="leave the nodes and the control plane running")
    parser.add_argument("--list", action="store_true", help="list the rows and exit")
    parser.add_argument("--reuse", action="store_true",
                        help="run on the nodes (and control plane) a --keep run left, skipping the set-up steps")
    args = parser.parse_args(argv)
    lanes = [Lane(name, host, steps) for name, host, steps in matrix_rows.LANES]
    all_rows = [step["row"] for lane in lanes for step in lane.steps if step.get("row")]
    if args.list:
        for row in all_rows:
            print("%-6s %-9s %s" % (row["id"], row["run"][0], row["fault"]))
        return 0
    selected = set(args.only.split(",")) if args.only else set()
    unknown = selected - {row["id"] for row in all_rows}
    if unknown:
        parser.error("unknown row(s): %s (see --list)" % ", ".join(sorted(unknown)))
    if selected:
        # Only the lanes of the selected rows, and only their nodes brought up and removed: a run of a
        # few rows leaves the other lanes' nodes (another run's, perhaps) alone.
        lanes = [lane for lane in lanes if any(step.get("row", {}).get("id") in selected for step in lane.steps)]
    STATE.mkdir(parents=True, exist_ok=True)
    if LOGS.exists():
        shutil.rmtree(str(LOGS))
    main_log = Log("matrix")
    nodes = [lane.node for lane in lanes]
    nodes += [step["row"]["host"] for lane in lanes for step in lane.steps
              if step.get("row", {}).get("host") and step["row"]["host"] not in nodes]
    only_nodes = ("--limit", ",".join(nodes)) if selected else ()
    started = time.monotonic()
    results = []
    try:
        main_log.say("fresh nodes, fake packages and damaged copies")
        if not args.reuse:
            fleet(main_log, "down", *only_nodes)
            fleet(main_log, "image", timeout=3600)
            build_packages(main_log)
        bring_up(main_log, nodes)
        if args.reuse and (CONTROLPLANE_DIR / "state.json").exists():
            from controlplane import ControlPlane
            plane = ControlPlane(CONTROLPLANE_DIR)
            if plane.status().get("apiserver") == "ready":
                for lane in lanes:
                    lane.plane = plane
        threads = [threading.Thread(target=run_lane, args=(lane, selected, args.reuse), name=lane.name)
                   for lane in lanes]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        order = {row["id"]: index for index, row in enumerate(all_rows)}
        results = sorted((result for lane in lanes for result in lane.results), key=lambda r: order[r["id"]])
    finally:
        if (MIRROR_STATE / "mirror.json").exists():
            package_mirror(main_log, None, "stop")
        if not args.keep:
            for lane in lanes:
                if lane.plane is not None:
                    lane.plane.down()
            fleet(main_log, "down", *only_nodes, check=False)
        elapsed = round(time.monotonic() - started)
        RESULTS.write_text(json.dumps({"seconds": elapsed, "rows": results}, indent=2) + "\n")
        main_log.close()
    print_table(results)
    print("\n%d s in all; results in %s, logs in %s" % (elapsed, RESULTS, LOGS))
    if not results or any(not row["passed"] for row in results):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
