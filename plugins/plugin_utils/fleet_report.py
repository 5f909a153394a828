# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report: one document per run, describing every NPU node.

``build_report`` turns what was read from each node (``ascend_facts``, ``npu_smi_info``, its
Kubernetes Node object, what the roles of the run published) into a JSON-ready document: per
node the chips and their health, the installed versions against the wanted ones, the Node's
labels, taints and NPU capacity, and a list of checks (``chips healthy``, ``versions as
wanted``, ``validated``, ``schedulable``, plus ``run``, ``preflight`` and ``doctor`` when
there is something to say). ``changes`` lists, per node, what differs from the previous report.

The renderers write that document as JUnit XML (one testsuite for the run, one testcase per
node and check); ``report_view`` orders and groups it for the Markdown and HTML templates
(failing nodes first, then by server model and stack), and ``markdown_text`` escapes for them.

Controller side only: pure functions, no I/O, nothing from Ansible.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import re
import xml.etree.ElementTree as ET

from ansible_collections.npu.ascend.plugins.plugin_utils import kernel_judgement
from ansible_collections.npu.ascend.plugins.plugin_utils.preflight_summary import hosts_text as _names_text
from ansible_collections.npu.ascend.plugins.plugin_utils import vnpu_plan
from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import (
    COMPONENTS, COMPONENT_TITLES, same_version, version_mismatches)
from ansible_collections.npu.ascend.plugins.module_utils.hardware import hardware_catalogue
from ansible_collections.npu.ascend.plugins.module_utils.k8s.npu_labels import (
    SUPER_POD_ID_LABEL, label_keys, label_value, super_pod_member)
from ansible_collections.npu.ascend.plugins.module_utils.hardware.npu_smi import chip_is_healthy

FORMAT = 'npu.ascend/fleet-report'
FORMAT_VERSION = 1


PASSED = 'passed'
FAILED = 'failed'
SKIPPED = 'skipped'
ERROR = 'error'
STATUSES = (PASSED, FAILED, SKIPPED, ERROR)

CHECK_CHIPS = 'chips healthy'
CHECK_VERSIONS = 'versions as wanted'
CHECK_VALIDATED = 'validated'
CHECK_SCHEDULABLE = 'schedulable'
CHECK_RUN = 'run'
CHECK_PREFLIGHT = 'preflight'
CHECK_DOCTOR = 'doctor'
# Always present, for every node; the others only when the run has something to say.
CORE_CHECKS = (CHECK_CHIPS, CHECK_VERSIONS, CHECK_VALIDATED, CHECK_SCHEDULABLE)

# The stages of npu.ascend.provision a run can leave out with --skip-tags or --tags, each with the
# tags of its plays (playbooks/site.yml, kubernetes.yml), and the checks that judge what it does.
STAGE_HOST_STACK = 'host_stack'
STAGE_KUBERNETES = 'kubernetes'
STAGE_TAGS = {
    STAGE_HOST_STACK: ('host_stack', 'hdk', 'cann', 'container_runtime', 'hccn', 'vnpu'),
    STAGE_KUBERNETES: ('kubernetes', 'k8s_node', 'device_plugin', 'exporter', 'validate', 'viewer'),
}
STAGE_CHECKS = {STAGE_HOST_STACK: (CHECK_VERSIONS,), STAGE_KUBERNETES: (CHECK_VALIDATED, CHECK_SCHEDULABLE)}

RUN_OK = 'ok'
RUN_FAILED = 'failed'

# Extended resources the NPU device plugins advertise (Huawei's, and Alibaba's on ACK).
_NPU_RESOURCE = re.compile(r'^(?:huawei\.com/|aliyun\.com/npu$)')
_BLOCKING_EFFECTS = ('NoSchedule', 'NoExecute')
# Characters XML 1.0 cannot carry, even escaped.
_XML_INVALID = re.compile(u'[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]')


# --------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------

def _text(value):
    if value is None:
        return ''
    if isinstance(value, bool):
        return 'true' if value else 'false'
    return str(value)


def _truthy(value):
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    return str(value).strip().lower() in ('1', 'true', 'yes', 'on', 'y')


def _taint_text(taint):
    value = taint.get('value')
    return '%s%s:%s' % (taint.get('key', ''), ('=%s' % value) if value not in (None, '') else '',
                        taint.get('effect', ''))


def _check(name, status, message):
    return {'name': name, 'status': status, 'message': message}


# --------------------------------------------------------------------------------------
# One node
# --------------------------------------------------------------------------------------

def _chips(npu_smi):
    chips = []
    for chip in (npu_smi or {}).get('chips') or []:
        chips.append(dict((key, chip.get(key)) for key in
                          ('npu_id', 'chip_id', 'name', 'health', 'bus_id', 'temp_c', 'power_w',
                           'aicore_pct', 'hbm_used_mb', 'hbm_total_mb')))
    return chips


def _topology(chips, npu_smi, kubernetes, domain):
    """NPUs, dies per NPU and SuperPoD place of a node: ``{npus, dies_per_npu, super_pod}``.

    The NPUs are the npu-smi NPU ids, so an Atlas A3's 16 chips read as 8 NPUs of 2 dies (not 16
    NPUs); ``super_pod`` (``{id, server_index}``) from npu-smi's spod-info when the probe read it, else
    from the Node's labels (``huawei.com/topotree.superpodid`` and ``<domain>/super-pod-server-index``)."""
    dies = {}
    for chip in chips:
        if chip.get('npu_id') is not None:
            dies.setdefault(chip['npu_id'], set()).add(chip.get('chip_id'))
    member = super_pod_member((npu_smi or {}).get('super_pod'))
    labels = (kubernetes or {}).get('labels') or {}
    if member is None and labels.get(SUPER_POD_ID_LABEL) is not None:
        index = labels.get('%s/super-pod-server-index' % label_keys(domain)['domain'])
        member = (labels[SUPER_POD_ID_LABEL], index)
    return {
        'npus': len(dies) or None,
        'dies_per_npu': max(len(found) for found in dies.values()) if dies else None,
        'super_pod': {'id': _text(member[0]), 'server_index': _text(member[1]) if member[1] is not None else None}
        if member else None,
    }


def _chip_name(chip):
    return 'NPU %s chip %s' % (chip.get('npu_id'), chip.get('chip_id'))


def _health(chips, npu_smi_error):
    unhealthy = ['%s: %s' % (_chip_name(chip), chip.get('health') or 'unknown')
                 for chip in chips if not chip_is_healthy(chip)]
    return {
        'chips': len(chips),
        'healthy': len(chips) - len(unhealthy),
        'unhealthy': unhealthy,
        'npu_smi_error': npu_smi_error or None,
    }


