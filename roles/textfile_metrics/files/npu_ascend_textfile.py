# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write the NPU state ``npu-smi info`` shows as a Prometheus textfile for node_exporter.

Installed by the npu.ascend ``textfile_metrics`` role next to copies of the collection's
``npu_smi.py`` (the parser of ``npu_smi_info``) and ``npu_metrics.py`` (the renderer), and run
by a systemd timer as ``python3 npu_ascend_textfile.py --output <dir>/npu_ascend.prom``.

The file is replaced atomically (a temporary file in the same directory, then a rename), so
node_exporter never reads half of it. When npu-smi fails the file still gets written, with
``npu_ascend_textfile_scrape_success 0``: a broken driver shows up in Prometheus instead of
leaving the last good values in place. The exit status is non-zero only when the file could
not be written.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import npu_metrics  # noqa: E402  (installed next to this file)
import npu_smi  # noqa: E402  (installed next to this file)

NPU_SMI_DIRS = ('/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin')


def find_npu_smi(explicit=None):
    """The npu-smi to run: the given path, else the first one in PATH or the driver's directories."""
    if explicit:
        return explicit
    directories = [entry for entry in os.environ.get('PATH', '').split(os.pathsep) if entry]
    for directory in directories + [entry for entry in NPU_SMI_DIRS if entry not in directories]:
        candidate = os.path.join(directory, 'npu-smi')
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def read_npu_smi(binary, timeout):
    """Run ``npu-smi info``; returns (parsed info, None) or (None, the failure)."""
    if binary is None:
        return None, 'npu-smi not found in PATH or %s; is the NPU driver installed?' % ', '.join(NPU_SMI_DIRS)
    environment = dict(os.environ, LC_ALL='C', LANG='C')
    try:
        completed = subprocess.run([binary, 'info'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=environment, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, '%s info did not finish within %s seconds' % (binary, timeout)
    except OSError as error:
        return None, 'cannot run %s: %s' % (binary, error)
    out = completed.stdout.decode('utf-8', 'replace')
    err = completed.stderr.decode('utf-8', 'replace')
    failure = npu_smi.detect_error(out + '\n' + err)
    if failure is not None:
        return None, failure
    if completed.returncode != 0:
        return None, '%s info exited with %d: %s' % (binary, completed.returncode,
                                                     (err or out).strip() or 'no output')
    try:
        return npu_smi.parse_info(out), None
    except npu_smi.NpuSmiError as error:
        return None, error
    except ValueError as error:
        return None, 'cannot read the output of %s info: %s' % (binary, error)


def write_atomically(path, text):
    """Replace ``path`` with ``text`` through a temporary file in the same directory (mode 0644)."""
    directory = os.path.dirname(os.path.abspath(path))
    # Not ending in .prom, so node_exporter skips it while it is being written.
    handle, temporary = tempfile.mkstemp(prefix='.%s.' % os.path.basename(path), suffix='.tmp', dir=directory)
    try:
        with os.fdopen(handle, 'w') as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--output', required=True, help='the .prom file to write')
    parser.add_argument('--npu-smi', dest='npu_smi', help='npu-smi binary (default: searched)')
    parser.add_argument('--timeout', type=float, default=60.0, help='seconds npu-smi info may take')
    args = parser.parse_args(argv)

    info, failure = read_npu_smi(find_npu_smi(args.npu_smi), args.timeout)
    if failure is not None:
        print('npu-ascend-textfile-metrics: %s' % failure, file=sys.stderr)
    text = npu_metrics.render(info, scrape_time=time.time(), error=failure)
    try:
        write_atomically(args.output, text)
    except OSError as error:
        print('npu-ascend-textfile-metrics: cannot write %s: %s' % (args.output, error), file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
