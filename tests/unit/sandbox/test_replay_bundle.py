# -*- coding: utf-8 -*-
"""A sandbox node made from a collected bundle: the fake tools answer the recorded reads verbatim and refuse
the others by name, their state for writes starts from what the bundle shows, and fleet.py derives the
node's hardware and files from the bundle (sandbox/README.md, "Replaying a server")."""

import importlib.util
import io
import json
import os
import shutil
import sys
import tarfile

import pytest
from hypothesis import given, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils import diagnostics

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PAYLOAD = os.path.join(REPO_ROOT, 'sandbox', 'packages', 'payload')
BUNDLES = os.path.join(REPO_ROOT, 'tests', 'fixtures', 'bundles')
A2 = os.path.join(BUNDLES, 'a2-training-unconfigured-npu')
P310 = os.path.join(BUNDLES, '310p-vnpus')


def _load(name, path):
    if PAYLOAD not in sys.path:
        sys.path.insert(0, PAYLOAD)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope='module')
def fleet():
    return _load('npu_ascend_sandbox_fleet_replay', os.path.join(REPO_ROOT, 'sandbox', 'fleet.py'))


@pytest.fixture
def sim(monkeypatch, tmp_path):
    """ascend_sim, the fake npu-smi and hccn_tool, replaying the A2 bundle from tmp_path."""
    ascend_sim = _load('ascend_sim', os.path.join(PAYLOAD, 'ascend_sim.py'))
    tools = {'ascend_sim': ascend_sim,
             'npu_smi': _load('npu_ascend_fake_npu_smi_replay', os.path.join(PAYLOAD, 'npu_smi.py')),
             'hccn_tool': _load('npu_ascend_fake_hccn_tool_replay', os.path.join(PAYLOAD, 'hccn_tool.py'))}
    replay_dir = tmp_path / 'replay'
    shutil.copytree(os.path.join(A2, 'commands'), str(replay_dir))
    monkeypatch.setattr(ascend_sim, 'REPLAY_DIR', str(replay_dir))
    monkeypatch.setattr(ascend_sim, 'REPLAY_DIVERGED_FILE', str(tmp_path / 'state' / 'replay-diverged.json'))
    monkeypatch.setattr(ascend_sim, 'boot_marker', lambda: '4242')
    tools['dir'] = replay_dir
    return tools


def _read(path):
    with open(path, 'rb') as handle:
        return handle.read()


def test_a_recorded_read_is_answered_verbatim(sim, capfd):
    assert sim['npu_smi'].main(['info']) == 0
    assert capfd.readouterr().out.encode() == _read(os.path.join(A2, 'commands', 'npu-smi info.txt'))
    assert sim['hccn_tool'].main(['-i', '7', '-ip', '-g']) == 13
    assert capfd.readouterr() == ('', 'Get ipconf failed, because no ip was preset there!\n')


def test_stderr_and_exit_status_come_back_as_recorded(sim, capfd):
    base = str(sim['dir'] / 'npu-smi info -t board -i 0')
    with open(base + '.txt', 'w') as handle:
        handle.write('partial\n')
    with open(base + '.stderr.txt', 'w') as handle:
        handle.write('dcmi model initialized failed, because the device is used. ret is -8020\n')
    with open(base + '.rc', 'w') as handle:
        handle.write('1\n')
    assert sim['npu_smi'].main(['info', '-t', 'board', '-i', '0']) == 1
    captured = capfd.readouterr()
    assert captured.out == 'partial\n' and captured.err.endswith('ret is -8020\n')


@pytest.mark.parametrize('tool, argv', [('npu_smi', ['info', '-t', 'board', '-i', '0']),
                                        ('hccn_tool', ['-i', '7', '-lldp', '-g']),
                                        ('hccn_tool', ['-i', '0', '-ping', '-g', 'address', '10.0.0.11'])])
def test_a_read_the_bundle_lacks_is_refused_by_name(sim, capfd, tool, argv):
    assert sim[tool].main(argv) == sim['ascend_sim'].REPLAY_MISSING_EXIT != 0
    captured = capfd.readouterr()
    name = 'npu-smi' if tool == 'npu_smi' else 'hccn_tool'
    assert captured.out == '' and captured.err.startswith('not in the bundle: %s %s (' % (name, ' '.join(argv)))


def test_hccn_state_for_a_set_starts_from_the_bundle(sim):
    live = sim['hccn_tool'].replayed_live({'npus': [{'npu_id': npu} for npu in range(8)]})
    assert live[0] == {'address': '10.0.0.10', 'netmask': '255.255.255.0', 'gateway': '10.0.0.1', 'netdetect': '10.0.0.1'}
    assert 7 not in live and sorted(live) == list(range(7))