def _kubernetes(k8s, facts, domain):
    """The Node's part of the report, or None when no cluster was asked."""
    if not k8s or not k8s.get('configured'):
        return None
    node = k8s.get('node')
    result = {
        'node_name': k8s.get('node_name'),
        'found': bool(node),
        'error': k8s.get('error') or None,
        'labels': {},
        'taints': [],
        'unschedulable': False,
        'capacity': {},
        'allocatable': {},
        'resource_name': None,
        'validated': None,
        'upgrade_state': None,
    }
    if not node:
        return result
    metadata = node.get('metadata') or {}
    spec = node.get('spec') or {}
    status = node.get('status') or {}
    labels = dict(metadata.get('labels') or {})
    result['labels'] = labels
    result['taints'] = [_taint_text(taint) for taint in spec.get('taints') or []]
    result['unschedulable'] = bool(spec.get('unschedulable'))
    result['capacity'] = dict((key, _text(value)) for key, value in (status.get('capacity') or {}).items()
                              if _NPU_RESOURCE.match(key))
    result['allocatable'] = dict((key, _text(value)) for key, value in (status.get('allocatable') or {}).items()
                                 if _NPU_RESOURCE.match(key))
    resource = (facts or {}).get('k8s_resource_name')
    if not resource:
        accelerator = labels.get('accelerator', '')
        if accelerator.startswith('huawei-'):
            resource = 'huawei.com/' + accelerator[len('huawei-'):]
        elif len(result['capacity']) == 1:
            resource = list(result['capacity'])[0]
    result['resource_name'] = resource or None
    keys = label_keys(domain)
    result['validated'] = labels.get(keys['validated'])
    result['upgrade_state'] = labels.get(keys['upgrade_state'])
    result['vnpus'] = _vnpu_layout(labels, keys['domain'])
    return result


def _vnpu_layout(labels, domain):
    """The static vNPU layout npu.ascend.vnpu labelled the Node with: resource name to count."""
    prefix = '%s/%s' % (domain, vnpu_plan.LABEL_PREFIX)
    return dict((key[len(prefix):], value) for key, value in sorted(labels.items())
                if key.startswith(prefix) and key[len(prefix):] != vnpu_plan.CHIPS_LABEL)


def _vnpu_text(kubernetes):
    layout = (kubernetes or {}).get('vnpus') or {}
    return ', '.join('%s x%s' % item for item in sorted(layout.items())) or '-'


def _check_chips(entry):
    facts = entry['facts_available']
    if not facts:
        reason = entry['errors'][0] if entry['errors'] else 'no facts'
        return _check(CHECK_CHIPS, ERROR, 'the node could not be read: %s' % reason)
    if not entry['hardware'].get('chip_family'):
        return _check(CHECK_CHIPS, FAILED, 'no Ascend NPU on the PCI bus (vendor 19e5). Fix: check `lspci -d 19e5:` '
                                           'and the server\'s PCIe cards.')
    if entry['reboot_pending']:
        reasons = ', '.join('%s %s' % (reason.get('component', '?'), reason.get('version', ''))
                            for reason in entry['reboot_reasons']) or 'an installer'
        return _check(CHECK_CHIPS, FAILED, 'a reboot asked for by %s is pending, so the chips run the old '
                                           'software. Fix: reboot the node.' % reasons)
    kernel = entry.get('kernel_problem')
    if kernel and kernel['kind'] == 'running':
        # Before npu-smi's error: the missing modules are its cause.
        return _check(CHECK_CHIPS, FAILED, '%s. Fix: %s.' % (kernel['detail'], kernel['fix']))
    health = entry['health']
    if health['npu_smi_error']:
        return _check(CHECK_CHIPS, FAILED, health['npu_smi_error'])
    if not entry['npu_smi_available']:
        return _check(CHECK_CHIPS, FAILED, 'npu-smi is not installed, so the driver is not: chip health is '
                                           'unknown. Fix: install the driver (npu.ascend.hdk).')
    if health['chips'] == 0:
        return _check(CHECK_CHIPS, FAILED, 'npu-smi lists no chip although %s NPU PCI functions are present. '
                                           'Fix: check the driver (dmesg, npu-smi info) and the cards.'
                      % entry['hardware'].get('npu_count'))
    if health['unhealthy']:
        return _check(CHECK_CHIPS, FAILED, '%d of %d chips not OK: %s. Fix: see `npu-smi info -t health` on the '
                                           'node and Huawei\'s fault handling for the chip.'
                      % (len(health['unhealthy']), health['chips'], '; '.join(health['unhealthy'])))
    if kernel:
        return _check(CHECK_CHIPS, FAILED, 'all %d chips OK now, but %s. Fix: %s.'
                      % (health['chips'], kernel['detail'], kernel['fix']))
    return _check(CHECK_CHIPS, PASSED, 'all %d chips OK' % health['chips'])


def _check_versions(entry):
    wanted = entry['wanted']
    if not wanted:
        return _check(CHECK_VERSIONS, SKIPPED, 'no versions declared (hdk_driver_version, hdk_firmware_version, '
                                               'cann_version, container_runtime_version)')
    if not entry['facts_available']:
        return _check(CHECK_VERSIONS, ERROR, 'the node could not be read')
    differences = [mismatch['text'] for mismatch in version_mismatches(entry['versions'], wanted)]
    if differences:
        return _check(CHECK_VERSIONS, FAILED, '%s. Fix: run npu.ascend.site (or the upgrade playbook) for this '
                                              'node.' % '; '.join(differences))
    return _check(CHECK_VERSIONS, PASSED, ', '.join('%s %s' % (COMPONENT_TITLES[component], wanted[component])
                                                    for component in COMPONENTS if component in wanted))


def _k8s_unusable(name, kubernetes):
    if kubernetes is None:
        return _check(name, SKIPPED, 'no cluster given (k8s_kubeconfig)')
    if kubernetes['error']:
        return _check(name, ERROR, 'the Node could not be read: %s' % kubernetes['error'])
    if not kubernetes['found']:
        return _check(name, FAILED, 'the cluster has no Node named %s. Fix: join the node to the cluster, or set '
                                    'npu_ascend_k8s_node_name.' % kubernetes['node_name'])
    return None


def _check_validated(entry, domain):
    kubernetes = entry['kubernetes']
    unusable = _k8s_unusable(CHECK_VALIDATED, kubernetes)
    if unusable:
        return unusable
    labels = kubernetes['labels']
    validated = kubernetes['validated']
    keys = label_keys(domain)
    driver = labels.get(keys['driver'])
    if not driver and entry['versions'].get('driver'):
        driver = label_value(entry['versions']['driver'])
    expected = driver or 'true'
    if not validated:
        return _check(CHECK_VALIDATED, FAILED, 'not validated (no %s label). Fix: run npu.ascend.kubernetes '
                                               '(role npu.ascend.validate).' % keys['validated'])
    if validated != expected:
        return _check(CHECK_VALIDATED, FAILED, 'validated with driver %s but the node runs %s. Fix: run '
                                               'npu.ascend.kubernetes to validate it again.' % (validated, expected))
    return _check(CHECK_VALIDATED, PASSED, 'validated for %s' % ('driver ' + validated if driver else 'this node'))


