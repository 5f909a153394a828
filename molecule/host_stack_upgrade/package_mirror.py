"""A throwaway HTTP(S)-mirror stand-in for the host_stack_upgrade scenario.

`start` serves a package directory read-only on one address of the controller (the one the
nodes know the controller by) on a free port, in the background, and logs every request as
`<unix time> <client> <method> <path> <status>` to `access.log` in the state directory;
`stop` ends it. The state directory holds `mirror.json` (pid, address, port) and the log.
Only the standard library: it runs with the controller's Python.
"""
import argparse
import functools
import http.server
import json
import os
import signal
import sys
import time
from pathlib import Path

STATE_FILE = "mirror.json"
ACCESS_LOG = "access.log"


class LoggingHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files and writes one parseable line per request (http.server's own goes to stderr)."""

    access_log = None

    def log_request(self, code="-", size="-"):
        line = "%.3f %s %s %s %s\n" % (time.time(), self.client_address[0], self.command, self.path, int(code))
        with open(self.access_log, "a", encoding="utf-8") as log:
            log.write(line)

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        # Errors are already in the access log with their status; nothing reads stderr.
        pass


def read_state(state_dir):
    try:
        return json.loads((state_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def is_our_server(pid, state_dir):
    """True when pid is still this script serving this state directory (pids get reused)."""
    try:
        argv = [os.fsdecode(arg) for arg in Path("/proc/%d/cmdline" % pid).read_bytes().split(b"\0")]
    except OSError:
        return False
    this_script = Path(__file__).resolve()
    runs_this_script = any(arg.endswith(".py") and Path(arg).resolve() == this_script for arg in argv)
    serves_this_state = any(before == "--state-dir" and Path(arg).resolve() == state_dir
                            for before, arg in zip(argv, argv[1:]))
    return runs_this_script and serves_this_state


def start(args):
    state_dir = Path(args.state_dir).resolve()
    state_dir.mkdir(parents=True, exist_ok=True)
    state = read_state(state_dir)
    if state and is_our_server(state["pid"], state_dir):
        print(json.dumps(dict(state, started=False)))
        return 0
    root = Path(args.root).resolve()
    if not root.is_dir():
        sys.stderr.write("package_mirror: %s is not a directory\n" % root)
        return 1
    LoggingHandler.access_log = str(state_dir / ACCESS_LOG)
    handler = functools.partial(LoggingHandler, directory=str(root))
    # Bound before forking so that a wrong address fails this command, not a detached child.
    server = http.server.ThreadingHTTPServer((args.bind, args.port), handler)
    port = server.server_address[1]
    pid = os.fork()
    if pid == 0:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        try:
            server.serve_forever()
        finally:
            os._exit(0)
    server.socket.close()
    state = {"pid": pid, "address": args.bind, "port": port, "root": str(root)}
    (state_dir / STATE_FILE).write_text(json.dumps(state) + "\n", encoding="utf-8")
    print(json.dumps(dict(state, started=True)))
    return 0


def stop(args):
    state_dir = Path(args.state_dir).resolve()
    state = read_state(state_dir)
    stopped = False
    if state and is_our_server(state["pid"], state_dir):
        os.kill(state["pid"], signal.SIGTERM)
        deadline = time.monotonic() + 10
        while is_our_server(state["pid"], state_dir) and time.monotonic() < deadline:
            time.sleep(0.1)
        stopped = True
    if state:
        (state_dir / STATE_FILE).unlink()
    print(json.dumps({"stopped": stopped}))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    start_parser = commands.add_parser("start", help="serve ROOT on BIND:PORT in the background")
    start_parser.add_argument("--root", required=True, help="directory to serve")
    start_parser.add_argument("--bind", required=True, help="controller address to listen on")
    start_parser.add_argument("--port", type=int, default=0, help="0 (the default) picks a free port")
    start_parser.add_argument("--state-dir", required=True)
    stop_parser = commands.add_parser("stop", help="stop the server started with this state directory")
    stop_parser.add_argument("--state-dir", required=True)
    args = parser.parse_args(argv)
    return start(args) if args.command == "start" else stop(args)


if __name__ == "__main__":
    sys.exit(main())
