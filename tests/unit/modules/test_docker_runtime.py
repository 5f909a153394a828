# -*- coding: utf-8 -*-
"""Run the docker_runtime module against daemon.json files in a temporary directory."""

import json
import os
import shutil
import signal
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from conftest import patch_module_args

from ansible_collections.npu.ascend.plugins.module_utils.files import durable_file

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_files, docker_config
from ansible_collections.npu.ascend.plugins.modules import docker_runtime

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        'fixtures', 'docker')
RUNTIME = '/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime'


def test_present_check_idempotence_and_absent(tmp_path, run_module):
    path = tmp_path / 'daemon.json'
    shutil.copy(os.path.join(FIXTURES, 'nvidia-ctk.json'), str(path))
    path.chmod(0o644)
    original = path.read_text()

    checked = run_module(docker_runtime, {'path': str(path)}, check_mode=True)
    assert checked['changed'] and path.read_text() == original
    assert '"default-runtime": "ascend"' in checked['diff']['after']

    result = run_module(docker_runtime, {'path': str(path), 'backup': True})
    assert result['changed'] and result['restart_needed']
    assert open(result['backup_file']).read() == original
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)
    assert docker_config.effective_runtime(path.read_text(), 'ascend') == (
        'ascend', {'path': RUNTIME, 'runtimeArgs': []})

    assert not run_module(docker_runtime, {'path': str(path)})['changed']

    removed = run_module(docker_runtime, {'path': str(path), 'state': 'absent'})
    assert removed['changed'] and path.read_text() == original
    # Backups stay unless asked for (remove_backups).
    assert removed['removed_backups'] == [] and removed['kept_backups'] == [result['backup_file']]
    assert sorted(os.listdir(str(tmp_path))) == sorted(['daemon.json', os.path.basename(result['backup_file'])])


def test_missing_file_is_created_0600_and_deleted_again(tmp_path, run_module):
    path = tmp_path / 'docker' / 'daemon.json'
    result = run_module(docker_runtime, {'path': str(path), 'name': 'npu', 'runtime_path': '/opt/rt', 'default': False})
    assert result['changed']
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    assert json.loads(path.read_text()) == {'runtimes': {'npu': {'path': '/opt/rt', 'runtimeArgs': []}}}
    assert run_module(docker_runtime, {'path': str(path), 'name': 'npu', 'state': 'absent'})['changed']
    assert not path.exists()


def test_invalid_json_fails_and_leaves_the_file_untouched(tmp_path, run_module):
    path = tmp_path / 'daemon.json'
    shutil.copy(os.path.join(FIXTURES, 'invalid-unclosed.json'), str(path))
    before = path.read_bytes()
    result = run_module(docker_runtime, {'path': str(path)})
    assert result['failed'] and 'not valid JSON' in result['msg'] and 'line 5 column 1' in result['msg'] and 'Fix: correct the file' in result['msg']
    assert path.read_bytes() == before


# A manual Huawei install left its own runtime entry and default; present takes it over.
MANUAL_INSTALL = '''{
  "log-driver": "json-file",
  "runtimes": {
    "ascend": {"path": "/opt/old/ascend-docker-runtime", "runtimeArgs": ["--debug"]},
    "nvidia": {"path": "nvidia-container-runtime", "runtimeArgs": []}
  },
  "default-runtime": "nvidia"
}
'''


def test_absent_puts_back_an_entry_that_was_there_before(tmp_path, run_module):
    path = tmp_path / 'daemon.json'
    path.write_text(MANUAL_INSTALL)
    added = run_module(docker_runtime, {'path': str(path)})
    assert added['changed']
    assert docker_config.effective_runtime(path.read_text(), 'ascend') == (
        'ascend', {'path': RUNTIME, 'runtimeArgs': ['--debug']})
    removed = run_module(docker_runtime, {'path': str(path), 'state': 'absent'})
    assert removed['changed'] and path.read_text() == MANUAL_INSTALL


def test_absent_keeps_a_default_the_module_did_not_set(tmp_path, run_module):
    text = MANUAL_INSTALL.replace('"default-runtime": "nvidia"', '"default-runtime": "ascend"')
    path = tmp_path / 'daemon.json'
    path.write_text(text)
    assert run_module(docker_runtime, {'path': str(path)})['changed']
    assert run_module(docker_runtime, {'path': str(path), 'state': 'absent'})['changed']
    assert path.read_text() == text


