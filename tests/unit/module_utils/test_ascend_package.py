# -*- coding: utf-8 -*-
import re

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.packages.package_names import (
    normalize_arch,
    package_file_name,
    parse_package_name,
)

# Every example name of the facts reference section 1 (and its patterns filled in),
# with what the name says: (file name, component, chip, version, arch, soc, patch).
REAL_NAMES = [
    ('Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-aarch64.run', 'driver', '910b', '25.0.rc1.1', 'aarch64', False, None),
    ('Ascend-hdk-310p-npu-driver_23.0.rc3_linux-x86-64.run', 'driver', '310p', '23.0.rc3', 'x86_64', False, None),
    ('Ascend-hdk-910-npu-driver_24.1.0_linux-x86-64.run', 'driver', '910', '24.1.0', 'x86_64', False, None),
    # A3 (the A3 fact sheet, section 3: Huawei's download bucket and CANN 8.5.0 quick start).
    ('Atlas-A3-hdk-npu-driver_25.3.rc1_linux-aarch64.run', 'driver', 'A3', '25.3.rc1', 'aarch64', False, None),
    ('Atlas-A3-hdk-npu-driver_25.3.rc1_linux-x86-64.run', 'driver', 'A3', '25.3.rc1', 'x86_64', False, None),
    ('Atlas-A3-hdk-npu-firmware_7.8.0.2.212.run', 'firmware', 'A3', '7.8.0.2.212', None, False, None),
    ('Ascend-cann-A3-ops_8.5.0_linux-aarch64.run', 'ops', 'A3', '8.5.0', 'aarch64', False, None),
    ('Ascend-hdk-910b-npu-firmware_7.7.0.1.231.run', 'firmware', '910b', '7.7.0.1.231', None, False, None),
    ('Ascend-hdk-910-npu-firmware_7.5.0.2.220.run', 'firmware', '910', '7.5.0.2.220', None, False, None),
    ('Ascend-hdk-310b-npu-driver-soc_25.0.rc1.1_linux-aarch64.run', 'driver', '310b', '25.0.rc1.1', 'aarch64', True, None),
    ('Ascend-hdk-310b-npu-firmware-soc_7.7.0.1.231.run', 'firmware', '310b', '7.7.0.1.231', None, True, None),
    ('Ascend-hdk-910b-npu-driver_24.1.rc2_sph001_linux.run', 'driver-hotpatch', '910b', '24.1.rc2', None, False,
     'sph001'),
    ('Ascend-cann-toolkit_8.0.RC1_linux-aarch64.run', 'toolkit', None, '8.0.RC1', 'aarch64', False, None),
    ('Ascend-cann-toolkit_8.2.RC1_linux-x86_64.run', 'toolkit', None, '8.2.RC1', 'x86_64', False, None),
    ('Ascend-cann-kernels-910b_8.2.RC1_linux-x86_64.run', 'kernels', '910b', '8.2.RC1', 'x86_64', False, None),
    ('Ascend-cann-kernels-310p_8.0.RC1_linux.run', 'kernels', '310p', '8.0.RC1', None, False, None),
    ('Atlas-A3-cann-kernels_8.1.RC1_linux-aarch64.run', 'kernels', 'A3', '8.1.RC1', 'aarch64', False, None),
    ('Ascend-cann-910b-ops_8.5.0_linux-aarch64.run', 'ops', '910b', '8.5.0', 'aarch64', False, None),
    ('Ascend-cann-nnal_8.2.RC1_linux-aarch64.run', 'nnal', None, '8.2.RC1', 'aarch64', False, None),
    ('Ascend-cann-nnae_8.0.0_linux-x86_64.run', 'nnae', None, '8.0.0', 'x86_64', False, None),
    ('Ascend-cann-nnrt_8.1.RC1.alpha002_linux-aarch64.run', 'nnrt', None, '8.1.RC1.alpha002', 'aarch64', False, None),
    ('Ascend-docker-runtime_7.3.0_linux-x86_64.run', 'docker_runtime', None, '7.3.0', 'x86_64', False, None),
    ('Ascend-docker-runtime_6.0.0.SPC1_linux-aarch64.run', 'docker_runtime', None, '6.0.0.SPC1', 'aarch64', False,
     None),
]


@pytest.mark.parametrize('filename, component, chip, version, arch, soc, patch', REAL_NAMES)
def test_parse_real_names(filename, component, chip, version, arch, soc, patch):
    assert parse_package_name(filename) == {
        'component': component, 'chip': chip, 'version': version, 'arch': arch, 'soc': soc,
        'filename': filename, 'patch': patch,
    }


@pytest.mark.parametrize('filename, component, chip, version, arch, soc, patch', REAL_NAMES)
def test_round_trip_gives_the_exact_real_spelling(filename, component, chip, version, arch, soc, patch):
    assert package_file_name(component, chip, version, arch, soc=soc, patch=patch) == filename
    parsed = parse_package_name(filename)
    assert package_file_name(parsed['component'], parsed['chip'], parsed['version'], parsed['arch'],
                             soc=parsed['soc'], patch=parsed['patch']) == filename


def test_the_third_party_a3_driver_spelling_is_read_but_not_written():
    # One third-party page shows Ascend-hdk-A3-npu-driver_...; Huawei's own names are Atlas-A3-hdk-npu-driver_...
    parsed = parse_package_name('Ascend-hdk-A3-npu-driver_24.1.rc3.7_linux-aarch64.run')
    assert (parsed['component'], parsed['chip'], parsed['version'], parsed['arch']) == \
        ('driver', 'A3', '24.1.rc3.7', 'aarch64')
    assert package_file_name('driver', 'A3', '24.1.rc3.7', 'aarch64') == \
        'Atlas-A3-hdk-npu-driver_24.1.rc3.7_linux-aarch64.run'


