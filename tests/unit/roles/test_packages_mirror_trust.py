# -*- coding: utf-8 -*-
"""roles/packages (resolve entry point) against a local plain-http mirror that records every request.

Proves in Ansible itself, not only in the filter, that an untrusted mirror is refused before
anything (SHA256SUMS included) is requested, that pinned checksums or the explicit opt-in let
the run proceed, and that credentials never show in the output, even with -vvv.
"""
import base64
import hashlib
import http.server
import os
import subprocess
import sys
import threading

import pytest

from conftest import COLLECTIONS_ROOT, playbook_binary

TOOLKIT = 'Ascend-cann-toolkit_8.2.RC1_linux-x86_64.run'
PASSWORD = 'Pa55-w0rd-never-shown'

PLAYBOOK = '''
- name: Resolve the packages from the mirror
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Resolve
      ansible.builtin.include_role:
        name: npu.ascend.packages
        tasks_from: resolve
      vars:
        packages_components: [{component: toolkit, version: 8.2.RC1}]
        packages_arch: x86_64
        packages_chip: ""
    - name: Show the verdict
      ansible.builtin.debug:
        msg: "RESOLVED {{ packages_resolved | map(attribute='problem') | list }} {{ packages_resolved | map(attribute='sha256') | list }}"
'''


class _Mirror(http.server.SimpleHTTPRequestHandler):
    requests = []

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        self.requests.append((self.command, self.path, self.headers.get('Authorization')))


@pytest.fixture
def mirror(tmp_path):
    root = tmp_path / 'mirror'
    root.mkdir()
    package = root / TOOLKIT
    package.write_bytes(b'#!/bin/sh\nexit 0\n')
    digest = hashlib.sha256(package.read_bytes()).hexdigest()
    (root / 'SHA256SUMS').write_text('%s  %s\n' % (digest, TOOLKIT))
    _Mirror.requests = []

    def handler(*args, **kwargs):
        return _Mirror(*args, directory=str(root), **kwargs)

    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield {'url': 'http://127.0.0.1:%d' % server.server_address[1], 'sha256': digest, 'requests': _Mirror.requests,
           'tmp': tmp_path}
    server.shutdown()
    server.server_close()


def run(mirror, extra, verbose=False):
    playbook = mirror['tmp'] / 'resolve.yml'
    playbook.write_text(PLAYBOOK)
    variables = mirror['tmp'] / 'vars.yml'
    lines = ['packages_source_dir: ""', 'ansible_python_interpreter: %s' % sys.executable]
    for key, value in extra.items():
        lines.append('%s: %s' % (key, value))
    variables.write_text('\n'.join(lines) + '\n')
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_ROOT, ANSIBLE_NOCOLOR='1',
               ANSIBLE_LOCALHOST_WARNING='0', ANSIBLE_INVENTORY_UNPARSED_WARNING='0', LC_ALL='C.UTF-8',
               no_proxy='127.0.0.1', NO_PROXY='127.0.0.1')
    argv = [playbook_binary(), '-i', 'localhost,', '-c', 'local', '-e', '@%s' % variables, str(playbook)]
    if verbose:
        argv.append('-vvv')
    completed = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               universal_newlines=True, timeout=300, check=False)
    # The default callback folds long messages over several lines; compare them unfolded.
    return completed.returncode, ' '.join(completed.stdout.split())


def test_plain_http_without_pins_is_refused_before_any_request(mirror):
    rc, out = run(mirror, {'packages_mirror_url': mirror['url']})
    assert rc != 0, out
    assert 'localhost: package mirror: packages_mirror_url %s is plain http://' % mirror['url'] in out
    assert 'packages_mirror_allow_insecure=true' in out and 'RESOLVED' not in out
    assert mirror['requests'] == []


def test_plain_http_with_every_checksum_pinned_never_reads_the_mirrors_sums(mirror):
    rc, out = run(mirror, {'packages_mirror_url': mirror['url'],
                           'packages_sha256sums': '{"%s": "%s"}' % (TOOLKIT, mirror['sha256'])})
    assert rc == 0, out
    assert "RESOLVED [''] ['%s']" % mirror['sha256'] in out and 'WARNING localhost' not in out
    assert [(method, path) for method, path, _auth in mirror['requests']] == [('HEAD', '/' + TOOLKIT)]


