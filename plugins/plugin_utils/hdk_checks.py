# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hdk role's health check of the NPU chips, kept free of Ansible.

The role checks the chips npu-smi listed in the probe of this run (``ascend_facts``, which records
npu-smi's error instead of failing) once the driver is in and no reboot is pending.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

HEALTH_FIX = ('Fix: see `npu-smi info -t health -i <npu> -c <chip>` for the alarm, reseat or replace the card, '
              'or reboot if it followed the upgrade, then run again.')


def health_problem(health, host):
    """The message of the failed health check of ``host``, '' when every chip is healthy.

    ``health`` is ``{'chips': [...], 'error': text or None}``: npu-smi's chips (``npu_id``, ``chip_id``,
    ``name``, ``bus_id``, ``health``, ``healthy``) and its error.
    """
    health = health or {}
    if health.get('error'):
        return '%s: %s' % (host, health['error'])
    chips = health.get('chips') or []
    if not chips:
        return '%s: npu-smi lists no chip.' % host
    sick = [chip for chip in chips if not chip.get('healthy')]
    if not sick:
        return ''
    named = ['NPU %s chip %s (%s, bus %s) health is %s;' % (
        chip.get('npu_id'), chip.get('chip_id'), chip.get('name'), chip.get('bus_id'), chip.get('health')) for chip in sick]
    return '%s: %s %s' % (host, ' '.join(named), HEALTH_FIX)