def _check_schedulable(entry):
    kubernetes = entry['kubernetes']
    unusable = _k8s_unusable(CHECK_SCHEDULABLE, kubernetes)
    if unusable:
        return unusable
    problems = []
    if kubernetes['unschedulable']:
        problems.append('cordoned (spec.unschedulable). Fix: `kubectl uncordon %s` when it is ready'
                        % kubernetes['node_name'])
    blocking = [taint for taint in kubernetes['taints'] if taint.rsplit(':', 1)[-1] in _BLOCKING_EFFECTS]
    if blocking:
        problems.append('tainted %s. Fix: validate the node (npu.ascend.kubernetes) or remove the taint'
                        % ', '.join(blocking))
    resource = kubernetes['resource_name']
    allocatable = kubernetes['allocatable'].get(resource) if resource else None
    if resource and _text(allocatable) in ('', '0'):
        problems.append('allocatable %s is %s. Fix: check the device plugin pod on the node'
                        % (resource, allocatable if allocatable is not None else 'absent'))
    if problems:
        return _check(CHECK_SCHEDULABLE, FAILED, '; '.join(problems))
    return _check(CHECK_SCHEDULABLE, PASSED, 'schedulable%s' % ((', allocatable %s: %s' % (resource, allocatable))
                                                                if resource else ''))


def _check_preflight(preflight):
    failed = [check for check in preflight.get('checks') or [] if not check.get('ok', True)]
    if failed:
        return _check(CHECK_PREFLIGHT, FAILED, '; '.join('%s: %s (fix: %s)' % (check.get('name'), check.get('detail'),
                                                                               check.get('fix'))
                                                         for check in failed))
    names = preflight.get('failed') or []
    if names:
        return _check(CHECK_PREFLIGHT, FAILED, 'failed checks: %s' % ', '.join(_text(name) for name in names))
    return _check(CHECK_PREFLIGHT, PASSED, '%d checks passed' % len(preflight.get('checks') or []))


def _check_doctor(findings):
    if findings:
        return _check(CHECK_DOCTOR, FAILED, '; '.join('%s: %s (evidence: %s; fix: %s)'
                                                      % (finding.get('component', '?'), finding.get('problem', ''),
                                                         finding.get('evidence', ''), finding.get('fix', ''))
                                                      for finding in findings))
    return _check(CHECK_DOCTOR, PASSED, 'no findings')


def node_entry(host, gathered=None, k8s=None, wanted=None, published=None, outcome=None, domain=None, left_out=()):
    """The report entry of one node.

    ``gathered``: ``{facts, facts_error, npu_smi, npu_smi_error, unreachable}``, where ``facts``
    is ``ansible_facts.ascend`` and ``npu_smi`` what ``npu_smi_info`` returned (either None when
    not read). ``k8s``: ``{configured, node_name, node, error}``, ``node`` the Node object or
    None. ``wanted``: component -> wanted version (``wanted_stack.wanted_stack``). ``published``: what the roles of
    the run published for the node (``preflight_report``, ``k8s_node_result``,
    ``doctor_findings``, ``extra``). ``outcome``: ``ok``, ``failed`` (earlier in the run) or
    None (not known). ``left_out``: the stages the run left out (``stages_left_out``), whose checks
    are skipped, not failed.
    """
    gathered = gathered or {}
    published = published or {}
    facts = gathered.get('facts') if isinstance(gathered.get('facts'), dict) else None
    npu_smi = gathered.get('npu_smi') if isinstance(gathered.get('npu_smi'), dict) else None
    errors = []
    if gathered.get('unreachable'):
        errors.append('unreachable: %s' % (gathered.get('facts_error') or 'no connection'))
    elif gathered.get('facts_error'):
        errors.append('ascend_facts failed: %s' % gathered['facts_error'])
    installed = (facts or {}).get('installed') or {}
    chips = _chips(npu_smi)
    kubernetes = _kubernetes(k8s, facts, domain)
    topology = _topology(chips, npu_smi, kubernetes, domain)
    entry = {
        'host': host,
        'reachable': not gathered.get('unreachable'),
        'facts_available': facts is not None,
        'npu_smi_available': bool((facts or {}).get('npu_smi_path')),
        'errors': errors,
        'outcome': outcome,
        'hardware': {
            'chip_family': (facts or {}).get('chip_family'),
            'product': (facts or {}).get('product'),
            'arch': (facts or {}).get('arch'),
            'npu_count': (facts or {}).get('npu_count'),
            'npus': topology['npus'],
            'dies_per_npu': topology['dies_per_npu'],
            'super_pod': topology['super_pod'],
        },
        'chips': chips,
        'health': _health(chips, gathered.get('npu_smi_error') if facts is not None else None),
        'versions': dict((component, (installed.get(component) or {}).get('version')) for component in COMPONENTS),
        'wanted': dict((component, str(wanted[component])) for component in COMPONENTS
                       if (wanted or {}).get(component) not in (None, '')),
        'reboot_pending': bool((facts or {}).get('reboot_pending')),
        'reboot_reasons': list((facts or {}).get('reboot_reasons') or []),
        'kernel_problem': kernel_judgement.kernel_problem(facts),
        'kubernetes': kubernetes,
        'preflight': published.get('preflight_report'),
        'k8s_node_result': published.get('k8s_node_result'),
        'doctor_findings': list(published.get('doctor_findings') or []),
        'extra': published.get('extra') or {},
    }
    checks = [_check_chips(entry), _check_versions(entry), _check_validated(entry, domain),
              _check_schedulable(entry)]
    if not entry['reachable']:
        # Nothing read from the node can be judged.
        for index, check in enumerate(checks[:2]):
            checks[index] = _check(check['name'], ERROR, errors[0])
    if not entry['facts_available']:
        # The cluster's Node alone does not make a node that could not be read good: a Node stays
        # labelled validated and schedulable a while after its server went down. What the cluster
        # says against it (cordoned, not validated) stands.
        for index in (2, 3):
            if checks[index]['status'] == PASSED:
                checks[index] = _check(checks[index]['name'], SKIPPED, 'not judged, since nothing was read from the '
                                       'node (%s); the cluster\'s Node says: %s'
                                       % (errors[0] if errors else 'no facts', checks[index]['message']))
    for stage, indexes in ((STAGE_HOST_STACK, (1,)), (STAGE_KUBERNETES, (2, 3))):
        if stage in left_out:
            for index in indexes:
                if checks[index]['status'] != SKIPPED:
                    checks[index] = _check(checks[index]['name'], SKIPPED, 'not judged: the run left out the %s stage '
                                           '(its tags); as it is now: %s' % (stage, checks[index]['message']))
    stopped = published.get('outcome_stopped') if isinstance(published.get('outcome_stopped'), dict) else None
    entry['stopped'] = None if outcome == RUN_OK or stopped is None else {
        'stage': _text(stopped.get('stage')) or 'unknown', 'task': _text(stopped.get('task')),
        'message': _text(stopped.get('message')), 'unreachable': bool(stopped.get('unreachable'))}
    if outcome is not None:
        checks.append(_check(CHECK_RUN, PASSED, 'every play of the run completed for this node')
                      if outcome == RUN_OK else _check_run_stopped(entry['stopped']))
    if isinstance(entry['preflight'], dict):
        checks.append(_check_preflight(entry['preflight']))
    if 'doctor_findings' in published and published.get('doctor_findings') is not None:
        checks.append(_check_doctor(entry['doctor_findings']))
    if isinstance(published.get('hccn_fabric'), dict):
        checks.append(_check_fabric(published['hccn_fabric']))
    entry['checks'] = checks
    entry['status'] = _node_status(checks)
    entry['changes'] = []
    return entry


