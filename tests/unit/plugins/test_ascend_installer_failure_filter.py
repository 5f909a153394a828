# -*- coding: utf-8 -*-
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.ascend_installer_failure import (
    FilterModule, ascend_installer_failure)


def test_registered_name():
    assert FilterModule().filters() == {'ascend_installer_failure': ascend_installer_failure}


def test_a_lost_node_is_named_with_the_fix():
    message = ascend_installer_failure({'unreachable': True, 'msg': 'timed out'}, 'node-2', 'firmware and driver',
                                       'Install or upgrade the first HDK component')
    assert message.startswith('node-2: firmware and driver: no result came back from the node '
                              '(Install or upgrade the first HDK component): timed out.')


def test_a_result_that_is_not_a_dict_is_refused():
    with pytest.raises(AnsibleFilterError, match='expects a task result'):
        ascend_installer_failure('failed', 'node-2', 'CANN')
