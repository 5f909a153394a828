# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
name: ascend_file_sha256
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
short_description: SHA-256 of files on the controller, read in one pass each
description:
  - For each path given, whether it is a regular file (after symbolic links) on the controller and its SHA-256,
    streamed in blocks so that packages of several GB are never held in memory.
  - One lookup for every package of a play, where a C(stat) task per file would start a module process per file.
  - A path that is missing, not a regular file or unreadable gives C(exists=false) and C(checksum=null), with the
    reason in C(error) (null when it is simply absent).
options:
  _terms:
    description: Paths of files on the controller.
    type: list
    elements: path
    required: true
notes:
  - Call it with C(query()) (or C(lookup()) with C(wantlist=true)) to get one entry per path; C(query) and
    C(lookup) are Jinja functions of Ansible, not plugins, so there is no plugin page to link to.
seealso:
  - module: ansible.builtin.stat
'''

EXAMPLES = r'''
- name: Hash the packages beside the playbook once
  ansible.builtin.set_fact:
    package_files: "{{ query('npu.ascend.ascend_file_sha256', 'packages/a.run', 'packages/b.run') }}"

- name: Show a package's checksum
  ansible.builtin.debug:
    msg: "{{ package_files[0].checksum if package_files[0].exists else package_files[0].path ~ ' is missing' }}"
'''

RETURN = r'''
_raw:
  description: One entry per path, in the order given.
  type: list
  elements: dict
  contains:
    path:
      description: The path as given.
      type: str
    exists:
      description: Whether the path is a regular file the controller could read.
      type: bool
    checksum:
      description: Its SHA-256 in lowercase hex, or null.
      type: str
    error:
      description: Why a path that is there could not be read, or null.
      type: str
'''

import hashlib
import os

from ansible.plugins.lookup import LookupBase

_BLOCK = 1024 * 1024


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as handle:
        for block in iter(lambda: handle.read(_BLOCK), b''):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path):
    """``{path, exists, checksum, error}`` of one controller path."""
    entry = {'path': path, 'exists': False, 'checksum': None, 'error': None}
    if not os.path.isfile(path):
        if os.path.lexists(path):
            entry['error'] = 'not a regular file'
        return entry
    try:
        entry['checksum'] = _sha256(path)
    except (IOError, OSError) as error:
        entry['error'] = 'cannot be read: %s' % (error.strerror or error)
        return entry
    entry['exists'] = True
    return entry


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        return [file_sha256(str(term)) for term in terms]
