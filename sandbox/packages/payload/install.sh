#!/bin/sh
# Started by makeself from the extracted package directory with the installer's options.
# The simulated installer is Python (as allowed for the sandbox); fail like a shell
# installer would when the interpreter is missing.
cd "$(dirname "$0")" || exit 1
if ! command -v python3 >/dev/null 2>&1; then
    # unverified wording: CANN needs python3; Huawei's exact message is not known.
    echo "[ERROR] python3 is not installed, install python3 and try again."
    exit 1
fi
exec python3 -B ./installer.py "$@"
