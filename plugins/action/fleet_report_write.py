# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of npu.ascend.fleet_report_write: builds the fleet report and writes its files on the controller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import errno
import glob
import os
import stat

from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.action import ActionBase

from ansible_collections.npu.ascend.plugins.module_utils.files import bounded_read, durable_file
from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_report as report_lib
from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_report_templates
from ansible_collections.npu.ascend.plugins.plugin_utils import wanted_stack

FILES = {'json': 'fleet-report.json', 'junit': 'fleet-report.junit.xml', 'markdown': 'fleet-report.md',
         'html': 'fleet-report.html'}
PREVIOUS_FILE = 'fleet-report.previous.json'
# Where slices write their parts, and where a merge moves the parts it took (kept, never deleted).
PARTS_DIR = 'parts'
MERGED_DIR = 'merged'
OPTIONAL_FORMATS = ('junit', 'markdown', 'html')

ARGUMENT_SPEC = dict(
    dir=dict(type='path', required=True),
    formats=dict(type='list', elements='str', default=list(OPTIONAL_FORMATS)),
    template_dir=dict(type='path'),
    hosts=dict(type='list', elements='str', required=True),
    label_domain=dict(type='str'),
    kubernetes=dict(type='bool', default=False),
    k8s_nodes=dict(type='dict'),
    run=dict(type='dict', default={}),
    set_stats=dict(type='bool', default=False),
    part=dict(type='str', default=''),
    merge_parts=dict(type='bool', default=False),
)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    # The report is the run's output on the controller: a dry run writes it too.
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        if not args['dir']:
            return dict(result, failed=True, msg='fleet_report_dir is empty. Fix: give the directory of the report '
                                                 'files on the controller')
        unknown = sorted(set(args['formats']) - set(OPTIONAL_FORMATS))
        if unknown:
            return dict(result, failed=True, msg='fleet_report_formats names %s. Fix: choose formats among %s (JSON is '
                                                 'always written)' % (', '.join(unknown), ', '.join(OPTIONAL_FORMATS)))
        if args['part'] and args['merge_parts']:
            return dict(result, failed=True, msg='fleet_report_part and fleet_report_merge_parts are both set. Fix: a slice '
                                                 'writes its part; the run after the slices merges them: set one of them')
        directory = args['dir']
        generated_at = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
        try:
            previous_file, previous = self._previous(directory)
            if args['merge_parts']:
                report, taken = self._merged(directory, previous, args, generated_at)
            else:
                report = self._report(task_vars, args, None if args['part'] else previous, generated_at)
            os.makedirs(directory, mode=0o755, exist_ok=True)
            if args['part']:
                path = os.path.join(directory, PARTS_DIR, report_lib.part_name(args['part']) + '.json')
                durable_file.make_directories(os.path.dirname(path), 0o755, directory)
                document = report_lib.part_document(report, args['part'])
                durable_file.replace_durably(path, report_lib.to_json(document).encode('utf-8'), mode=0o644,
                                             root=directory)
                paths = [path]
            else:
                paths = self._write_report(directory, report, previous_file, args)
            if args['merge_parts']:
                self._set_aside(directory, taken, generated_at)
        except fleet_report_templates.ReportTemplateError as error:
            return dict(result, failed=True, msg=to_native(error))
        except (TypeError, ValueError, AttributeError, KeyError) as error:
            return dict(result, failed=True, msg='cannot build the fleet report: %s. Fix: check the variables the '
                                                 'report reads (fleet_report_extra, fleet_report_stack, fleet_report_part) '
                                                 'on each host, or the parts in %s' % (
                                                     to_native(error), os.path.join(directory, PARTS_DIR)))
        except durable_file.UnsafeDestination as error:
            return dict(result, failed=True, msg='fleet report in %s: %s' % (args['dir'], to_native(error)))
        except (IOError, OSError) as error:
            return dict(result, failed=True, msg='cannot write the fleet report in %s: %s. Fix: give fleet_report_dir a '
                                                 'directory the controller user may write' % (args['dir'], to_native(error)))
        published = report_lib.published_result(report, directory, paths)
        result.update(changed=False, fleet_report=published)
        if args['set_stats']:
            result['ansible_stats'] = {'data': {'fleet_report': published}, 'per_host': False, 'aggregate': True}
        return result

    @staticmethod
    def _previous(directory):
        """The previous report's bytes, text and permission bits (None when there is none), read
        without following a link: its target (a key, say) must never become the previous report."""
        json_path = os.path.join(directory, FILES['json'])
        if not os.path.lexists(json_path):
            return None, None
        previous_bytes, mode = _read_no_link(json_path, directory)
        # A damaged previous file is a note in the report (build_report), not a failure.
        return (previous_bytes, mode), previous_bytes.decode('utf-8', 'replace')

    @staticmethod
    def _report(task_vars, args, previous, generated_at):
        hostvars = task_vars['hostvars']
        k8s = args['k8s_nodes'] or {}
        k8s_error = (k8s.get('msg') or 'the cluster did not answer') if k8s.get('failed') else None
        nodes = report_lib.run_inputs(
            args['hosts'], lambda host: hostvars[host], task_vars.get('ansible_play_hosts', []),
            lambda variables: wanted_stack.wanted_stack(variables, variables.get('fleet_report_stack', {}), 'fleet_report_stack'),
            kubernetes=args['kubernetes'], k8s_nodes=k8s.get('resources'), k8s_error=k8s_error)
        return report_lib.report_from_inputs(nodes, previous=previous, run=args['run'], generated_at=generated_at,
                                             domain=args['label_domain'])

    @staticmethod
    def _merged(directory, previous, args, generated_at):
        """The fleet report of every part in the parts directory, and the part files it took."""
        paths = sorted(glob.glob(os.path.join(directory, PARTS_DIR, '*.json')))
        if not paths:
            raise ValueError('no parts in %s: each slice writes one with fleet_report_part set' % os.path.join(
                directory, PARTS_DIR))
        parts = {}
        for path in paths:
            parts[os.path.basename(path)[:-len('.json')]] = _read_no_link(path, directory)[0].decode('utf-8', 'replace')
        report = report_lib.merge_parts(parts, previous=previous, run=args['run'], generated_at=generated_at,
                                        expected_hosts=args['hosts'])
        return report, paths

    @staticmethod
    def _write_report(directory, report, previous_file, args):
        formats = ['json'] + [fmt for index, fmt in enumerate(args['formats']) if fmt not in args['formats'][:index]]
        texts = dict((fmt, fleet_report_templates.render_format(report, fmt, args['template_dir'])) for fmt in formats)
        # Each file whole or not at all: a run stopped half way leaves the last complete report. The
        # files keep the mode they have; the copy of the previous report gets the mode of the report.
        if previous_file is not None:
            previous_bytes, mode = previous_file
            durable_file.replace_durably(os.path.join(directory, PREVIOUS_FILE), previous_bytes, mode=mode,
                                         root=directory, keep_mode=False)
        paths = []
        for fmt in formats:
            path = os.path.join(directory, FILES[fmt])
            durable_file.replace_durably(path, texts[fmt].encode('utf-8'), mode=0o644, root=directory)
            paths.append(path)
        return paths

    @staticmethod
    def _set_aside(directory, taken, generated_at):
        """Moves the merged parts out of the way of the next slices' (kept, with the time of the merge)."""
        aside = os.path.join(directory, PARTS_DIR, MERGED_DIR, generated_at.replace(':', ''))
        durable_file.make_directories(aside, 0o755, directory)
        for path in taken:
            durable_file.rename_within(path, os.path.join(aside, os.path.basename(path)), directory)


def _read_no_link(path, directory):
    """The bytes and permission bits of the regular file ``path`` inside ``directory``, never
    through a link (UnsafeDestination names it and the fix)."""
    durable_file.refuse_outside(os.path.dirname(path), directory)
    try:
        with bounded_read.open_regular(path, follow=False) as stream:
            return stream.read(), stat.S_IMODE(os.fstat(stream.fileno()).st_mode)
    except bounded_read.RefusedFile as refusal:
        raise durable_file.UnsafeDestination(path, refusal.cause)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise durable_file.UnsafeDestination(path, '%s is a symbolic link; the report never reads or writes '
                                                       'through a link' % path)
        raise
