# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict on a validation pod's own output, for the controller's filters.

The verdict lives in plugins/module_utils/k8s_validation.py, where the k8s_fleet_validate module
(which judges every node's pod in one step) reaches it too; this name is kept for the filter
npu.ascend.npu_validation_verdict and its tests.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.npu.ascend.plugins.module_utils.k8s_validation import judge_output  # noqa: F401 pylint: disable=unused-import
