"""Every role's ``<role>_install_path`` follows the one shared ``ascend_install_path`` (issue 16)."""

from pathlib import Path

import pytest
import yaml

ROLES = Path(__file__).resolve().parents[3] / "roles"
DEFAULTS = sorted(path for path in ROLES.glob("*/defaults/main.yml")
                  if "%s_install_path" % path.parent.parent.name in (yaml.safe_load(path.read_text()) or {}))


def test_some_roles_have_an_install_path():
    assert len(DEFAULTS) >= 9


@pytest.mark.parametrize("path", DEFAULTS, ids=lambda path: path.parent.parent.name)
def test_install_path_defaults_to_the_shared_variable(path):
    role = path.parent.parent.name
    default = yaml.safe_load(path.read_text())["%s_install_path" % role]
    assert "ascend_install_path" in default, "%s_install_path is %r" % (role, default)
