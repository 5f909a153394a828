# -*- coding: utf-8 -*-
"""ascend_collect: the node's diagnostics bundle holds what a support case needs, capped, and no secret."""
import json
import os
import stat
import tarfile

import pytest
from hypothesis import assume, given, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils import diagnostics
from ansible_collections.npu.ascend.plugins.modules import ascend_collect
from conftest import write_tool

SECRET = 'Zm9vOmJhcg-never-in-the-bundle'
CONTAINERD = '''version = 2
[plugins."io.containerd.grpc.v1.cri".registry.configs."mirror.example.com".auth]
  username = "ops"
  password = "%s"
[plugins."io.containerd.grpc.v1.cri".registry.headers]
  Authorization = ["Basic %s"]
[plugins."io.containerd.grpc.v1.cri".containerd]
  default_runtime_name = "ascend"
''' % (SECRET, SECRET)


@pytest.fixture
def node(tmp_path, monkeypatch):
    tools = tmp_path / 'bin'
    tools.mkdir()
    write_tool(tools, 'npu-smi', 'case "$*" in\n'
                                 '  info) echo "| npu-smi 25.0.rc1.1   Version: 25.0.rc1.1 |";;\n'
                                 '  "info -l") printf "Total Count : 2\\n\\nNPU ID : 0\\nChip Count : 1\\n\\nNPU ID : 1\\nChip Count : 1\\n";;\n'
                                 '  "info -t board -i 0") echo "NPU ID : 0"; echo "Board ID : 0x02";;\n'
                                 '  "info -t board -i 1") echo "dcmi model initialized failed, because the device is used. ret is -8020" >&2; exit 1;;\n'
                                 'esac\n')
    write_tool(tools, 'dmesg', 'echo "[  1.0] usb 1-1: new device"; echo "[  2.0] drv_devmng_host: davinci0 ready"\n')
    write_tool(tools, 'journalctl', 'sleep 30\n')
    monkeypatch.setenv('PATH', '%s:/usr/bin:/bin' % tools)
    logs = tmp_path / 'seclog'
    logs.mkdir()
    for number in range(5):
        log = logs / ('install_%d.log' % number)
        log.write_text('line\n' * 10 + 'last of %d\n' % number)
        os.utime(str(log), (1000 + number, 1000 + number))
    (logs / 'big.log').write_text('x' * 5000 + 'THE END\n')
    os.utime(str(logs / 'big.log'), (2000, 2000))
    os.mkfifo(str(logs / 'pipe.log'))
    records = tmp_path / 'records'
    (records / 'container_runtime').mkdir(parents=True)
    (records / 'container_runtime' / 'original-config.toml').write_text(CONTAINERD)
    (records / 'reboot-required.json').write_text('{"reasons": ["driver"]}\n')
    etc = tmp_path / 'etc'
    (etc / 'containerd' / 'conf.d').mkdir(parents=True)
    (etc / 'containerd' / 'config.toml').write_text(CONTAINERD)
    (etc / 'containerd' / '.config.toml.npu_ascend.converged').write_text('{"sha1": "abc"}\n')
    (etc / 'docker').mkdir()
    (etc / 'docker' / 'daemon.json').write_text(json.dumps({'registry-mirrors': ['https://ops:%s@mirror' % SECRET],
                                                            'log-level': 'info'}))
    monkeypatch.setattr(ascend_collect, 'LOG_DIRECTORIES', (str(logs), str(tmp_path / 'no-such-dir')))
    monkeypatch.setattr(ascend_collect, 'RECORDS_DIR', str(records))
    monkeypatch.setattr(ascend_collect, 'SYSTEM_FILES', ())
    install = tmp_path / 'Ascend'
    (install / 'driver').mkdir(parents=True)
    (install / 'driver' / 'version.info').write_text('Version=25.0.rc1.1\n')
    return {'tmp': tmp_path, 'install': install, 'etc': etc, 'logs': logs}


def _args(node, **changes):
    args = {'dest': str(node['tmp'] / 'bundle.tar.gz'), 'install_path': str(node['install']),
            'containerd_config': str(node['etc'] / 'containerd' / 'config.toml'),
            'containerd_drop_in_dir': str(node['etc'] / 'containerd' / 'conf.d'),
            'docker_config': str(node['etc'] / 'docker' / 'daemon.json'),
            'max_file_bytes': 1024, 'max_log_files': 3, 'timeout': 2}
    args.update(changes)
    return args


def _members(path):
    with tarfile.open(path) as archive:
        return dict((member.name, archive.extractfile(member).read()) for member in archive.getmembers())


