"""The nodes' bridge keeps its MAC address while other containers come and go (docs/development.md,
"The nodes' bridge keeps its address"): without that, a node's connections to this machine time
out while its ARP cache still holds the gateway's previous address."""
from pathlib import Path

from conftest import load_fleet_module

SYSFS_NET = Path("/sys/class/net")
# The smallest locally administered unicast address: a bridge that follows its ports takes it.
LOWEST_MAC = "02:00:00:00:00:01"


def bridge_mac(bridge):
    return (SYSFS_NET / bridge / "address").read_text().strip()


def test_a_container_with_a_lower_mac_neither_moves_nor_frees_the_bridge(sandbox_node):
    fleet_module = load_fleet_module()
    bridge = fleet_module._network_bridge()
    assert bridge is not None, "the running node is on no bridge of podman's default network"
    assert (SYSFS_NET / bridge / "addr_assign_type").read_text().strip() == "3"
    assert fleet_module.BRIDGE_ANCHOR in fleet_module._bridge_ports(bridge)
    before = bridge_mac(bridge)
    image = fleet_module.build_image("x86_64")
    neighbour = sandbox_node.name + "-neighbour"
    fleet_module.podman("run", "--detach", "--rm", "--name", neighbour, "--mac-address", LOWEST_MAC,
                        "--entrypoint", "/bin/sleep", image, "300")
    try:
        with_neighbour = bridge_mac(bridge)
    finally:
        fleet_module.podman("rm", "--force", "--time", "0", neighbour, check=False)
    assert (with_neighbour, bridge_mac(bridge)) == (before, before)
