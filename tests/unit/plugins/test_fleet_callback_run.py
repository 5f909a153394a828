# -*- coding: utf-8 -*-
"""npu.ascend.fleet in a real ansible-playbook run over fake hosts (local connections, one host whose SSH
port refuses): chosen by ANSIBLE_STDOUT_CALLBACK, its options from the environment, one failure with a long
message, an unreachable host, the run's outcome from set_stats; and Ansible's default output stays the default.
"""

import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import COLLECTIONS_ROOT, playbook_binary

HOSTS = ['node-%d' % number for number in range(1, 6)]
PLAYBOOK = '''
- name: Check the fleet
  hosts: all
  gather_facts: false
  tasks:
    - name: Ping
      ansible.builtin.ping:
    - name: Install the driver
      ansible.builtin.fail:
        msg: "{{ inventory_hostname }}: driver: the installer failed: {{ 'E' * 3000 }} Fix: read the installer log"
      when: inventory_hostname == 'node-3'
    - name: Greet two
      ansible.builtin.debug:
        msg: hello
      when: inventory_hostname in ['node-1', 'node-2']

- name: Summarise the run
  hosts: all
  gather_facts: false
  tasks:
    - name: Summarise how the run ended for every node
      ansible.builtin.debug:
        msg: ["2 of 6 nodes stopped", "Retry only these nodes"]
      run_once: true
    - name: Publish the run's outcome
      ansible.builtin.set_stats:
        data:
          npu_ascend_outcome:
            retry_hosts: "{{ ansible_play_hosts_all | difference(ansible_play_hosts) | sort }}"
            retry_command: "ansible-playbook -i inv pb.yml --limit {{ ansible_play_hosts_all | difference(ansible_play_hosts) | sort | join(',') }}"
      run_once: true
'''
PROGRESS = re.compile(r'^\[(?P<play>[^\]]+)\] \| task (?P<number>\d+): ')


@pytest.fixture(scope='module')
def fleet(tmp_path_factory):
    if not shutil.which('ssh'):
        pytest.skip('the unreachable host needs an ssh client')
    directory = tmp_path_factory.mktemp('fleet')
    inventory = ['[fleet]'] + HOSTS + ['[gone]', 'node-6 ansible_connection=ssh ansible_host=127.0.0.1 ansible_port=1',
                                       '[fleet:vars]', 'ansible_connection=local',
                                       'ansible_python_interpreter=%s' % sys.executable]
    (directory / 'hosts.ini').write_text('\n'.join(inventory) + '\n')
    (directory / 'pb.yml').write_text(PLAYBOOK)

    def run(**environment):
        env = dict((key, value) for key, value in os.environ.items()
                   if not key.startswith(('ANSIBLE_FORCE_COLOR', 'ANSIBLE_STDOUT_CALLBACK', 'ANSIBLE_FLEET_')))
        env.update(ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_ROOT, ANSIBLE_LOCALHOST_WARNING='0', LC_ALL='C.UTF-8',
                   ANSIBLE_SSH_ARGS='-o ConnectTimeout=5', **environment)
        # The callback writes to stdout; stderr is Python's and Ansible's own (a library's deprecation
        # warning there must not shift the callback's lines), and it must hold no traceback.
        completed = subprocess.run([playbook_binary(), '-i', 'hosts.ini', 'pb.yml'], cwd=str(directory), env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                                   timeout=300, check=False)
        assert 'Traceback' not in completed.stderr, completed.stderr
        return completed.returncode, completed.stdout
    return run


def test_a_run_with_a_failure_and_an_unreachable_host(fleet):
    rc, out = fleet(ANSIBLE_STDOUT_CALLBACK='npu.ascend.fleet', ANSIBLE_FLEET_MESSAGE_LIMIT='200',
                    ANSIBLE_FLEET_PROGRESS_INTERVAL='600')
    assert rc != 0, out
    lines = out.splitlines()
    assert lines[0] == 'PLAY [Check the fleet] 6 hosts', out
    unreachable = [line for line in lines if line.startswith('UNREACHABLE')]
    assert len(unreachable) == 1 and unreachable[0].startswith('UNREACHABLE node-6 | Ping | '), out
    assert 'Connection refused' in unreachable[0] or 'connect' in unreachable[0], out
    failed = [line for line in lines if line.startswith('FAILED')]
    assert failed == ['FAILED node-3 | Install the driver | node-3: driver: the installer failed: ' + 'E' * 162
                      + ' ... (%d more characters cut; the default callback shows the whole message)'
                      % (3000 - 162 + len(' Fix: read the installer log'))], out
    # One line per task (the interval is longer than the run), not one per host.
    assert [line.split(' | ')[1] for line in lines if PROGRESS.match(line)] == [
        'task 1: Ping', 'task 2: Install the driver', 'task 3: Greet two',
        'task 1: Summarise how the run ended for every node', "task 2: Publish the run's outcome"], out
    assert '[Check the fleet] | task 3: Greet two | done 2, failed 1, unreachable 1, skipped 2, remaining 0 of 6' in lines
    assert '[Check the fleet] finished: 4 done, 1 failed, 1 unreachable of 6 hosts' in lines
    # The failed and the unreachable host are out of the later play; its run_once message is printed.
    assert 'PLAY [Summarise the run] 4 hosts' in lines and '2 of 6 nodes stopped' in lines
    start = lines.index('RECAP: 6 hosts, those that failed or were unreachable first')
    order = ['node-3', 'node-6', 'node-1', 'node-2', 'node-4', 'node-5']
    assert [line.split()[0] for line in lines[start + 2:start + 8]] == order, out
    assert lines[start + 2].split()[1:] == ['1', '0', '1', '0', '0'], out
    assert lines[start + 8:start + 10] == ['OUTCOME: 2 stopped: node-3, node-6',
                                           'Retry only these nodes: ansible-playbook -i inv pb.yml --limit node-3,node-6']
    assert '\x1b' not in out and '\r' not in out
    assert 'Traceback' not in out and 'E' * 201 not in out


def test_the_default_output_stays_the_default(fleet):
    rc, out = fleet()
    assert rc != 0
    assert 'PLAY RECAP' in out and 'RECAP: ' not in out and 'OUTCOME:' not in out
