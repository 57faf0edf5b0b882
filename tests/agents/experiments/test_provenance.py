"""`provenance()`: the package version and the commit that a result file records."""

import subprocess

import keras_simplicial
from keras_simplicial.agents.provenance import ROOT, provenance


def git(root, *args):
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_provenance_names_the_checked_out_commit_and_the_version():
    record = provenance()
    assert record["package_version"] == keras_simplicial.__version__
    assert record["git_commit"] == git(ROOT, "rev-parse", "HEAD")
    assert len(record["git_commit"]) == 40
    assert record["code_modified"] in (True, False)


def test_provenance_says_when_the_code_differs_from_the_commit(tmp_path):
    git(tmp_path, "init", "-q")
    (tmp_path / "agents").mkdir()
    code = tmp_path / "agents" / "code.py"
    code.write_text("x = 1\n")
    (tmp_path / "notes.md").write_text("a\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    clean = provenance(tmp_path)
    assert clean["git_commit"] == git(tmp_path, "rev-parse", "HEAD")
    assert clean["code_modified"] is False
    (tmp_path / "notes.md").write_text("b\n")  # not code: still the commit's code
    assert provenance(tmp_path)["code_modified"] is False
    code.write_text("x = 2\n")
    assert provenance(tmp_path)["code_modified"] is True


def test_provenance_outside_a_checkout_has_no_commit(tmp_path):
    record = provenance(tmp_path)
    assert record == {
        "package_version": keras_simplicial.__version__,
        "git_commit": None,
        "code_modified": None,
        "source_sha256": None,
    }


def test_the_source_hash_follows_the_sources_not_the_commit(tmp_path):
    from keras_simplicial.agents.provenance import source_sha256

    for folder in ("keras_simplicial", "envs", "agents"):
        (tmp_path / folder / "__pycache__").mkdir(parents=True)
        (tmp_path / folder / "code.py").write_text("x = 1\n")
    first = source_sha256(tmp_path)
    assert len(first) == 64
    (tmp_path / "notes.md").write_text("not a source\n")
    (tmp_path / "agents" / "__pycache__" / "code.py").write_text("a cache\n")
    assert source_sha256(tmp_path) == first
    (tmp_path / "envs" / "code.py").write_text("x = 2\n")
    assert source_sha256(tmp_path) != first
    (tmp_path / "envs" / "code.py").write_text("x = 1\n")
    assert source_sha256(tmp_path) == first
    (tmp_path / "envs" / "code.py").rename(tmp_path / "envs" / "moved.py")
    assert source_sha256(tmp_path) != first  # the paths are part of the hash
    assert provenance(tmp_path)["source_sha256"] == source_sha256(tmp_path)


def test_a_commit_s_source_hash_is_read_from_git_and_checks_each_result(tmp_path):
    from keras_simplicial.agents.provenance import code_check, source_sha256, source_sha256_at

    git(tmp_path, "init", "-q")
    for folder in ("keras_simplicial", "envs", "agents/training"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "code.py").write_text(f"name = {folder!r}\n")
    (tmp_path / "agents" / "training-notes.py").write_text("x = 0\n")  # '-' sorts before '/'
    git(tmp_path, "add", ".")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    commit = git(tmp_path, "rev-parse", "HEAD")
    assert source_sha256_at(commit, tmp_path) == source_sha256(tmp_path)
    clean = provenance(tmp_path)
    (tmp_path / "envs" / "code.py").write_text("edited = True\n")
    edited = provenance(tmp_path)
    assert source_sha256_at(commit, tmp_path) != source_sha256(tmp_path)  # the commit's, still
    lost = {**clean, "git_commit": "1" * 40}  # a commit a rebase took away
    checks = code_check([clean, clean, edited, lost], tmp_path)
    by_commit = {(c["commit"], c["source_sha256"]): c for c in checks}
    assert by_commit[(commit, clean["source_sha256"])]["runs"] == 2
    assert by_commit[(commit, clean["source_sha256"])]["matches"] is True
    assert by_commit[(commit, edited["source_sha256"])]["matches"] is False
    assert by_commit[(lost["git_commit"], clean["source_sha256"])]["in_history"] is False
    assert source_sha256_at("1" * 40, tmp_path) is None


def test_code_records_reads_every_kind_of_result_file_and_skips_checkpoint_copies(tmp_path):
    import json

    from keras_simplicial.agents.provenance import code_records

    def record(name):
        return {"git_commit": name, "source_sha256": name}

    files = {
        "supervised/run.json": {"provenance": [record("run-1"), record("run-2")]},
        "supervised/checkpoints/iter_1/run.json": {"provenance": [record("copy")]},
        "rl/seed1/machines.json": [{"code": record("start-1")}, {"code": record("start-2")}],
        "dagger/seed1/code.json": [{"code": record("dagger")}],
        "dagger/seed1/errors_best_length2.json": {"code": record("errors"), "moves": 3},
        "held-keys/diagnosis.json": [{"code": record("diagnosis")}, {"note": "no code"}],
        "unrelated/evaluation.json": {"code": record("not a code record")},
    }
    for path, content in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(json.dumps(content))
    assert [entry["git_commit"] for entry in code_records(tmp_path)] == [
        "run-1", "run-2", "start-1", "start-2", "dagger", "errors", "diagnosis"
    ]  # fmt: skip
    assert code_records(tmp_path / "unrelated") == []