def stages_left_out(run_tags=None, skip_tags=None):
    """The stages (STAGE_TAGS) a run with these tags (``ansible_run_tags``, ``ansible_skip_tags``) left out.

    A stage is left out when ``--skip-tags`` names it, or when ``--tags`` picks some stage's tags
    and none of this one's. ``--tags report`` alone picks no stage: the report judges everything.
    """
    run_tags = set(_text(tag) for tag in run_tags or [])
    skip_tags = set(_text(tag) for tag in skip_tags or [])
    picked = bool(run_tags) and 'all' not in run_tags and any(
        not run_tags.isdisjoint(tags) for tags in STAGE_TAGS.values())
    return [stage for stage in sorted(STAGE_TAGS)
            if stage in skip_tags or 'all' in skip_tags or (picked and run_tags.isdisjoint(STAGE_TAGS[stage]))]


def _check_run_stopped(stopped):
    if stopped is None:
        return _check(CHECK_RUN, FAILED, 'the node failed or was unreachable earlier in this run; the task '
                                         'that failed and the play recap say why')
    return _check(CHECK_RUN, ERROR if stopped['unreachable'] else FAILED, '%s at %s%s: %s' % (
        'unreachable' if stopped['unreachable'] else 'stopped', stopped['stage'],
        (' (task "%s")' % stopped['task']) if stopped['task'] else '', stopped['message']))


def _node_status(checks):
    statuses = set(check['status'] for check in checks)
    if ERROR in statuses:
        return ERROR
    if FAILED in statuses:
        return FAILED
    return PASSED


# --------------------------------------------------------------------------------------
# What changed since the previous report
# --------------------------------------------------------------------------------------

def _change(what, before, after, text):
    return {'what': what, 'before': before, 'after': after, 'text': text}


def _or_none(value, none_text):
    return none_text if value in (None, '') else _text(value)


def _node_changes(previous, current):
    """What differs between two report entries of one node, as a list of ``{what, before, after, text}``.

    Parts that could not be read in either report (an unreachable node, no cluster) are not
    compared, so a node that did not answer does not seem to have lost its software.
    """
    if not previous:
        return [_change('node', None, current['host'], 'new in the report')]
    changes = []
    if previous.get('facts_available') and current.get('facts_available'):
        before_versions = previous.get('versions') or {}
        for component in COMPONENTS:
            before = before_versions.get(component)
            after = current['versions'].get(component)
            if not same_version(before, after):
                changes.append(_change(component, before, after, '%s %s -> %s' % (
                    COMPONENT_TITLES[component], _or_none(before, 'not installed'), _or_none(after, 'not installed'))))
        before_health = previous.get('health') or {}
        after_health = current['health']
        if (before_health.get('healthy'), before_health.get('chips'), before_health.get('npu_smi_error')) != \
                (after_health['healthy'], after_health['chips'], after_health['npu_smi_error']):
            changes.append(_change('health', before_health, after_health, 'chips OK %s/%s -> %s/%s%s' % (
                before_health.get('healthy'), before_health.get('chips'), after_health['healthy'],
                after_health['chips'],
                (' (%s)' % '; '.join(after_health['unhealthy'] or [after_health['npu_smi_error'] or '']))
                if after_health['unhealthy'] or after_health['npu_smi_error'] else '')))
        if bool(previous.get('reboot_pending')) != current['reboot_pending']:
            changes.append(_change('reboot_pending', bool(previous.get('reboot_pending')), current['reboot_pending'],
                                   'reboot pending %s -> %s' % (_text(bool(previous.get('reboot_pending'))),
                                                                _text(current['reboot_pending']))))
    before_k8s = previous.get('kubernetes')
    after_k8s = current.get('kubernetes')
    if before_k8s and after_k8s and before_k8s.get('found') and after_k8s['found']:
        before_labels = before_k8s.get('labels') or {}
        after_labels = after_k8s['labels']
        for key in sorted(set(before_labels) | set(after_labels)):
            before = before_labels.get(key)
            after = after_labels.get(key)
            if before == after:
                continue
            if before is None:
                text = 'label %s added (%s)' % (key, after)
            elif after is None:
                text = 'label %s removed (was %s)' % (key, before)
            else:
                text = 'label %s %s -> %s' % (key, before, after)
            changes.append(_change('label ' + key, before, after, text))
        if bool(before_k8s.get('unschedulable')) != after_k8s['unschedulable']:
            changes.append(_change('unschedulable', bool(before_k8s.get('unschedulable')), after_k8s['unschedulable'],
                                   'cordoned %s -> %s' % (_text(bool(before_k8s.get('unschedulable'))),
                                                          _text(after_k8s['unschedulable']))))
        before_taints = before_k8s.get('taints') or []
        for taint in after_k8s['taints']:
            if taint not in before_taints:
                changes.append(_change('taint', None, taint, 'taint %s added' % taint))
        for taint in before_taints:
            if taint not in after_k8s['taints']:
                changes.append(_change('taint', taint, None, 'taint %s removed' % taint))
    before_checks = dict((check.get('name'), check.get('status')) for check in previous.get('checks') or [])
    for check in current['checks']:
        before = before_checks.get(check['name'])
        if before is not None and before != check['status']:
            changes.append(_change('check ' + check['name'], before, check['status'],
                                   'check %s: %s -> %s' % (check['name'], before, check['status'])))
    return changes


# --------------------------------------------------------------------------------------
# The document
# --------------------------------------------------------------------------------------

