# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading the plain data the roles hand to the controller-side logic: probes, registered results, options."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping


def mapping(value):
    """``value`` when it is a mapping, else an empty dict: a field that is missing, null or of another type reads
    as empty."""
    return value if isinstance(value, Mapping) else {}
