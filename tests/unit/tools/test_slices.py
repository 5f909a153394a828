# -*- coding: utf-8 -*-
# Copyright: contributors to npu.ascend
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bookkeeping of `make slices` (tests/slices/): AWX's slicing, the execution environment's
derived definition and its pins, and the checks of the merged report. The run itself is the lane's."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import importlib.util
import os
import sys

import pytest
import yaml

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(REPO_ROOT, 'tests', 'slices'))
sys.path.insert(0, os.path.join(REPO_ROOT, 'sandbox'))


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(REPO_ROOT, 'tests', 'slices', name + '.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ee_image = _load('ee_image')
slices = _load('run')


def test_slices_are_awx_s_every_n_th_host_each_host_in_exactly_one():
    hosts = ['slc-%03d' % index for index in range(1, 10)]
    parts = slices.awx_slices(hosts)
    assert parts == [['slc-001', 'slc-005', 'slc-009'], ['slc-002', 'slc-006'], ['slc-003', 'slc-007'],
                     ['slc-004', 'slc-008']]
    assert sorted(host for part in parts for host in part) == hosts
    # Fewer hosts than slices: no empty slice (AWX runs no job for it).
    assert slices.awx_slices(['a', 'b']) == [['a'], ['b']]


def _shipped():
    with open(os.path.join(REPO_ROOT, 'execution-environment.yml')) as handle:
        return yaml.safe_load(handle)


def test_the_derived_definition_changes_only_what_this_machine_forces():
    shipped = _shipped()
    tarballs = [('community.general', 'community-general-11.0.0.tar.gz'), ('kubernetes.core', 'kubernetes-core-6.0.0.tar.gz')]
    derived = ee_image.derived_definition(shipped, 'localhost/npu-ascend-ee-base:abc', tarballs)
    assert derived['images'] == {'base_image': {'name': 'localhost/npu-ascend-ee-base:abc'}}
    # The same ansible-core, ansible-runner and npu.ascend tarball as the shipped definition.
    for key in ('ansible_core', 'ansible_runner'):
        assert derived['dependencies'][key] == shipped['dependencies'][key]
    names = [entry['name'] for entry in derived['dependencies']['galaxy']['collections']]
    assert names[0] == shipped['dependencies']['galaxy']['collections'][0]['name']
    assert names[1:] == ['/build/collections/community-general-11.0.0.tar.gz',
                         '/build/collections/kubernetes-core-6.0.0.tar.gz']
    assert derived['build_arg_defaults']['ANSIBLE_GALAXY_CLI_COLLECTION_OPTS'] == '--offline'
    assert 'ENV PIP_CONSTRAINT=%s' % ee_image.CONSTRAINTS_PATH in derived['additional_build_steps']['prepend_base']
    assert shipped['additional_build_files'][0] in derived['additional_build_files']
    # The shipped definition itself is untouched.
    assert shipped == _shipped()


def test_a_dependency_the_shipped_definition_no_longer_lists_is_refused():
    shipped = _shipped()
    shipped['dependencies']['galaxy']['collections'] = shipped['dependencies']['galaxy']['collections'][:1]
    with pytest.raises(ee_image.BuildError, match='no longer lists community.general, kubernetes.core'):
        ee_image.derived_definition(shipped, 'base', [('community.general', 'a.tar.gz'), ('kubernetes.core', 'b.tar.gz')])


def test_every_package_of_the_image_must_be_pinned_by_requirements_txt():
    requirements = 'ansible-core==2.19.14  # the controller\'s\nPyYAML==6.0.4\ntyping_extensions==4.16.0\n'
    freeze = 'ansible-core==2.19.14\npyyaml==6.0.4\ntyping-extensions==4.16.0\npip==23.0.1\ndumb-init==1.2.5\n' \
             'google-auth==2.40.0\nansible-core==2.19.13\n'
    assert ee_image.unpinned_packages(freeze, requirements) == [('google-auth', '2.40.0', None),
                                                                ('ansible-core', '2.19.13', '2.19.14')]
    assert ee_image.unpinned_packages('pyyaml==6.0.4\n', requirements) == []


def test_the_image_tag_follows_every_input():
    definition = {'version': 3}
    base = ee_image.image_inputs_hash(definition, 'c1', {'community.general': 'g1'}, 'ansible-builder 3.2.0')
    assert base == ee_image.image_inputs_hash(definition, 'c1', {'community.general': 'g1'}, 'ansible-builder 3.2.0')
    assert base != ee_image.image_inputs_hash(definition, 'c2', {'community.general': 'g1'}, 'ansible-builder 3.2.0')
    assert base != ee_image.image_inputs_hash(definition, 'c1', {'community.general': 'g2'}, 'ansible-builder 3.2.0')
    assert base != ee_image.image_inputs_hash(definition, 'c1', {'community.general': 'g1'}, 'ansible-builder 3.3.0')
    assert base != ee_image.image_inputs_hash({'version': 3, 'x': 1}, 'c1', {'community.general': 'g1'},
                                              'ansible-builder 3.2.0')


def _entry(host, status='passed', reachable=True, message=''):
    return {'host': host, 'status': status, 'reachable': reachable, 'errors': [],
            'checks': [{'name': 'run', 'status': status, 'message': message}]}


def _report(entries):
    return {'summary': {'nodes': len(entries)}, 'nodes': dict((entry['host'], entry) for entry in entries)}


def test_the_merged_report_must_list_every_node_once_with_the_missing_ones_named():
    good = _report([_entry('a'), _entry('b'), _entry('dead', 'error', False),
                    _entry('out', 'error', None, 'in none of the 4 merged part(s) (a, b): ...')])
    fleet = ['a', 'b', 'dead', 'out']
    assert slices.check_report(good, fleet, ['a', 'b'], ['dead'], ['out']) == []
    # The left-out host missing from the report (a merge that ignores the fleet's hosts).
    missing = _report([_entry('a'), _entry('b'), _entry('dead', 'error', False)])
    problems = slices.check_report(missing, fleet, ['a', 'b'], ['dead'], ['out'])
    assert any('the report lists' in problem for problem in problems)
    assert any(problem.startswith('out was left out of every slice') for problem in problems)
    # A dead node reported as passed, a live one failed.
    wrong = _report([_entry('a', 'failed'), _entry('b'), _entry('dead'),
                     _entry('out', 'error', None, 'in none of the 4 merged part(s)')])
    problems = slices.check_report(wrong, fleet, ['a', 'b'], ['dead'], ['out'])
    assert [problem.split(':')[0].split(' ')[0] for problem in problems] == ['a', 'dead']
