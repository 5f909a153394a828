"""Fake ``hccn_tool`` of the sandbox (installed by the fake driver as
<install path>/driver/tools/hccn_tool, linked from /usr/local/bin/hccn_tool).

It configures and reads the simulated RoCE port of each NPU the way Huawei's tool does (facts in
docs/hccn.md): live state in /run (lost at a reboot, like the device's), saved state in
/etc/hccn.conf (root:root 0640, one ``<key>_<npu>=<value>`` line per key), ``-cfg recovery``
(run at boot by the driver's unit) restores the live state from the file.

Between nodes: the nodes of one fabric (host variable ``sandbox_fabric``) share a directory the host
made, /var/lib/ascend-sandbox-fabric: ``fabric.json`` (written by the host: the switch ports each
NPU is cabled to, the addresses that answer, such as gateways), ``faults/<node>.json`` (copies of
each node's faults, written by the host) and ``state/<node>.json`` (each node's live addresses,
written by that node's hccn_tool). A ping and a net health read of one node therefore depend on
the other nodes' configuration.

A fresh NPU has no address, gateway or detect address, as on a real server: ``-ip -g`` prints
``Get ipconf failed, because no ip was preset there!`` (exit code 13) and ``-gateway -g`` ``Get
gateway failed, because no gateway was preset there!`` (exit code 2), on stderr (a 910B3 on driver
25.5.1, MindIE's multi-node guide; the strings, the stream and the codes, 0x400D and 0x4002 as
main() returns them, are the driver source's: docs/hccn.md).

Not backed by a public transcript, so chosen by us (sandbox/README.md, "hccn_tool";
docs/huawei-sources.md, "Outputs no public capture confirms"): the messages of a refusal and their
exit code 1, ``Cmd executed successfully!`` after every set (seen after ``-tls -s``), an unset
detect address printed as ``netdetect addr: 0.0.0.0``, ``lldp info is not available.`` without a
link, no line per lost ping packet, the net health of a detect address that does not answer
(``Receive timeout``) or is outside the subnet (``Unreachable``), and that pings to an address two
nodes hold are answered by neither.
"""

import ipaddress
import os
import random
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, "/usr/local/dcmi")

import ascend_sim  # noqa: E402  (found next to this file in the payload, in /usr/local/dcmi on a node)

CONF_FILE = "/etc/hccn.conf"
LIVE_FILE = "/run/ascend-sandbox/hccn-live.json"
FABRIC_DIR = "/var/lib/ascend-sandbox-fabric"
RESERVED = [ipaddress.ip_network("192.168.1.0/24"), ipaddress.ip_network("192.168.2.0/24")]
# Older A1 servers in SMP mode also refuse 192.168.3.0/24 to 192.168.5.0/24.
RESERVED_A1 = [ipaddress.ip_network("192.168.%d.0/24" % third) for third in (3, 4, 5)]
# Atlas A3 (driver source, tool_a3_ipaddr_conflict_extend): a SuperPoD member (server index < 48)
# refuses all of 192.0.0.0/8 (its vNICs' range), any other A3 192.168.0.0/21.
A3_SUPERPOD_MAX_SERVERS = 48
RESERVED_A3_SUPERPOD = [ipaddress.ip_network("192.0.0.0/8")]
RESERVED_A3 = [ipaddress.ip_network("192.168.0.0/21")]
# -hccs_ping exists only on these A3 main boards (driver source, tool_ping_cmd_execute_ext: Atlas 9000 A3
# SuperPoD 0x1C/0x1D, Atlas 900 A3 SuperPoD 0x18/0x19, A+K 0x14, A+X 0x15); elsewhere the error table's
# sentence.
HCCS_PING_MAIN_BOARDS = ("0x1c", "0x1d", "0x18", "0x19", "0x14", "0x15")
NOT_SUPPORTED = "The command is not supported on this product."
VNIC_NETMASK = "255.255.255.0"
CONF_KEYS = ("address", "netmask", "netdetect", "gateway", "send_arp_status")
DONE = "Cmd executed successfully!"
# What -g prints on stderr for a value never set (the driver source's error table), and its exit code: main()
# returns the error's code, UDA_DSMI_IPCONF_NOT_PRESET_ERR 0x400D and UDA_DSMI_GATEWAY_NOT_PRESET_ERR 0x4002.
NO_IP = "Get ipconf failed, because no ip was preset there!"
NO_IP_EXIT = 13
NO_GATEWAY = "Get gateway failed, because no gateway was preset there!"
NO_GATEWAY_EXIT = 2
PING_COUNT = 3


