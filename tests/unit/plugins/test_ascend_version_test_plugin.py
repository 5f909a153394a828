# -*- coding: utf-8 -*-
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.test.ascend_version import TestModule as AscendTests
from ansible_collections.npu.ascend.plugins.test.ascend_version import ascend_version


def test_registered_name():
    assert AscendTests().tests() == {'ascend_version': ascend_version}


def test_default_operator_is_equality():
    assert ascend_version('24.1.RC2', '24.1.rc2')
    assert not ascend_version('24.1.rc2', '24.1.0')


@pytest.mark.parametrize('operator, expected', [
    ('<', True), ('lt', True), ('<=', True), ('le', True), ('lte', True),
    ('==', False), ('=', False), ('eq', False), ('!=', True), ('<>', True), ('ne', True),
    ('>=', False), ('ge', False), ('gte', False), ('>', False), ('gt', False), ('LT', True),
])
def test_operators_and_aliases(operator, expected):
    assert ascend_version('24.1.rc1', '24.1.0', operator) is expected


@pytest.mark.parametrize('value, version, operator, message', [
    ('24.1.rc1', '24.1.0', '~=', 'unknown operator'),
    ('24.1.rc1', '24.1.0', None, 'unknown operator'),
    ('latest', '24.1.0', '<', 'cannot compare'),
    ('', '24.1.0', '<', 'cannot be empty'),
    (24.1, '24.1.0', '<', 'must be a string'),
    ('24.1.0', None, '<', 'must be a string'),
])
def test_bad_input_raises_ansible_error(value, version, operator, message):
    with pytest.raises(AnsibleFilterError, match=message):
        ascend_version(value, version, operator)
