# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Prometheus text exposition of the NPU state ``npu-smi info`` shows.

Renders what :func:`npu_smi.parse_info` returns (one dict per chip) as the text format
node_exporter's textfile collector reads. Metric names follow Huawei's npu-exporter where
MindCluster's documentation names one (docs/huawei-sources.md), so dashboards and alerts written for the
exporter work on these series too; the others carry our ``npu_ascend_`` prefix.

Pure functions, no I/O and no import of the parser: the caller runs npu-smi, parses its
output with ``npu_smi.parse_info`` and passes the result (or the failure) here. The node
side script of the ``textfile_metrics`` role and the unit tests are the callers.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re

_METRIC_NAME = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*$')
_LABEL_NAME = re.compile(r'^[a-zA-Z_][a-zA-Z0-9_]*$')

# Labels of every per-chip series, in this order: ``id`` is the chip's logical id (its position
# in the npu-smi table, the N of /dev/davinciN), ``npu`` and ``chip`` the ids npu-smi prints,
# ``model`` the chip name and ``bus`` its PCIe bus id (empty when npu-smi prints NA).
CHIP_LABELS = ('id', 'npu', 'chip', 'model', 'bus')

# (name, help, chip key or function of the chip); all are gauges. Series whose value npu-smi prints as NA or ``-``
# are left out rather than exported as 0.
CHIP_METRICS = (
    ('npu_chip_info_health_status', 'Health of the chip as npu-smi reports it: 1 OK, 0 anything else.',
     lambda chip: 1 if chip.get('healthy') else 0),
    ('npu_chip_info_temperature', 'Temperature of the chip in degrees Celsius.', 'temp_c'),
    ('npu_chip_info_power', 'Power draw in watts as npu-smi prints it for the chip.',
     'power_w'),
    ('npu_chip_info_utilization', 'AI Core utilization of the chip in percent.', 'aicore_pct'),
    ('npu_chip_info_hbm_used_memory', 'HBM in use on the chip, in MB.', 'hbm_used_mb'),
    ('npu_chip_info_hbm_total_memory', 'HBM of the chip, in MB.', 'hbm_total_mb'),
    ('npu_ascend_chip_ddr_used_memory', 'DDR memory in use on the chip, in MB (npu-smi Memory-Usage).',
     'memory_used_mb'),
    ('npu_ascend_chip_ddr_total_memory', 'DDR memory of the chip, in MB (npu-smi Memory-Usage).', 'memory_total_mb'),
    ('npu_ascend_chip_hugepages_used', 'Huge pages in use on the chip.', 'hugepages_used'),
    ('npu_ascend_chip_hugepages_capacity', 'Huge pages of the chip.', 'hugepages_total'),
)

SCRAPE_SUCCESS = 'npu_ascend_textfile_scrape_success'
SCRAPE_TIMESTAMP = 'npu_ascend_textfile_scrape_timestamp_seconds'
ERROR_CODE = 'npu_ascend_textfile_npu_smi_error_code'


def _escape_label_value(value):
    """Escape a label value as the text format requires: backslash, double quote, line feed."""
    return str(value).replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n')


def _escape_help(text):
    """Escape HELP text: backslash and line feed."""
    return str(text).replace('\\', '\\\\').replace('\n', '\\n')


def _format_value(value):
    """A sample value as the text format writes it (integers without a decimal point)."""
    if isinstance(value, bool):
        return '1' if value else '0'
    if isinstance(value, int):
        return str(value)
    value = float(value)
    if math.isnan(value):
        return 'NaN'
    if math.isinf(value):
        return '+Inf' if value > 0 else '-Inf'
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


