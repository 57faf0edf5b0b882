"""Every command and Python example of the README and of the docs pages works as written.

The commands are taken from the pages themselves: their bash blocks, and the `keras-simplicial`,
`python -m`, `echo` and `make` commands in their text. Each `keras-simplicial` command parses,
each `make` target exists, each benchmark script exists and takes the options it is shown with.
The slow test runs the quick commands in order, in an empty directory, with arguments appended
that shrink them (fewer steps, episodes and boards): the last value of an option wins, so the
pages' own arguments are the ones exercised otherwise. The docs site itself is built, strictly,
by `make docs` in `make test`.
"""

import contextlib
import glob
import importlib.util
import io
import json
import os
import re
import runpy
import shlex
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
import yaml

import keras_simplicial_cli as cli

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# The README first (the site's home page), then the docs pages, then the studies' pages.
DOCS = sorted((ROOT / "docs").glob("*.md"))
STUDY_PAGES = sorted((ROOT / "studies").glob("*/*.md"))
PAGES = [README, *DOCS, *STUDY_PAGES]
# An upper-case word stands for a value the reader fills in (`--out RUN`), so such a span describes
# a command rather than being one; `...` elides arguments.
PLACEHOLDER = re.compile(r"(?<![\w-])(?!IMPALA\b)[A-Z][A-Z_]*\b")
SPAN = re.compile(r"`((?:keras-simplicial|python -m|echo|make|time make) [^`]+)`")
# Shell variables set before a command (`KERAS_BACKEND=tensorflow python ...`).
ASSIGNMENT = re.compile(r"^(?:[A-Z_]+=\S+\s+)+")


def page_name(path):
    return str(path.relative_to(ROOT))


def blocks(text, language):
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def page_commands(path):
    """The shell commands of a page, in order (comments dropped, continuations joined)."""
    text = path.read_text(encoding="utf-8")
    commands = []
    for block in blocks(text, "bash"):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split(" #")[0].strip()
            if line:
                commands.append(" ".join(line.split()))
    for span in SPAN.findall(text):
        command = " ".join(span.split())
        if command.startswith(("make ", "time make ")) or not PLACEHOLDER.search(command):
            commands.append(command)
    return commands


def all_commands():
    """(page, command) for every page."""
    return [(page_name(path), command) for path in PAGES for command in page_commands(path)]


def keras_simplicial_commands():
    """(page, command, argv) of each `keras-simplicial` command that has arguments."""
    found = []
    for page, command in all_commands():
        words = shlex.split(command)
        # A bare `keras-simplicial train` names the command, it does not run it.
        if words[0] == "keras-simplicial" and len(words) > 2 and "..." not in command:
            found.append((page, command, words[1:]))
    return found


def make_commands():
    found = []
    for page, command in all_commands():
        command = command.removeprefix("time ")
        if command.startswith("make "):
            found.append((page, shlex.split(command)[1:]))
    return found


def benchmark_commands():
    """(page, script, argv) of each command that runs a script of benchmarks/ or studies/."""
    found = []
    for page, command in all_commands():
        words = shlex.split(ASSIGNMENT.sub("", command))
        if (
            len(words) > 1
            and words[0].endswith("python")
            and words[1].startswith(("benchmarks/", "studies/"))
        ):
            found.append((page, words[1], words[2:]))
    return found


def _ids(items):
    return [f"{item[0]}: {' '.join(map(str, item[1:]))}"[:80] for item in items]


def test_the_readme_starts_with_the_two_set_up_commands():
    (first_block, *_) = blocks(README.read_text(encoding="utf-8"), "bash")
    assert [line.split(" #")[0].strip() for line in first_block.splitlines()] == [
        "make train",
        "make test",
    ]
    assert page_commands(README)[:2] == ["make train", "make test"]


def _words(text):
    """`text` with its whitespace folded (a Markdown paragraph wraps anywhere)."""
    return " ".join(text.split())


