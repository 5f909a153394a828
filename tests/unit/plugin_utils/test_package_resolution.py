# -*- coding: utf-8 -*-
"""The packages role's decisions: naming, judging and staging the Huawei packages of a node."""
import hashlib

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, strategies as st

from ansible_collections.npu.ascend.plugins.filter.ascend_packages import (
    FilterModule, ascend_packages_bundle, ascend_packages_judgement, ascend_packages_plan, ascend_packages_staged)
from ansible_collections.npu.ascend.plugins.module_utils.packages.package_names import parse_package_name
from ansible_collections.npu.ascend.plugins.plugin_utils.package_resolution import (
    judge_packages, mirror_source, plan_packages, staged_packages)

DRIVER_X86 = 'Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-x86-64.run'
DRIVER_ARM = 'Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-aarch64.run'
FIRMWARE = 'Ascend-hdk-910b-npu-firmware_7.7.0.1.231.run'
TOOLKIT = 'Ascend-cann-toolkit_8.2.RC1_linux-x86_64.run'
STACK = [{'component': 'driver', 'version': '25.0.rc1.1'}, {'component': 'firmware', 'version': '7.7.0.1.231'},
         {'component': 'toolkit', 'version': '8.2.RC1'}]


def test_registered_names():
    assert sorted(FilterModule().filters()) == [
        'ascend_packages_bundle', 'ascend_packages_download_failure', 'ascend_packages_file_name_refusal',
        'ascend_packages_judgement', 'ascend_packages_plan', 'ascend_packages_refusal', 'ascend_packages_resolution',
        'ascend_packages_staged']


def test_the_plan_names_each_package_and_its_other_architecture_twin():
    plan = plan_packages(STACK, chip='910b', arch='x86_64')
    assert [(p['file_name'], p['other_arch_file_name']) for p in plan] == [
        (DRIVER_X86, DRIVER_ARM), (FIRMWARE, ''), (TOOLKIT, 'Ascend-cann-toolkit_8.2.RC1_linux-aarch64.run')]
    # The toolkit carries no chip in its name, but the plan keeps the node's for the judgement.
    assert {p['chip'] for p in plan} == {'910b'}


def test_a_component_overrides_chip_arch_and_file_name():
    plan = plan_packages([{'component': 'driver', 'version': '25.0.rc1.1', 'chip': '310p', 'arch': 'aarch64'},
                          {'component': 'toolkit', 'version': '8.2.RC1', 'file_name': 'mine.run'}],
                         chip='910b', arch='x86_64')
    assert plan[0]['file_name'] == 'Ascend-hdk-310p-npu-driver_25.0.rc1.1_linux-aarch64.run'
    assert (plan[1]['file_name'], plan[1]['other_arch_file_name']) == (
        'mine.run', 'Ascend-cann-toolkit_8.2.RC1_linux-aarch64.run')


def test_a_chip_package_without_a_chip_is_refused_by_the_filter():
    with pytest.raises(AnsibleFilterError, match='needs a chip'):
        ascend_packages_plan([{'component': 'driver', 'version': '25.0.rc1.1'}], chip=None, arch='x86_64')


def _source(files=None, dir_problem='', others=()):
    return {'dir_problem': dir_problem, 'files': files or {}, 'other_arch_present': set(others)}


def _judge(plan, source, checksums):
    judged = judge_packages(plan, '/srv/ascend', source, checksums, 'SHA256SUMS')
    return dict((p['file_name'], (p['problem'], p['fix'])) for p in judged)


def test_the_problems_come_in_the_order_a_user_fixes_them():
    plan = plan_packages(STACK, chip='910b', arch='x86_64')
    sums = {DRIVER_X86: 'a' * 64, FIRMWARE: 'b' * 64}
    verdicts = _judge(plan, _source({DRIVER_X86: {'checksum': 'A' * 64}, FIRMWARE: {'checksum': 'c' * 64}},
                                    others=['Ascend-cann-toolkit_8.2.RC1_linux-aarch64.run']), sums)
    assert verdicts[DRIVER_X86] == ('', '')  # checksums compare case-insensitively
    assert verdicts[FIRMWARE][0].startswith('sha256 mismatch: expected ' + 'b' * 64)
    assert verdicts[TOOLKIT][0] == ('not found in /srv/ascend; only Ascend-cann-toolkit_8.2.RC1_linux-aarch64.run, '
                                    'built for the other architecture, is there (the node is x86_64)')


def test_a_missing_directory_is_named_instead_of_every_package_missing_from_it():
    plan = plan_packages(STACK, chip='910b', arch='x86_64')
    verdicts = _judge(plan, _source(dir_problem='packages_source_dir /srv/ascend does not exist'), {})
    assert {problem for problem, _fix in verdicts.values()} == {'packages_source_dir /srv/ascend does not exist'}


