# -*- coding: utf-8 -*-
"""ascend_collect keeps every read the collection makes on a node verbatim (commands/<argv>.txt, .rc,
.stderr.txt), so that a sandbox node can replay the server (docs/collect.md, "Replaying a bundle")."""
import os
import tarfile

import pytest
from hypothesis import given, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils import diagnostics
from ansible_collections.npu.ascend.plugins.modules import ascend_collect
from conftest import write_tool

SAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       'fixtures', 'samples')


def _sample(name):
    with open(os.path.join(SAMPLES, name)) as handle:
        return handle.read()


@pytest.fixture
def node(tmp_path, monkeypatch):
    tools = tmp_path / 'bin'
    tools.mkdir()
    (tmp_path / 'info.txt').write_text(_sample('npu-smi/910B3_24.1.rc2_info-with-processes.txt'))
    write_tool(tools, 'npu-smi', 'echo "$*" >> %s\n'
                                 'case "$*" in\n'
                                 '  info) cat %s;;\n'
                                 '  "info -t board -i 3") echo "Board ID : 0x02" ; echo "a warning" >&2;;\n'
                                 '  "info -t info-vnpu -i 5 -c 0") echo "The device does not support" ; exit 3;;\n'
                                 '  *) echo "NPU ID : $*";;\n'
                                 'esac\n' % (tmp_path / 'npu-smi-calls.log', tmp_path / 'info.txt'))
    write_tool(tools, 'lspci', 'echo "$*" >> %s\necho "lspci $*"\n' % (tmp_path / 'lspci-calls.log'))
    install = tmp_path / 'Ascend'
    (install / 'driver' / 'tools').mkdir(parents=True)
    write_tool(install / 'driver' / 'tools', 'hccn_tool',
               'if [ "$*" = "-i 7 -ip -g" ]; then echo "Get ipconf failed, because no ip was preset there!"; exit 255; fi\n'
               'echo "read $*"\n')
    monkeypatch.setenv('PATH', '%s:/usr/bin:/bin' % tools)
    monkeypatch.setattr(ascend_collect, 'LOG_DIRECTORIES', ())
    monkeypatch.setattr(ascend_collect, 'RECORDS_DIR', str(tmp_path / 'records'))
    monkeypatch.setattr(ascend_collect, 'SYSTEM_FILES', ())
    return {'tmp': tmp_path, 'install': install, 'tools': tools}


def _run(node, run_module, **changes):
    args = {'dest': str(node['tmp'] / 'bundle.tar.gz'), 'install_path': str(node['install']),
            'containerd_config': str(node['tmp'] / 'none.toml'), 'containerd_drop_in_dir': str(node['tmp'] / 'none.d'),
            'docker_config': str(node['tmp'] / 'none.json'), 'timeout': 5}
    args.update(changes)
    result = run_module(ascend_collect, args, diff=False)
    assert not result.get('failed'), result
    with tarfile.open(result['dest']) as archive:
        return result, dict((member.name, archive.extractfile(member).read()) for member in archive.getmembers())


def test_every_read_is_kept_verbatim_with_its_exit_status(node, run_module):
    result, members = _run(node, run_module)
    commands = sorted(name for name in members if name.startswith('commands/') and name.endswith('.rc'))
    # npu-smi: info, -l, -m, one board per NPU, info-vnpu of each 910B3 chip and the three vNPU settings;
    # hccn_tool: six reads of each of the 8 NPUs; lspci: two.
    assert len(commands) == 3 + 8 + 8 + 3 + 8 * 6 + 2
    assert members['commands/npu-smi info.txt'].decode() == _sample('npu-smi/910B3_24.1.rc2_info-with-processes.txt')
    assert members['commands/npu-smi info.rc'] == b'0\n'
    assert members['commands/npu-smi info -t board -i 3.txt'] == b'Board ID : 0x02\n'
    assert members['commands/npu-smi info -t board -i 3.stderr.txt'] == b'a warning\n'
    assert 'commands/npu-smi info -t board -i 4.stderr.txt' not in members
    assert members['commands/npu-smi info -t info-vnpu -i 5 -c 0.rc'] == b'3\n'
    assert members['commands/hccn_tool -i 7 -ip -g.txt'] == b'Get ipconf failed, because no ip was preset there!\n'
    assert members['commands/hccn_tool -i 7 -ip -g.rc'] == b'255\n'
    assert members['commands/hccn_tool -i 0 -net_health -g.txt'] == b'read -i 0 -net_health -g\n'
    assert members['commands/lspci -vmm -nn -D -d 19e5%3A.txt'] == b'lspci -vmm -nn -D -d 19e5:\n'
    by_member = dict((entry['member'], entry) for entry in result['index'])
    assert by_member['commands/hccn_tool -i 7 -ip -g.rc']['detail'] == 'exit 255'


def test_each_command_runs_once(node, run_module):
    _run(node, run_module)
    for tool in ('npu-smi', 'lspci'):
        calls = (node['tmp'] / ('%s-calls.log' % tool)).read_text().splitlines()
        assert calls and len(calls) == len(set(calls)), (tool, calls)