def _readme_findings():
    """The README's "What we found" items, each with the text of the pages it links."""
    section = README.read_text(encoding="utf-8").split("## What we found", 1)[1]
    items = [item.split("\n\n")[0] for item in section.split("\n## ", 1)[0].split("\n- ")[1:]]
    found = []
    for item in items:
        links = re.findall(r"\]\(((?:studies|docs)/[\w/-]+\.md)", item)
        sources = " ".join(_words((ROOT / link).read_text(encoding="utf-8")) for link in links)
        found.append((_words(item), links, sources))
    return found


def test_the_readmes_findings_are_short_and_each_number_is_in_its_study():
    """The README summarises the studies in at most ten lines: each item links its study, and each
    number it gives (win rates, step counts, board sizes) and each "agent rate" pair is there."""
    section = README.read_text(encoding="utf-8").split("## What we found", 1)[1]
    lines = section.split("\n## ", 1)[0].strip().splitlines()
    assert len(lines) <= 10, lines
    findings = _readme_findings()
    assert len(findings) >= 5
    for item, links, source in findings:
        assert links and all(link.startswith("studies/") for link in links), item
        numbers = re.findall(r"(?<![\w.])\d+(?:\.\d+|(?:-\d+)+|M\b| x \d+)", item)
        numbers += re.findall(r"\b\d+ of \d+\b", item)
        for number in numbers:
            spelled = f"{int(number[:-1]) * 1_000_000:,}" if number.endswith("M") else number
            assert number in source or spelled in source, (links, number)
        for agent, rate in re.findall(r"(relational|simplicial) (\d\.\d+)", item):
            assert f"{agent} {rate}" in source, (links, agent, rate)


def test_the_docs_show_every_command():
    shown = {argv[0] for _, _, argv in keras_simplicial_commands()}
    assert shown >= {
        "train",
        "evaluate",
        "export-policy",
        "plot",
        "visualize",
        "explain",
        "probe",
        "inventory",
        "plot-types",
        "policy-map",
        "errors",
        "imitate",
        "dagger",
        "held-keys",
        "play",
        "reproduce",
    }


@pytest.mark.parametrize("page, command, argv", keras_simplicial_commands(), ids=_ids)
def test_each_command_parses(page, command, argv):
    cli.build_parser().parse_args(argv)


def _documented_model(argv):
    """The model config a new run of the documented command `argv` trains (jit_compile left
    out), or None for a command that starts no run from a preset."""
    from keras_simplicial.agents.commands.arguments import given_run_arguments
    from keras_simplicial.agents.commands.experiments import given_dagger_settings
    from keras_simplicial.agents.imitation.dagger_config import DaggerConfig
    from keras_simplicial.agents.training.run_arguments import RunArguments

    if argv[0] not in ("train", "sweep", "reproduce", "dagger") or "--resume" in argv:
        return None
    args = cli.build_parser().parse_args(argv)
    if argv[0] == "dagger":
        model = DaggerConfig.from_preset(**given_dagger_settings(args)).model_overrides
    else:
        model = RunArguments.from_preset(args.preset, **given_run_arguments(args)).model_overrides
    return {key: value for key, value in model.items() if key != "jit_compile"}


def test_each_documented_command_that_made_committed_runs_trains_their_model():
    """A command a page gives for runs that are committed (its --out holds their run.json) trains
    the model they trained, whatever the presets' model is now: a run.json holds what its
    --model-config changed of the architecture's defaults, a preset's own model included. A plan
    written before its runs (a pre-registration) stays as it was committed: its study's page gives
    the command that reproduces them."""
    from keras_simplicial.agents.model.model_config import with_architecture_defaults

    checked, failed = [], []
    for page, command in all_commands():
        if page.endswith(("preregistration.md", "plan.md")):
            continue
        words = shlex.split(command)
        if Path(words[0]).name != "keras-simplicial" or "..." in command:
            continue  # `keras-simplicial` or `.venv/bin/keras-simplicial`
        argv = words[1:]
        model = _documented_model(argv) if "--out" in argv else None
        out = ROOT / argv[argv.index("--out") + 1] if model is not None else None
        runs = sorted(out.glob("run.json")) + sorted(out.glob("*/run.json")) if out else []
        for run in runs:
            trained = json.loads(run.read_text(encoding="utf-8"))["model_overrides"]
            trained = {key: value for key, value in trained.items() if key != "jit_compile"}
            if model != with_architecture_defaults(trained):
                failed.append((page, command, str(run.relative_to(ROOT))))
            checked.append(run)
    assert failed == []
    # The pages' commands of bridge-small's stages, bridge-medium's pilots, the bridge-medium
    # DAgger pilot and the new stack's bridge-small runs, at least.
    assert len(checked) >= 20


