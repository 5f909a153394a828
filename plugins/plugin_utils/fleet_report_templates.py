# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report as Markdown and HTML, from Jinja2 templates an operator can replace.

The collection's templates are in ``roles/fleet_report/templates`` (found from this file's
path, so an installed collection uses its own). A template of the same name in the operator's
directory (``fleet_report_template_dir``) comes first; it can also extend the collection's one
as ``builtin/<name>`` and replace only some of its blocks. HTML templates escape every value
(autoescape); Markdown templates escape with the ``md`` filter. Controller side only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import hashlib
import os

from jinja2 import ChoiceLoader, FileSystemLoader, PrefixLoader, StrictUndefined, TemplateError
from jinja2.sandbox import SandboxedEnvironment
from markupsafe import Markup

from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_report as report_lib

TEMPLATES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                             'roles', 'fleet_report', 'templates')
TEMPLATES = {'markdown': 'fleet-report.md.j2', 'html': 'fleet-report.html.j2'}


def csp_hash(text):
    """The Content-Security-Policy source of an inline script: ``'sha256-<base64 of its digest>'`` (quotes and
    base64 only, so it is safe in HTML as it is)."""
    digest = hashlib.sha256(str(text).encode('utf-8')).digest()
    return Markup("'sha256-%s'" % base64.b64encode(digest).decode('ascii'))


class ReportTemplateError(ValueError):
    """A template that is missing or does not render, named with its directory and line."""


def _environment(fmt, template_dir, builtin_dir):
    search = [FileSystemLoader(template_dir)] if template_dir else []
    search.append(FileSystemLoader(builtin_dir))
    search.append(PrefixLoader({'builtin': FileSystemLoader(builtin_dir)}))
    environment = SandboxedEnvironment(loader=ChoiceLoader(search), undefined=StrictUndefined,
                                       autoescape=(fmt == 'html'), trim_blocks=True, lstrip_blocks=True,
                                       keep_trailing_newline=True)
    environment.filters['md'] = report_lib.markdown_text
    environment.filters['csp_hash'] = csp_hash
    return environment


def render(report, fmt, title='NPU fleet report', template_dir=None, builtin_dir=None):
    """The report as Markdown or HTML text.

    ``template_dir``: the operator's directory of templates, searched first (optional; it must
    exist when given). ``builtin_dir``: the collection's templates (for tests).
    """
    if fmt not in TEMPLATES:
        raise ReportTemplateError('no template for the format %r (templates exist for %s)'
                                  % (fmt, ', '.join(sorted(TEMPLATES))))
    if template_dir and not os.path.isdir(template_dir):
        raise ReportTemplateError('the template directory %s does not exist on the controller' % template_dir)
    name = TEMPLATES[fmt]
    try:
        template = _environment(fmt, template_dir, builtin_dir or TEMPLATES_DIR).get_template(name)
        return template.render(view=report_lib.report_view(report), report=report, title=title,
                               statuses=report_lib.STATUS_WORDS)
    except TemplateError as error:
        where = getattr(error, 'filename', None) or name
        line = getattr(error, 'lineno', None)
        raise ReportTemplateError('template %s%s: %s: %s'
                                  % (where, (' line %s' % line) if line else '', type(error).__name__, error))


def render_format(report, fmt, template_dir=None):
    """The report in ``fmt``: Markdown and HTML from the templates (the operator's directory first),
    JSON and JUnit XML from fleet_report. A template that does not render raises ReportTemplateError
    naming the fix; an unknown format, ValueError."""
    if fmt not in TEMPLATES:
        return report_lib.render(report, fmt)
    try:
        return render(report, fmt, template_dir=template_dir or None)
    except ReportTemplateError as error:
        raise ReportTemplateError('%s. Fix: correct the template in fleet_report_template_dir (%s), or leave '
                                  'fleet_report_template_dir empty for the built-in templates'
                                  % (error, template_dir or 'not set'))