def test_a_package_of_another_arch_or_chip_is_named_before_it_is_looked_for():
    plan = plan_packages([{'component': 'driver', 'version': '25.0.rc1.1', 'file_name': DRIVER_ARM},
                          {'component': 'firmware', 'version': '7.7.0.1.231',
                           'file_name': 'Ascend-hdk-310p-npu-firmware_7.7.0.1.231.run'}], chip='910b', arch='x86_64')
    verdicts = _judge(plan, _source(dir_problem='gone'), {})
    assert verdicts[DRIVER_ARM] == ('the package is built for aarch64 but the node is x86_64',
                                    'use the x86_64 package of version 25.0.rc1.1')
    assert verdicts['Ascend-hdk-310p-npu-firmware_7.7.0.1.231.run'][0] == (
        'the package is for chip 310p but the node has 910b')


def test_a_package_without_a_known_checksum_is_refused():
    plan = plan_packages(STACK[2:], chip='910b', arch='x86_64')
    problem, fix = _judge(plan, _source({TOOLKIT: {'checksum': 'a' * 64}}), {})[TOOLKIT]
    assert problem.startswith('no sha256 is known for it')
    assert fix == 'add the line "<sha256>  %s" to /srv/ascend/SHA256SUMS with the checksum Huawei publishes' % TOOLKIT


def test_a_mirror_answers_presence_only_and_its_checksum_is_left_to_the_download():
    plan = plan_packages(STACK[2:], chip='910b', arch='x86_64')
    heads = [{'item': {'file_name': TOOLKIT}, 'status': 200}]
    judged = judge_packages(plan, 'https://mirror/ascend', mirror_source(heads), {TOOLKIT: 'F' * 64}, 'SHA256SUMS')
    assert (judged[0]['problem'], judged[0]['sha256'], judged[0]['source']) == (
        '', 'f' * 64, 'https://mirror/ascend/' + TOOLKIT)
    judged = judge_packages(plan, 'https://mirror/ascend', mirror_source([dict(heads[0], status=404)]),
                            {TOOLKIT: 'f' * 64}, 'SHA256SUMS')
    assert judged[0]['problem'] == 'not found in https://mirror/ascend'


def test_the_filter_reads_the_controller_directory(tmp_path):
    (tmp_path / DRIVER_ARM).write_bytes(b'arm')
    content = b'#!/bin/sh\n'
    (tmp_path / FIRMWARE).write_bytes(content)
    digest = hashlib.sha256(content).hexdigest()
    plan = ascend_packages_plan(STACK[:2], chip='910b', arch='x86_64')
    files = {FIRMWARE: {'exists': True, 'checksum': digest}, DRIVER_X86: {'exists': False, 'checksum': None}}
    judged = ascend_packages_judgement(plan, {FIRMWARE: digest}, source_dir=str(tmp_path), source_files=files)
    assert [p['problem'] for p in judged] == [
        'not found in %s; only %s, built for the other architecture, is there (the node is x86_64)'
        % (tmp_path, DRIVER_ARM), '']
    missing = tmp_path / 'absent'
    judged = ascend_packages_judgement(plan, {}, source_dir=str(missing), source_files={})
    assert judged[0]['problem'] == ('packages_source_dir %s does not exist on the controller (relative paths start '
                                    'in the directory ansible-playbook runs in)' % missing)
    judged = ascend_packages_judgement(plan, {}, source_dir=str(tmp_path / FIRMWARE), source_files={})
    assert ' is not a directory on the controller' in judged[0]['problem']


def test_the_filter_wants_exactly_one_source():
    with pytest.raises(AnsibleFilterError, match='exactly one'):
        ascend_packages_judgement([], {}, source_dir='/a', mirror_url='http://b')
    with pytest.raises(AnsibleFilterError, match='exactly one'):
        ascend_packages_judgement([], {})


def test_staging_keeps_earlier_components_and_says_what_a_dry_run_did_not_copy():
    resolved = judge_packages(plan_packages(STACK[:2], chip='910b', arch='x86_64'), '/srv', _source(), {}, 'S')
    results = [{'item': {'file_name': DRIVER_X86}, 'changed': True}, {'item': {'file_name': FIRMWARE}, 'skipped': True}]
    earlier = {'toolkit': {'file_name': TOOLKIT}}
    staged = staged_packages(earlier, resolved, results, '/var/cache/ascend', check_mode=False)
    assert (staged['driver']['present'], staged['firmware']['present'], staged['toolkit']) == (
        True, False, {'file_name': TOOLKIT})
    assert staged['driver']['path'] == '/var/cache/ascend/' + DRIVER_X86
    assert ascend_packages_staged(resolved, results, '/x', check_mode=True)['driver']['present'] is False
    assert earlier == {'toolkit': {'file_name': TOOLKIT}}


@given(present=st.sets(st.sampled_from([DRIVER_X86, FIRMWARE, TOOLKIT])),
       known=st.sets(st.sampled_from([DRIVER_X86, FIRMWARE, TOOLKIT])),
       corrupt=st.sets(st.sampled_from([DRIVER_X86, FIRMWARE, TOOLKIT])))
