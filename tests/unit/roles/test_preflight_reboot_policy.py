# -*- coding: utf-8 -*-
"""A reboot policy that is none, set where users set it (hdk_reboot_policy), is refused by preflight
with that variable's name and the two values it takes, not with preflight's own option and a dump of
its argument specification."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import COLLECTIONS_ROOT

PLAYBOOK = '''
- name: Preflight of the controller, as far as the policy check
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Preflight
      ansible.builtin.include_role:
        name: npu.ascend.preflight
'''


def run(tmp_path, *extra):
    binary = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    if not os.path.exists(binary):
        binary = shutil.which('ansible-playbook')
    if not binary:
        pytest.skip('ansible-playbook is not installed beside this Python')
    playbook = tmp_path / 'preflight.yml'
    playbook.write_text(PLAYBOOK)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_ROOT, ANSIBLE_NOCOLOR='1', LC_ALL='C.UTF-8',
               ANSIBLE_LOCALHOST_WARNING='0', ANSIBLE_INVENTORY_UNPARSED_WARNING='0')
    argv = [binary, '-i', 'localhost,', '-c', 'local', '-e', 'ansible_python_interpreter=%s' % sys.executable,
            '-e', 'hdk_driver_version=25.0.rc1.1']
    for assignment in extra:
        argv += ['-e', assignment]
    completed = subprocess.run(argv + [str(playbook)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               universal_newlines=True, timeout=300, check=False)
    return completed.returncode, ' '.join(completed.stdout.split())


@pytest.mark.parametrize('assignment, named', [
    ('hdk_reboot_policy=sometimes', 'hdk_reboot_policy'),
    ('preflight_reboot_policy=sometimes', 'preflight_reboot_policy'),
])
def test_the_variable_the_user_set_is_named(tmp_path, assignment, named):
    rc, out = run(tmp_path, assignment)
    assert rc != 0, out
    assert "localhost: %s is 'sometimes', which is no reboot policy. Fix: set it to auto" % named in out, out
    assert 'argument_spec' not in out and 'Validating arguments' in out