class MetricFamily(object):
    """One metric name with its HELP, TYPE and samples (label dict, value)."""

    def __init__(self, name, help_text, metric_type='gauge'):
        if not _METRIC_NAME.match(name):
            raise ValueError('invalid Prometheus metric name %r' % name)
        self.name = name
        self.help_text = help_text
        self.metric_type = metric_type
        self.samples = []

    def add(self, value, labels=()):
        labels = list(labels.items()) if isinstance(labels, dict) else list(labels)
        for label, dummy in labels:
            if not _LABEL_NAME.match(label) or label.startswith('__'):
                raise ValueError('invalid Prometheus label name %r' % label)
        self.samples.append((labels, value))

    def render(self):
        lines = ['# HELP %s %s' % (self.name, _escape_help(self.help_text)),
                 '# TYPE %s %s' % (self.name, self.metric_type)]
        for labels, value in self.samples:
            if labels:
                text = ','.join('%s="%s"' % (label, _escape_label_value(item)) for label, item in labels)
                lines.append('%s{%s} %s' % (self.name, text, _format_value(value)))
            else:
                lines.append('%s %s' % (self.name, _format_value(value)))
        return '\n'.join(lines) + '\n'


def _chip_labels(index, chip):
    """The label pairs of one chip, ``index`` being its position in the npu-smi table."""
    values = (index, chip.get('npu_id'), chip.get('chip_id'), chip.get('name'), chip.get('bus_id'))
    return [(label, '' if value is None else value) for label, value in zip(CHIP_LABELS, values)]


def families(info=None, scrape_time=None, error=None):
    """The metric families for one run, as a list of MetricFamily.

    ``info`` is what ``npu_smi.parse_info`` returned, or None when npu-smi could not be read;
    ``error`` is then the failure (an ``NpuSmiError``, whose ``code`` is kept, or any message).
    ``scrape_time`` is the Unix time of the run. Only the families that have samples are kept.
    """
    result = []
    ok = info is not None and error is None
    success = MetricFamily(SCRAPE_SUCCESS, '1 when npu-smi info was read and parsed in the last run, 0 when it failed.')
    success.add(1 if ok else 0)
    result.append(success)
    if scrape_time is not None:
        stamp = MetricFamily(SCRAPE_TIMESTAMP, 'Unix time of the last run that wrote this file.')
        stamp.add(float(scrape_time))
        result.append(stamp)
    code = getattr(error, 'code', None)
    if code is not None:
        failure = MetricFamily(ERROR_CODE, 'DCMI error code npu-smi printed in the last run (for example -8005).')
        failure.add(int(code))
        result.append(failure)
    if not ok:
        return result

    chips = info.get('chips') or []
    npus = MetricFamily('machine_npu_nums', 'Number of NPU chips npu-smi info lists on the node.')
    npus.add(len(chips))
    result.append(npus)
    versions = MetricFamily('npu_ascend_driver_info', 'Driver and npu-smi versions npu-smi reports; the value is 1.')
    versions.add(1, [('driver_version', info.get('driver_version') or ''), ('tool_version', info.get('tool_version') or '')])
    result.append(versions)

    for name, help_text, source in CHIP_METRICS:
        family = MetricFamily(name, help_text)
        for index, chip in enumerate(chips):
            value = source(chip) if callable(source) else chip.get(source)
            if value is None:
                continue
            family.add(value, _chip_labels(index, chip))
        if family.samples:
            result.append(family)

    processes = MetricFamily('npu_ascend_chip_processes', 'Processes npu-smi lists on the chip.')
    counts = {}
    for process in info.get('processes') or []:
        key = (process.get('npu_id'), process.get('chip_id'))
        counts[key] = counts.get(key, 0) + 1
    for index, chip in enumerate(chips):
        processes.add(counts.get((chip.get('npu_id'), chip.get('chip_id')), 0), _chip_labels(index, chip))
    if processes.samples:
        result.append(processes)
    return result


def render(info=None, scrape_time=None, error=None):
    """The text of a ``.prom`` file for one run (see :func:`families`)."""
    return ''.join(family.render() for family in families(info, scrape_time, error))