def test_a_package_is_usable_exactly_when_it_is_there_with_the_checksum_expected(present, known, corrupt):
    plan = plan_packages(STACK, chip='910b', arch='x86_64')
    checksums = {name: 'e' * 64 for name in known}
    files = {name: {'checksum': 'd' * 64 if name in corrupt else 'e' * 64} for name in present}
    for package in judge_packages(plan, '/srv', _source(files), checksums, 'SHA256SUMS'):
        usable = package['file_name'] in present and package['file_name'] in known and package['file_name'] not in corrupt
        assert (package['problem'] == '') == usable
        assert bool(package['fix']) == (not usable)
        assert parse_package_name(package['file_name'])['arch'] in (None, 'x86_64')


def test_the_bundle_lists_each_file_once_with_its_hosts_problems_first():
    plan = plan_packages(STACK, chip='910b', arch='x86_64')
    good = judge_packages(plan, '/srv', _source({name: {'checksum': 'e' * 64} for name in (DRIVER_X86, FIRMWARE)}),
                          {DRIVER_X86: 'e' * 64, FIRMWARE: 'e' * 64}, 'SHA256SUMS')
    hosts = dict(('n%02d' % number, good) for number in range(12))
    hosts['stopped'] = None
    bundle = ascend_packages_bundle(hosts)
    assert [entry['file_name'] for entry in bundle] == [TOOLKIT, DRIVER_X86, FIRMWARE]
    assert bundle[0]['line'].startswith('FAIL %s (toolkit 8.2.RC1, for n00, n01, n02, n03, n04 and 7 more): not found' %
                                        TOOLKIT)
    assert bundle[1]['line'] == 'OK   %s (driver 25.0.rc1.1, sha256 %s, for n00, n01, n02, n03, n04 and 7 more)' % (
        DRIVER_X86, 'e' * 16)
    assert all(len(entry['hosts']) == 12 for entry in bundle)
    with pytest.raises(AnsibleFilterError, match='host_values'):
        ascend_packages_bundle([good])


# ---------------------------------------------------------------- the messages the role stops with

@pytest.mark.parametrize('name', ['ascend_packages_refusal', 'ascend_packages_file_name_refusal',
                                  'ascend_packages_download_failure'])
def test_the_message_filters_want_a_list(name):
    with pytest.raises(AnsibleFilterError, match='a list'):
        FilterModule().filters()[name]({'not': 'a list'}, 'n1')


def test_the_refusal_names_every_unusable_package_with_its_cause_and_fix_and_nothing_else():
    from ansible_collections.npu.ascend.plugins.plugin_utils.package_resolution import refusal_message
    resolved = [{'component': 'driver', 'file_name': 'd.run', 'problem': 'checksum mismatch', 'fix': 'download it again'},
                {'component': 'firmware', 'file_name': 'f.run', 'problem': None, 'fix': None},
                {'component': 'toolkit', 'file_name': 't.run', 'problem': 'missing', 'fix': 'copy it there'}]
    assert refusal_message(resolved, 'n1') == ('n1: driver package d.run: checksum mismatch. Fix: download it again. '
                                               'n1: toolkit package t.run: missing. Fix: copy it there.')
    assert refusal_message(resolved[1:2], 'n1') == ''


def test_the_file_name_refusal_names_each_name_that_is_not_plain():
    from ansible_collections.npu.ascend.plugins.plugin_utils.package_resolution import file_name_refusal
    from ansible_collections.npu.ascend.plugins.plugin_utils.package_trust import file_name_problem
    plan = [{'component': 'driver', 'file_name': '../etc/x.run'}, {'component': 'firmware', 'file_name': 'f.run'}]
    message = file_name_refusal(plan, 'n1', file_name_problem)
    assert message.startswith("n1: driver package: the package file name '../etc/x.run' contains a directory separator")
    assert message.endswith('Fix: give the file name exactly as Huawei publishes it (packages_components[].file_name), '
                            'without directories.')
    assert 'firmware' not in message and file_name_refusal(plan[1:], 'n1', file_name_problem) == ''


def test_the_download_failure_names_each_failed_package_its_url_and_the_sha256_wanted():
    from ansible_collections.npu.ascend.plugins.plugin_utils.package_resolution import download_failure_message
    item = {'component': 'driver', 'file_name': 'd.run', 'source': 'https://mirror/d.run', 'sha256': 'a' * 64}
    results = [{'item': item, 'failed': True, 'msg': 'HTTP Error 404: Not Found'},
               {'item': dict(item, component='firmware'), 'failed': False},
               {'item': dict(item, component='toolkit'), 'failed': True}]
    assert download_failure_message(results, 'n1') == (
        'n1: driver package d.run could not be fetched from https://mirror/d.run: HTTP Error 404: Not Found. Fix: make '
        'the mirror serve the file with sha256 %s (re-download it from Huawei if the checksum differs). n1: toolkit '
        'package d.run could not be fetched from https://mirror/d.run: unknown error. Fix: make the mirror serve the file '
        'with sha256 %s (re-download it from Huawei if the checksum differs).' % ('a' * 64, 'a' * 64))
