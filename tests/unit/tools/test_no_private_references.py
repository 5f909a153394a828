# -*- coding: utf-8 -*-
"""What ships cites only what its users have: Huawei's public sources or the collection's own docs/.

The facts behind the roles were first gathered in a development document that is not part of the
collection; a message, module doc or comment that sends a user to it ("the facts reference,
section 7") sends them nowhere. docs/huawei-sources.md holds those facts with their public sources.
"""

import os
import re

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SHIPPED = ('plugins', 'roles', 'playbooks', 'docs', 'README.md')
# The development document's name, the way it was cited, and where it lives on the build machines.
# Comment markers may stand between the words when a comment folds the phrase over two lines.
FORBIDDEN = re.compile(r'facts[\s#*/]+reference|ascend-stack\.md|/work/shared', re.IGNORECASE)
SKIPPED_DIRS = frozenset(['__pycache__', '.cache', '.pytest_cache'])


def _shipped_files():
    for entry in SHIPPED:
        path = os.path.join(REPO_ROOT, entry)
        if os.path.isfile(path):
            yield path
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = [name for name in dirs if name not in SKIPPED_DIRS]
            for name in files:
                if not name.endswith(('.pyc', '.pyo')):
                    yield os.path.join(root, name)


def private_references(paths):
    """``path:line: text`` for every line of ``paths`` that cites the private document."""
    found = []
    for path in paths:
        with open(path, 'rb') as handle:
            text = handle.read().decode('utf-8', 'replace')
        # Joined across line breaks too: a comment folds "facts\nreference" as easily as not.
        for match in FORBIDDEN.finditer(text):
            line = text.count('\n', 0, match.start()) + 1
            found.append('%s:%d: %s' % (os.path.relpath(path, REPO_ROOT), line, match.group(0)))
    return found


def test_nothing_shipped_cites_the_private_facts_document():
    found = private_references(_shipped_files())
    assert not found, ('cite Huawei\'s public source or docs/huawei-sources.md instead:\n' + '\n'.join(found))


def test_the_check_sees_a_citation_folded_over_two_lines(tmp_path):
    sample = tmp_path / 'sample.py'
    sample.write_text('# what the facts\n# reference says, section 7\nx = 1  # see /work/shared/reference\n')
    assert [item.split(': ', 1)[0].rsplit(':', 1)[1] for item in private_references([str(sample)])] == ['1', '3']
    sample.write_text('"""Parsers (facts\n    reference section 5)."""\n')
    assert len(private_references([str(sample)])) == 1
