# -*- coding: utf-8 -*-
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.ascend_kernels_component import (
    FilterModule, ascend_kernels_component)


def test_registered_name():
    assert FilterModule().filters() == {'ascend_kernels_component': ascend_kernels_component}


def test_both_sides_of_the_layout_change():
    assert ascend_kernels_component('8.2.RC1') == 'kernels'
    assert ascend_kernels_component('8.5.0') == 'ops'


def test_a_text_that_is_no_version_names_itself():
    with pytest.raises(AnsibleFilterError, match="'latest' is not a CANN version"):
        ascend_kernels_component('latest')