def test_runc_is_refused_unless_allowed(tmp_path, run_module):
    path = tmp_path / 'daemon.json'
    path.write_text('{}\n')
    refused = run_module(docker_runtime, {'path': str(path), 'name': 'runc'})
    assert refused['failed'] and 'allow_runc_rewrite' in refused['msg'] and path.read_text() == '{}\n'
    refused = run_module(docker_runtime, {'path': str(path), 'name': 'runc', 'state': 'absent'})
    assert refused['failed'] and path.read_text() == '{}\n'
    allowed = run_module(docker_runtime, {'path': str(path), 'name': 'runc', 'allow_runc_rewrite': True,
                                          'default': False})
    assert allowed['changed']
    # Undoing its own recorded change needs no opt-in.
    assert run_module(docker_runtime, {'path': str(path), 'name': 'runc', 'state': 'absent'})['changed']
    assert path.read_text() == '{}\n'


def test_remove_backups_deletes_only_the_modules_own_copies(tmp_path, run_module, monkeypatch):
    # Recorded at the source: once a controller plugin is imported, ansible-core sends module
    # warnings to the controller's display instead of the result.
    warnings = []
    monkeypatch.setattr(docker_runtime.AnsibleModule, 'warn', lambda module, text, **kwargs: warnings.append(text))
    path = tmp_path / 'daemon.json'
    path.write_text('{"debug": true}\n')
    added = run_module(docker_runtime, {'path': str(path), 'backup': True})
    record_path = added['state_file']
    record = json.loads(open(record_path).read())
    foreign = tmp_path / 'precious.json'
    foreign.write_text('mine')
    other_dir = tmp_path / 'elsewhere'
    other_dir.mkdir()
    lookalike = other_dir / os.path.basename(added['backup_file'])
    lookalike.write_text('not ours')
    record['runtimes']['ascend']['backups'] += [str(foreign), str(lookalike)]
    with open(record_path, 'w') as handle:
        json.dump(record, handle)

    removed = run_module(docker_runtime, {'path': str(path), 'state': 'absent', 'remove_backups': True})
    assert removed['removed_backups'] == [added['backup_file']] and not os.path.exists(added['backup_file'])
    assert removed['kept_backups'] == [str(foreign), str(lookalike)]
    assert foreign.read_text() == 'mine' and lookalike.read_text() == 'not ours'
    assert any('precious.json' in warning and 'left in place' in warning for warning in warnings)
    assert path.read_text() == '{"debug": true}\n'


def test_symlinked_config_stays_a_link_and_is_restored_byte_for_byte(tmp_path, run_module):
    real_dir = tmp_path / 'real'
    real_dir.mkdir()
    target = real_dir / 'daemon.json'
    target.write_text('{\n  "debug": true\n}\n')
    link = tmp_path / 'daemon.json'
    link.symlink_to(target)
    added = run_module(docker_runtime, {'path': str(link), 'backup': True})
    assert added['changed'] and added['path'] == str(target)
    assert link.is_symlink() and os.readlink(str(link)) == str(target)
    assert docker_config.effective_runtime(target.read_text(), 'ascend')[0] == 'ascend'
    assert os.path.dirname(added['backup_file']) == str(real_dir)
    assert added['state_file'] == str(real_dir / '.daemon.json.npu_ascend.json')
    run_module(docker_runtime, {'path': str(link), 'state': 'absent'})
    assert link.is_symlink() and target.read_text() == '{\n  "debug": true\n}\n'


@pytest.mark.parametrize('content, cause', [
    ('{"debug": NaN}', 'NaN is not a JSON value'),
    ('{"max-concurrent-downloads": Infinity}', 'Infinity is not a JSON value'),
    ('{"x": -Infinity}', 'Infinity is not a JSON value'),
    ('{"x": ' + '[' * 100000 + ']' * 100000 + '}', 'nested 100001 deep'),
    ('[' * 100000, 'nested 100000 deep'),
])
def test_bad_json_gets_a_message_and_the_file_stays(tmp_path, run_module, content, cause):
    path = tmp_path / 'daemon.json'
    path.write_text(content)
    result = run_module(docker_runtime, {'path': str(path)})
    assert result['failed'] and cause in result['msg'] and str(path) in result['msg'] and 'Fix:' in result['msg']
    assert path.read_text() == content
    assert sorted(os.listdir(str(tmp_path))) == ['daemon.json']


def test_non_utf8_config_gets_a_message(tmp_path, run_module):
    path = tmp_path / 'daemon.json'
    path.write_bytes(b'{"debug": "\xff"}')
    result = run_module(docker_runtime, {'path': str(path)})
    assert result['failed'] and 'not UTF-8' in result['msg'] and 'Fix:' in result['msg']
    assert path.read_bytes() == b'{"debug": "\xff"}'


