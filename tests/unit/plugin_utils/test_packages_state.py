# -*- coding: utf-8 -*-
"""What the packages role decides before it fetches anything (plugin_utils/packages_state.py and the filter
ascend_packages_resolution): the packages a node needs and whether their source can be used, with the first
problem as the refusal."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.ascend_packages import ascend_packages_resolution
from ansible_collections.npu.ascend.plugins.plugin_utils.package_resolution import plan_packages
from ansible_collections.npu.ascend.plugins.plugin_utils.packages_state import packages_resolution

DRIVER = {'component': 'driver', 'version': '25.0.rc1.1'}
TOOLKIT = {'component': 'toolkit', 'version': '8.2.RC1'}
DOCKER_RUNTIME = {'component': 'docker_runtime', 'version': '7.3.0'}
SOURCE = {'host': 'a2-01', 'source_dir': '/srv/ascend', 'mirror_url': '', 'chip': '910b', 'arch': 'x86_64'}
MIRROR = dict(SOURCE, source_dir='', mirror_url='https://mirror.example/ascend', validate_certs=True)
SUM = 'a' * 64


def test_a_directory_on_the_controller_gives_the_plan_and_nothing_to_refuse():
    state = packages_resolution([DRIVER, TOOLKIT], SOURCE)
    assert state == {'plan': plan_packages([DRIVER, TOOLKIT], '910b', 'x86_64'), 'trust': None, 'refusal': '',
                     'warning': ''}
    assert [package['component'] for package in state['plan']] == ['driver', 'toolkit']


@pytest.mark.parametrize('source_dir,mirror_url', [('', ''), ('/srv/ascend', 'https://user:secret@mirror.example/')])
def test_exactly_one_source_or_the_refusal_names_both_without_credentials(source_dir, mirror_url):
    state = packages_resolution([DRIVER], dict(SOURCE, source_dir=source_dir, mirror_url=mirror_url))
    assert state['refusal'].startswith('a2-01: set exactly one of packages_source_dir (a directory on the controller) '
                                       "or packages_mirror_url (an HTTP(S) mirror); now packages_source_dir='%s'"
                                       % source_dir)
    assert 'secret' not in state['refusal'] and state['plan'] == []


def test_chip_packages_without_a_known_chip_are_refused_with_the_fix():
    state = packages_resolution([DRIVER, TOOLKIT], dict(SOURCE, chip=None))
    assert state['refusal'].startswith('a2-01: no NPU chip family is known for this node')
    assert state['refusal'].endswith('Fix: check that the NPUs show in `lspci -d 19e5:`, or set packages_chip explicitly.')
    # Packages without a chip in their name, or whose entry names its chip, need none.
    assert packages_resolution([TOOLKIT, DOCKER_RUNTIME], dict(SOURCE, chip=None))['refusal'] == ''
    assert packages_resolution([dict(DRIVER, chip='910b')], dict(SOURCE, chip=''))['refusal'] == ''


def test_a_file_name_that_is_not_a_plain_file_name_is_refused():
    state = packages_resolution([dict(TOOLKIT, file_name='../../etc/cron.d/x')], SOURCE)
    assert state['refusal'].startswith('a2-01: toolkit package: ') and 'Fix:' in state['refusal']


def test_an_untrusted_mirror_is_refused_before_anything_is_fetched():
    state = packages_resolution([TOOLKIT], dict(MIRROR, mirror_url='http://mirror.example/ascend'))
    assert state['trust']['refused'] is True
    assert state['refusal'] == 'a2-01: package mirror: %s. Fix: %s.' % (state['trust']['cause'], state['trust']['fix'])


def test_a_mirror_whose_word_alone_decides_what_runs_as_root_is_a_warning():
    state = packages_resolution([TOOLKIT], MIRROR)
    assert state['refusal'] == '' and state['trust']['fetch_sums'] is True
    assert state['warning'] == 'WARNING a2-01: package mirror: %s.' % state['trust']['warning']
    pinned = packages_resolution([TOOLKIT], dict(MIRROR, pinned={state['plan'][0]['file_name']: SUM}))
    assert pinned['warning'] == '' and pinned['trust']['fetch_sums'] is False


def test_half_credentials_are_refused_and_the_password_never_passed():
    state = packages_resolution([TOOLKIT], dict(MIRROR, username='ops', password_set=False))
    assert 'packages_mirror_password is empty' in state['refusal']
    assert packages_resolution([TOOLKIT], dict(MIRROR, username='ops', password_set=True))['refusal'] == ''


@pytest.mark.parametrize('components,options', [
    ('driver', SOURCE), ([['driver']], SOURCE), ([TOOLKIT], dict(MIRROR, pinned=['a'])),
    ([{'component': 'driver', 'version': '25.0.rc1.1'}], dict(SOURCE, arch='sparc'))])
def test_wrong_inputs_are_a_filter_error_naming_the_filter(components, options):
    with pytest.raises(AnsibleFilterError, match='^ascend_packages_resolution: '):
        ascend_packages_resolution(components, options)
    with pytest.raises(AnsibleFilterError, match='options must be a dict'):
        ascend_packages_resolution([TOOLKIT], ['host'])
