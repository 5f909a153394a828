# -*- coding: utf-8 -*-
import pytest

from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import in_compat_range
from ansible_collections.npu.ascend.plugins.module_utils.packages.version_files import (
    parse_docker_runtime_install_info,
    parse_driver_version_info,
    parse_firmware_version_info,
    parse_install_info,
    parse_key_value_file,
    parse_nnal_version_info,
    parse_opp_kernel_version_info,
    parse_toolkit_install_info,
    parse_toolkit_version_cfg,
    parse_toolkit_version_info,
    parse_upgrade_tool_versions,
)


def test_key_value_file_ignores_comments_and_strips_quotes():
    text = '# version: 1.0\n\nkey=value\nquoted="8.2"\nrange=">=7.6, <=8.2"\n  spaced = x=y \nnoequals\n'
    assert parse_key_value_file(text) == {'key': 'value', 'quoted': '8.2', 'range': '>=7.6, <=8.2', 'spaced': 'x=y'}


@pytest.mark.parametrize('relative, expected', [
    ('files/driver_version.info_24.1.rc1.txt', {
        'version': '24.1.rc1', 'package_version': None, 'inner_version': 'V100R001C15SPC006B220',
        'compatible_version_fw': '[7.0.0,7.2.99]'}),
    ('files/driver_version.info_24.1.rc2.2.txt', {
        'version': '24.1.rc2.2', 'package_version': '24.1.rc2.2', 'inner_version': 'V100R001C18SPC001B233',
        'compatible_version_fw': '[7.0.0,7.2.99]'}),
    ('files/driver_version.info_25.0.rc1.1.txt', {
        'version': '25.0.rc1.1', 'package_version': '25.0.rc1.1', 'inner_version': 'V100R001C21SPC002B220',
        'compatible_version_fw': '[7.0.0,7.7.99]'}),
    ('files/driver_version.info_25.3.rc1.txt', {
        'version': '25.3.rc1', 'package_version': '25.3.rc1', 'inner_version': 'V100R001C23SPC002B212',
        'compatible_version_fw': '[7.0.0,8.9.9]'}),
])
def test_driver_version_info(sample, relative, expected):
    assert parse_driver_version_info(sample(relative)) == expected


@pytest.mark.parametrize('relative, expected', [
    ('files/firmware_version.info_7.1.0.11.220.txt', {
        'version': '7.1.0.11.220', 'package_version': '23.0.7',
        'compatible_version_drv': '[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.]'}),
    ('files/firmware_version.info_7.7.0.1.231.txt', {
        'version': '7.7.0.1.231', 'package_version': '25.0.rc1.1',
        'compatible_version_drv': '[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.],[25.0,25.0.]'}),
])
def test_firmware_version_info(sample, relative, expected):
    assert parse_firmware_version_info(sample(relative)) == expected


def test_driver_and_firmware_samples_cross_check(sample):
    """The declared ranges of the real files agree with each other as Huawei pairs them."""
    driver = parse_driver_version_info(sample('files/driver_version.info_25.0.rc1.1.txt'))
    firmware = parse_firmware_version_info(sample('files/firmware_version.info_7.7.0.1.231.txt'))
    assert in_compat_range(firmware['version'], driver['compatible_version_fw'])
    assert in_compat_range(driver['version'], firmware['compatible_version_drv'])
    old_driver = parse_driver_version_info(sample('files/driver_version.info_24.1.rc1.txt'))
    assert not in_compat_range(firmware['version'], old_driver['compatible_version_fw'])
    old_firmware = parse_firmware_version_info(sample('files/firmware_version.info_7.1.0.11.220.txt'))
    assert not in_compat_range(driver['version'], old_firmware['compatible_version_drv'])


def test_driver_version_info_requires_version():
    with pytest.raises(ValueError, match='Version'):
        parse_driver_version_info('Innerversion=V100R001C15SPC006B220\n')


