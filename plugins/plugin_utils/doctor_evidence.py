# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node evidence of the doctor (plugin_utils/doctor.py describes it), put together from the results of the
read-only tasks of ``roles/doctor/tasks/node.yml`` as Ansible registers them. Pure, nothing from Ansible."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import re

from ansible_collections.npu.ascend.plugins.plugin_utils import container_runtime_checks, hccn_plan

# `pip show torch_npu`: the line the installed version is on.
_PIP_VERSION = re.compile(r'^Version:\s*(\S+)', re.MULTILINE)
# The results node.yml registers, by the name they have here.
RESULTS = ('facts', 'containerd', 'docker_stat', 'docker_content', 'kubelet_paths', 'torch_npu', 'compat', 'hccn')
OPTIONS = ('node', 'install_path', 'runtime_name', 'docker_config', 'kubelet_dir', 'python')


def _skipped(result):
    return result is None or bool(result.get('skipped'))


def _one_line(text):
    return re.sub(r'\s+', ' ', text or '').strip()


def _error_text(result):
    """What a failed command said: its standard error, else Ansible's message."""
    return _one_line(result.get('stderr') or result.get('msg') or '')


def torch_npu_version(pip_show):
    """The version `pip show torch_npu` printed ('' when it failed, was skipped or printed none)."""
    if _skipped(pip_show) or pip_show.get('rc', 1) != 0:
        return ''
    found = _PIP_VERSION.search(pip_show.get('stdout') or '')
    return found.group(1) if found else ''


def _npu_smi(probe):
    if probe.get('npu_smi_path') is None:
        return {'ok': False, 'error': 'npu-smi is not installed'}
    if probe.get('npu_smi_error') is not None:
        return {'ok': False, 'error': probe['npu_smi_error']}
    return {'ok': True, 'chips': probe['npu_smi']['chips'], 'driver_version': probe['npu_smi']['driver_version']}


def _containerd(dump, runtime_name):
    if _skipped(dump):
        return None
    if dump.get('rc', 1) != 0:
        return {'ok': False, 'error': _error_text(dump)}
    return dict({'ok': True}, **container_runtime_checks.effective_runtime(dump.get('stdout', ''), runtime_name))


def _docker(stat, content, path):
    if _skipped(stat):
        return None
    exists = stat.get('stat', {}).get('exists', False)
    text = base64.b64decode(content['content']).decode('utf-8', 'replace') if exists else None
    return {'path': path, 'config_text': text}


def _versions(compat):
    if 'conflicts' not in compat:
        return {'error': compat.get('msg') or 'ascend_compat failed'}
    return {'stack': compat['stack'], 'conflicts': compat['conflicts'], 'unknown': compat.get('unknown') or []}


def _torch_npu(pip_show, python):
    if _skipped(pip_show):
        return None
    return {'python': python, 'version': torch_npu_version(pip_show) or None, 'error': _error_text(pip_show)}


def _hccn(hccn):
    if _skipped(hccn):
        return None
    if 'hccn' in hccn:
        return {'ok': True, 'npus': hccn['hccn']['npus']}
    return {'ok': False, 'error': hccn.get('msg') or 'hccn_info failed'}


def node_evidence(results, options):
    """The node evidence from ``results`` (RESULTS: each task's registered result) and ``options`` (OPTIONS: the
    Node's name and the role's paths and names). ValueError when containerd's dump is not a config it can read."""
    missing = [name for name in RESULTS if name not in results] + [name for name in OPTIONS if name not in options]
    if missing:
        raise ValueError('missing %s' % ', '.join(missing))
    facts = results['facts']
    probe = facts.get('ansible_facts', {}).get('ascend')
    chips = ((probe or {}).get('npu_smi') or {}).get('chips') or []
    paths = results['kubelet_paths']['results']
    return {
        'node': options['node'],
        'install_path': options['install_path'],
        'facts': probe,
        'facts_error': facts.get('msg') or '',
        'npu_smi': _npu_smi(probe or {}),
        'runtime': {
            'containerd': _containerd(results['containerd'], options['runtime_name']),
            'docker': _docker(results['docker_stat'], results['docker_content'], options['docker_config']),
        },
        'kubelet': {
            'path': '%s/device-plugins' % options['kubelet_dir'],
            'dir_exists': bool(paths[0].get('stat', {}).get('isdir', False)),
            'socket': bool(paths[1].get('stat', {}).get('exists', False)),
        },
        'versions': _versions(results['compat']),
        'torch_npu': _torch_npu(results['torch_npu'], options['python']),
        'hccn': _hccn(results['hccn']),
        'hccn_subnet_rule': hccn_plan.roce_model(chips)['subnet_rule'],
    }
