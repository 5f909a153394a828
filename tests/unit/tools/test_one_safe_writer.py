# -*- coding: utf-8 -*-
"""The safe writer (plugins/module_utils/files/durable_file.py) is the only way the collection writes a file.

An AST walk over every Python file of plugins/ refuses what writes a file by another way: open() (builtin,
io.open, os.fdopen) for writing, os.open with a writing flag, os.rename/os.replace, shutil's copies and
moves, pathlib's write_text/write_bytes, tempfile's files, tarfile/zipfile opened for writing by name,
AnsibleModule's backup_local and atomic_move.
Each exception is listed in ALLOWED with the reason it cannot go through the writer.
"""
import ast
import os

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLUGINS = os.path.join(REPO_ROOT, 'plugins')
SAFE_WRITER = os.path.join('plugins', 'module_utils', 'files', 'durable_file.py')
WRITING_FLAGS = {'O_WRONLY', 'O_RDWR', 'O_CREAT', 'O_APPEND', 'O_TRUNC'}
MOVES = {('os', 'rename'), ('os', 'replace'), ('os', 'renames'), ('os', 'link'), ('os', 'symlink'),
         ('shutil', 'copy'), ('shutil', 'copy2'), ('shutil', 'copyfile'), ('shutil', 'copytree'), ('shutil', 'move'),
         ('shutil', 'copyfileobj'), ('tempfile', 'mkstemp'), ('tempfile', 'NamedTemporaryFile'),
         ('tempfile', 'TemporaryFile'), ('tempfile', 'SpooledTemporaryFile')}
# AnsibleModule's own writers: backup_local copies (shutil.copy2) to a predictable name, following a link
# planted there; atomic_move is handed to the safe writer as its ``move`` instead of being called.
ANSIBLE_WRITERS = ('backup_local', 'atomic_move', 'preserved_copy')
# (file, what): why it cannot go through the safe writer. Keep it short; every entry is a file written by hand.
ALLOWED = {
    # The node lock: its inode is what flock holds, so it is opened in place (O_RDWR|O_CREAT|O_NOFOLLOW, a link
    # there is not followed) and its holder line rewritten in place; a rename would hand the next waiter another
    # inode, and two runs would both hold "the" lock.
    ('plugins/module_utils/files/node_lock.py', 'os.open for writing'),
}


def _name(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _name(node.value)
        return '%s.%s' % (base, node.attr) if base else node.attr
    return None


def _constant(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _argument(call, position, keyword):
    for item in call.keywords:
        if item.arg == keyword:
            return item.value
    return call.args[position] if len(call.args) > position else None


def _writing_mode(call, position):
    mode = _argument(call, position, 'mode')
    if mode is None:
        return False
    text = _constant(mode)
    # A mode that is not a literal may be a writing one: refused too.
    return text is None or any(letter in text for letter in 'wax+')


def findings(path, source):
    """(line, what) of each way ``source`` writes a file other than the safe writer."""
    found = []
    for node in ast.walk(ast.parse(source, path)):
        if isinstance(node, ast.Attribute) and (_name(node.value), node.attr) in MOVES:
            # A reference counts as much as a call: move=os.rename hands the rename to someone else.
            found.append((node.lineno, '%s.%s' % (_name(node.value), node.attr)))
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        if name in ('open', 'io.open', 'codecs.open') and _writing_mode(node, 1):
            found.append((node.lineno, 'open for writing'))
        elif name == 'os.fdopen' and _writing_mode(node, 1):
            found.append((node.lineno, 'os.fdopen for writing'))
        elif name == 'os.open' and len(node.args) > 1 and any(
                isinstance(flag, ast.Attribute) and flag.attr in WRITING_FLAGS for flag in ast.walk(node.args[1])):
            found.append((node.lineno, 'os.open for writing'))
        elif name in ('tarfile.open', 'zipfile.ZipFile', 'gzip.open', 'bz2.open', 'lzma.open') and _writing_mode(
                node, 1) and _argument(node, 99, 'fileobj') is None:
            found.append((node.lineno, '%s for writing' % name))
        elif isinstance(node.func, ast.Attribute) and node.func.attr in ('write_text', 'write_bytes', 'touch'):
            found.append((node.lineno, 'pathlib %s' % node.func.attr))
        elif isinstance(node.func, ast.Attribute) and node.func.attr in ANSIBLE_WRITERS:
            found.append((node.lineno, 'AnsibleModule.%s' % node.func.attr))
    return found


def _plugin_files():
    for directory, _dirs, files in os.walk(PLUGINS):
        for name in sorted(files):
            if name.endswith('.py'):
                path = os.path.join(directory, name)
                yield os.path.relpath(path, REPO_ROOT), path


def test_no_plugin_writes_a_file_but_through_the_safe_writer():
    found = []
    for relative, path in _plugin_files():
        if relative == SAFE_WRITER:
            continue
        with open(path, encoding='utf-8') as handle:
            for line, what in findings(relative, handle.read()):
                if (relative, what) not in ALLOWED:
                    found.append('%s:%d: %s' % (relative, line, what))
    assert found == [], 'write these through plugins/module_utils/files/durable_file.py (or list them, with the reason, ' \
                        'in ALLOWED):\n' + '\n'.join(found)


def test_every_allowed_exception_is_still_there():
    """An entry of ALLOWED that no longer matches is taken out, so the list stays the truth."""
    seen = set()
    for relative, path in _plugin_files():
        with open(path, encoding='utf-8') as handle:
            seen.update((relative, what) for _line, what in findings(relative, handle.read()))
    assert ALLOWED - seen == set()


@pytest.mark.parametrize('source', [
    "open(path, 'w').write(x)",
    "open(path, mode='ab')",
    "open(path, 'r+b')",
    "open(path, chosen_mode)",
    "io.open(path, 'x')",
    "os.fdopen(fd, 'wb')",
    "os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)",
    "os.rename(a, b)",
    "os.replace(a, b)",
    "def f(move=os.rename): pass",
    "shutil.copy2(a, b)",
    "shutil.move(a, b)",
    "tempfile.mkstemp(dir=d)",
    "tarfile.open(path, 'w:gz')",
    "tarfile.open(name=path, mode='w')",
    "pathlib.Path(p).write_text('x')",
    "module.backup_local(path)",
    "module.atomic_move(a, b)",
])
def test_the_walk_sees_each_way_of_writing(source):
    assert findings('example.py', source), source


@pytest.mark.parametrize('source', [
    "open(path, 'rb')",
    "open(path)",
    "os.open(path, os.O_RDONLY | os.O_NOFOLLOW)",
    "tarfile.open(fileobj=stream, mode='w:gz')",
    "text.replace('a', 'b')",
    "shutil.rmtree(d)",
    "tarfile.open(path)",
])
def test_the_walk_lets_reading_be(source):
    assert findings('example.py', source) == [], source
