# -*- coding: utf-8 -*-
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.ascend_package import ascend_package
from ansible_collections.npu.ascend.plugins.filter.ascend_package_name import FilterModule, ascend_package_name


def test_registered_name():
    assert FilterModule().filters() == {'ascend_package_name': ascend_package_name}


# The examples of the facts reference, section 1, as the packages role asks for them:
# the node's chip and arch are passed for every component, whether its name carries them or not.
@pytest.mark.parametrize('component, chip, version, arch, soc, expected', [
    ('driver', '910b', '25.0.rc1.1', 'aarch64', False, 'Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-aarch64.run'),
    ('driver', '310p', '23.0.rc3', 'x86_64', False, 'Ascend-hdk-310p-npu-driver_23.0.rc3_linux-x86-64.run'),
    ('firmware', '910b', '7.7.0.1.231', 'x86_64', False, 'Ascend-hdk-910b-npu-firmware_7.7.0.1.231.run'),
    ('driver', '310b', '25.0.rc1.1', 'aarch64', True, 'Ascend-hdk-310b-npu-driver-soc_25.0.rc1.1_linux-aarch64.run'),
    ('toolkit', '910b', '8.0.RC1', 'aarch64', False, 'Ascend-cann-toolkit_8.0.RC1_linux-aarch64.run'),
    ('kernels', '910b', '8.2.RC1', 'x86_64', False, 'Ascend-cann-kernels-910b_8.2.RC1_linux-x86_64.run'),
    ('ops', '910b', '8.5.0', 'aarch64', False, 'Ascend-cann-910b-ops_8.5.0_linux-aarch64.run'),
    ('nnal', '310p', '8.2.RC1', 'aarch64', False, 'Ascend-cann-nnal_8.2.RC1_linux-aarch64.run'),
    ('docker_runtime', '910b', '7.3.0', 'x86_64', False, 'Ascend-docker-runtime_7.3.0_linux-x86_64.run'),
    ('kernels', 'A3', '8.2.RC1', 'aarch64', False, 'Atlas-A3-cann-kernels_8.2.RC1_linux-aarch64.run'),
])
def test_names_as_huawei_publishes_them(component, chip, version, arch, soc, expected):
    assert ascend_package_name(component, chip=chip, version=version, arch=arch, soc=soc) == expected


@pytest.mark.parametrize('version, expected', [
    ('8.0.RC1', 'Ascend-cann-kernels-910b_8.0.RC1_linux.run'),
    ('8.0.RC2', 'Ascend-cann-kernels-910b_8.0.RC2_linux.run'),
    ('8.0.RC3', 'Ascend-cann-kernels-910b_8.0.RC3_linux-x86_64.run'),
    ('8.0.0', 'Ascend-cann-kernels-910b_8.0.0_linux-x86_64.run'),
])
def test_kernels_up_to_8_0_rc2_carry_no_arch(version, expected):
    assert ascend_package_name('kernels', chip='910b', version=version, arch='x86_64') == expected


@pytest.mark.parametrize('component, chip, version, arch', [
    ('driver', '910b', '25.0.rc1.1', 'x86_64'),
    ('firmware', '310p', '7.3.0.1.231', 'aarch64'),
    ('toolkit', None, '8.5.0', 'x86_64'),
    ('ops', '910b', '8.5.0', 'x86_64'),
])
def test_round_trip_through_the_parser(component, chip, version, arch):
    parsed = ascend_package(ascend_package_name(component, chip=chip, version=version, arch=arch))
    assert (parsed['component'], parsed['chip'], parsed['version']) == (component, chip, version)
    assert parsed['arch'] == (None if component == 'firmware' else arch)


@pytest.mark.parametrize('kwargs, message', [
    ({'version': ''}, 'needs a component and a version'),
    ({'version': '25.0.rc1.1', 'chip': None}, 'cannot name a driver package'),
    ({'version': '25.0.rc1.1', 'chip': '999'}, 'cannot name a driver package'),
    ({'version': '25.0.rc1.1', 'chip': '910b', 'arch': 'sparc'}, 'cannot name a driver package'),
])
def test_refuses_what_cannot_be_named(kwargs, message):
    with pytest.raises(AnsibleFilterError, match=message):
        ascend_package_name('driver', **kwargs)