def test_after_a_set_the_simulator_answers_the_tool(sim, monkeypatch, capfd):
    hccn = sim['hccn_tool']
    asked = []
    monkeypatch.setattr(hccn, 'simulate', lambda argv: asked.append(argv) or 0)
    assert hccn.main(['-i', '0', '-link', '-g']) == 0 and asked == []
    assert hccn.main(['-i', '7', '-ip', '-s', 'address', '10.0.0.17', 'netmask', '255.255.255.0']) == 0
    assert hccn.main(['-i', '7', '-ip', '-g']) == 0
    assert asked == [['-i', '7', '-ip', '-s', 'address', '10.0.0.17', 'netmask', '255.255.255.0'], ['-i', '7', '-ip', '-g']]
    # A refused set leaves the bundle in charge of npu-smi's vNPU reads.
    npu_smi = sim['npu_smi']
    monkeypatch.setattr(npu_smi, 'simulate', lambda argv: 1)
    assert npu_smi.main(['set', '-t', 'create-vnpu', '-i', '0', '-c', '0', '-f', 'vir99']) == 1
    assert not sim['ascend_sim'].replay_diverged(npu_smi.REPLAY_VNPU_SCOPE)
    capfd.readouterr()


def test_vnpu_state_for_a_change_starts_from_the_bundle(sim, monkeypatch):
    monkeypatch.setattr(sim['ascend_sim'], 'REPLAY_DIR', os.path.join(P310, 'commands'))
    state = sim['npu_smi'].replayed_vnpu_state({'npus': [{'npu_id': 32896, 'chips': [{'chip_id': 0}]}]})
    assert state['mode'] == 'docker' and state['recover'] is True and state['boot'] == '4242'
    assert [(vnpu['vnpu_id'], vnpu['vgroup_id'], vnpu['template']) for vnpu in state['vnpus']] == [
        (100, 0, 'vir02'), (101, 1, 'vir02_1c'), (102, 2, 'vir02')]


@given(st.lists(st.text(max_size=10), max_size=6))
def test_the_tools_and_the_collection_name_a_read_alike(args):
    ascend_sim = _load('ascend_sim', os.path.join(PAYLOAD, 'ascend_sim.py'))
    member = diagnostics.command_member(['/usr/local/sbin/npu-smi'] + args)
    assert member == diagnostics.COMMANDS_DIR + ascend_sim.replay_name('npu-smi', args)


# --- fleet.py ---------------------------------------------------------------------------------

def test_the_node_has_the_hardware_the_bundle_shows(fleet):
    spec = fleet.NodeSpec.from_host_vars('r1', {'sandbox_replay_bundle': A2})
    hardware = spec.hardware()
    assert spec.product == 'Atlas 800T A2' and hardware['roce'] is True and hardware['chip_name'] == '910B3'
    assert [(npu['npu_id'], npu['chips'][0]['bus_id']) for npu in hardware['npus']][:2] == [(0, '0000:C1:00.0'), (1, '0000:C2:00.0')]
    other = fleet.NodeSpec.from_host_vars('r2', {'sandbox_replay_bundle': P310})
    assert other.product == 'Replayed 310P3' and other.npu_ids == [32896] and 'roce' not in other.hardware()
    assert (other.hardware()['subsystem_vendor'], other.hardware()['subsystem_device']) == ('0x0200', '0x0100')
    assert spec.hardware_fingerprint() != fleet.NodeSpec('r1', 'Atlas 800T A2').hardware_fingerprint()


def _overlay(spec):
    with tarfile.open(fileobj=io.BytesIO(spec.overlay())) as archive:
        return dict((member.name, member) for member in archive.getmembers())


def test_the_node_gets_the_bundles_files_and_the_tools(fleet):
    entries = _overlay(fleet.NodeSpec.from_host_vars('r1', {'sandbox_replay_bundle': A2}))
    for path in ('usr/local/Ascend/driver/version.info', 'etc/ascend_install.info', 'usr/lib/os-release', 'etc/hccn.conf',
                 'usr/local/dcmi/ascend_sim.py'):
        assert entries[path].isfile(), path
    assert entries['usr/local/sbin/npu-smi'].mode == 0o755 and entries['usr/local/Ascend/driver/tools/hccn_tool'].mode == 0o755
    assert entries['usr/local/bin/hccn_tool'].linkname == '/usr/local/Ascend/driver/tools/hccn_tool'
    assert 'etc/os-release' not in entries
    assert entries['usr/lib/modules/%s/updates/drv_pcie_hdc_host.ko' % os.uname().release].isfile()
    assert not [name for name in entries if name.split('/')[0] in ('lib', 'bin', 'sbin')]
    inference = _overlay(fleet.NodeSpec.from_host_vars('r2', {'sandbox_replay_bundle': P310}))
    assert 'usr/local/bin/hccn_tool' not in inference and 'etc/hccn.conf' not in inference