def _parse_previous(previous):
    """The previous report as a dict, from its JSON text or a dict; None (and why) when unusable."""
    if previous in (None, ''):
        return None, None
    if not isinstance(previous, dict):
        try:
            previous = json.loads(previous)
        except ValueError as error:
            return None, 'the previous report is not valid JSON (%s); changes are not computed' % error
    if not isinstance(previous, dict) or previous.get('format') != FORMAT:
        return None, 'the previous report is not a %s document; changes are not computed' % FORMAT
    if previous.get('format_version') != FORMAT_VERSION:
        return None, ('the previous report has format version %s (this is %s); changes are not computed'
                      % (previous.get('format_version'), FORMAT_VERSION))
    if not isinstance(previous.get('nodes'), dict):
        return None, 'the previous report has no nodes; changes are not computed'
    return previous, None


def build_report(nodes, previous=None, run=None, generated_at=None):
    """The report document: ``nodes`` is a list of entries made by node_entry."""
    previous, previous_note = _parse_previous(previous)
    by_host = {}
    for entry in nodes:
        if entry['host'] in by_host:
            raise ValueError('node %s appears twice in the report' % entry['host'])
        by_host[entry['host']] = entry
    notes = [previous_note] if previous_note else []
    for host in sorted(by_host):
        entry = by_host[host]
        if previous is not None:
            entry['changes'] = _node_changes(previous['nodes'].get(host), entry)
    removed = sorted(set(previous['nodes']) - set(by_host)) if previous is not None else []
    checks = [check for entry in by_host.values() for check in entry['checks']]
    summary = {
        'nodes': len(by_host),
        'nodes_passed': sum(1 for entry in by_host.values() if entry['status'] == PASSED),
        'nodes_failed': sum(1 for entry in by_host.values() if entry['status'] != PASSED),
        'checks': len(checks),
    }
    for status in STATUSES:
        summary['checks_' + status] = sum(1 for check in checks if check['status'] == status)
    summary['changes'] = sum(len(entry['changes']) for entry in by_host.values())
    return {
        'format': FORMAT,
        'format_version': FORMAT_VERSION,
        'generated_at': generated_at,
        'run': dict(run or {}),
        'previous_generated_at': previous.get('generated_at') if previous is not None else None,
        'notes': notes,
        'summary': summary,
        'removed_nodes': removed,
        'nodes': dict((host, by_host[host]) for host in sorted(by_host)),
    }


_NODE_KEYS = ('host', 'gathered', 'k8s', 'wanted', 'published', 'outcome')


def report_from_inputs(nodes, previous=None, run=None, generated_at=None, domain=None):
    """The report from one ``node_entry`` input dict per node (as ``run_inputs`` makes them); ValueError
    names the node and what is wrong with its input."""
    if not isinstance(nodes, list):
        raise ValueError('expects a list of nodes, got %s' % type(nodes).__name__)
    run = dict(run or {})
    left_out = stages_left_out(run.get('run_tags'), run.get('skip_tags'))
    run['stages_left_out'] = left_out
    entries = []
    for node in nodes:
        if not isinstance(node, dict) or not node.get('host'):
            raise ValueError('each node must be a dict with at least "host", got %r' % (node,))
        unknown = sorted(set(node) - set(_NODE_KEYS))
        if unknown:
            raise ValueError('node %s has unknown keys %s (known: %s)'
                             % (node['host'], ', '.join(unknown), ', '.join(_NODE_KEYS)))
        try:
            entries.append(node_entry(
                str(node['host']), gathered=node.get('gathered'), k8s=node.get('k8s'), wanted=node.get('wanted'),
                published=node.get('published'), outcome=node.get('outcome'), domain=domain, left_out=left_out))
        except (TypeError, ValueError, AttributeError) as error:
            raise ValueError('node %s: %s' % (node['host'], error))
    report = build_report(entries, previous=previous, run=run, generated_at=generated_at)
    if left_out:
        report['notes'].append('This run left out the stage%s %s (--skip-tags or --tags): %s %s skipped, not judged.' % (
            's' if len(left_out) > 1 else '', ', '.join(left_out),
            ', '.join(check for stage in left_out for check in STAGE_CHECKS[stage]),
            'are' if sum(len(STAGE_CHECKS[stage]) for stage in left_out) > 1 else 'is'))
    return report


def to_json(report):
    """The report as JSON text (sorted keys, so two reports diff well)."""
    return json.dumps(report, indent=2, sort_keys=True) + '\n'


# --------------------------------------------------------------------------------------
# Renderers
# --------------------------------------------------------------------------------------

def _xml_text(value):
    return _XML_INVALID.sub(u'\ufffd', _text(value))


def render_junit(report, suite_name='npu.ascend fleet report'):
    """JUnit XML: one testsuite for the run, one testcase per node and check."""
    summary = report['summary']
    root = ET.Element('testsuites', {
        'name': _xml_text(suite_name),
        'tests': str(summary['checks']),
        'failures': str(summary['checks_failed']),
        'errors': str(summary['checks_error']),
        'skipped': str(summary['checks_skipped']),
    })
    attributes = {
        'name': _xml_text(suite_name),
        'tests': str(summary['checks']),
        'failures': str(summary['checks_failed']),
        'errors': str(summary['checks_error']),
        'skipped': str(summary['checks_skipped']),
    }
    if report.get('generated_at'):
        attributes['timestamp'] = _xml_text(report['generated_at'])
    suite = ET.SubElement(root, 'testsuite', attributes)
    run = report.get('run') or {}
    if run:
        properties = ET.SubElement(suite, 'properties')
        for key in sorted(run):
            value = run[key]
            if isinstance(value, (list, tuple)):
                value = ', '.join(_text(item) for item in value)
            ET.SubElement(properties, 'property', {'name': _xml_text(key), 'value': _xml_text(value)})
    for host, entry in report['nodes'].items():
        for check in entry['checks']:
            case = ET.SubElement(suite, 'testcase', {'classname': _xml_text(host), 'name': _xml_text(check['name'])})
            status = check['status']
            if status == FAILED:
                element = ET.SubElement(case, 'failure', {'message': _xml_text(check['message']), 'type': 'failed'})
                element.text = _xml_text('%s: %s: %s' % (host, check['name'], check['message']))
            elif status == ERROR:
                element = ET.SubElement(case, 'error', {'message': _xml_text(check['message']), 'type': 'error'})
                element.text = _xml_text('%s: %s: %s' % (host, check['name'], check['message']))
            elif status == SKIPPED:
                ET.SubElement(case, 'skipped', {'message': _xml_text(check['message'])})
            else:
                output = ET.SubElement(case, 'system-out')
                output.text = _xml_text(check['message'])
    text = ET.tostring(root, encoding='unicode')
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + text + '\n'


_MARKDOWN_SPECIAL = re.compile(r'([\\`*_{}\[\]<|#])')


