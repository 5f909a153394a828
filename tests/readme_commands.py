"""Print the commands of a README.md console block marked `<!-- ci: NAME ... -->`, one per line.

The lines of the fenced block right after the marker that start with `$ ` are the commands a user
types; the scenario that runs them (molecule/example/create.yml for `readme-install`) runs exactly
these, so the README cannot drift from what CI does. Exits 1 when the marker or block is missing.
"""
import re
import sys


def commands(text, name):
    marker = re.search(r'^[ \t]*<!-- ci: %s\b.*-->[ \t]*\n[ \t]*```console\n(.*?)^[ \t]*```' % re.escape(name),
                       text, re.MULTILINE | re.DOTALL)
    if not marker:
        return None
    return [line.strip()[2:] for line in marker.group(1).splitlines() if line.strip().startswith('$ ')]


def main(argv):
    path, name = argv
    with open(path, encoding='utf-8') as handle:
        found = commands(handle.read(), name)
    if not found:
        sys.stderr.write('%s has no console block marked <!-- ci: %s -->\n' % (path, name))
        return 1
    print('\n'.join(found))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