@pytest.mark.parametrize("page, argv", make_commands(), ids=_ids)
def test_each_make_target_exists(page, argv):
    result = subprocess.run(["make", "-n", *argv], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, (page, argv, result.stderr)


@pytest.mark.parametrize("page, script, argv", benchmark_commands(), ids=_ids)
def test_each_benchmark_command_names_a_script_and_its_options(page, script, argv):
    source = (ROOT / script).read_text(encoding="utf-8")
    # A study's command may be the `main` of a package module, a benchmark's --markdown and
    # --json come from `add_output_arguments` (and a training benchmark's --model-config from
    # `add_model_argument`), an engine benchmark's --presets, --agents and --seconds from
    # `add_engine_arguments`: their options are written there.
    imported = (
        r"^ *from (keras_simplicial\.[\w.]+) import \(?\s*[\w,\s]*"
        r"\b(?:main|add_output_arguments|add_engine_arguments|add_model_argument)\b"
    )
    for module in re.findall(imported, source, flags=re.M):
        source += Path(importlib.util.find_spec(module).origin).read_text(encoding="utf-8")
    for option in (word for word in argv if word.startswith("--")):
        assert f'"{option}"' in source, (page, script, option)


def test_make_train_runs_a_command_that_parses():
    dry_run = subprocess.run(
        ["make", "-n", "train"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    (line,) = [
        line
        for line in dry_run.replace("\\\n", " ").splitlines()
        if "keras-simplicial train" in line
    ]
    cli.build_parser().parse_args(shlex.split(line.split("keras-simplicial", 1)[1]))


def test_the_site_lists_every_page_and_links_the_readme_into_it():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))

    def pages(nav):
        for entry in nav:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            yield from pages(value) if isinstance(value, list) else [value]

    listed = set(pages(config["nav"]))
    # Pages left at the old address of a page that moved into studies/, each a pointer there.
    pointers = {line.strip().lstrip("/") for line in config["not_in_nav"].splitlines()}
    for name in pointers:
        assert "../studies/" in (ROOT / "docs" / name).read_text(encoding="utf-8"), name
    # index.md is the README and cli.md the parser's reference, both written by the build.
    assert listed == {path.name for path in DOCS} - pointers | {"index.md", "cli.md"}
    # The README links every page a reader of the repository can open, and every study.
    readme = README.read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)", readme))
    assert linked == listed - {"index.md", "cli.md"}
    studies = {path.parent.name for path in STUDY_PAGES}
    assert set(re.findall(r"\]\(studies/([\w-]+)/README\.md", readme)) == studies


def test_the_studies_section_lists_every_study_page():
    hook = _hook("studies")
    entries = hook.nav_entries()

    def uris(nav):
        for entry in nav:
            value = next(iter(entry.values()))
            yield from uris(value) if isinstance(value, list) else [value]

    assert set(uris(entries)) == {page.relative_to(ROOT).as_posix() for page in STUDY_PAGES}
    assert hook.study_markdown("[a](../../docs/agents.md) [b](../../README.md)") == (
        "[a](../../agents.md) [b](../../index.md)"
    )
    assert hook.docs_markdown("[s](../studies/x/README.md)") == "[s](studies/x/README.md)"