def markdown_text(value):
    """Text safe in a Markdown table cell: no line breaks, Markdown and HTML characters escaped.

    ``<`` and ``&`` are escaped so that nothing read from a node can become an HTML tag or entity;
    a lone ``>`` cannot, and stays readable (``driver 24.1.rc2 -> 25.0.rc1.1``).
    """
    text = ' '.join(_text(value).split())
    text = text.replace('&', '&amp;')
    return _MARKDOWN_SPECIAL.sub(r'\\\1', text)


STATUS_WORDS = {PASSED: 'PASS', FAILED: 'FAIL', SKIPPED: 'SKIP', ERROR: 'ERROR'}
# Failing nodes first, the worst first: a node that could not be read, then one that failed a check.
_STATUS_RANK = {ERROR: 0, FAILED: 1, SKIPPED: 2, PASSED: 3}
# (stopped in the run, unreachable) -> rank among the failing nodes.
_STOP_RANK = {(True, True): 0, (True, False): 1, (False, False): 2, (False, True): 2}


def _check_status(entry, name):
    for check in entry['checks']:
        if check['name'] == name:
            return check['status']
    return None


def _multi_die(chip_family):
    """Whether the catalogue's chip family is NPUs of several dies (A3), not one chip per NPU or per card."""
    try:
        return hardware_catalogue.chip_family_row(chip_family)['dies_per_npu'] > 1
    except ValueError:
        return False


def _hardware_text(hardware):
    text = ' '.join(_text(part) for part in (hardware.get('product'), hardware.get('chip_family')) if part) or '-'
    super_pod = hardware.get('super_pod')
    if super_pod:
        text += ', SuperPoD %s server %s' % (super_pod.get('id'), _or_none(super_pod.get('server_index'), '?'))
    return text


# The installed stack a group of nodes shares, and the versions the HTML page filters on.
_STACK = (('firmware', 'firmware'), ('driver', 'driver'), ('toolkit', 'CANN'), ('docker_runtime', 'Docker runtime'))


def _stack_text(versions):
    return ', '.join('%s %s' % (title, _or_none(versions.get(component), 'none')) for component, title in _STACK)


def _chips_text(entry):
    """The chips' cell: ``7/8 OK``, or why there is no count (a count of 0/0 would read as healthy)."""
    health = entry['health']
    if not entry['facts_available']:
        return 'not read'
    if health['npu_smi_error']:
        return 'unknown: npu-smi failed'
    if health['chips']:
        hardware = entry.get('hardware') or {}
        if (hardware.get('dies_per_npu') or 1) > 1 and _multi_die(hardware.get('chip_family')):
            # An A3's 16 chips are 8 NPUs of 2 dies each, not 16 NPUs.
            return '%s/%s dies OK (%s NPUs x %s dies)' % (health['healthy'], health['chips'], hardware['npus'],
                                                          hardware['dies_per_npu'])
        return '%s/%s OK' % (health['healthy'], health['chips'])
    if entry['npu_smi_available']:
        return 'none listed by npu-smi'
    return 'unknown: no npu-smi'


_NUMBERED = re.compile(r'^(.*?)(\d+)$')


def host_ranges(hosts):
    """Host names with runs of consecutive numbers folded: ``node-001, node-002, node-003, gpu`` ->
    ``['gpu', 'node-[001-003]']`` (names of one prefix and one number width, sorted)."""
    runs, others = {}, []
    for host in sorted(set(_text(host) for host in hosts)):
        match = _NUMBERED.match(host)
        if match:
            runs.setdefault((match.group(1), len(match.group(2))), []).append(int(match.group(2)))
        else:
            others.append(host)
    folded = list(others)
    for (prefix, width), numbers in runs.items():
        numbers.sort()
        start = previous = numbers[0]
        for number in numbers[1:] + [None]:
            if number is not None and number == previous + 1:
                previous = number
                continue
            first, last = '%0*d' % (width, start), '%0*d' % (width, previous)
            folded.append('%s%s' % (prefix, first) if start == previous else '%s[%s-%s]' % (prefix, first, last))
            if number is not None:
                start = previous = number
    return sorted(folded)


def hosts_text(hosts):
    """``host_ranges`` joined by commas, those past the first ten counted: ``a, node-[001-480] and 12 more``."""
    return _names_text(host_ranges(hosts))


def _node_view(entry):
    kubernetes = entry['kubernetes']
    checks = sorted(entry['checks'], key=lambda check: _STATUS_RANK.get(check['status'], 9))
    return {
        'host': entry['host'],
        'status': entry['status'],
        'status_word': STATUS_WORDS[entry['status']],
        'model': entry['hardware'].get('product') or entry['hardware'].get('chip_family') or 'unknown hardware',
        'hardware': _hardware_text(entry['hardware']),
        'chips': _chips_text(entry),
        'firmware': _or_none(entry['versions'].get('firmware'), '-'),
        'driver': _or_none(entry['versions'].get('driver'), '-'),
        'cann': _or_none(entry['versions'].get('toolkit'), '-'),
        'docker_runtime': _or_none(entry['versions'].get('docker_runtime'), '-'),
        'stack': _stack_text(entry['versions']),
        'validated': STATUS_WORDS.get(_check_status(entry, CHECK_VALIDATED), ''),
        'validated_status': _check_status(entry, CHECK_VALIDATED) or '',
        'schedulable': STATUS_WORDS.get(_check_status(entry, CHECK_SCHEDULABLE), ''),
        'schedulable_status': _check_status(entry, CHECK_SCHEDULABLE) or '',
        'fabric': STATUS_WORDS.get(_check_status(entry, CHECK_FABRIC), ''),
        'fabric_status': _check_status(entry, CHECK_FABRIC) or '',
        'checks': [dict(check, status_word=STATUS_WORDS[check['status']]) for check in checks],
        'problems': [dict(check, status_word=STATUS_WORDS[check['status']]) for check in checks
                     if check['status'] in (FAILED, ERROR)],
        'kubernetes': kubernetes if kubernetes and kubernetes['found'] else None,
        'kubernetes_text': ('Node %s: NPU capacity %s, allocatable %s, taints %s%s' % (
            kubernetes['node_name'],
            ', '.join('%s=%s' % item for item in sorted(kubernetes['capacity'].items())) or 'none',
            ', '.join('%s=%s' % item for item in sorted(kubernetes['allocatable'].items())) or 'none',
            ', '.join(kubernetes['taints']) or 'none',
            (', upgrade state %s' % kubernetes['upgrade_state']) if kubernetes['upgrade_state'] else ''))
        if kubernetes and kubernetes['found'] else '',
        'changes': [change['text'] for change in entry['changes']],
        'stopped': entry.get('stopped'),
        'vnpus': _vnpu_text(kubernetes if kubernetes and kubernetes['found'] else None),
        # What the HTML page filters on: the state (status, and unreachable or stopped), the chip,
        # the installed versions, and the stage the node stopped at.
        'states': [entry['status']] + [word for word, holds in (
            ('unreachable', not entry['reachable'] or bool((entry.get('stopped') or {}).get('unreachable'))),
            ('stopped', bool(entry.get('stopped')))) if holds],
        'chip': _hardware_text(entry['hardware']) if entry['facts_available'] else 'not read',
        'versions': ['%s %s' % (title, entry['versions'][component]) for component, title in _STACK
                     if entry['versions'].get(component)],
        'stage': (entry.get('stopped') or {}).get('stage') or ('completed' if entry['outcome'] == RUN_OK else 'not known'),
    }