class HccnFailure(Exception):
    def __init__(self, message, exit_code=1, stream="stdout"):
        Exception.__init__(self, message)
        self.message = message
        self.exit_code = exit_code
        self.stream = stream


def node_name():
    return os.uname()[1]


def is_a3(hardware):
    return str(hardware.get("chip_family", "")).lower() == "a3"


def npu_ids(hardware):
    """The ids -i takes: one per NPU, on an A3 one per die (its Phy-ID, 0..15)."""
    if is_a3(hardware):
        return [chip.get("phy_id", chip["logic_id"]) for chip in ascend_sim.hardware_chips(hardware)]
    return [npu.get("npu_id") for npu in hardware.get("npus", [])]


def super_pod_server(hardware):
    """The server index of an A3 SuperPoD member, else None."""
    super_pod = hardware.get("super_pod") or {}
    index = super_pod.get("server_index")
    return int(index) if index is not None and int(index) < A3_SUPERPOD_MAX_SERVERS else None


# --- state ----------------------------------------------------------------------------------

def read_conf(path=None):
    """{npu: {key: value}} from /etc/hccn.conf (lines `key_N=value`), plus the lines as read."""
    path = path or CONF_FILE
    npus, lines = {}, []
    try:
        with open(path) as handle:
            lines = handle.read().splitlines()
    except (IOError, OSError):
        pass
    for line in lines:
        key, separator, value = line.partition("=")
        name, npu = key.strip().rpartition("_")[::2]
        if separator and name and npu.isdigit():
            npus.setdefault(int(npu), {})[name] = value.strip()
    return npus, lines


