"""A real OCI registry for the tests: the CNCF distribution registry that tests/k8s/build.sh builds from
its Go module, on a free loopback port, over TLS with a certificate from a private CA made with
openssl (or over plain HTTP when asked), storing in a temporary directory.

    with registry.running(tmp_path) as served:
        served.url, served.address, served.ca_file, served.other_ca_file

Standard library only; every failure is a RegistryHarnessError with the registry's log.
"""

import contextlib
import os
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUILD_SCRIPT = HERE / 'build.sh'
READY_TIMEOUT_SECONDS = 30
OPENSSL_TIMEOUT_SECONDS = 60


class RegistryHarnessError(Exception):
    pass


def binary_path():
    output = subprocess.run(['bash', str(BUILD_SCRIPT), '--paths'], stdout=subprocess.PIPE, check=True,
                            universal_newlines=True, timeout=60).stdout
    paths = dict(line.split('=', 1) for line in output.splitlines() if '=' in line)
    return paths['REGISTRY']


def _free_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def _openssl(*args, cwd):
    subprocess.run(['openssl'] + list(args), cwd=str(cwd), check=True, timeout=OPENSSL_TIMEOUT_SECONDS,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ, LC_ALL='C'))


def make_ca(directory, name):
    """(CA certificate, CA key) of a new private CA in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    _openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=%s' % name,
             '-keyout', 'ca.key', '-out', 'ca.crt', cwd=directory)
    return directory / 'ca.crt', directory / 'ca.key'


def make_server_certificate(directory, ca_cert, ca_key):
    """(certificate, key) for 127.0.0.1 signed by the CA."""
    (directory / 'san.ext').write_text('subjectAltName=IP:127.0.0.1,DNS:localhost\n')
    _openssl('req', '-new', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'server.key',
             '-out', 'server.csr', cwd=directory)
    _openssl('x509', '-req', '-in', 'server.csr', '-CA', str(ca_cert), '-CAkey', str(ca_key), '-CAcreateserial',
             '-days', '2', '-extfile', 'san.ext', '-out', 'server.crt', cwd=directory)
    return directory / 'server.crt', directory / 'server.key'


class Served:
    def __init__(self, address, scheme, ca_file, other_ca_file, storage, log):
        self.address, self.scheme = address, scheme
        self.url = '%s://%s' % (scheme, address)
        self.ca_file, self.other_ca_file, self.storage, self.log = ca_file, other_ca_file, storage, log

    def get(self, path, accept=None):
        """(status, headers, body) of a GET to the registry, verified against its CA."""
        context = ssl.create_default_context(cafile=str(self.ca_file)) if self.scheme == 'https' else None
        request = urllib.request.Request(self.url + path, headers={'Accept': accept} if accept else {})
        try:
            with urllib.request.urlopen(request, timeout=20, context=context) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()


@contextlib.contextmanager
def running(state_dir, tls=True, htpasswd=None):
    """A registry serving until the block ends; with ``htpasswd`` ({user: bcrypt hash}) it asks for
    Basic authentication."""
    state_dir = Path(state_dir)
    pki = state_dir / 'pki'
    ca_cert, ca_key = make_ca(pki / 'ca', 'npu-ascend test registry CA')
    other_ca_cert, _other_key = make_ca(pki / 'other', 'a CA that signed nothing here')
    port = _free_port()
    storage = state_dir / 'storage'
    storage.mkdir(parents=True, exist_ok=True)
    lines = ['version: 0.1', 'log:', '  level: info', 'storage:', '  filesystem:',
             '    rootdirectory: %s' % storage, 'http:', '  addr: 127.0.0.1:%d' % port]
    if tls:
        certificate, key = make_server_certificate(pki / 'ca', ca_cert, ca_key)
        lines += ['  tls:', '    certificate: %s' % certificate, '    key: %s' % key]
    if htpasswd:
        (state_dir / 'htpasswd').write_text(''.join('%s:%s\n' % item for item in sorted(htpasswd.items())))
        lines += ['auth:', '  htpasswd:', '    realm: npu-ascend-test', '    path: %s' % (state_dir / 'htpasswd')]
    config = state_dir / 'config.yml'
    config.write_text('\n'.join(lines) + '\n')
    log = state_dir / 'registry.log'
    with open(str(log), 'wb') as log_stream:
        process = subprocess.Popen([binary_path(), 'serve', str(config)], stdout=log_stream, stderr=subprocess.STDOUT,
                                   start_new_session=True, env=dict(os.environ, LC_ALL='C', OTEL_TRACES_EXPORTER='none'))
    served = Served('127.0.0.1:%d' % port, 'https' if tls else 'http', ca_cert, other_ca_cert, storage, log)
    try:
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while True:
            if process.poll() is not None:
                raise RegistryHarnessError('the registry exited %s:\n%s' % (process.returncode, log.read_text()))
            try:
                if served.get('/v2/')[0] in (200, 401):
                    break
            except (OSError, urllib.error.URLError):
                pass
            if time.monotonic() > deadline:
                raise RegistryHarnessError('the registry did not answer /v2/ within %d s:\n%s'
                                           % (READY_TIMEOUT_SECONDS, log.read_text()))
            time.sleep(0.2)
        yield served
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=20)