@pytest.mark.parametrize('kind', ['fifo', 'directory', 'fifo-behind-link'])
def test_non_regular_config_is_refused_without_opening_it(tmp_path, run_module, kind):
    path = tmp_path / 'daemon.json'
    if kind == 'directory':
        path.mkdir()
    elif kind == 'fifo':
        os.mkfifo(str(path))
    else:
        os.mkfifo(str(tmp_path / 'pipe'))
        path.symlink_to(tmp_path / 'pipe')
    # Reading a FIFO without a writer blocks forever: fail the test instead of hanging it.
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail('the module blocked on %s' % kind))
    signal.alarm(5)
    try:
        for state in ('present', 'absent'):
            result = run_module(docker_runtime, {'path': str(path), 'state': state})
            assert result['failed'] and 'not a regular file' in result['msg'] and 'Fix:' in result['msg']
    finally:
        signal.alarm(0)


@pytest.mark.parametrize('record, cause', [
    ('not json at all', 'cannot read the record'),
    ('[1, 2]', 'holds a JSON list'),
    ('{"format": 1, "runtimes": []}', '"runtimes" is a list'),
    ('{"format": 1, "runtimes": {"ascend": "yes"}}', "entry 'ascend' is a str"),
    ('{"format": 1, "runtimes": {"ascend": {"backups": "/etc/passwd"}}}', 'not a list of paths'),
    ('{"format": 7, "runtimes": {}}', 'format 7'),
    ('{"format": 1, "config": "/etc/other.json", "runtimes": {"ascend": {}}}', 'the record of /etc/other.json'),
    ('[' * 100000, 'cannot read the record'),
])
def test_malformed_record_gets_a_message_and_nothing_changes(tmp_path, run_module, record, cause):
    path = tmp_path / 'daemon.json'
    path.write_text('{"runtimes": {"ascend": {"path": "/x"}}, "default-runtime": "ascend"}\n')
    record_path = tmp_path / '.daemon.json.npu_ascend.json'
    record_path.write_text(record)
    for state in ('present', 'absent'):
        result = run_module(docker_runtime, {'path': str(path), 'state': state})
        assert result['failed'] and cause in result['msg'] and 'move %s away' % record_path in result['msg']
    assert path.read_text() == '{"runtimes": {"ascend": {"path": "/x"}}, "default-runtime": "ascend"}\n'
    assert record_path.read_text() == record


def test_a_directory_that_cannot_be_written_gets_a_message_and_nothing_changes(tmp_path, run_module, monkeypatch):
    path = tmp_path / 'daemon.json'
    path.write_text('{"debug": true}\n')

    def refuse(*_args, **_kwargs):
        raise PermissionError(13, 'Permission denied', str(tmp_path))
    monkeypatch.setattr(durable_file, '_create_temporary', refuse)
    result = run_module(docker_runtime, {'path': str(path)})
    assert result['failed'] and 'Permission denied' in result['msg'] and 'Fix:' in result['msg']
    assert path.read_text() == '{"debug": true}\n'
    assert sorted(os.listdir(str(tmp_path))) == ['daemon.json']


def test_config_write_failure_puts_the_record_back(tmp_path, run_module, monkeypatch):
    path = tmp_path / 'daemon.json'
    path.write_text('{"debug": true}\n')
    run_module(docker_runtime, {'path': str(path), 'name': 'first', 'default': False})
    record_path = tmp_path / '.daemon.json.npu_ascend.json'
    record_before = record_path.read_bytes()
    config_before = path.read_bytes()

    def full_disk(*_args, **_kwargs):
        raise OSError(28, 'No space left on device')
    monkeypatch.setattr(config_files, 'write_config_atomically', full_disk)
    result = run_module(docker_runtime, {'path': str(path), 'name': 'second'})
    assert result['failed'] and 'No space left' in result['msg']
    assert path.read_bytes() == config_before and record_path.read_bytes() == record_before


def test_secrets_are_redacted_in_the_diff(tmp_path, run_module):
    path = tmp_path / 'daemon.json'
    path.write_text('{\n  "auths": {"registry.example": {"auth": "c2VjcmV0OnNlY3JldA==", "IdentityToken": "tok"}}\n}\n')
    result = run_module(docker_runtime, {'path': str(path)}, check_mode=True)
    for side in ('before', 'after'):
        assert 'c2VjcmV0' not in result['diff'][side] and '"tok"' not in result['diff'][side]
        assert '"auth": "********"' in result['diff'][side]
    assert '"default-runtime": "ascend"' in result['diff']['after']


def test_negative_lock_timeout_is_refused(tmp_path, run_module):
    path = tmp_path / 'daemon.json'
    path.write_text('{}')
    result = run_module(docker_runtime, {'path': str(path), 'lock_timeout': -1})
    assert result['failed'] and 'lock_timeout' in result['msg'] and path.read_text() == '{}'


