# -*- coding: utf-8 -*-
"""Run ascend_compat with the node side switched off or pointed at a temporary install path."""

import os

from ansible_collections.npu.ascend.plugins.modules import ascend_compat

SAMPLES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'samples', 'files')


def test_conflict_fails_with_pair_and_fits(run_module):
    result = run_module(ascend_compat, {'stack': {'cann': '8.2.RC1', 'driver': '24.1.rc2'}, 'use_installed': False},
                        check_mode=True, diff=False)
    assert result['failed'] and result['changed'] is False
    assert 'cann 8.2.RC1, driver 24.1.rc2' in result['msg'] and '25.0.rc1.1.x' in result['msg']
    assert result['conflicts'][0]['pair'] == ['cann', 'driver']


def test_report_only_and_extra_rows(run_module):
    args = {'stack': {'cann': '8.3.RC1', 'driver': '25.2.1'}, 'use_installed': False, 'fail_on_conflict': False,
            'extra_rows': [{'source': 'ticket', 'cann': '8.3.RC1', 'driver': '25.3.x'}]}
    result = run_module(ascend_compat, args, check_mode=True, diff=False)
    assert 'failed' not in result and result['ok'] is False
    args['extra_rows'][0]['driver'] = '25.2.x'
    assert run_module(ascend_compat, args, check_mode=True, diff=False)['ok'] is True


def test_unknown_pair_fails_closed_and_allow_unknown_accepts_it(run_module):
    args = {'stack': {'cann': '9.9.0', 'driver': '25.0.rc1.1'}, 'use_installed': False}
    result = run_module(ascend_compat, args, check_mode=True, diff=False)
    assert result['failed'] and result['changed'] is False and result['ok'] is False
    assert 'unknown Ascend stack: cann 9.9.0 with driver 25.0.rc1.1' in result['msg']
    assert 'extra_rows' in result['msg'] and 'allow_unknown' in result['msg']
    assert result['unknown'][0]['pair'] == ['cann', 'driver']
    result = run_module(ascend_compat, dict(args, allow_unknown=True), check_mode=True, diff=False)
    assert 'failed' not in result and result['ok'] is True and result['message'] == ''
    assert result['unknown'][0]['pair'] == ['cann', 'driver']


def test_documented_pair_passes(run_module):
    args = {'stack': {'cann': '8.2.RC1', 'driver': '25.0.rc1.1', 'firmware': '7.7.0.1.231', 'chip_family': '910b'},
            'use_installed': False}
    result = run_module(ascend_compat, args, check_mode=True, diff=False)
    assert 'failed' not in result and result['ok'] is True and result['unknown'] == []


def test_installed_ranges_are_used_only_for_the_installed_version(tmp_path, run_module):
    driver = tmp_path / 'driver'
    driver.mkdir()
    with open(os.path.join(SAMPLES, 'driver_version.info_24.1.rc1.txt')) as handle:
        (driver / 'version.info').write_text(handle.read())
    args = {'stack': {'firmware': '7.7.0.1.231'}, 'install_path': str(tmp_path)}
    result = run_module(ascend_compat, args, check_mode=True, diff=False)
    assert result['stack']['driver'] == '24.1.rc1'
    assert result['failed'] and result['conflicts'][0]['pair'] == ['driver', 'firmware']
    # Upgrading the driver too: the installed driver's range no longer says anything.
    args['stack']['driver'] = '25.0.rc1.1'
    result = run_module(ascend_compat, args, check_mode=True, diff=False)
    assert 'compatible_version_fw' not in result['stack']
    assert result['ok'] is True


def test_unknown_stack_key(run_module):
    result = run_module(ascend_compat, {'stack': {'cuda': '12'}, 'use_installed': False}, check_mode=True, diff=False)
    assert result['failed'] and 'cuda' in result['msg']


def test_untrustworthy_version_file_is_a_message_not_a_traceback(tmp_path, run_module):
    driver = tmp_path / 'driver'
    driver.mkdir()
    (driver / 'version.info').write_text('Version=25.0.rc1.1;reboot\n')
    result = run_module(ascend_compat, {'stack': {'cann': '8.2.RC1'}, 'install_path': str(tmp_path)},
                        check_mode=True, diff=False)
    assert result['failed'] and 'cannot read the installed Ascend stack' in result['msg']
    assert 'version.info' in result['msg']