def test_plain_http_with_the_opt_in_proceeds_with_a_warning(mirror):
    rc, out = run(mirror, {'packages_mirror_url': mirror['url'], 'packages_mirror_allow_insecure': 'true'})
    assert rc == 0, out
    assert 'WARNING localhost: package mirror: packages from %s are fetched over plain http://' % mirror['url'] in out, out
    assert "RESOLVED [''] ['%s']" % mirror['sha256'] in out
    assert ('GET', '/SHA256SUMS') in [(method, path) for method, path, _auth in mirror['requests']]


def test_credentials_in_the_url_are_refused_and_never_shown(mirror):
    url = mirror['url'].replace('http://', 'http://alice:%s@' % PASSWORD)
    rc, out = run(mirror, {'packages_mirror_url': url, 'packages_mirror_allow_insecure': 'true'}, verbose=True)
    assert rc != 0, out
    assert 'carries credentials in the URL' in out and 'packages_mirror_password' in out
    assert PASSWORD not in out
    assert mirror['requests'] == []


def test_credential_options_reach_the_mirror_and_never_the_output(mirror):
    rc, out = run(mirror, {'packages_mirror_url': mirror['url'], 'packages_mirror_allow_insecure': 'true',
                           'packages_mirror_username': 'alice', 'packages_mirror_password': PASSWORD}, verbose=True)
    assert rc == 0, out
    expected = 'Basic ' + base64.b64encode(('alice:' + PASSWORD).encode()).decode()
    assert mirror['requests'] and all(auth == expected for _method, _path, auth in mirror['requests'])
    assert PASSWORD not in out


def test_a_file_name_that_leaves_the_staging_directory_is_refused(mirror):
    playbook_vars = {'packages_mirror_url': mirror['url'], 'packages_mirror_allow_insecure': 'true'}
    rc, out = run(mirror, playbook_vars)
    assert rc == 0, out
    mirror['requests'].clear()
    (mirror['tmp'] / 'resolve.yml').unlink()
    global PLAYBOOK  # pylint: disable=global-statement
    saved = PLAYBOOK
    PLAYBOOK = saved.replace('{component: toolkit, version: 8.2.RC1}',
                             '{component: toolkit, version: 8.2.RC1, file_name: "../../etc/cron.d/%s"}' % TOOLKIT)
    try:
        rc, out = run(mirror, playbook_vars)
    finally:
        PLAYBOOK = saved
    assert rc != 0, out
    assert 'toolkit package: the package file name' in out and 'contains a directory separator' in out
    assert mirror['requests'] == []


def test_a_source_dir_that_does_not_exist_is_named_as_such(mirror):
    missing = mirror['tmp'] / 'no-such-dir'
    rc, out = run(mirror, {'packages_source_dir': str(missing)})
    assert rc == 0, out
    assert ('RESOLVED [\'packages_source_dir %s does not exist on the controller' % missing) in out, out
    assert 'not found in' not in out
    (mirror['tmp'] / 'a-file').write_text('x')
    rc, out = run(mirror, {'packages_source_dir': str(mirror['tmp'] / 'a-file')})
    assert rc == 0, out
    assert 'a-file is not a directory on the controller' in out, out


def test_a_mirror_list_giving_the_package_a_second_sha256_stops_the_run_naming_both(mirror):
    """Issue 40, class 5: a line appended to the mirror's SHA256SUMS no longer decides what runs as root."""
    sums = mirror['tmp'] / 'mirror' / 'SHA256SUMS'
    sums.write_text(sums.read_text() + '%s  %s\n' % ('f' * 64, TOOLKIT))
    rc, out = run(mirror, {'packages_mirror_url': mirror['url'], 'packages_mirror_allow_insecure': 'true'})
    assert rc != 0 and 'RESOLVED' not in out, out
    # ansible-core before 2.19 prints the message in YAML's single quotes, doubling the quotes inside it.
    assert "%s/SHA256SUMS gives '%s' two different sha256: line 1 has %s, line 2 has %s" % (
        mirror['url'], TOOLKIT, mirror['sha256'], 'f' * 64) in out.replace("''", "'"), out


def test_a_mirror_list_in_the_bsd_tag_format_is_read(mirror):
    (mirror['tmp'] / 'mirror' / 'SHA256SUMS').write_text('SHA256 (%s) = %s\n' % (TOOLKIT, mirror['sha256']))
    rc, out = run(mirror, {'packages_mirror_url': mirror['url'], 'packages_mirror_allow_insecure': 'true'})
    assert rc == 0, out
    assert "RESOLVED [''] ['%s']" % mirror['sha256'] in out, out