def test_lock_held_by_another_run_fails_naming_it(tmp_path, run_module, node_lock_in_tmp, held_by_another_process):
    path = tmp_path / 'daemon.json'
    path.write_text('{}')
    with held_by_another_process(node_lock_in_tmp, {'module': 'npu.ascend.ascend_runfile', 'target': 'driver'}) as pid:
        result = run_module(docker_runtime, {'path': str(path), 'lock_timeout': 0})
    assert result['failed'] and 'pid %d' % pid in result['msg']
    assert 'npu.ascend.ascend_runfile' in result['msg'] and node_lock_in_tmp in result['msg'] and 'Fix:' in result['msg']
    assert path.read_text() == '{}'
    assert run_module(docker_runtime, {'path': str(path), 'lock_timeout': 0})['changed']


def _run_in_child(args, environ=None):
    """Run the module in a forked process (as Ansible does, one process per task); returns its exit code."""
    pid = os.fork()
    if pid == 0:
        try:
            os.environ.update(environ or {})
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            with patch_module_args(dict(args, _ansible_check_mode=False, _ansible_diff=False)):
                docker_runtime.main()
        except SystemExit as exit_:
            os._exit(exit_.code or 0)
        except BaseException:
            os._exit(99)
        os._exit(0)
    return os.waitpid(pid, 0)[1]


def _register_many(path, prefix, count):
    pid = os.fork()
    if pid == 0:
        code = 0
        for index in range(count):
            if _run_in_child({'path': path, 'name': '%s%d' % (prefix, index), 'default': False}) != 0:
                code = 1
        os._exit(code)
    return pid


def test_two_runs_at_once_lose_no_registration(tmp_path):
    path = tmp_path / 'daemon.json'
    settings = '{\n  "log-driver": "journald",\n  "debug": true\n}\n'
    path.write_text(settings)
    writers = [_register_many(str(path), prefix, 12) for prefix in ('a', 'b')]
    assert [os.waitpid(pid, 0)[1] for pid in writers] == [0, 0]
    document = docker_config.parse_config(path.read_text())
    assert sorted(document['runtimes']) == sorted(['a%d' % i for i in range(12)] + ['b%d' % i for i in range(12)])
    assert document['log-driver'] == 'journald' and document['debug'] is True
    records = json.loads((tmp_path / '.daemon.json.npu_ascend.json').read_text())['runtimes']
    assert len(records) == 24
    # Undone in the reverse order of the registrations, the file is back byte for byte.
    for name in reversed(list(document['runtimes'])):
        assert _run_in_child({'path': str(path), 'name': name, 'state': 'absent'}) == 0
    assert path.read_text() == settings


def test_a_crash_between_record_and_config_stays_undoable(tmp_path, run_module):
    path = tmp_path / 'daemon.json'
    original = '{\n  "default-runtime": "runc",\n  "debug": true\n}\n'
    path.write_text(original)
    status = _run_in_child({'path': str(path)}, {config_files.CRASH_AFTER_RECORD_ENV: '1'})
    assert os.WEXITSTATUS(status) == 137
    assert path.read_text() == original
    assert 'ascend' in json.loads((tmp_path / '.daemon.json.npu_ascend.json').read_text())['runtimes']
    assert sorted(os.listdir(str(tmp_path))) == ['.daemon.json.npu_ascend.json', 'daemon.json']

    # The uninstall after the crash: nothing of ours in the file, the record goes, the file stays.
    undone = run_module(docker_runtime, {'path': str(path), 'state': 'absent'})
    assert undone['changed'] and not undone['restart_needed'] and path.read_text() == original
    assert sorted(os.listdir(str(tmp_path))) == ['daemon.json']

    # The rerun after the crash registers, and its absent restores the original.
    _run_in_child({'path': str(path)}, {config_files.CRASH_AFTER_RECORD_ENV: '1'})
    assert run_module(docker_runtime, {'path': str(path)})['changed']
    assert docker_config.effective_runtime(path.read_text(), 'ascend')[0] == 'ascend'
    run_module(docker_runtime, {'path': str(path), 'state': 'absent'})
    assert path.read_text() == original


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(st.binary(max_size=60), st.text(alphabet='{}[]":, \n0123456789tfnaulrsNI\\', max_size=40).map(
    lambda text: text.encode('utf-8'))))
def test_random_bytes_give_a_clean_error_and_an_untouched_file(run_module, data):
    directory = tempfile.mkdtemp()
    try:
        path = os.path.join(directory, 'daemon.json')
        with open(path, 'wb') as handle:
            handle.write(data)
        result = run_module(docker_runtime, {'path': path})
        if result.get('failed'):
            assert path in result['msg'] and 'Fix:' in result['msg'] and 'Traceback' not in result['msg']
            with open(path, 'rb') as handle:
                assert handle.read() == data
            assert os.listdir(directory) == ['daemon.json']
        else:
            assert run_module(docker_runtime, {'path': path, 'state': 'absent'})['changed']
            with open(path, 'rb') as handle:
                assert handle.read() == data
    finally:
        shutil.rmtree(directory)
