# -*- coding: utf-8 -*-
"""The roles' variables that name chips hold the hardware catalogue's values: the device plugin's
DaemonSets per accelerator label and the exporter's node selection (a filter for two constant tables
would cost a plugin load per task; this test keeps them equal instead)."""
import os

import yaml

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hardware_catalogue

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _role_vars(role):
    with open(os.path.join(REPO, 'roles', role, 'vars', 'main.yml'), encoding='utf-8') as handle:
        return yaml.safe_load(handle)


def test_device_plugin_families_are_the_catalogues():
    assert _role_vars('device_plugin')['__device_plugin_families'] == hardware_catalogue.device_plugin_families()


def test_exporter_runs_on_every_accelerator_label_of_the_catalogue():
    assert sorted(_role_vars('exporter')['__exporter_accelerators']) == sorted(hardware_catalogue.accelerator_labels())