def write_conf_value(npu, key, value, path=None):
    """Sets `key_npu=value` in place (other lines kept), as hccn_tool does after a set."""
    path = path or CONF_FILE
    lines = read_conf(path)[1]
    wanted = "%s_%d=%s" % (key, npu, value)
    prefix = "%s_%d=" % (key, npu)
    replaced = False
    for index, line in enumerate(lines):
        if line.strip().startswith(prefix):
            lines[index] = wanted
            replaced = True
    if not replaced:
        lines.append(wanted)
    temporary = path + ".tmp"
    with open(temporary, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    os.chmod(temporary, 0o640)
    os.chown(temporary, 0, 0)
    os.replace(temporary, path)


def read_live():
    saved = ascend_sim.read_json(LIVE_FILE, None)
    if saved is None and ascend_sim.replaying():
        return replayed_live(ascend_sim.load_hardware())
    return {int(npu): values for npu, values in (saved or {}).items()}


def write_live(live):
    ascend_sim.write_json_atomic(LIVE_FILE, {str(npu): values for npu, values in live.items()})
    publish(live)


def publish(live):
    """This node's live addresses, for the other nodes of the fabric."""
    if os.path.isdir(os.path.join(FABRIC_DIR, "state")):
        ascend_sim.write_json_atomic(os.path.join(FABRIC_DIR, "state", node_name() + ".json"),
                                     {str(npu): values for npu, values in live.items()})


def fabric():
    return ascend_sim.read_json(os.path.join(FABRIC_DIR, "fabric.json"), {}) or {}


def node_faults(node):
    if node == node_name():
        return ascend_sim.load_faults()
    return ascend_sim.read_json(os.path.join(FABRIC_DIR, "faults", node + ".json"), {}) or {}


def fabric_nodes():
    """{node: live state} of every node of the fabric (this one read directly)."""
    nodes = {}
    state_dir = os.path.join(FABRIC_DIR, "state")
    if os.path.isdir(state_dir):
        for name in sorted(os.listdir(state_dir)):
            if name.endswith(".json"):
                data = ascend_sim.read_json(os.path.join(state_dir, name), {}) or {}
                nodes[name[:-5]] = {int(npu): values for npu, values in data.items()}
    nodes[node_name()] = read_live()
    return nodes


# --- the port's condition ---------------------------------------------------------------------

def _npu_list(value):
    return [int(npu) for npu in value or []]


def link_up(node, npu, live_values):
    faults = node_faults(node)
    if npu in _npu_list(faults.get("hccn_link_down")):
        return False
    return (live_values or {}).get("link", "up") != "down"


def swapped(node, npu):
    return any(npu in [int(member) for member in pair] for pair in node_faults(node).get("hccn_swapped_cables") or [])


def holders(address):
    """(node, npu) of every NPU of the fabric holding ``address``."""
    found = []
    for node, live in fabric_nodes().items():
        for npu, values in live.items():
            if values.get("address") == address:
                found.append((node, npu))
    return found


def answers(address, asker_node):
    """Whether ``address`` answers on the fabric: a gateway or other fabric address, or one NPU
    (exactly one) whose link is up and whose cable sits where the plan says."""
    if address in (fabric().get("answering") or []):
        return not node_faults(asker_node).get("hccn_detect_unanswered")
    found = holders(address)
    if len(found) != 1:
        return False
    node, npu = found[0]
    return link_up(node, npu, fabric_nodes().get(node, {}).get(npu)) and not swapped(node, npu)


def net_health(npu, live_values):
    me = node_name()
    override = (node_faults(me).get("hccn_net_health") or {}).get(str(npu))
    if override:
        return override
    if not live_values or not live_values.get("address"):
        return "Init"
    if not link_up(me, npu, live_values):
        return "Fault"
    detect = live_values.get("netdetect")
    if not detect:
        return "Init"
    network = ipaddress.ip_network("%s/%s" % (live_values["address"], live_values["netmask"]), strict=False)
    if ipaddress.ip_address(detect) not in network:
        return "Unreachable"
    if len(holders(live_values["address"])) > 1:
        return "Fault"
    if swapped(me, npu):
        # The port still reaches the switch and the detect address; only the peers behind it are wrong.
        return "Success"
    return "Success" if answers(detect, me) else "Receive timeout"


# --- commands -----------------------------------------------------------------------------------

def check_address(text, what):
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        raise HccnFailure("Tool set device %s is invalid." % what)


def set_ip(npu, args, live, hardware):
    if len(args) != 4 or args[0] != "address" or args[2] != "netmask":
        raise HccnFailure("Parameter error. Usage: hccn_tool -i <npu> -ip -s address <A> netmask <M>")
    address = check_address(args[1], "ipaddr")
    try:
        network = ipaddress.ip_network("%s/%s" % (args[1], args[3]), strict=False)
    except ValueError:
        raise HccnFailure("Tool set device netmask is invalid.")
    reserved = RESERVED + (RESERVED_A1 if str(hardware.get("chip_family")) == "910" else [])
    if is_a3(hardware):
        reserved = RESERVED_A3_SUPERPOD if super_pod_server(hardware) is not None else RESERVED_A3
    if any(network.overlaps(subnet) for subnet in reserved):
        raise HccnFailure("Ipaddr conflict.")
    for other, values in live.items():
        if other != npu and values.get("address") == str(address):
            raise HccnFailure("Ipaddr conflict.")
    values = live.setdefault(npu, {})
    values.update({"address": str(address), "netmask": args[3]})
    write_live(live)
    write_conf_value(npu, "address", str(address))
    write_conf_value(npu, "netmask", args[3])


def set_single(npu, args, live, key, conf_key):
    if len(args) != 2 or args[0] not in ("address", "gateway"):
        raise HccnFailure("Parameter error.")
    address = check_address(args[1], key)
    live.setdefault(npu, {})[key] = str(address)
    write_live(live)
    write_conf_value(npu, conf_key, str(address))


def show_address(value):
    return value or "0.0.0.0"


def ping(npu, args, live):
    if len(args) < 2 or args[0] != "address":
        raise HccnFailure("Parameter error. Usage: hccn_tool -i <npu> -ping -g address <A>")
    target = str(check_address(args[1], "ipaddr"))
    values = live.get(npu) or {}
    me = node_name()
    lines = ["device %d PING %s" % (npu, target)]
    reachable = (values.get("address") and link_up(me, npu, values) and not swapped(me, npu)
                 and answers(target, me) and target != values.get("address"))
    if reachable:
        network = ipaddress.ip_network("%s/%s" % (values["address"], values["netmask"]), strict=False)
        reachable = ipaddress.ip_address(target) in network or bool(values.get("gateway"))
    received = PING_COUNT if reachable else 0
    generator = random.Random("%s-%d-%s" % (me, npu, target))
    for seq in range(received):
        lines.append("recv seq=%d,time=%.6fms" % (seq, generator.uniform(0.05, 0.2)))
    lines.append("%d packets transmitted, %d received, %.2f%% packet loss"
                 % (PING_COUNT, received, 100.0 * (PING_COUNT - received) / PING_COUNT))
    return "\n".join(lines)


# --- A3: the vNIC (HCCS plane) and -hccs_ping -------------------------------------------------

def vnic_address(hardware, device):
    """192.<server index>.<2 + die>.<199 - device> (driver source, tool_cmd.c) in a SuperPoD; outside one
    192.168.<2 + die>.<199 - device>, inside the 192.168.0.0/21 an A3 refuses (our inference)."""
    server = super_pod_server(hardware)
    die = device % 2
    return "192.%s.%d.%d" % (server if server is not None else 168, 2 + die, 199 - device)


def hccs_link_up(device):
    """Whether the die's HCCS link (its vNIC) is up: fault hccn_hccs_link_down lists the dies whose link is down."""
    return device not in _npu_list(node_faults(node_name()).get("hccn_hccs_link_down"))


def vnic(hardware, device):
    return "vnic link status: %s\nvnic ipaddr: %s\nvnic netmask: %s" % (
        "UP" if hccs_link_up(device) else "DOWN", vnic_address(hardware, device), VNIC_NETMASK)


def _int_option(args, name, default, low, high):
    if name not in args:
        return default
    try:
        value = int(args[args.index(name) + 1])
    except (IndexError, ValueError):
        value = None
    if value is None or not low <= value <= high:
        raise HccnFailure("Parameter error: %s must be in [%d, %d]." % (name, low, high))
    return value


def _vnic_target(text):
    """(server, device) of a vNIC address or an SDID, checked as the source does (chip*2+die == device)."""
    try:
        address = ipaddress.ip_address(text)
        octets = [int(part) for part in str(address).split(".")]
        server, die, device = octets[1], octets[2] - 2, 199 - octets[3]
    except ValueError:
        raise HccnFailure("Parameter error: invalid address %s." % text)
    if octets[0] != 192 or die not in (0, 1) or not 0 <= device <= 15 or device % 2 != die:
        raise HccnFailure("Parameter error: %s is not a vnic address." % text)
    return server, device


def hccs_ping(hardware, device, args):
    """``-hccs_ping -g address A | sdid N [pkt P] [cnt C] [interval I] [timeout T]`` (driver source for the
    syntax and the lines; no real capture). A target answers when it is a die of this node, or of a
    server of this node's SuperPoD (the sandbox has no HCCS network between nodes: our choice)."""
    if not args or args[0] not in ("address", "sdid") or len(args) < 2:
        raise HccnFailure("Parameter error. Usage: hccn_tool -i <devid> -hccs_ping -g address <A>|sdid <N> "
                          "[pkt 1792-3000] [cnt 1-1000] [interval 0-10] [timeout 1-20000]")
    if args[0] == "sdid":
        try:
            sdid = int(args[1], 0)
        except ValueError:
            raise HccnFailure("Parameter error: invalid sdid %s." % args[1])
        server, chip, die, target_device = sdid >> 22, (sdid >> 18) & 0xF, (sdid >> 16) & 0x3, sdid & 0xFFFF
        if chip * 2 + die != target_device or target_device > 15:
            raise HccnFailure("Parameter error: invalid sdid %s." % args[1])
        target = "192.%d.%d.%d" % (server, 2 + die, 199 - target_device)
    else:
        target = args[1]
        server, target_device = _vnic_target(target)
    _int_option(args, "pkt", 1792, 1792, 3000)
    count = _int_option(args, "cnt", 3, 1, 1000)
    _int_option(args, "interval", 0, 0, 10)
    _int_option(args, "timeout", 0, 1, 20000)
    own = super_pod_server(hardware)
    if own is None:
        reachable = target == vnic_address(hardware, target_device)
    else:
        servers = max(1, (int(hardware["super_pod"].get("size", 384)) + 7) // 8)
        reachable = server < min(servers, A3_SUPERPOD_MAX_SERVERS)
    # A die whose HCCS link is down neither sends nor answers (fault hccn_hccs_link_down).
    if not hccs_link_up(device) or (own is not None and server == own and not hccs_link_up(target_device)):
        reachable = False
    generator = random.Random("%s-%d-%s" % (node_name(), device, target))
    lines = ["device %d PING %s" % (device, target), ""]
    times = []
    for seq in range(count):
        if reachable:
            times.append(generator.uniform(8.0, 16.0))
            lines += ["This pkt ping success!",
                      "recv seq %d, time = %.3fus, L1 plane check result = 0x0" % (seq, times[-1]), ""]
        else:
            lines += ["This pkt check recv msg fail!"]
    lines.append("%d packets transmitted, %d received, %.2f%% packets loss"
                 % (count, len(times), 100.0 * (count - len(times)) / count))
    if times:
        ordered = sorted(times)
        tp95 = ordered[max(0, -(-len(ordered) * 95 // 100) - 1)]
        lines += ["max time %.3fus" % ordered[-1], "min time %.3fus" % ordered[0],
                  "average time %.3fus" % (sum(ordered) / len(ordered)), "TP95 time %.3fus" % tp95]
    return "\n".join(lines)


def lldp(npu):
    ports = (fabric().get("ports") or {}).get(node_name()) or {}
    port = ports.get(str(npu))
    # No link, no LLDP frames from the switch.
    if port is None or not link_up(node_name(), npu, read_live().get(npu)):
        raise HccnFailure("lldp info is not available.")
    for pair in node_faults(node_name()).get("hccn_swapped_cables") or []:
        pair = [int(member) for member in pair]
        if npu in pair:
            port = ports.get(str(pair[1] if npu == pair[0] else pair[0]), port)
    return "\n".join(["Chassis ID TLV", "\tMAC: %s" % (fabric().get("switch_mac") or "00:00:5e:00:53:01"),
                      "Port ID TLV", "\tIfname: %s" % port, "Maximum Frame Size TLV", "\t9216"])


def recovery(ids, live):
    conf = read_conf()[0]
    for npu in ids:
        saved = conf.get(npu, {})
        values = {"link": "up"}
        for key, conf_key in (("address", "address"), ("netmask", "netmask"), ("gateway", "gateway"),
                              ("netdetect", "netdetect")):
            if saved.get(conf_key):
                values[key] = saved[conf_key]
        live[npu] = values
    write_live(live)


def run(argv):
    hardware = ascend_sim.load_hardware()
    if not hardware.get("roce"):
        raise HccnFailure("This device does not support hccn_tool (no RoCE port).")
    if ascend_sim.driver_reboot_pending() or not ascend_sim.installed_driver_version():
        raise HccnFailure("dsmi get device info failed. ret is %d" % -8005)
    ids = npu_ids(hardware)
    live = read_live()
    if argv[:2] == ["-cfg", "recovery"]:
        recovery(ids, live)
        return DONE
    if len(argv) < 4 or argv[0] != "-i":
        raise HccnFailure("Parameter error. Usage: hccn_tool -i <npu> -<command> -g|-s ...")
    try:
        npu = int(argv[1])
    except ValueError:
        raise HccnFailure("Parameter error: invalid device id %s." % argv[1])
    if npu not in ids:
        raise HccnFailure("Device id %d is invalid." % npu)
    command, mode, args = argv[2], argv[3], argv[4:]
    values = live.get(npu) or {}
    if command == "-cfg" and mode == "recovery":
        recovery([npu], live)
        return DONE
    if mode == "-g":
        if command == "-ip":
            if not values.get("address"):
                raise HccnFailure(NO_IP, NO_IP_EXIT, "stderr")
            return "ipaddr:%s\nnetmask:%s" % (values["address"], show_address(values.get("netmask")))
        if command == "-netdetect":
            return "netdetect addr: %s" % show_address(values.get("netdetect"))
        if command == "-gateway":
            if not values.get("gateway"):
                raise HccnFailure(NO_GATEWAY, NO_GATEWAY_EXIT, "stderr")
            return "default gateway:%s, Iface:eth%d" % (values["gateway"], npu)
        if command == "-link":
            return "link status: %s" % ("UP" if link_up(node_name(), npu, values) else "DOWN")
        if command == "-net_health":
            return "net health status: %s" % net_health(npu, values)
        if command == "-ping":
            return ping(npu, args, live)
        if command == "-lldp":
            return lldp(npu)
        if command == "-vnic" and is_a3(hardware):
            return vnic(hardware, npu)
        if command == "-hccs_ping":
            if not is_a3(hardware) or str(hardware.get("main_board_id") or "").lower() not in HCCS_PING_MAIN_BOARDS:
                raise HccnFailure(NOT_SUPPORTED)
            return hccs_ping(hardware, npu, args)
    if mode == "-s":
        if command == "-ip":
            set_ip(npu, args, live, hardware)
            return DONE
        if command == "-gateway":
            set_single(npu, args, live, "gateway", "gateway")
            return DONE
        if command == "-netdetect":
            set_single(npu, args, live, "netdetect", "netdetect")
            return DONE
        if command == "-link" and args in (["up"], ["down"]):
            live.setdefault(npu, {})["link"] = args[0]
            write_live(live)
            return DONE
    raise HccnFailure("Parameter error: unsupported command %s %s." % (command, mode))


def simulate(argv):
    try:
        print(run(argv))
        return 0
    except HccnFailure as failure:
        print(failure.message, file=sys.stderr if failure.stream == "stderr" else sys.stdout)
        return failure.exit_code


# --- replay of a collected bundle (ascend_sim.REPLAY_DIR) -----------------------------------

REPLAY_SCOPE = "hccn_tool"


def _writes(argv):
    return argv[:1] == ["-cfg"] or argv[2:3] == ["-cfg"] or argv[3:4] == ["-s"]


def _recorded_read(npu, option):
    return ascend_sim.replay_text("hccn_tool", ["-i", str(npu), option, "-g"]) or ""


def replayed_live(hardware):
    """The live state the bundle shows (each NPU's -ip, -gateway, -netdetect and -link reads): where the
    simulator starts from when an address is first set on a replayed node."""
    live = {}
    for npu in npu_ids(hardware):
        values = {}
        for key, option, pattern in (("address", "-ip", r"ipaddr:\s*(\S+)"), ("netmask", "-ip", r"netmask:\s*(\S+)"),
                                     ("gateway", "-gateway", r"gateway:\s*([0-9.]+)"),
                                     ("netdetect", "-netdetect", r"netdetect addr(?:ess)?:\s*(\S+)")):
            found = re.search(pattern, _recorded_read(npu, option))
            if found and found.group(1) != "0.0.0.0":
                values[key] = found.group(1)
        if re.search(r"link status:\s*DOWN", _recorded_read(npu, "-link")):
            values["link"] = "down"
        if values:
            live[npu] = values
    return live


def replay_main(argv):
    """On a node that replays a bundle: a recorded read answers verbatim; a set goes to the simulator (its
    live state seeded from the bundle), after which every read comes from the simulator."""
    if _writes(argv) or ascend_sim.replay_diverged(REPLAY_SCOPE):
        status = simulate(argv)
        if status == 0 and _writes(argv):
            ascend_sim.mark_replay_diverged(REPLAY_SCOPE)
        return status
    return ascend_sim.print_replay(ascend_sim.replay_answer("hccn_tool", argv))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if ascend_sim.replaying():
        return replay_main(argv)
    return simulate(argv)


if __name__ == "__main__":
    sys.exit(main())
