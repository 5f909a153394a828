#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: controller_files
short_description: Write a set of text files into a directory on the controller, only those that differ
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
description:
  - Runs on the controller only (an action plugin; nothing reaches a node, no module process is started). The
    P(npu.ascend.exporter#role) role writes its Prometheus and Grafana files with it.
  - Compares each file of O(files) with what O(dir) holds and writes only those whose content or mode differs, each
    one whole or not at all (written aside, flushed, then renamed), creating the directories they need.
  - A converged directory costs one read per file and no write; C(changed) says whether any file was written.
  - With O(validate), a set of files that is to change is checked as a whole before anything is written.
  - Never writes, changes the mode of or creates a directory through a symbolic link - a file that is a link, or a
    directory of O(dir) that is a link leading outside O(dir), is refused (O(dir) itself may be a link).
  - Fails with a message naming the cause and the fix for a name that leaves O(dir) (absolute, C(..), or through a
    link), a path that exists and is not a regular file, or a directory it cannot write.
options:
  dir:
    description: Directory on the controller; created when missing.
    type: path
    required: true
  files:
    description:
      - Relative file name under O(dir) (C(/) separates directories) -> the file's text, written as UTF-8.
      - Files of O(dir) not named here are left alone.
    type: dict
    required: true
  mode:
    description: Permission mode of the files, in octal.
    type: str
    default: '0644'
  directory_mode:
    description: Permission mode of the directories it creates, in octal (the umask applies).
    type: str
    default: '0755'
  validate:
    description:
      - Check the whole set of files before any is written, as O(ansible.builtin.template#module:validate) does for
        one file. When a file is to change, every file of O(files) is written into a fresh staging directory and
        O(validate.command) runs there; when it fails, nothing is written and the task fails with its output.
      - A set that does not change is not checked again (it was checked when it was written).
    type: dict
    suboptions:
      file:
        description: The name, one of O(files), of the file the command checks; its staged path replaces C(%s).
        type: str
        required: true
      command:
        description: The command as a list of arguments, run with C(LC_ALL=C); exactly one argument holds C(%s).
        type: list
        elements: str
        required: true
      timeout:
        description: Seconds the command may take before it is stopped and the task fails.
        type: int
        default: 60
attributes:
  check_mode:
    support: full
    details:
      - Reports the same C(changed) and RV(written) as the real run, and writes nothing.
  diff_mode:
    support: full
    details:
      - One before/after per file whose content changes.
  idempotent:
    support: full
  platform:
    platforms: posix
seealso:
  - module: ansible.builtin.template
  - module: ansible.builtin.copy
extends_documentation_fragment:
  - npu.ascend.attributes
  - npu.ascend.attributes.CONTROLLER_ACTION
'''

EXAMPLES = r'''
- name: Write the Prometheus rules and configuration rendered from the role's templates
  npu.ascend.controller_files:
    dir: /srv/monitoring
    files:
      rules/npu-ascend-alerts.yml: "{{ lookup('ansible.builtin.template', 'npu-ascend-alerts.yml.j2') }}"
      prometheus-npu-ascend.yml: "{{ lookup('ansible.builtin.template', 'prometheus-npu-ascend.yml.j2') }}"
  run_once: true
  delegate_to: localhost

- name: The same, checked with promtool before anything is written
  npu.ascend.controller_files:
    dir: /srv/monitoring
    files:
      rules/npu-ascend-alerts.yml: "{{ lookup('ansible.builtin.template', 'npu-ascend-alerts.yml.j2') }}"
      prometheus-npu-ascend.yml: "{{ lookup('ansible.builtin.template', 'prometheus-npu-ascend.yml.j2') }}"
    validate:
      file: prometheus-npu-ascend.yml
      command: [promtool, check, config, "%s"]
  run_once: true
  delegate_to: localhost
'''

RETURN = r'''
written:
  description: The names of O(files) that were written (or would be, in check mode), in name order; a file whose
    content matched but whose mode did not is listed too.
  returned: success
  type: list
  elements: str
  sample: [rules/npu-ascend-alerts.yml]
validated:
  description: Whether O(validate.command) checked the set (it is given and a file was to change) and accepted it.
  returned: success
  type: bool
  sample: true
'''