def test_the_bundle_holds_each_piece_with_its_index(node, run_module):
    result = run_module(ascend_collect, _args(node), diff=False)
    assert result['changed'] is True and not result.get('failed'), result
    members = _members(result['dest'])
    by_member = dict((entry['member'], entry) for entry in result['index'])
    assert json.loads(members['index.json'].decode()) == result['index']
    # The table does not parse, so the boards are those of the NPU list; each read runs once.
    assert b'Board ID : 0x02' in members['commands/npu-smi info -t board -i 0.txt']
    board_1 = by_member['commands/npu-smi info -t board -i 1.txt']
    assert board_1['status'] == 'collected' and board_1['detail'] == 'exit 1'
    assert b'-8020' in members['commands/npu-smi info -t board -i 1.stderr.txt']
    assert not [name for name in members if name.startswith('npu-smi/') or name == 'system/lspci-19e5.txt']
    assert members['kernel/dmesg-npu.txt'] == b'[  2.0] drv_devmng_host: davinci0 ready'
    # A command that does not answer is stopped and named, not waited for.
    assert by_member['kubernetes/kubelet-journal.txt']['status'] == 'failed'
    assert 'did not answer within 2 s' in by_member['kubernetes/kubelet-journal.txt']['detail']
    assert members['files' + str(node['install'] / 'driver' / 'version.info')] == b'Version=25.0.rc1.1\n'
    # The newest three logs, the big one cut to its end; the FIFO is no regular file and is not opened.
    logs = sorted(name for name in members if name.startswith('files' + str(node['logs'])))
    assert [os.path.basename(name) for name in logs] == ['big.log', 'install_3.log', 'install_4.log']
    big = 'files' + str(node['logs'] / 'big.log')
    assert members[big].endswith(b'THE END\n') and len(members[big]) == 1024 and by_member[big]['status'] == 'truncated'
    assert by_member['files' + str(node['tmp'] / 'no-such-dir') + '/']['status'] == 'absent'
    assert [entry['member'] for entry in result['index']
            if entry['status'] == 'failed' and not entry['member'].startswith('commands/')] == ['kubernetes/kubelet-journal.txt']


def test_no_secret_leaves_the_node(node, run_module):
    result = run_module(ascend_collect, _args(node, max_file_bytes=1024 * 1024), diff=False)
    members = _members(result['dest'])
    everything = b''.join(members.values())
    assert SECRET.encode() not in everything
    containerd = members['files' + str(node['etc'] / 'containerd' / 'config.toml')].decode()
    assert 'default_runtime_name = "ascend"' in containerd and diagnostics.config_redaction.REDACTED in containerd
    assert 'mirror' in members['files' + str(node['etc'] / 'docker' / 'daemon.json')].decode()
    assert all(entry['redacted'] for entry in result['index'] if entry['member'].endswith('original-config.toml'))


def test_the_archive_is_private_and_check_mode_writes_nothing(node, run_module):
    result = run_module(ascend_collect, _args(node), check_mode=True, diff=False)
    assert result['changed'] is True and not os.path.exists(result['dest'])
    result = run_module(ascend_collect, _args(node), diff=False)
    assert stat.S_IMODE(os.stat(result['dest']).st_mode) == 0o600
    assert not [name for name in os.listdir(str(node['tmp'])) if name.endswith('.partial')]


@pytest.mark.parametrize('changes, message', [
    ({'dest': '/no/such/dir/bundle.tar.gz'}, 'the directory of dest /no/such/dir/bundle.tar.gz does not exist'),
    ({'max_file_bytes': 0}, 'max_file_bytes must be a positive number'),
])
def test_bad_input_is_a_message(node, run_module, changes, message):
    result = run_module(ascend_collect, _args(node, **changes), diff=False)
    assert result['failed'] and message in result['msg']


def test_kernel_and_module_lines_of_the_driver_only():
    assert diagnostics.kernel_lines('a\n[1] hisi_sas ok\n[2] e1000 up\n[3] npu-smi: Ascend') == \
        '[1] hisi_sas ok\n[3] npu-smi: Ascend'
    modules = 'drv_pcie_host 1 0 - Live 0x0\nnvme 2 0 - Live 0x0\nascend_queue 3 0 - Live 0x0\n'
    assert diagnostics.driver_modules(modules) == 'drv_pcie_host 1 0 - Live 0x0\nascend_queue 3 0 - Live 0x0'


@given(secret=st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126, blacklist_characters='"\\'),
                      min_size=8, max_size=30),
       name=st.sampled_from(['x.json', 'x.toml', 'x.toml.1.2026-01-01@00:00:00~', 'record']))
def test_a_password_in_any_config_like_file_is_hidden(secret, name):
    for template in ('{"auths": {"r": {"auth": "%s"}}}', 'password = "%s"\n'):
        # A secret that the redacted text holds anyway (the mask itself, the word "password") says
        # nothing about a leak.
        assume(secret not in template % '********')
        assert secret.encode() not in diagnostics.redact(name, (template % secret).encode())