def _filter_values(rows):
    """The choices of the HTML page's filters: every value some node has, sorted."""
    order = dict((status, rank) for rank, status in enumerate((ERROR, 'unreachable', 'stopped', FAILED, PASSED)))
    return {
        'state': sorted(set(state for row in rows for state in row['states']), key=lambda state: (order.get(state, 9), state)),
        'chip': sorted(set(row['chip'] for row in rows)),
        'version': sorted(set(version for row in rows for version in row['versions'])),
        'stage': sorted(set(row['stage'] for row in rows)),
    }


def report_view(report):
    """What the Markdown and HTML templates show, worked out once: the report's nodes ordered and grouped.

    ``failing``: the nodes whose status is not passed, errors first, then by host; ``passing``:
    the others, by host; ``groups``: one per server model and installed stack (firmware, driver,
    CANN, Docker runtime), by model then stack, each with its hosts and how many of them fail.
    Values are as in the report, not escaped: the templates escape for their format.
    """
    rows = [_node_view(entry) for entry in report['nodes'].values()]
    # Nodes the run could not finish come first (unreachable, then stopped), then the other failing ones.
    failing = sorted((row for row in rows if row['status'] != PASSED),
                     key=lambda row: (_STOP_RANK[bool(row['stopped']), bool((row['stopped'] or {}).get('unreachable'))],
                                      _STATUS_RANK.get(row['status'], 9), row['host']))
    passing = sorted((row for row in rows if row['status'] == PASSED), key=lambda row: row['host'])
    groups = {}
    for row in rows:
        group = groups.setdefault((row['model'], row['stack']), {'model': row['model'], 'stack': row['stack'],
                                                                 'hosts': [], 'failing': []})
        group['hosts'].append(row['host'])
        if row['status'] != PASSED:
            group['failing'].append(row['host'])
    ordered_groups = []
    for key in sorted(groups):
        group = groups[key]
        group['hosts'].sort()
        group['failing'].sort()
        group['status'] = PASSED if not group['failing'] else FAILED
        # A group of hundreds of nodes is one cell: their names folded into ranges, the rest counted.
        group['hosts_text'] = hosts_text(group['hosts'])
        group['failing_text'] = hosts_text(group['failing'])
        ordered_groups.append(group)
    run = report.get('run') or {}
    return {
        'generated_at': report.get('generated_at') or 'now',
        'playbook': run.get('playbook'),
        'check_mode': bool(run.get('check_mode')),
        'previous_generated_at': report.get('previous_generated_at'),
        'notes': list(report.get('notes') or []),
        'removed_nodes': list(report.get('removed_nodes') or []),
        'summary': report['summary'],
        'failing': failing,
        'passing': passing,
        'groups': ordered_groups,
        'filters': _filter_values(rows),
        'stages_left_out': list(run.get('stages_left_out') or []),
    }


# Markdown and HTML are rendered on the controller from Jinja2 templates an operator can replace
# (plugins/plugin_utils/fleet_report_templates.py); JSON and JUnit are data and stay here.
RENDERERS = {'json': to_json, 'junit': render_junit}


def render(report, fmt):
    """The report in one of RENDERERS' formats."""
    try:
        renderer = RENDERERS[fmt]
    except KeyError:
        raise ValueError('unknown report format %r (expected one of %s)' % (fmt, ', '.join(sorted(RENDERERS))))
    return renderer(report)


# --------------------------------------------------------------------------------------
# What the fleet_report_write action reads from the run, and what it publishes
# --------------------------------------------------------------------------------------