def test_the_replay_directory_holds_the_records(fleet, tmp_path):
    spec = fleet.NodeSpec.from_host_vars('r2', {'sandbox_replay_bundle': P310})
    spec.write_replay_dir(tmp_path)
    assert (tmp_path / 'replay' / 'npu-smi info -t vnpu-mode.rc').read_text() == '0\n'
    assert json.loads((tmp_path / 'replay-index.json').read_text())
    assert json.loads((tmp_path / 'replay-driver.json').read_text()) == {'version': '25.5.2'}


def test_after_a_driver_change_the_simulator_answers(sim, monkeypatch, tmp_path, capfd):
    ascend_sim = sim['ascend_sim']
    (tmp_path / 'replay-driver.json').write_text('{"version": "24.1.rc2"}\n')
    monkeypatch.setattr(ascend_sim, 'REPLAY_DRIVER_FILE', str(tmp_path / 'replay-driver.json'))
    monkeypatch.setattr(ascend_sim, 'installed_driver_version', lambda install_path=None: '24.1.rc2')
    assert ascend_sim.replaying()
    monkeypatch.setattr(sim['npu_smi'], 'simulate', lambda argv: 42)
    monkeypatch.setattr(ascend_sim, 'installed_driver_version', lambda install_path=None: '25.0.rc1.1')
    assert not ascend_sim.replaying() and sim['npu_smi'].main(['info']) == 42
    monkeypatch.setattr(ascend_sim, 'installed_driver_version', lambda install_path=None: None)
    assert not ascend_sim.replaying()
    capfd.readouterr()


def _tar(members):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode='w:gz') as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _node_bundle(directory):
    return _tar(_members(directory))


def test_a_fleet_archive_names_the_node_to_replay(fleet, tmp_path):
    archive = tmp_path / 'npu-ascend-collect-20261207T120000Z.tar.gz'
    archive.write_bytes(_tar({'npu-ascend-collect-20261207T120000Z/index.json': b'{}',
                              'npu-ascend-collect-20261207T120000Z/train-01.tar.gz': _node_bundle(A2),
                              'npu-ascend-collect-20261207T120000Z/infer-01.tar.gz': _node_bundle(P310)}))
    with pytest.raises(fleet.SandboxError, match='fleet archive with the bundles of infer-01, train-01; fix: name the node'):
        fleet.NodeSpec.from_host_vars('r1', {'sandbox_replay_bundle': str(archive)}).hardware()
    spec = fleet.NodeSpec.from_host_vars('r1', {'sandbox_replay_bundle': str(archive), 'sandbox_replay_node': 'infer-01'})
    assert spec.npu_ids == [32896]
    single = tmp_path / 'train-01.tar.gz'
    single.write_bytes(_node_bundle(A2))
    assert fleet.NodeSpec.from_host_vars('r1', {'sandbox_replay_bundle': str(single)}).npu_count == 8


@pytest.mark.parametrize('members, message', [
    ({'index.json': b'[]', 'files/etc/os-release': b'ID=ubuntu\n'}, 'holds no commands/ records'),
    ({'commands/npu-smi info.txt': b'dcmi module initialize failed. ret is -8005\n', 'commands/npu-smi info.rc': b'1\n'},
     r'npu-smi info \(commands/npu-smi info.txt\) failed \(exit 1\)'),
    ({'commands/npu-smi info.txt': open(os.path.join(A2, 'commands', 'npu-smi info.txt')).read().encode(),
      'commands/npu-smi info.rc': b'0\n'}, 'node\'s PCI devices are unknown'),
    ({'commands/npu-smi info.txt': open(os.path.join(REPO_ROOT, 'tests', 'fixtures', 'samples', 'npu-smi',
                                                     '310B4_23.0.rc3_info.txt')).read().encode(),
      'commands/npu-smi info.rc': b'0\n'}, 'shows no PCI bus id for NPU 0'),
])
def test_a_bundle_that_cannot_make_a_node_says_why(fleet, tmp_path, members, message):
    path = tmp_path / 'bundle.tar.gz'
    path.write_bytes(_tar(members))
    spec = fleet.NodeSpec.from_host_vars('r1', {'sandbox_replay_bundle': str(path)})
    with pytest.raises(fleet.SandboxError, match='r1: cannot replay .*' + message):
        spec.npu_ids