def test_boards_come_from_the_npu_list_when_the_table_cannot_be_read(node, run_module):
    (node['tmp'] / 'info.txt').write_text('| npu-smi 25.0.rc1.1   Version: 25.0.rc1.1 |\n')
    write_tool(node['tools'], 'npu-smi', 'case "$*" in\n'
                                         '  info) cat %s;;\n'
                                         '  "info -l") printf "Total Count : 2\\n\\nNPU ID : 0\\nChip Count : 1\\n\\nNPU ID : 6\\n'
                                         'Chip Count : 1\\n";;\n'
                                         '  *) echo "read $*";;\n'
                                         'esac\n' % (node['tmp'] / 'info.txt'))
    _result, members = _run(node, run_module)
    boards = sorted(name for name in members if name.startswith('commands/npu-smi info -t board') and name.endswith('.txt'))
    assert boards == ['commands/npu-smi info -t board -i 0.txt', 'commands/npu-smi info -t board -i 6.txt']
    # Without the table's chip names nothing asks for vNPUs, and hccn_tool reads the listed NPUs.
    assert not [name for name in members if 'info-vnpu' in name]
    assert 'commands/hccn_tool -i 6 -ip -g.txt' in members


def test_a_node_without_the_tools_says_so(node, run_module, tmp_path):
    os.remove(str(node['tools'] / 'npu-smi'))
    os.remove(str(node['install'] / 'driver' / 'tools' / 'hccn_tool'))
    result, members = _run(node, run_module, install_path=str(tmp_path / 'elsewhere'))
    assert not [name for name in members if name.startswith('commands/npu-smi') or name.startswith('commands/hccn')]
    absent = dict((entry['member'], entry['detail']) for entry in result['index'] if entry['status'] == 'absent')
    assert absent['commands/npu-smi*'] == 'npu-smi is not installed'
    assert 'training servers' in absent['commands/hccn_tool*']


def test_an_unreadable_chip_list_reads_no_board_and_says_why(node, run_module):
    (node['tmp'] / 'info.txt').write_text('dcmi module initialize failed. ret is -8005\n')
    result, members = _run(node, run_module)
    assert members['commands/npu-smi info.txt'] == b'dcmi module initialize failed. ret is -8005\n'
    assert not [name for name in members if name.startswith('commands/npu-smi info -t')]
    failed = [entry for entry in result['index'] if entry['member'] == 'commands/npu-smi info -t*']
    assert failed and failed[0]['status'] == 'failed' and '-8005' in failed[0]['detail']


def test_a_read_that_does_not_answer_is_named_not_replayed(node, run_module):
    write_tool(node['tools'], 'lspci', 'sleep 30\n')
    result, members = _run(node, run_module, timeout=1)
    assert not [name for name in members if name.startswith('commands/lspci')]
    stopped = [entry for entry in result['index'] if entry['member'].startswith('commands/lspci')]
    assert len(stopped) == 2 and all(entry['status'] == 'failed' and 'within 1 s' in entry['detail'] for entry in stopped)


def test_member_names_are_the_argv_with_the_tool_by_its_base_name():
    assert diagnostics.command_member(['/usr/local/sbin/npu-smi', 'info', '-t', 'board', '-i', '0']) == \
        'commands/npu-smi info -t board -i 0'
    assert diagnostics.command_member(['hccn_tool', '-i', '1', '-ping', '-g', 'address', '10.0.0.1']) == \
        'commands/hccn_tool -i 1 -ping -g address 10.0.0.1'
    assert diagnostics.command_member(['x', 'a b', '50%', '../etc', 'é']) == 'commands/x a%20b 50%25 ..%2Fetc %C3%A9'
    with pytest.raises(ValueError):
        diagnostics.command_member([])


@given(st.lists(st.text(min_size=0, max_size=12), min_size=1, max_size=5),
       st.lists(st.text(min_size=0, max_size=12), min_size=1, max_size=5))
def test_two_argvs_never_share_a_member(first, second):
    first, second = ['tool'] + first, ['tool'] + second
    member = diagnostics.command_member(first)
    assert '/' not in member[len('commands/'):] and '\n' not in member
    if first != second:
        assert member != diagnostics.command_member(second)


def test_the_reads_follow_the_chips():
    chips = [{'npu_id': 0, 'chip_id': 0, 'name': '310P3'}, {'npu_id': 0, 'chip_id': 1, 'name': '310P3'},
             {'npu_id': 1, 'chip_id': 0, 'name': '910'}]
    assert diagnostics.npu_smi_chip_reads(chips) == [
        ('info', '-t', 'board', '-i', '0'), ('info', '-t', 'board', '-i', '1'),
        ('info', '-t', 'info-vnpu', '-i', '0', '-c', '0'), ('info', '-t', 'info-vnpu', '-i', '0', '-c', '1'),
        ('info', '-t', 'template-info'), ('info', '-t', 'vnpu-mode'), ('info', '-t', 'vnpu-cfg-recover')]
    assert diagnostics.npu_smi_chip_reads([{'npu_id': 3, 'chip_id': 0, 'name': '910'}]) == [
        ('info', '-t', 'board', '-i', '3')]
    assert diagnostics.hccn_reads([2])[0] == ('-i', '2', '-ip', '-g') and len(diagnostics.hccn_reads([2, 3])) == 12


def test_a_node_without_roce_ports_is_asked_once_not_for_every_npu(node, run_module):
    write_tool(node['install'] / 'driver' / 'tools', 'hccn_tool', 'echo "This device does not support hccn_tool"; exit 1\n')
    result, members = _run(node, run_module)
    asked = [name for name in members if name.startswith('commands/hccn_tool') and name.endswith('.rc')]
    assert len(asked) == 6 and all(name.startswith('commands/hccn_tool -i 0 ') for name in asked)
    notes = [entry for entry in result['index'] if entry['member'] == 'commands/hccn_tool*']
    assert notes[0]['status'] == 'failed' and 'NPU 0 failed' in notes[0]['detail']
