"""Every command, option, file, link and name that README.md and docs/ show is real.

Modelled on sqlite-utils' docs test: the pages are read, every `lcm ...` command in
them is resolved against the click tree (subcommands, options, choices), every
`python benchmarks/...` option against the script, every `tox -e` env against tox.ini,
every extra against pyproject.toml, every relative link and anchor against the files,
and every repository path and dotted name against the checkout. Renaming a command or
an option without the docs fails here, naming the page and line.
"""

from __future__ import annotations

import configparser
import importlib
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from docs_markdown import (
    README,
    ROOT,
    Claim,
    anchors,
    code_spans,
    links,
    pages,
    shell_lines,
    split_commands,
    words,
)

from lcm_adapter.cli.main import cli, register_all

register_all()

_PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*(\.\.\.)?$|^\.\.\.$|^<.*>$")
_REPO_PATH = re.compile(
    r"^(lcm_core|lcm_adapter|lcm_store_\w+|tests|benchmarks|docs|\.ci)/[\w./*-]*$"
)
_DOTTED = re.compile(r"^(lcm_core|lcm_adapter|lcm_store_\w+)(\.\w+)+$")
_PYTHON = ("python", "python3", ".venv/bin/python")


def _spans() -> Iterator[Claim]:
    for page in pages():
        yield from code_spans(page)


def _commands() -> Iterator[Claim]:
    """Every command a page shows: inline spans and shell lines, env assignments cut."""
    for page in pages():
        spans = (Claim(c.page, c.line, p) for c in code_spans(page) for p in split_commands(c.text))
        for claim in [*spans, *shell_lines(page)]:
            argv = words(claim.text)
            while argv and re.match(r"^[A-Z_]+=", argv[0]):
                argv = argv[1:]
            if any(argv):  # a span of only quotes (`""`, an empty default) is no command
                yield Claim(claim.page, claim.line, " ".join(argv))


def _program(claim: Claim) -> str:
    first = words(claim.text)[0]
    return Path(first).name if "/" in first else first


def _lcm_commands() -> list[Claim]:
    return [c for c in _commands() if _program(c) == "lcm" and len(words(c.text)) > 1]


def _option(command: click.Command, name: str) -> click.Parameter | None:
    for param in command.params:
        if isinstance(param, click.Option) and name in (*param.opts, *param.secondary_opts):
            return param
    return None


def _check_choice(param: click.Parameter, value: str, where: str) -> None:
    if isinstance(param.type, click.Choice) and not _PLACEHOLDER.match(value):
        for choice in value.strip("[]").split("|"):
            assert choice in param.type.choices, (
                f"{where}: {choice!r} is not a choice of {param.name}"
            )


def resolve(text: str, where: str) -> click.Command:
    """Walk `lcm ...` through the click tree; any unknown command, option or choice fails."""
    tokens = [t.strip("[]") for t in words(text)[1:]]
    command: click.Command = cli
    path = "lcm"
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if token.startswith("-") and len(token) > 1:
            name, _, inline = token.partition("=")
            if name in ("-h", "--help"):
                continue
            param = _option(command, name)
            assert param is not None, f"{where}: `{path}` has no option {name}"
            takes_value = not (param.is_flag or param.count)  # type: ignore[attr-defined]
            if takes_value and not inline and index < len(tokens):
                _check_choice(param, tokens[index], where)
                index += 1
        elif isinstance(command, click.Group):
            if _PLACEHOLDER.match(token) or not token:
                break
            names = token.split("|")
            for name in names:
                assert name in command.commands, f"{where}: `{path}` has no command {name!r}"
            command = command.commands[names[0]]
            path = f"{path} {names[0]}"
    return command


@pytest.mark.parametrize("claim", _lcm_commands(), ids=Claim.where)
def test_every_lcm_command_shown_exists_with_its_options(claim: Claim) -> None:
    resolve(claim.text, claim.where())