def test_path_is_reduced_to_basename():
    parsed = parse_package_name('/srv/ascend/packages/Ascend-cann-toolkit_8.2.RC1_linux-aarch64.run')
    assert parsed['filename'] == 'Ascend-cann-toolkit_8.2.RC1_linux-aarch64.run'
    assert parsed['component'] == 'toolkit'


def test_driver_uses_hyphen_and_cann_underscore_for_x86():
    assert package_file_name('driver', '910b', '25.0.rc1.1', 'x86_64') == \
        'Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-x86-64.run'
    assert package_file_name('toolkit', None, '8.2.RC1', 'x86-64') == 'Ascend-cann-toolkit_8.2.RC1_linux-x86_64.run'
    assert package_file_name('nnal', None, '8.2.RC1', 'amd64') == 'Ascend-cann-nnal_8.2.RC1_linux-x86_64.run'
    assert package_file_name('docker_runtime', None, '7.3.0', 'arm64') == \
        'Ascend-docker-runtime_7.3.0_linux-aarch64.run'


def test_firmware_name_ignores_architecture():
    assert package_file_name('firmware', '910B', '7.7.0.1.231', 'x86_64') == 'Ascend-hdk-910b-npu-firmware_7.7.0.1.231.run'


def test_chip_spelling_is_normalised():
    assert parse_package_name('Ascend-hdk-910B-npu-driver_24.1.0_linux-aarch64.run')['chip'] == '910b'
    assert package_file_name('kernels', 'a3', '8.2.RC1', 'aarch64') == 'Atlas-A3-cann-kernels_8.2.RC1_linux-aarch64.run'


@pytest.mark.parametrize('transcript, component', [
    ('installer/toolkit_8.1.RC1_install_summary_310b-soc.txt', 'toolkit'),
    ('installer/kernels_310b_8.1.RC1_devel.txt', 'kernels'),
])
def test_names_printed_by_real_installers_match_our_spelling(sample, transcript, component):
    """The installers print their own package name (without .run); ours must be identical."""
    stems = set(re.findall(r'\b((?:Ascend|Atlas)-[A-Za-z0-9-]+_[0-9][0-9A-Za-z.]*_linux-(?:aarch64|x86_64))\b',
                           sample(transcript)))
    assert stems, 'no package name printed in %s' % transcript
    for stem in stems:
        parsed = parse_package_name(stem + '.run')
        assert parsed['component'] == component
        assert parsed['version'] == '8.1.RC1'
        assert parsed['arch'] == 'aarch64'
        assert package_file_name(parsed['component'], parsed['chip'], parsed['version'], parsed['arch']) == \
            stem + '.run'


@pytest.mark.parametrize('filename, reason', [
    ('Ascend-hdk-910b-npu_25.0.rc1.1_linux-aarch64.zip', 'does not end in .run'),
    ('Ascend-hdk-910b-mcu_23.3.13.zip', 'does not end in .run'),
    ('install.sh', 'does not end in .run'),
    ('Ascend-cann-toolkit_8.2.RC1_linux-riscv64.run', 'not a Huawei Ascend package name'),
    ('Ascend-hdk-920-npu-driver_24.1.0_linux-aarch64.run', 'not a Huawei Ascend package name'),
    ('Ascend-cann-toolkit_latest_linux-aarch64.run', 'not a Huawei Ascend package name'),
    ('Ascend-cann-toolkit_8.2.RC1.gamma_linux-aarch64.run', 'unreadable version'),
    ('Ascend-hdk-910b-npu-driver-soc_24.1.0_linux-aarch64.run', 'only 310b'),
    ('Ascend-cann-toolkit_8.2.RC1_linux.run', 'not a Huawei Ascend package name'),
])
def test_rejects_non_packages_naming_file_and_reason(filename, reason):
    with pytest.raises(ValueError) as caught:
        parse_package_name(filename)
    assert filename.split('/')[-1] in str(caught.value)
    assert reason in str(caught.value)


@pytest.mark.parametrize('arguments, message', [
    (('bios', '910b', '1.0', 'aarch64'), 'unknown package component'),
    (('driver', None, '24.1.0', 'aarch64'), 'needs a chip'),
    (('toolkit', '910b', '8.2.RC1', 'aarch64'), 'carry no chip'),
    (('toolkit', None, '8.2.RC1', None), 'needs an architecture'),
    (('driver', '910b', '24.1.0', 'ppc64le'), 'unsupported architecture'),
    (('driver', '920', '24.1.0', 'aarch64'), 'unknown Ascend chip'),
    (('driver', '910b', '', 'aarch64'), 'cannot be empty'),
    (('driver-hotpatch', '910b', '24.1.rc2', None), 'needs patch'),
])
def test_package_file_name_rejects_bad_arguments(arguments, message):
    with pytest.raises(ValueError, match=message):
        package_file_name(*arguments)


def test_soc_only_for_310b_driver_and_firmware():
    with pytest.raises(ValueError, match='-soc'):
        package_file_name('driver', '910b', '24.1.0', 'aarch64', soc=True)
    with pytest.raises(ValueError, match='-soc'):
        package_file_name('toolkit', None, '8.2.RC1', 'aarch64', soc=True)


@pytest.mark.parametrize('spelling, expected', [
    ('x86_64', 'x86_64'), ('x86-64', 'x86_64'), ('AMD64', 'x86_64'), ('aarch64', 'aarch64'), ('arm64', 'aarch64'),
])
def test_normalize_arch(spelling, expected):
    assert normalize_arch(spelling) == expected
