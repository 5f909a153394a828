"""Contract tests of the fake Ascend Docker Runtime package inside a sandbox node (facts reference section 8)."""
import json
import os
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "sandbox", "packages"))
import testing  # noqa: E402
import collection_code  # noqa: E402
from testing import DOCKER_RUNTIME, DOCKER_RUNTIME_EULA  # noqa: E402

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the project runs Python 3.11
    tomllib = None

version_files = collection_code.load_module_utils("packages.version_files")
ROOT = "/usr/local/Ascend/Ascend-Docker-Runtime"
RUNTIME = ROOT + "/ascend-docker-runtime"


@pytest.fixture
def node(sandbox_node, node_packages):
    sandbox_node.reset()
    sandbox_node.exec(["rm", "-rf", "/etc/docker", "/etc/ascend-docker-runtime.d", "/etc/containerd/config.toml"])
    return sandbox_node


def test_version_and_unsupported_parameters(node):
    assert testing.run_package(node, DOCKER_RUNTIME, "--version", expect=0).lines[-1] == \
        "ascend-docker-runtime version: 7.3.0"
    run = testing.run_package(node, DOCKER_RUNTIME, "--install", "--full", expect=1)
    assert run.lines[-1] == "[ERROR] failed, unsupported parameters: --full"


def test_docker_scene_install_and_uninstall(node):
    node.exec(["sh", "-c", "mkdir -p /etc/docker && echo '{\"log-driver\": \"journald\"}' > /etc/docker/daemon.json"])
    run = testing.run_package(node, DOCKER_RUNTIME, "--install", expect=0)
    assert run.lines[-2:] == ["[INFO] ascend-docker-runtime install success",
                              "[INFO] please reboot daemon and container engine to take effect"]
    daemon = json.loads(testing.read_node_file(node, "/etc/docker/daemon.json"))
    assert daemon == {"log-driver": "journald", "default-runtime": "ascend",
                      "runtimes": {"ascend": {"path": RUNTIME, "runtimeArgs": []}}}
    assert node.exec(["stat", "-c", "%a", "/etc/docker/daemon.json"]).stdout.strip() == "600"
    info = version_files.parse_docker_runtime_install_info(
        testing.read_node_file(node, ROOT + "/ascend_docker_runtime_install.info"))
    assert info == {"version": "7.3.0", "arch": "x86_64", "install_scene": "docker"}
    assert "/usr/local/dcmi" in testing.read_node_file(node, "/etc/ascend-docker-runtime.d/base.list")

    node.exec([ROOT + "/script/uninstall.sh"])
    assert json.loads(testing.read_node_file(node, "/etc/docker/daemon.json")) == {"log-driver": "journald"}
    assert not testing.node_path_exists(node, ROOT)
    assert not testing.node_path_exists(node, "/etc/ascend-docker-runtime.d")
    run = testing.run_package(node, DOCKER_RUNTIME, "--uninstall", expect=0)
    assert run.lines[-1] == "[WARNING] uninstall skipping, the specified install path does not exist"


@pytest.mark.skipif(tomllib is None, reason="needs Python 3.11 tomllib")
def test_containerd_scene_adds_the_ascend_runtime(node):
    testing.run_package(node, DOCKER_RUNTIME, "--install", "--install-scene=containerd", expect=0)
    config = tomllib.loads(testing.read_node_file(node, "/etc/containerd/config.toml"))
    plugin = config["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]
    assert plugin["default_runtime_name"] == "ascend"
    ascend = plugin["runtimes"]["ascend"]
    assert ascend["runtime_type"] == plugin["runtimes"]["runc"]["runtime_type"]
    assert ascend["options"]["BinaryName"] == RUNTIME
    node.exec(["containerd", "config", "dump"])
    testing.run_package(node, DOCKER_RUNTIME, "--uninstall", expect=0)
    config = tomllib.loads(testing.read_node_file(node, "/etc/containerd/config.toml"))
    plugin = config["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]
    assert plugin["default_runtime_name"] == "runc"
    assert "ascend" not in plugin["runtimes"]


def test_eula_from_26_1(node):
    run = testing.run_package(node, DOCKER_RUNTIME_EULA, "--install", input="N\n", expect=0)
    assert "Do you accept the EULA to install Ascend-docker-runtime?[Y/N]" in run.stdout
    assert run.lines[-1].endswith("install cancelled, user declined EULA")
    assert not testing.node_path_exists(node, ROOT)
    testing.run_package(node, DOCKER_RUNTIME_EULA, "--install", input="Y\n", expect=0)
    assert testing.node_path_exists(node, ROOT + "/ascend_docker_runtime_install.info")


def test_install_lasts_the_install_seconds_fault(node):
    # The fault matrix's concurrent-run row needs an install that is still running (and holding
    # the node lock) when a second run arrives; the other installers honour this fault too.
    node.set_faults({"install_seconds": 3})
    started = time.monotonic()
    run = testing.run_package(node, DOCKER_RUNTIME, "--install", expect=0)
    assert time.monotonic() - started >= 3
    assert run.lines[-2] == "[INFO] ascend-docker-runtime install success"
    assert testing.node_path_exists(node, RUNTIME)


def test_install_lasts_huaweis_duration_times_the_scale(node):
    # make bench models each installer as Huawei's own duration (build.py's table) times a scale.
    node.set_faults({"install_time_scale": 0.05})
    started = time.monotonic()
    testing.run_package(node, DOCKER_RUNTIME, "--install", expect=0)
    assert time.monotonic() - started >= 0.05 * 60