def _python_scripts() -> list[Claim]:
    found = []
    for claim in _commands():
        argv = words(claim.text)
        if _program(claim) in _PYTHON and len(argv) > 1 and argv[1].endswith(".py"):
            found.append(Claim(claim.page, claim.line, " ".join(argv[1:])))
    return found


@pytest.mark.parametrize("claim", _python_scripts(), ids=Claim.where)
def test_every_script_shown_exists_and_takes_its_options(claim: Claim) -> None:
    script, *args = words(claim.text)
    path = ROOT / script
    assert path.is_file(), f"{claim.where()}: no script {script}"
    source = path.read_text(encoding="utf-8")
    for arg in args:
        name = arg.strip("[]").partition("=")[0]
        if name.startswith("--"):
            assert f'"{name}"' in source, f"{claim.where()}: {script} takes no {name}"


def _tox_envs() -> set[str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / "tox.ini", encoding="utf-8")
    named = {s.split(":", 1)[1] for s in parser.sections() if s.startswith("testenv:")}
    listed = {e.strip() for e in parser.get("tox", "envlist").split(",")}
    return named | listed


def test_the_tox_envs_readme_runs_exist() -> None:
    shown = [c for c in _commands() if _program(c) == "tox" and "-e" in words(c.text)]
    assert any(c.page == README for c in shown), "README.md shows no tox command"
    known = _tox_envs()
    for claim in shown:
        argv = words(claim.text)
        envs = argv[argv.index("-e") + 1].split(",")
        missing = [env for env in envs if env not in known]
        assert not missing, f"{claim.where()}: tox.ini has no env {missing}"


def test_every_extra_shown_is_declared() -> None:
    extras = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    )
    shown = 0
    for page in pages():
        text = page.read_text(encoding="utf-8")
        for match in re.finditer(r"(?:long-conversation-memory|\.)\[([\w,-]+)\]", text):
            for extra in match.group(1).split(","):
                shown += 1
                assert extra in extras, f"{page.name}: no extra {extra!r} in pyproject.toml"
    assert shown, "no extra is shown anywhere"


@pytest.mark.parametrize(
    "claim",
    [c for p in pages() for c in links(p) if not re.match(r"^[a-z]+:", c.text)],
    ids=Claim.where,
)
def test_every_relative_link_and_anchor_resolves(claim: Claim) -> None:
    target, _, anchor = claim.text.partition("#")
    path = (claim.page.parent / target).resolve() if target else claim.page
    assert path.exists(), f"{claim.where()}: {target} does not exist"
    if anchor:
        assert path.suffix == ".md", f"{claim.where()}: an anchor into {path.name}"
        assert anchor in anchors(path), f"{claim.where()}: {path.name} has no heading #{anchor}"


def test_readme_links_every_docs_page_and_stays_short() -> None:
    linked = {(README.parent / c.text.partition("#")[0]).resolve() for c in links(README) if c.text}
    for page in pages()[1:]:
        assert page.resolve() in linked, f"README.md does not link {page.relative_to(ROOT)}"
    assert len(README.read_text(encoding="utf-8").splitlines()) < 300


@pytest.mark.parametrize(
    "claim", [c for c in _spans() if _REPO_PATH.match(c.text)], ids=Claim.where
)
def test_every_repository_path_shown_exists(claim: Claim) -> None:
    assert any(ROOT.glob(claim.text.rstrip("/"))), f"{claim.where()}: no {claim.text}"


def _dotted_names() -> list[Claim]:
    found = []
    for claim in _spans():
        name = re.sub(r"\(.*$", "", claim.text)
        if _DOTTED.match(name):
            found.append(Claim(claim.page, claim.line, name))
    return found


@pytest.mark.parametrize("claim", _dotted_names(), ids=Claim.where)
def test_every_dotted_name_shown_imports(claim: Claim) -> None:
    parts = claim.text.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            assert hasattr(value, attribute), f"{claim.where()}: {claim.text} does not exist"
            value = getattr(value, attribute)
        return
    pytest.fail(f"{claim.where()}: no module for {claim.text}")