def _unique(items):
    seen, kept = set(), []
    for item in items:
        key = json.dumps(item, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def _read_by_the_host(own):
    """What a host of the play read for the report: the result ``roles/fleet_report/tasks/read.yml``
    registered, or the host's probe of the run when that read was skipped as current."""
    read = own.get('__fleet_report_facts') or {}
    unreachable = bool(read.get('unreachable'))
    if read.get('skipped'):
        probe = (own.get('ansible_facts') or {}).get('ascend')
    elif unreachable or read.get('failed') or not isinstance(read.get('ansible_facts'), dict):
        probe = None
    else:
        probe = read['ansible_facts'].get('ascend')
    probe = probe if isinstance(probe, dict) else None
    return {'facts': probe, 'facts_error': None if read.get('skipped') else read.get('msg'),
            'unreachable': unreachable, 'npu_smi': (probe or {}).get('npu_smi'),
            'npu_smi_error': (probe or {}).get('npu_smi_error')}


def _unreachable_stop(stopped):
    return isinstance(stopped, dict) and bool(stopped.get('unreachable'))


def k8s_node_name(variables, host):
    """The Node of ``host``: ``npu_ascend_k8s_node_name`` from its variables, else the inventory name.

    The rule every Kubernetes role applies as ``npu_ascend_k8s_node_name | default(inventory_hostname)``.
    """
    return variables.get('npu_ascend_k8s_node_name') or host


def run_inputs(hosts, host_vars, play_hosts, wanted_of, kubernetes=False, k8s_nodes=None, k8s_error=None):
    """One ``node_entry`` input per host of ``hosts``, from the run's variables.

    ``host_vars(host)`` gives a host's variables; ``wanted_of(variables)`` its wanted stack. The
    node name is the one every role uses (``k8s_node_name`` below); what the
    roles published (``preflight_report``, ``k8s_node_result``, ``fleet_report_extra``) is taken
    as it is; the doctor's findings, when any host has them, are those naming the host or its node.
    """
    variables = dict((host, host_vars(host)) for host in hosts)
    by_name = dict(((node.get('metadata') or {}).get('name'), node) for node in (k8s_nodes or []) if isinstance(node, dict))
    with_findings = [variables[host]['doctor_findings'] for host in hosts if 'doctor_findings' in variables[host]]
    findings = _unique(finding for group in with_findings for finding in (group or []))
    nodes = []
    for host in hosts:
        own = variables[host]
        node_name = k8s_node_name(own, host)
        published = {'extra': own.get('fleet_report_extra', {})}
        for key in ('preflight_report', 'k8s_node_result', 'outcome_stopped', 'hccn_fabric'):
            if key in own:
                published[key] = own[key]
        if with_findings:
            published['doctor_findings'] = [finding for finding in findings
                                            if isinstance(finding, dict) and finding.get('node') in (host, node_name)]
        # A host of the play read itself; one that failed earlier was read on its behalf (gather.yml),
        # unless its stage recorded it unreachable: then that record says why nothing was read.
        if host in play_hosts and '__fleet_report_facts' in own:
            gathered = _read_by_the_host(own)
        elif own.get('__fleet_report_gathered') is None and _unreachable_stop(own.get('outcome_stopped')):
            gathered = {'facts': None, 'facts_error': own['outcome_stopped'].get('message'), 'unreachable': True,
                        'npu_smi': None, 'npu_smi_error': None}
        else:
            gathered = own.get('__fleet_report_gathered')
        nodes.append({
            'host': host,
            'gathered': gathered,
            'k8s': {'configured': bool(kubernetes), 'node_name': node_name, 'node': by_name.get(node_name),
                    'error': k8s_error},
            'wanted': wanted_of(own),
            'published': published,
            'outcome': RUN_OK if host in play_hosts else RUN_FAILED,
        })
    return nodes


def published_result(report, directory, files):
    """``fleet_report_result``: where the files are, the summary, and per node its status, the
    failed checks (``name: message``) and the changes since the previous report."""
    nodes = {}
    for host, entry in report['nodes'].items():
        nodes[host] = {
            'status': entry['status'],
            'problems': ['%s: %s' % (check['name'], check['message']) for check in entry['checks']
                         if check['status'] in (FAILED, ERROR)],
            'changes': [change['text'] for change in entry['changes']],
        }
    return {'dir': directory, 'files': list(files), 'summary': report['summary'], 'nodes': nodes,
            'stages_left_out': list((report.get('run') or {}).get('stages_left_out') or [])}


# --------------------------------------------------------------------------------------
# Parts: slices of one job (AWX job slicing) each write the report of their own nodes, and
# one merge makes the fleet's report of them.
# --------------------------------------------------------------------------------------

PART_KIND = 'part'
_PART_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$')


def part_name(name):
    """``name`` when it can be a part's file name (letters, digits, ``._-``), else ValueError."""
    name = _text(name)
    if not _PART_NAME.match(name) or '..' in name:
        raise ValueError('fleet_report_part is %r: a part is named with letters, digits, dots, dashes and '
                         'underscores (at most 128). Fix: name the slice so, or set it to auto' % name)
    return name


def part_document(report, name):
    """What a slice writes: the report's node entries and run, marked as a part of one fleet report."""
    return {'format': FORMAT, 'format_version': FORMAT_VERSION, 'kind': PART_KIND, 'part': part_name(name),
            'generated_at': report.get('generated_at'), 'run': report.get('run') or {}, 'nodes': report['nodes']}


def missing_from_parts_entry(host, part_names):
    """The entry of a host the merge expected (a host of the merging run) that no part holds: the
    job left it out of every slice (its limit), or its slice stopped before its report play."""
    message = ('in none of the %d merged part(s) (%s): no slice reported this node. Either the job left it out of '
               'every slice (its limit), or its slice stopped before the report play (the slice\'s own output says '
               'why). Fix: run npu.ascend.report with --limit %s -e fleet_report_part=auto and merge again, or '
               'remove the host from the inventory' % (len(part_names), ', '.join(part_names), host))
    entry = node_entry(host)
    entry['reachable'] = None
    entry['errors'] = [message]
    entry['stopped'] = {'stage': 'slicing', 'task': '', 'message': message, 'unreachable': False}
    entry['checks'] = [_check(CHECK_RUN, ERROR, message)]
    entry['status'] = ERROR
    return entry


def merge_parts(parts, previous=None, run=None, generated_at=None, expected_hosts=None):
    """One fleet report from the parts slices wrote: ``parts`` is {name: JSON text or dict}.

    A host in two parts (a slice run again, or a part left from another run) is taken from the
    part generated last, with a note; ValueError names a part that is not one. A host of
    ``expected_hosts`` (the merging run's hosts: the fleet) that no part holds is an entry of its
    own, an error naming why it may be missing, so that the report lists every node exactly once.
    """
    if not parts:
        raise ValueError('no parts to merge')
    documents = []
    for name in sorted(parts):
        document = parts[name]
        if not isinstance(document, dict):
            try:
                document = json.loads(document)
            except ValueError as error:
                raise ValueError('part %s is not JSON (%s)' % (name, error))
        if not isinstance(document, dict) or document.get('format') != FORMAT or document.get('kind') != PART_KIND \
                or not isinstance(document.get('nodes'), dict):
            raise ValueError('%s is not a part of an npu.ascend fleet report' % name)
        if document.get('format_version') != FORMAT_VERSION:
            raise ValueError('part %s has format_version %r; this collection reads %d'
                             % (name, document.get('format_version'), FORMAT_VERSION))
        documents.append((_text(document.get('generated_at')), name, document))
    entries, taken_from, notes = {}, {}, []
    for _generated, name, document in sorted(documents, key=lambda item: (item[0], item[1])):
        for host, entry in document['nodes'].items():
            if not isinstance(entry, dict) or entry.get('host') != host:
                raise ValueError('part %s: node %s is not a report entry' % (name, host))
            if host in entries:
                notes.append('%s is in parts %s and %s; the later one, %s, is reported' % (
                    host, taken_from[host], name, name))
            entries[host] = copy.deepcopy(entry)
            taken_from[host] = name
    merged_run = dict(run or {})
    merged_run['parts'] = [name for _generated, name, _document in sorted(documents, key=lambda item: item[1])]
    missing = sorted(set(_text(host) for host in expected_hosts or ()) - set(entries))
    for host in missing:
        entries[host] = missing_from_parts_entry(host, merged_run['parts'])
    if missing:
        notes.append('%d node(s) of the fleet are in no part: %s' % (len(missing), hosts_text(missing)))
    report = build_report(list(entries.values()), previous=previous, run=merged_run, generated_at=generated_at)
    report['notes'].extend(notes)
    return report


# --- the NPUs' RoCE network (docs/hccn.md): the hccn role's gate, published as hccn_fabric ------

CHECK_FABRIC = 'fabric'


def _check_fabric(fabric):
    """The fabric gate of a training node: passed, or its problems (each with NPU, symptom, cause and fix)."""
    if fabric.get('passed') in (True, 'True', 'true'):
        return _check(CHECK_FABRIC, PASSED, '%d NPU(s) up and healthy, %d ping(s) to peer NPUs answered'
                      % (len(fabric.get('npus') or []), len(fabric.get('pings') or [])))
    return _check(CHECK_FABRIC, FAILED, '; '.join(_text(problem) for problem in fabric.get('problems') or [])
                  or 'the fabric gate did not pass')
