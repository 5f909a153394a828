"""Put files into a sandbox node in one stream: a tar made here, unpacked by tar in the node.

join.yml installs about fifteen small files per node (the kubelet's unit, credentials, CNI plugins,
rendered configs). One Ansible copy per file costs a few SSH round trips each, which on a loaded
machine added a minute to every scenario with kubelets; one `podman exec -i NODE tar -x` costs one.

Reads a JSON list from stdin; each item has "dest" (absolute path in the node), "mode" (octal
string) and either "src" (a file on this machine) or "content" (text). Parent directories that are
missing are made 0755; existing ones keep their owner and mode (--no-overwrite-dir), so /var/tmp
stays sticky. Files are owned by root.
"""

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile

PODMAN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "podman.sh")


def archive(items):
    """The tar stream of these items, paths relative to the node's root."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for item in items:
            dest = item["dest"]
            if not dest.startswith("/") or ".." in dest.split("/"):
                raise ValueError("push_files: dest must be an absolute path without '..': %r" % dest)
            if "src" in item:
                with open(item["src"], "rb") as handle:
                    data = handle.read()
            else:
                data = item["content"].encode()
            info = tarfile.TarInfo(dest.lstrip("/"))
            info.size = len(data)
            info.mode = int(item["mode"], 8)
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("node", help="the node's container name")
    args = parser.parse_args(argv)
    stream = archive(json.load(sys.stdin))
    result = subprocess.run([PODMAN, "exec", "-i", args.node, "tar", "-C", "/", "--no-overwrite-dir", "-xf", "-"],
                            input=stream, capture_output=True, timeout=300, check=False)
    if result.returncode != 0:
        error = result.stderr.decode(errors="replace").strip()
        sys.exit("push_files: tar in %s exited %d: %s" % (args.node, result.returncode, error))
    return 0


if __name__ == "__main__":
    sys.exit(main())
