# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of the packages role, before anything is fetched: which package files a node needs
(``package_resolution.plan_packages``) and whether they may come from the source the inventory names. That
needs one source, a known chip for the chip packages, plain file names (a name is joined to the staging
directory and run as root) and, for a mirror, one that can be trusted (``package_trust.mirror_trust``). The
role's ``tasks/resolve.yml`` reads the fields and acts; the checksums and the judgement of each package follow
there. Pure functions, no Ansible imports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping

from ansible_collections.npu.ascend.plugins.plugin_utils import package_resolution, package_trust
from ansible_collections.npu.ascend.plugins.plugin_utils.plain_data import mapping as _mapping

# The components whose package names carry the chip.
CHIP_COMPONENTS = ('driver', 'firmware', 'kernels', 'ops')


def _source_refusal(host, source_dir, mirror_url):
    if bool(source_dir) != bool(mirror_url):
        return ''
    return ("%s: set exactly one of packages_source_dir (a directory on the controller) or packages_mirror_url (an "
            "HTTP(S) mirror); now packages_source_dir='%s' and packages_mirror_url='%s'."
            % (host, source_dir, package_trust.redact_url(mirror_url) if isinstance(mirror_url, str) else '<not a string>'))


def _chip_refusal(host, components, chip):
    if chip or not any(entry.get('component') in CHIP_COMPONENTS for entry in components if 'chip' not in entry):
        return ''
    return ('%s: no NPU chip family is known for this node (npu.ascend.ascend_facts found no Huawei vendor 19e5 '
            'device), so driver, firmware and kernels packages cannot be picked. Fix: check that the NPUs show in '
            '`lspci -d 19e5:`, or set packages_chip explicitly.' % host)


def packages_resolution(components, options):
    """What the packages role decides before fetching anything.

    ``components``: the role's ``packages_components`` (component, version, optional chip); ``options``:
    ``host``, ``source_dir``, ``mirror_url``, ``chip``, ``arch``, ``pinned`` (packages_sha256sums),
    ``allow_insecure``, ``validate_certs``, ``username`` and ``password_set`` (whether a password is set: the
    password itself is not needed).

    Returns ``plan`` (``plan_packages``: one entry per package with its file name; empty when refused before
    it could be made), ``trust`` (``mirror_trust`` for a mirror, None for a directory on the controller),
    ``refusal`` (the message the node stops with, naming each cause and its fix; '' to go on) and ``warning``
    (a mirror whose word alone decides what runs as root; '' otherwise). TypeError or ValueError names a
    wrong input."""
    if not isinstance(components, list) or not all(isinstance(entry, Mapping) for entry in components):
        raise TypeError('packages_components must be a list of dicts (component, version), got %r' % (components,))
    options = _mapping(options)
    host = str(options.get('host') or 'localhost')
    source_dir, mirror_url = options.get('source_dir') or '', options.get('mirror_url') or ''
    chip = options.get('chip') or None
    state = {'plan': [], 'trust': None, 'refusal': '', 'warning': ''}
    refusal = _source_refusal(host, source_dir, mirror_url) or _chip_refusal(host, components, chip)
    if refusal:
        return dict(state, refusal=refusal)
    plan = package_resolution.plan_packages(components, chip, options.get('arch'))
    state['plan'] = plan
    refusal = package_resolution.file_name_refusal(plan, host, package_trust.file_name_problem)
    if refusal:
        return dict(state, refusal=refusal)
    if source_dir:
        return state
    pinned = options.get('pinned') or {}
    if not isinstance(pinned, Mapping):
        raise TypeError('packages_sha256sums must be a dict of file name to sha256, got %s' % type(pinned).__name__)
    trust = package_trust.mirror_trust(
        mirror_url, [package['file_name'] for package in plan], dict(pinned), bool(options.get('allow_insecure')),
        bool(options.get('validate_certs', True)), options.get('username') or '',
        bool(options.get('password_set')))
    state['trust'] = trust
    if trust['refused']:
        state['refusal'] = '%s: package mirror: %s. Fix: %s.' % (host, trust['cause'], trust['fix'])
    elif trust['warning']:
        state['warning'] = 'WARNING %s: package mirror: %s.' % (host, trust['warning'])
    return state
