"""`lcm dsh install`: one fenced block in the profile's patch file, idempotent, others untouched."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lcm_adapter.cli.main import cli
from lcm_adapter.dsh import plugin_path
from lcm_adapter.dsh.patch import BEGIN, END, PatchError, PluginRow, merge, render_block

# What DSH writes into a profile it creates.
TEMPLATE = (
    "# Your patch layer for this dsh profile, applied after every bundle layer:\n"
    "# a top-level YAML array of loader patch entries.\n"
    "[]\n"
)
USER_ROWS = "- id: time-context\n  config:\n    timeZone: Asia/Shanghai  # 北京时间\n"


def install(home: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["dsh", "install", "--dsh-home", str(home), *args])
    return result.exit_code, result.stdout, result.stderr


def patch_file(home: Path, profile: str = "web") -> Path:
    return home / "profiles" / profile / "cordis.patch.yml"


def test_fresh_home_gets_a_patch_with_python_and_database(tmp_path: Path) -> None:
    """With no profile folder yet, the file is created with the plugin, Python and db path."""
    code, out, _ = install(tmp_path / "dsh")
    assert code == 0 and "updated" in out
    text = patch_file(tmp_path / "dsh").read_text(encoding="utf-8")
    assert BEGIN in text and END in text
    assert f'name: "{plugin_path()}"' in text
    assert f'python: "{sys.executable}"' in text
    assert f'db: "{tmp_path / "dsh" / "long-conversation-memory" / "memory.sqlite"}"' in text


def test_rerun_is_byte_identical(tmp_path: Path) -> None:
    """A second install changes nothing and says so."""
    install(tmp_path, "--profile", "sdk-minimal")
    first = patch_file(tmp_path, "sdk-minimal").read_bytes()
    code, out, _ = install(tmp_path, "--profile", "sdk-minimal")
    assert code == 0 and "already up to date" in out
    assert patch_file(tmp_path, "sdk-minimal").read_bytes() == first


def test_the_empty_template_list_is_replaced_and_comments_kept(tmp_path: Path) -> None:
    """DSH's `[]` becomes our block list; its comment lines stay."""
    target = patch_file(tmp_path)
    target.parent.mkdir(parents=True)
    target.write_text(TEMPLATE, encoding="utf-8")
    install(tmp_path)
    text = target.read_text(encoding="utf-8")
    assert text.startswith(TEMPLATE.split("[]")[0]) and "[]" not in text


def test_other_rows_are_left_alone(tmp_path: Path) -> None:
    """A user's own rows before and after the block survive an update byte for byte."""
    target = patch_file(tmp_path)
    target.parent.mkdir(parents=True)
    target.write_text(USER_ROWS, encoding="utf-8")
    install(tmp_path, "--python", "/opt/py/bin/python")
    target.write_text(target.read_text(encoding="utf-8") + "- id: sandbox\n  disabled: true\n")
    install(tmp_path, "--python", "/usr/bin/python3.12")
    text = target.read_text(encoding="utf-8")
    assert text.startswith(USER_ROWS) and text.endswith("- id: sandbox\n  disabled: true\n")
    assert text.count(BEGIN) == 1 and "/opt/py" not in text and "/usr/bin/python3.12" in text


def test_explicit_database_and_commands_service(tmp_path: Path) -> None:
    """--db is written as given; --with-commands inserts the commands service too."""
    result = CliRunner().invoke(
        cli,
        [
            "--db",
            "/data/记忆.sqlite",
            "dsh",
            "install",
            "--dsh-home",
            str(tmp_path),
            "--with-commands",
        ],
    )
    assert result.exit_code == 0
    text = patch_file(tmp_path).read_text(encoding="utf-8")
    assert 'db: "/data/记忆.sqlite"' in text
    assert 'name: "@deepseek-ai/dsh-commands"' in text


def test_settings_from_config_file_go_into_the_row(tmp_path: Path) -> None:
    """`lcm --config FILE dsh install` writes the settings as a JSON flow mapping."""
    settings = tmp_path / "settings.json"
    settings.write_text(
        json.dumps({"assembly": {"softBudgetTokens": 1200}, "host": {"preStepDeadlineMs": 800}}),
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        cli, ["--config", str(settings), "dsh", "install", "--dsh-home", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    text = patch_file(tmp_path).read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.strip().startswith("settings:"))
    assert json.loads(line.split("settings:", 1)[1]) == {
        "assembly": {"softBudgetTokens": 1200},
        "host": {"preStepDeadlineMs": 800},
    }


def test_print_writes_nothing(tmp_path: Path) -> None:
    """--print shows the resulting file and leaves the disk alone."""
    code, out, _ = install(tmp_path, "--print")
    assert code == 0 and BEGIN in out and not (tmp_path / "profiles").exists()


@pytest.mark.parametrize(
    ("existing", "complaint"),
    [
        ("- id: long-conversation-memory\n  config: {}\n", "unmanaged"),
        ("[{id: sandbox, disabled: true}]\n", "block-style"),
        (f"{BEGIN}\n- insert: []\n", "damaged"),
    ],
)
def test_unsafe_files_are_refused_with_one_line(
    tmp_path: Path, existing: str, complaint: str
) -> None:
    """What text editing cannot handle safely is refused, and the file is not touched."""
    target = patch_file(tmp_path)
    target.parent.mkdir(parents=True)
    target.write_text(existing, encoding="utf-8")
    code, _, err = install(tmp_path)
    assert code == 1 and complaint in err and err.count("\n") == 1
    assert target.read_text(encoding="utf-8") == existing


def test_bad_profile_name_is_refused(tmp_path: Path) -> None:
    """A profile name cannot climb out of the profiles folder."""
    code, _, err = install(tmp_path, "--profile", "../etc")
    assert code == 1 and "invalid profile name" in err


def test_merge_keeps_crlf_rows_of_others() -> None:
    """Line endings of the user's rows are preserved."""
    block = render_block(PluginRow(plugin=Path("/p/plugin.mjs"), python="/py"))
    merged = merge("- id: a\r\n  disabled: true\r\n", block)
    assert merged.startswith("- id: a\r\n  disabled: true\r\n") and merged.endswith(END + "\n")
    with pytest.raises(PatchError):
        merge(f"{END}\n{BEGIN}\n", block)