def test_not_a_bundle_at_all(fleet, tmp_path):
    path = tmp_path / 'x.tar.gz'
    path.write_text('not a tar')
    with pytest.raises(fleet.SandboxError, match='cannot be read as a bundle'):
        fleet.NodeSpec.from_host_vars('r1', {'sandbox_replay_bundle': str(path)}).arch


def test_a_node_whose_bundle_is_gone_can_still_be_removed(fleet, tmp_path, monkeypatch):
    monkeypatch.setattr(fleet, 'NODES_STATE_DIR', tmp_path / 'nodes')
    monkeypatch.setattr(fleet, 'podman', lambda *args, **kwargs: None)
    monkeypatch.setattr(fleet, 'release_bridge', lambda: None)
    (tmp_path / 'nodes' / 'r1').mkdir(parents=True)
    gone = fleet.Fleet([fleet.NodeSpec.from_host_vars('r1', {'sandbox_replay_bundle': str(tmp_path / 'gone.tar.gz')})])
    gone.down()
    assert not (tmp_path / 'nodes' / 'r1').exists()
    with pytest.raises(fleet.SandboxError, match='r1: cannot replay'):
        gone.spec('r1').hardware()


def test_from_bundle_makes_one_node(fleet):
    both = fleet.Fleet([fleet.NodeSpec('a', 'Atlas 800T A2'), fleet.NodeSpec('b', 'Atlas 800T A2')])
    with pytest.raises(fleet.SandboxError, match='--from-bundle makes one node; name it with --limit'):
        both.replay_from(A2)
    one = fleet.Fleet([fleet.NodeSpec('a', 'Atlas 800I A2')], {'a': {'sandbox_product': 'Atlas 800I A2'}})
    one.replay_from(P310)
    assert one.spec('a').npu_ids == [32896] and isinstance(one.spec('a'), fleet.ReplaySpec)


def test_a_member_that_would_leave_the_bundle_is_ignored(fleet, tmp_path):
    members = dict((name, data) for name, data in _members(A2).items())
    members['files/../../etc/version.info'] = b'Version=9\n'
    members['/commands/npu-smi info -m.rc'] = b'7\n'
    members['commands/..'] = b'x'
    path = tmp_path / 'bundle.tar.gz'
    path.write_bytes(_tar(members))
    spec = fleet.NodeSpec.from_host_vars('r1', {'sandbox_replay_bundle': str(path)})
    assert not [name for name in spec.members if '..' in name.split('/')]
    assert spec.members['commands/npu-smi info -m.rc'] == b'0\n'
    spec.write_replay_dir(tmp_path / 'hardware')
    assert sorted(os.listdir(str(tmp_path / 'hardware'))) == ['replay', 'replay-driver.json', 'replay-index.json']


def _members(directory):
    found = {}
    for root, _dirs, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            found[os.path.relpath(path, directory)] = _read(path)
    return found


SAMPLE_DIRS = (os.path.join(REPO_ROOT, 'tests', 'fixtures', 'samples', 'npu-smi'),
               os.path.join(REPO_ROOT, 'tests', 'unit', 'fixtures', 'npu_smi_synthetic'))


@pytest.mark.parametrize('sample', sorted(os.path.join(directory, name) for directory in SAMPLE_DIRS
                                          for name in os.listdir(directory)
                                          if name.endswith(('_info.txt', '_info-vm.txt', '_info-with-processes.txt',
                                                            '_info-narrow.txt', '_info-wide.txt'))))
def test_the_replay_reads_the_chips_of_every_sample_as_the_collection_does(sample):
    from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_smi
    replay = _load('npu_ascend_sandbox_replay_samples', os.path.join(REPO_ROOT, 'sandbox', 'replay.py'))
    with open(sample) as handle:
        text = handle.read()
    expected = [(chip['npu_id'], chip['chip_id'], chip['name'], chip['health'], (chip.get('bus_id') or 'NA').upper())
                for chip in npu_smi.parse_info(text)['chips']]
    assert [(chip['npu_id'], chip['chip_id'], chip['name'], chip['health'], chip['bus_id'] or 'NA')
            for chip in replay.chips_from_info(text)] == expected