@pytest.mark.parametrize('relative, last_key', [
    ('files/etc_ascend_install.info_driver_firmware.txt', 'Driver_Install_For_All'),
    ('files/etc_ascend_install.info_driver_firmware_mode.txt', 'Firmware_Install_Path_Param'),
])
def test_install_info(sample, relative, last_key):
    info = parse_install_info(sample(relative))
    assert info['UserName'] == 'HwHiAiUser'
    assert info['UserGroup'] == 'HwHiAiUser'
    assert info['Driver_Install_Type'] == 'full'
    assert info['Driver_Install_Path_Param'] == '/usr/local/Ascend'
    assert info['Driver_Install_For_All'] == 'yes'
    assert info['Firmware_Install_Type'] == 'full'
    assert list(info)[-1] == last_key


def test_install_info_mode_key(sample):
    assert parse_install_info(sample('files/etc_ascend_install.info_driver_firmware_mode.txt'))[
        'Driver_Install_Mode'] == 'normal'
    assert 'Driver_Install_Mode' not in parse_install_info(sample('files/etc_ascend_install.info_driver_firmware.txt'))


@pytest.mark.parametrize('version, inner, path', [
    ('8.0.0', 'V100R001C20SPC001B251', '/usr/local/Ascend/ascend-toolkit/8.0.0/aarch64-linux'),
    ('8.1.RC1', 'V100R001C21SPC001B238', '/usr/local/Ascend/ascend-toolkit/8.1.RC1/aarch64-linux'),
    ('8.2.RC1', 'V100R001C22SPC001B231', '/usr/local/Ascend/ascend-toolkit/8.2.RC1/aarch64-linux'),
    ('8.5.0', 'V100R001C25SPC001B212', '/usr/local/Ascend/cann-8.5.0/aarch64-linux'),
])
def test_toolkit_install_info(sample, version, inner, path):
    info = parse_toolkit_install_info(sample('files/ascend_toolkit_install.info_%s_aarch64.txt' % version))
    assert info == {'version': version, 'arch': 'aarch64', 'path': path, 'inner_version': inner}


def test_nnal_version_info(sample):
    assert parse_nnal_version_info(sample('files/nnal_atb_version.info_8.2.RC1.txt')) == {
        'version': '8.2.RC1', 'full_version': '8.2.RC1.B150', 'platform': 'aarch64'}


def test_nnal_version_info_requires_version():
    with pytest.raises(ValueError, match='Ascend-cann-atb'):
        parse_nnal_version_info('Platform : aarch64\n')


def test_opp_kernel_version_info(sample):
    assert parse_opp_kernel_version_info(sample('files/opp_kernel_version.info_8.2.RC1.txt')) == {
        'version': '8.2.RC1', 'ops_version': '8.2.0.0.201'}


def test_toolkit_version_info(sample):
    assert parse_toolkit_version_info(sample('files/toolkit_version.info_8.2.RC1.txt')) == {
        'version': '8.2.RC1', 'inner_version': '8.2.0.0.201'}


def test_toolkit_version_cfg(sample):
    cfg = parse_toolkit_version_cfg(sample('files/toolkit_version.cfg_8.2.RC2.txt'))
    assert cfg['toolkit_running_version'] == [{'inner_version': '8.2.0.2.220', 'version': '8.2.RC2'}]
    assert cfg['opp_kernel_installed_version'] == [
        {'inner_version': '7.5.T11.0.B081', 'version': '8.0.RC3.alpha003'},
        {'inner_version': '8.2.0.2.220', 'version': '8.2.RC2'}]
    assert len(cfg) == 24


@pytest.mark.parametrize('text, expected', [
    ('version=v7.3.0\narch=x86_64\ninstall-scene=containerd\n',
     {'version': '7.3.0', 'arch': 'x86_64', 'install_scene': 'containerd'}),
    ('version=6.0.0.SPC1\narch=aarch64\n', {'version': '6.0.0.SPC1', 'arch': 'aarch64', 'install_scene': None}),
])
def test_docker_runtime_install_info(text, expected):
    # No real sample exists; the format is the one of facts reference section 4.
    assert parse_docker_runtime_install_info(text) == expected


