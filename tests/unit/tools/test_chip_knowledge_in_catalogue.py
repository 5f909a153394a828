# -*- coding: utf-8 -*-
"""No chip knowledge outside the hardware catalogue (issue 41): `grep -ri 910b plugins roles`, and the same
for every chip spelling the catalogue lists (its families, npu-smi chip names, package spellings and vNPU
families), finds code only in the catalogue.

Every other hit must be documentation (a docstring, a comment, a module's DOCUMENTATION, EXAMPLES or
RETURN, a filter's documentation file, a role's argument_specs, a Markdown page) or be allowed below with
the reason."""
import ast
import io
import os
import re
import tokenize

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hardware_catalogue

from ansible_collections.npu.ascend.plugins.module_utils.packages import compat_matrix

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _chip_spellings():
    spellings = set(hardware_catalogue.VNPU_FAMILIES)
    for row in hardware_catalogue.CHIP_FAMILIES:
        spellings.add(row['family'])
        spellings.update(row['npu_smi_names'])
        if row['package_chip']:
            spellings.add(row['package_chip'])
    return spellings


CHIP_SPELLINGS = _chip_spellings()
# A spelling as a word of its own: 910b in Ascend-hdk-910b-npu-driver, not in 0x1910b or a commit hash.
CHIP = re.compile(r'(?<![A-Za-z0-9])(%s)(?![A-Za-z0-9])'
                  % '|'.join(re.escape(name) for name in sorted(CHIP_SPELLINGS, key=len, reverse=True)), re.IGNORECASE)
CATALOGUE = 'plugins/module_utils/hardware/hardware_catalogue.py'
DOCUMENTATION_FILES = re.compile(r'^(plugins/(filter|test|lookup)/[^/]+\.yml|roles/[^/]+/meta/argument_specs\.yml|.*\.md)$')
ALLOWED = {
    # The compatibility rows name the families each published statement covers; they stay with the
    # matrix (its families are held to the catalogue's below).
    'plugins/module_utils/packages/compat_matrix.py':
        'compatibility rows: the families a published statement covers',
    # Messages that show the user an example value of npu_ascend_chip.
    'plugins/plugin_utils/preflight_checks.py': 'an example value in a message',
    'roles/packages/tasks/bundle.yml': 'an example value in a message',
    # Constant copies of catalogue columns (a filter would cost a plugin load per task);
    # tests/unit/tools/test_roles_read_the_catalogue.py holds them equal to the catalogue.
    'roles/device_plugin/vars/main.yml': "the catalogue's accelerator -> suffix, resource (held equal by a test)",
    'roles/exporter/vars/main.yml': "the catalogue's accelerator labels (held equal by a test)",
}


def _documentation_lines(path, text):
    """Lines of a Python file that are docstrings, comments or the module's DOCUMENTATION/EXAMPLES/RETURN."""
    lines = set()
    tree = ast.parse(text, path)
    for node in ast.walk(tree):
        body = getattr(node, 'body', None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            lines.update(range(body[0].lineno, body[0].end_lineno + 1))
        if isinstance(node, ast.Assign) and any(isinstance(target, ast.Name) and target.id in
                                                ('DOCUMENTATION', 'EXAMPLES', 'RETURN') for target in node.targets):
            lines.update(range(node.lineno, node.end_lineno + 1))
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            lines.add(token.start[0])
    return lines


def _comment_lines(text):
    """Lines of a YAML file or template that are comments only (``#`` or a Jinja ``{# #}`` comment)."""
    lines = set()
    in_jinja_comment = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if in_jinja_comment or stripped.startswith('#') or stripped.startswith('{#'):
            lines.add(number)
            if stripped.startswith('{#'):
                in_jinja_comment = True
        if in_jinja_comment and stripped.endswith('#}'):
            in_jinja_comment = False
    return lines


def _knowledge_hits(root=REPO, allowed=None):
    allowed = ALLOWED if allowed is None else allowed
    hits = []
    for top in ('plugins', 'roles'):
        for directory, _dirs, files in os.walk(os.path.join(root, top)):
            for name in files:
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, root).replace(os.sep, '/')
                if relative == CATALOGUE or relative in allowed or DOCUMENTATION_FILES.match(relative):
                    continue
                try:
                    with open(path, encoding='utf-8') as handle:
                        text = handle.read()
                except UnicodeDecodeError:
                    continue
                if not CHIP.search(text):
                    continue
                documentation = _documentation_lines(relative, text) if name.endswith('.py') else _comment_lines(text)
                for number, line in enumerate(text.splitlines(), 1):
                    if CHIP.search(line) and number not in documentation:
                        hits.append('%s:%d: %s' % (relative, number, line.strip()))
    return hits


def test_grep_finds_chip_knowledge_only_in_the_catalogue():
    assert _knowledge_hits() == []


def test_every_spelling_the_catalogue_lists_is_looked_for():
    for row in hardware_catalogue.CHIP_FAMILIES:
        for name in (row['family'],) + tuple(row['npu_smi_names']):
            assert CHIP.fullmatch(name), name
    for spelling in ('910b', '910B3', 'Ascend910', '910C1', '310P3', 'A3', '910B-inference'):
        assert CHIP.fullmatch(spelling), spelling
    for not_a_chip in ('0x1910b', 'Ascend910x', 'vir05_1c_16g', 'A30'):
        assert not CHIP.search(not_a_chip), not_a_chip


@pytest.mark.parametrize('line', ["if chip == '910B3':", "    family = 'A3' if dies == 2 else None",
                                  "resource: huawei.com/Ascend910", "  when: npu_chip is match('310p')"])
def test_a_chip_decision_outside_the_catalogue_is_found(tmp_path, line):
    """The check itself: a decision naming a chip is a hit, the same words in documentation are not."""
    module = tmp_path / 'plugins' / 'module_utils'
    module.mkdir(parents=True)
    (module / 'decides.py').write_text('"""Reads 910b and A3 chips (documentation)."""\n# 310P: a comment\n'
                                       'DOCUMENTATION = """for example 910B4"""\n', encoding='utf-8')
    tasks = tmp_path / 'roles' / 'some_role' / 'tasks'
    tasks.mkdir(parents=True)
    (tasks / 'main.yml').write_text('---\n# the 910 plugin: a comment\n{# A3: a Jinja comment #}\n', encoding='utf-8')
    assert _knowledge_hits(str(tmp_path), {}) == []
    (tasks / 'main.yml').write_text('---\n%s\n' % line, encoding='utf-8')
    assert _knowledge_hits(str(tmp_path), {}) == ['roles/some_role/tasks/main.yml:2: %s' % line.strip()]


def test_the_allowed_files_still_need_their_place():
    for relative in ALLOWED:
        with open(os.path.join(REPO, relative), encoding='utf-8') as handle:
            assert CHIP.search(handle.read()), '%s no longer names a chip: remove it from ALLOWED' % relative


def test_the_compatibility_rows_name_catalogue_families_and_products():
    families = set(row['family'] for row in hardware_catalogue.CHIP_FAMILIES)
    products = set(row['name'] for row in hardware_catalogue.PRODUCTS)
    for row in compat_matrix.COMPAT_MATRIX:
        assert set(row.get('chip_families', ())) <= families, row
        assert set(row.get('products', ())) <= products, row