def test_the_docs_build_fails_on_a_broken_link(tmp_path):
    """`make docs`'s own command, on a copy of the sources whose one page links nowhere: it fails,
    naming the link."""
    dry_run = subprocess.run(
        ["make", "-n", "docs"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    (command,) = [line for line in dry_run.splitlines() if "mkdocs build" in line]
    copy = tmp_path / "copy"
    copy.mkdir()
    ignore = shutil.ignore_patterns("__pycache__")
    for name in ("keras_simplicial", "envs", "agents", "docs", "studies"):
        shutil.copytree(ROOT / name, copy / name, ignore=ignore)
    for name in ("README.md", "mkdocs.yml", "keras_simplicial_cli.py"):
        shutil.copy(ROOT / name, copy / name)
    command = command.replace(".venv/bin/", f"{Path(sys.executable).parent}/")
    # The copy as it is builds: `make docs` builds the same sources strictly before this suite.
    with open(copy / "docs" / "layers.md", "a", encoding="utf-8") as page:
        page.write("\nSee [nowhere](nowhere.md).\n")
    broken = subprocess.run(command, shell=True, cwd=copy, capture_output=True, text=True)
    assert broken.returncode != 0 and "nowhere.md" in broken.stderr


def _hook(name):
    """A hook of docs/hooks/ (a file mkdocs loads by path, not a module of the package)."""
    return types.SimpleNamespace(**runpy.run_path(str(ROOT / "docs" / "hooks" / f"{name}.py")))


def test_the_command_line_reference_holds_every_command_and_option_of_the_parser():
    reference = _hook("cli_reference").cli_reference()
    parser = cli.build_parser()
    (subparsers,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    for name, subparser in subparsers.choices.items():
        section = reference.split(f"## `{name}` {{#{name}}}", 1)[1].split("\n## ", 1)[0]
        for action in subparser._actions:
            if "--help" in action.option_strings:
                continue
            for option in action.option_strings:
                assert f"`{option}`" in section, (name, option)
            if action.help and "%(" not in action.help:
                assert action.help.replace("<", "&lt;").replace(">", "&gt;") in section.replace(
                    "\\|", "|"
                ), (name, action.dest)


def test_the_maths_hook_writes_mathml_and_warns_on_what_it_cannot_convert(caplog):
    maths = _hook("maths")
    maths.log.addHandler(caplog.handler)  # mkdocs's loggers do not propagate to the root
    page = type("Page", (), {"file": type("File", (), {"src_path": "p.md"})()})()
    html = maths.on_page_content(
        '<p><span class="arithmatex">\\(a^2\\)</span></p>'
        '<div class="arithmatex">\\[\\langle p, l \\rangle\\]</div>',
        page,
        None,
        None,
    )
    assert html.count("<math") == 2 and "arithmatex" not in html
    assert not caplog.records
    maths.on_page_content('<span class="arithmatex">\\(\\notacommand x\\)</span>', page, None, None)
    assert "\\notacommand" in caplog.text


# Appended to each command in the slow test: tiny sizes, the pages' arguments otherwise.
TINY_RUN = [
    "--stop-timesteps",
    "240",
    "--num-envs-per-env-runner",
    "8",
    "--evaluate",
    "8",
    "--checkpoint-every",
    "1",
    "--progress",
    "none",
    "--env-config",
    json.dumps({"max_solution_length": 1, "max_steps": 20}),
    "--config",
    json.dumps(
        {"train_batch_size": 80, "rollout_fragment_length": 10, "min_time_s_per_iteration": 0}
    ),
    "--model-config",
    json.dumps({"jit_compile": False}),
]
# Long episodes for the step the docs draw: no bridge, nothing fatal, three boxes to open.
LONG_EPISODE = [
    "--env-config",
    json.dumps({"max_solution_length": 3, "bridge_probability": 0.0, "max_steps": 20}),
]
TINY = {
    "train": TINY_RUN,
    "train --resume": ["--stop-timesteps", "400", "--progress", "none"],
    "evaluate": ["--episodes", "16", "--num-envs", "8"],
    "visualize": ["--max-steps", "20", *LONG_EPISODE],
    "explain": ["--max-steps", "20"],
    "probe": ["--episodes", "8", "--num-envs", "4", "--max-steps", "20"],
    "inventory": ["--episodes", "16", "--num-envs", "8", "--max-steps", "40"],
    "imitate": ["--episodes", "20", "--epochs", "1", "--games", "8"],
    "held-keys-budget": ["--train-size", "16", "--test-size", "8", "--max-updates", "2"]
    + ["--eval-every", "1"],
    "held-keys": ["--sizes", "16", "--test-size", "8", "--max-updates", "2", "--starts", "1"],
    "dagger": ["--oracle-episodes", "4", "--episodes-per-round", "4", "--rounds", "1"]
    + ["--max-epochs", "1", "--validation-episodes", "4", "--horizon", "20"],
}
# Commands that train for hours whatever their arguments (both agents x several seeds): they parse
# here, and their parts run at toy sizes in tests/agents/experiments/ and test_cluster.py.
PARSED_ONLY = {"reproduce", "sweep"}


@pytest.mark.slow
def test_every_documented_command_and_example_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for page, command, argv in keras_simplicial_commands():
        if argv[0] in PARSED_ONLY or PLACEHOLDER.search(command):
            continue
        name = "train --resume" if argv[:2] == ["train", "--resume"] else argv[0]
        argv = [*argv, *TINY.get(name, [])]
        _create_what_the_command_reads(argv)
        argv = [match for word in argv for match in (sorted(glob.glob(word)) or [word])]
        if name == "play":
            monkeypatch.setattr(sys, "stdin", io.StringIO("l l j q"))
        assert cli.main(argv) == 0, (page, command, capsys.readouterr().err)
        capsys.readouterr()
    for page, command in all_commands():
        if "python -m" in command:
            # With the environment's Python first on PATH, as after `source .venv/bin/activate`.
            environment = {
                **os.environ,
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            }
            result = subprocess.run(
                command,
                shell=True,
                input="q",
                capture_output=True,
                text=True,
                timeout=300,
                env=environment,
            )
            assert result.returncode == 0 and "episodes" in result.stdout, (page, result.stderr)

    for path in PAGES:
        namespace = {}  # the examples of one page build on each other
        for block in blocks(path.read_text(encoding="utf-8"), "python"):
            # Tiny sizes: no rollout worker processes for the IMPALA example.
            code = block.replace("num_env_runners=4", "num_env_runners=0")
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(code, page_name(path), "exec"), namespace)
        if "algo" in namespace:
            namespace["algo"].stop()
    import ray

    ray.shutdown()


# Commands whose runs/ folders, named without --out, are what they write (made by them, or
# resumed: another command's run there is refused).
WRITE_THEIR_FOLDERS = {"train", "held-keys-budget"}


def _create_what_the_command_reads(argv):
    """Runs and reports the docs name without making them first: copies of the first run."""
    first_run = Path("runs/s1")
    if argv[:2] == ["train", "--resume"] and first_run.exists():
        out = Path(argv[argv.index("--out") + 1])  # a run of the docs, such as a pilot's
        if not out.exists():
            shutil.copytree(first_run, out)
    for before, word in zip([None, *argv], argv):
        if before in ("--out", "--output"):
            continue  # what the command writes
        if (
            word.startswith("runs/")
            and "*" not in word
            and not Path(word).exists()
            and first_run.exists()
            and argv[0] not in WRITE_THEIR_FOLDERS
        ):
            shutil.copytree(first_run, word)
        if word.startswith("runs/") and "*" in word and not glob.glob(word):
            shutil.copytree(first_run, word.replace("*", "1"))
        if word.endswith(".json") and not Path(word).exists() and Path("a.json").exists():
            shutil.copy("a.json", word)
