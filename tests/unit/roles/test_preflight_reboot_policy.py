# -*- coding: utf-8 -*-
"""A reboot policy that is none, set where users set it (hdk_reboot_policy), is refused by preflight
with that variable's name and the two values it takes, not with preflight's own option and a dump of
its argument specification."""
import sys

import pytest

from conftest import run_playbook

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
    playbook = tmp_path / 'preflight.yml'
    playbook.write_text(PLAYBOOK)
    arguments = ['-i', 'localhost,', '-c', 'local', '-e', 'ansible_python_interpreter=%s' % sys.executable,
                 '-e', 'hdk_driver_version=25.0.rc1.1']
    for assignment in extra:
        arguments += ['-e', assignment]
    return run_playbook(arguments + [str(playbook)])


@pytest.mark.parametrize('assignment, named', [
    ('hdk_reboot_policy=sometimes', 'hdk_reboot_policy'),
    ('preflight_reboot_policy=sometimes', 'preflight_reboot_policy'),
])
def test_the_variable_the_user_set_is_named(tmp_path, assignment, named):
    rc, out = run(tmp_path, assignment)
    assert rc != 0, out
    # ansible.cfg's YAML result format quotes the message in single quotes before ansible-core 2.19, doubling its own.
    assert "localhost: %s is 'sometimes', which is no reboot policy. Fix: set it to auto" % named in out.replace("''", "'"), out
    assert 'argument_spec' not in out and 'Validating arguments' in out
