#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: fleet_report_write
short_description: Build the fleet report from what the run read and write its files on the controller
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
description:
  - Runs on the controller only (an action plugin; nothing reaches a node). The P(npu.ascend.fleet_report#role) role calls it
    once per run, after every host was read.
  - For each host of O(hosts) it takes what the run left in the host's variables (what ascend_facts and npu-smi read,
    from the role's read of the host, or the host's probe of the run when that is current, or C(__fleet_report_gathered)
    for a host read on its behalf after it failed; C(preflight_report); C(k8s_node_result); C(doctor_findings);
    C(fleet_report_extra)), its wanted stack (P(npu.ascend.ascend_wanted_stack#filter) over its variables, or its
    C(fleet_report_stack)) and its Node object from O(k8s_nodes), and builds the report as the
    P(npu.ascend.fleet_report#filter) filter does.
  - Compares it with the C(fleet-report.json) already in O(dir) (kept as C(fleet-report.previous.json)), then writes
    C(fleet-report.json) and the files of O(formats), each one whole or not at all (written aside, then renamed).
  - A report file keeps the mode it has (new ones are 0644); C(fleet-report.previous.json) gets the mode of the
    C(fleet-report.json) it copies. No report file, part or directory of O(dir) is read or written through a
    symbolic link - one there fails the task with its name and the fix (O(dir) itself may be a link).
  - The files are the run's output, not a change to the fleet. They are written in check mode too, and the task
    never reports C(changed) (every report differs from the last by its time stamp).
  - Fails with a message naming the cause and the fix for an unknown format, a template that does not render, a
    link in O(dir), or a directory it cannot write.
options:
  dir:
    description: Directory of the report files on the controller; created when missing.
    type: path
    required: true
  formats:
    description: Formats written besides JSON (always written).
    type: list
    elements: str
    choices: [junit, markdown, html]
    default: [junit, markdown, html]
  template_dir:
    description: Directory of the operator's own C(fleet-report.md.j2) and C(fleet-report.html.j2), used instead of the
      built-in templates.
    type: path
  hosts:
    description: The hosts the report describes.
    type: list
    elements: str
    required: true
  label_domain:
    description:
      - Domain of the validated, driver and upgrade-state labels the report reads on the Node objects
        (C(npu_ascend_label_domain)).
      - Unset or empty - the collection's default label domain (P(npu.ascend.k8s_label_keys#filter)).
    type: str
  kubernetes:
    description: Whether the Node objects were read; without them the Kubernetes checks say so.
    type: bool
    default: false
  k8s_nodes:
    description: The registered result of C(kubernetes.core.k8s_info) for C(kind=Node) (its C(resources), or its
      C(msg) when it failed).
    type: dict
  run:
    description:
      - What the report records of the run (play, playbook_dir, check_mode, ansible_version, limit, hosts).
      - C(run_tags) and C(skip_tags), the run's C(ansible_run_tags) and C(ansible_skip_tags), name the stages the run
        left out (C(host_stack), C(kubernetes)); their checks are skipped, not failed, and the report notes it.
    type: dict
    default: {}
  set_stats:
    description: Also publish RV(fleet_report) as the run's statistics (AWX and AAP show them as the job's artifacts),
      as M(ansible.builtin.set_stats) would.
    type: bool
    default: false
  part:
    description:
      - Write only this run's part of the fleet report, as C(parts/<part>.json) in O(dir), for a run that sees part
        of the fleet (a slice of an AWX job with job slicing); a later run with O(merge_parts) makes the fleet
        report of the parts.
      - Letters, digits, dots, dashes and underscores. Empty, the whole report.
    type: str
    default: ''
  merge_parts:
    description:
      - Make the fleet report from every part in C(parts/) of O(dir) instead of reading hosts; the changes are
        computed against the previous fleet report as usual. A host in two parts is taken from the later part, with
        a note. The parts taken are moved to C(parts/merged/<time of the merge>/), never deleted.
      - A host of O(hosts) (the merging run's hosts, the fleet) that no part holds is reported too, as an error that
        says why it may be missing (left out of every slice, or its slice stopped before its report), so that the
        fleet report lists every node once.
      - Fails naming the directory when there is no part, and the file when one is not a part.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    details:
      - The report files are written in check mode too, and C(changed) is false either way.
  diff_mode:
    support: none
  idempotent:
    support: partial
    details:
      - Never reports a change; each run writes a report with its own time stamp.
  platform:
    platforms: posix
notes:
  - The role's C(fleet_report_result) is RV(fleet_report).
seealso:
  - module: npu.ascend.ascend_facts
  - module: npu.ascend.npu_smi_info
extends_documentation_fragment:
  - npu.ascend.attributes
  - npu.ascend.attributes.CONTROLLER_ACTION
'''

EXAMPLES = r'''
- name: Write the report of the play's hosts
  npu.ascend.fleet_report_write:
    dir: "{{ lookup('ansible.builtin.env', 'HOME') }}/npu-ascend-reports"
    hosts: "{{ ansible_play_hosts_all }}"
  run_once: true
  delegate_to: localhost
  register: report

- name: In each slice of a sliced job, write the slice's part (named after its first host)
  npu.ascend.fleet_report_write:
    dir: /srv/npu-reports/fleet-a
    hosts: "{{ ansible_play_hosts_all }}"
    part: "{{ ansible_play_hosts_all | first }}"
  run_once: true
  delegate_to: localhost

- name: After the slices, one fleet report of their parts
  npu.ascend.fleet_report_write:
    dir: /srv/npu-reports/fleet-a
    hosts: []
    merge_parts: true
  run_once: true
  delegate_to: localhost
'''

RETURN = r'''
fleet_report:
  description: Where the report is and what it says.
  returned: success
  type: dict
  contains:
    dir:
      description: The report directory.
      type: str
    files:
      description: The files written, JSON first (with O(part), the part's file).
      type: list
      elements: str
    summary:
      description: Counts of nodes (passed, failed), checks per status and changes since the previous report.
      type: dict
    nodes:
      description: Per host its C(status), its C(problems) (each the check's name, a colon and its message) and its C(changes) since the previous
        report.
      type: dict
    stages_left_out:
      description: The stages the run left out (C(host_stack), C(kubernetes)), whose checks the report skips.
      type: list
      elements: str
'''
