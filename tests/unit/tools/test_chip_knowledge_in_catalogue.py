# -*- coding: utf-8 -*-
"""`grep -ri 910b plugins roles` finds chip knowledge only in the hardware catalogue (issue 41).

Every other hit must be documentation (a docstring, a comment, a module's DOCUMENTATION, EXAMPLES or
RETURN, a filter's documentation file, a role's argument_specs) or be allowed below with the reason."""
import ast
import io
import os
import re
import tokenize

from ansible_collections.npu.ascend.plugins.module_utils import compat_matrix, hardware_catalogue

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CHIP = re.compile(r'910b', re.IGNORECASE)
CATALOGUE = 'plugins/module_utils/hardware_catalogue.py'
DOCUMENTATION_FILES = re.compile(r'^(plugins/(filter|test|lookup)/[^/]+\.yml|roles/[^/]+/meta/argument_specs\.yml)$')
ALLOWED = {
    # The compatibility rows name the families each published statement covers; they stay with the
    # matrix (its families are held to the catalogue's below).
    'plugins/module_utils/compat_matrix.py':
        'compatibility rows: the families a published statement covers',
    # Messages that show the user an example value of npu_ascend_chip.
    'plugins/plugin_utils/preflight_checks.py': 'an example value in a message',
    'roles/packages/tasks/bundle.yml': 'an example value in a message',
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


def _knowledge_hits():
    hits = []
    for top in ('plugins', 'roles'):
        for directory, _dirs, files in os.walk(os.path.join(REPO, top)):
            for name in files:
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, REPO).replace(os.sep, '/')
                if relative == CATALOGUE or relative in ALLOWED or DOCUMENTATION_FILES.match(relative):
                    continue
                try:
                    with open(path, encoding='utf-8') as handle:
                        text = handle.read()
                except UnicodeDecodeError:
                    continue
                if not CHIP.search(text):
                    continue
                documentation = _documentation_lines(relative, text) if name.endswith('.py') else set()
                for number, line in enumerate(text.splitlines(), 1):
                    if CHIP.search(line) and number not in documentation:
                        hits.append('%s:%d: %s' % (relative, number, line.strip()))
    return hits


def test_grep_910b_finds_chip_knowledge_only_in_the_catalogue():
    assert _knowledge_hits() == []


def test_the_allowed_files_still_need_their_place():
    for relative in ALLOWED:
        with open(os.path.join(REPO, relative), encoding='utf-8') as handle:
            assert CHIP.search(handle.read()), '%s no longer names 910b: remove it from ALLOWED' % relative


def test_the_compatibility_rows_name_catalogue_families_and_products():
    families = set(row['family'] for row in hardware_catalogue.CHIP_FAMILIES)
    products = set(row['name'] for row in hardware_catalogue.PRODUCTS)
    for row in compat_matrix.COMPAT_MATRIX:
        assert set(row.get('chip_families', ())) <= families, row
        assert set(row.get('products', ())) <= products, row
