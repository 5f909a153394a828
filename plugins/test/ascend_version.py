# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jinja test ``npu.ascend.ascend_version``: compare Huawei versions in the right order.

Documentation is in the sidecar file ascend_version.yml.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError


# The spellings ansible's builtin ``version`` test accepts, so playbook authors can
# switch between the two tests without rewriting operators.
OPERATOR_ALIASES = {
    '<': '<', 'lt': '<',
    '<=': '<=', 'le': '<=', 'lte': '<=',
    '==': '==', '=': '==', 'eq': '==',
    '!=': '!=', '<>': '!=', 'ne': '!=',
    '>=': '>=', 'ge': '>=', 'gte': '>=',
    '>': '>', 'gt': '>',
}


def ascend_version(value, version, operator='eq'):
    """True when ``value <operator> version`` in Huawei version order."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import version_matches
    canonical = OPERATOR_ALIASES.get(str(operator).strip().lower()) if operator is not None else None
    if canonical is None:
        raise AnsibleFilterError(
            'ascend_version: unknown operator %r; use one of %s' % (operator, ', '.join(sorted(OPERATOR_ALIASES))))
    for name, candidate in (('tested value', value), ('version', version)):
        if not isinstance(candidate, str):
            raise AnsibleFilterError('ascend_version: the %s must be a string, got %s %r'
                                     % (name, type(candidate).__name__, candidate))
    try:
        return version_matches(value, canonical, version)
    except ValueError as error:
        raise AnsibleFilterError('ascend_version: cannot compare %r %s %r: %s' % (value, operator, version, error))


class TestModule:
    """Ansible test plugin entry point."""

    def tests(self):
        return {'ascend_version': ascend_version}
