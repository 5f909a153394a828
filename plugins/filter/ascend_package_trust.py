# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters ``npu.ascend.ascend_mirror_trust``, ``npu.ascend.ascend_file_name_problem`` and
``npu.ascend.ascend_sha256sums``.

Documentation is in the sidecar files of the same names; the decisions are in
plugins/plugin_utils/package_trust.py.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError


def ascend_mirror_trust(url, file_names=None, pinned=None, allow_insecure=False, validate_certs=True,
                        username='', password=''):
    """Whether packages may come from the mirror ``url``; see package_trust.mirror_trust."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils.package_trust import mirror_trust
    if pinned is not None and not isinstance(pinned, Mapping):
        raise AnsibleFilterError('ascend_mirror_trust: pinned (packages_sha256sums) must be a dict of file name '
                                 'to sha256, got %s' % type(pinned).__name__)
    if isinstance(file_names, (str, Mapping)):
        raise AnsibleFilterError('ascend_mirror_trust: file_names must be a list of file names')
    return mirror_trust(url, list(file_names or []), dict(pinned or {}), bool(allow_insecure),
                        bool(validate_certs), username or '', password or '')


def ascend_file_name_problem(name):
    """'' for a plain file name, else why it is not one."""
    from ansible_collections.npu.ascend.plugins.plugin_utils.package_trust import file_name_problem
    return file_name_problem(name)


def ascend_sha256sums(text, source='the checksum file'):
    """sha256sum-format text -> {file name: sha256}; a file naming one package with two sha256 is refused."""
    from ansible_collections.npu.ascend.plugins.plugin_utils.package_trust import ChecksumFileError, parse_sha256sums
    if text is None:
        return {}
    if not isinstance(text, (str, bytes)):
        raise AnsibleFilterError('ascend_sha256sums: expected the text of a checksum file, got %s'
                                 % type(text).__name__)
    try:
        return parse_sha256sums(text, '%s' % source)
    except ChecksumFileError as error:
        raise AnsibleFilterError('%s' % error)


class FilterModule:
    """Ansible filter plugin entry point."""

    def filters(self):
        return {
            'ascend_mirror_trust': ascend_mirror_trust,
            'ascend_file_name_problem': ascend_file_name_problem,
            'ascend_sha256sums': ascend_sha256sums,
        }