def test_upgrade_tool_versions(sample):
    assert parse_upgrade_tool_versions(sample('files/upgrade-tool_version_7.1.0.7.220.txt')) == [
        {'device_id': 0, 'component': 'nve', 'version': '7.1.0.7.220'},
        {'device_id': 0, 'component': 'uefi', 'version': '7.1.0.7.220'},
        {'device_id': 0, 'component': 'imu', 'version': '7.1.0.7.220'},
        {'device_id': 0, 'component': 'imp', 'version': '7.1.0.7.220'},
    ]


def test_upgrade_tool_versions_empty_output():
    assert parse_upgrade_tool_versions('') == []


# --- Values no Huawei installer writes --------------------------------------------------

from hypothesis import given, strategies as st  # noqa: E402

from ansible_collections.npu.ascend.plugins.module_utils.packages import version_files  # noqa: E402
from ansible_collections.npu.ascend.plugins.module_utils.packages.version_files import (  # noqa: E402
    VersionFileError, decode_version_file, version_problem)

_PARSERS = [
    version_files.parse_driver_version_info, version_files.parse_firmware_version_info,
    version_files.parse_toolkit_install_info, version_files.parse_nnal_version_info,
    version_files.parse_docker_runtime_install_info, version_files.parse_opp_kernel_version_info,
    version_files.parse_toolkit_version_info,
]
_HUAWEI_VERSION = st.from_regex(r'\A[0-9]{1,2}\.[0-9]\.(rc[0-9]|RC[0-9]|[0-9]{1,3})(\.[0-9]{1,3}){0,2}\Z')


@pytest.mark.parametrize('value', ['25.0.rc1.1', '8.2.RC1', '7.7.0.1.231', '8.2.RC1.B150', 'V100R001C23SPC002B212'])
def test_huawei_versions_are_accepted(value):
    assert version_problem(value) == ''


@pytest.mark.parametrize('value', ['25.0.rc1.1;reboot', '$(id)', '`id`', '8.2 RC1', '8.2.RC1\n', '', '-8.2',
                                   '8.2|x', '8.2&', "8.2'", '8.2"', '8.2>x', 'a' * 65, '8.2\x00'])
def test_values_with_shell_or_control_characters_are_not_versions(value):
    assert 'not a Huawei version' in version_problem(value)


@pytest.mark.parametrize('text', ['Version=25.0;rm -rf /\n', 'Version=$(id)\n', 'Version=`id`\n',
                                  "Version='25.0 rc1'\n", 'Version=25.0\npackage_version=x y\n'])
def test_the_driver_file_refuses_a_value_with_shell_characters(text):
    with pytest.raises(VersionFileError, match='not a Huawei version'):
        version_files.parse_driver_version_info(text)


def test_a_file_that_is_not_utf8_is_refused_naming_it_and_the_byte():
    with pytest.raises(VersionFileError) as error:
        decode_version_file(b'Version=25.0.rc1.1\n\xff\n', '/usr/local/Ascend/driver/version.info')
    assert '/usr/local/Ascend/driver/version.info is not UTF-8 text' in str(error.value)
    assert "b'\\xff' at offset 19" in str(error.value)


@given(st.binary(max_size=400))
def test_random_bytes_give_text_or_a_clean_error(data):
    try:
        text = decode_version_file(data, '/x/version.info')
    except VersionFileError as error:
        assert '/x/version.info' in str(error)
        return
    for parser in _PARSERS:
        try:
            parsed = parser(text)
        except ValueError:
            continue
        assert version_problem(parsed['version']) == ''


@given(st.text(max_size=300))
def test_any_text_parses_to_safe_versions_or_a_value_error(text):
    for parser in _PARSERS:
        try:
            parsed = parser(text)
        except ValueError:
            continue
        for key in ('version', 'package_version', 'inner_version', 'ops_version', 'full_version'):
            if parsed.get(key):
                assert version_problem(parsed[key]) == ''


@given(_HUAWEI_VERSION, st.sampled_from(['', '"', "'"]))
def test_a_written_version_reads_back(version, quote):
    text = 'Version=%s%s%s\nInnerversion=V100R001C23SPC002B212\n' % (quote, version, quote)
    assert version_files.parse_driver_version_info(text)['version'] == version
