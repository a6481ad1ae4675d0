"""arena run commits to the hidden condition in its manifest before the first game and reveals it only at the end."""

from __future__ import annotations

import json
import stat

import pytest
from record_tamper import SMALL_RUN
from typer.testing import CliRunner

from engine import make_env
from harness.cli.main import app
from harness.records.commitment import SALT_FILE, condition_text, digest, verify
from harness.runs.llm_run import LlmRunConfig, run_llm
from harness.runs.replay import replay_run

TRUE_TEXT = condition_text(make_env(SMALL_RUN["env"]).condition)  # env 21: K = 3/5


class Stop(Exception):
    pass


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def commitment_of(run_dir):
    return json.loads((run_dir / "metrics.json").read_text())["commitment"]


def test_the_digest_is_in_the_manifest_before_the_first_game_and_the_salt_never(tmp_path):
    seen = []

    def first_game(entry):
        if not seen:
            manifest = json.loads((run_dir / "manifest.json").read_text())
            salt = (run_dir / SALT_FILE).read_text().strip()
            seen.append((manifest, salt, (run_dir / "metrics.json").exists()))

    run_dir = tmp_path / "runs" / "c"
    run_llm(LlmRunConfig(**{**SMALL_RUN, "budget": 2, "checkpoints": (2,)}), out=tmp_path / "runs", run_id="c", on_game=first_game)
    ((manifest, salt, revealed_early),) = seen
    assert not revealed_early
    committed = manifest["condition_sha256"]
    assert len(committed) == 64 and committed == digest(TRUE_TEXT, salt)
    assert salt not in json.dumps(manifest) and TRUE_TEXT not in json.dumps(manifest)
    assert stat.S_IMODE((run_dir / SALT_FILE).stat().st_mode) == 0o600
    final = (run_dir / "manifest.json").read_text()
    assert json.loads(final)["condition_sha256"] == committed and salt not in final
    for log in ("calls.jsonl", "cache.jsonl", "games.jsonl"):  # what the agent saw or wrote: no salt
        assert salt not in (run_dir / log).read_text()


def test_the_report_reveals_condition_and_salt_once_at_the_end(run_dir):
    shown = commitment_of(run_dir)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert shown == {"condition": TRUE_TEXT, "salt": (run_dir / SALT_FILE).read_text().strip(), "sha256": manifest["condition_sha256"]}
    assert verify(shown["condition"], shown["salt"], shown["sha256"])
    report = (run_dir / "report.md").read_text()
    line = f"Condition: {TRUE_TEXT} (salt {shown['salt']}, committed in the manifest as sha256 {shown['sha256']})."
    assert report.count(line) == 1 and report.count(shown["salt"]) == 1


def test_replay_checks_the_revealed_condition_against_the_manifest(run_dir):
    report = replay_run(run_dir)
    assert report.ok
    assert any("commitment: the condition revealed at the end matches" in note for note in report.notes)
    result = invoke("replay", run_dir)
    assert result.exit_code == 0 and "matches the manifest's sha256" in result.output


def edit_metrics(run_dir, change):
    path = run_dir / "metrics.json"
    metrics = json.loads(path.read_text())
    change(metrics["commitment"])
    path.write_text(json.dumps(metrics, indent=2) + "\n")


@pytest.mark.parametrize("field, value", [("salt", "0" * 32), ("condition", TRUE_TEXT.replace("k=3/5", "k=4/5"))])
def test_an_edited_salt_or_condition_in_metrics_is_a_finding_naming_the_file(run_dir, field, value):
    edit_metrics(run_dir, lambda shown: shown.update({field: value}))
    report = replay_run(run_dir)
    assert not report.ok and {f.file for f in report.findings} == {"metrics.json"}
    assert any("do not give the manifest's sha256" in f.message for f in report.findings)
    result = invoke("replay", run_dir)
    assert result.exit_code == 1 and "metrics.json: the revealed condition" in result.output


def test_an_edited_salt_in_the_report_is_a_finding_naming_the_file(run_dir):
    path = run_dir / "report.md"
    salt = commitment_of(run_dir)["salt"]
    path.write_text(path.read_text().replace(f"salt {salt}", "salt " + "f" * 32))
    report = replay_run(run_dir)
    assert {f.file for f in report.findings} == {"report.md"}
    result = invoke("replay", run_dir)
    assert result.exit_code == 1 and "report.md: the revealed condition" in result.output


def test_a_consistent_commitment_to_another_condition_is_a_finding(run_dir):
    other = condition_text(make_env(14).condition)  # K = 4/5, committed to with the run's salt everywhere
    shown = commitment_of(run_dir)
    forged = digest(other, shown["salt"])
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest_path.write_text(json.dumps({**manifest, "condition_sha256": forged}, indent=2))
    edit_metrics(run_dir, lambda c: c.update(condition=other, sha256=forged))
    (run_dir / "report.md").unlink()
    report = replay_run(run_dir)
    assert [f.describe() for f in report.findings] == [
        f"metrics.json: the revealed condition {other!r} is not env {SMALL_RUN['env']}'s condition"
    ]


def test_a_run_from_before_commitments_replays_with_a_note(run_dir):
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    del manifest["condition_sha256"]
    manifest_path.write_text(json.dumps(manifest, indent=2))
    edit_metrics(run_dir, lambda c: None)
    report = replay_run(run_dir)
    assert report.ok and any("commitment: none in the manifest" in note for note in report.notes)


@pytest.mark.long
def test_the_salt_survives_an_interruption_and_the_resumed_run_reveals_it(tmp_path):
    def stop(entry):
        if entry.phase == "adapt" and entry.game_index == 1:
            raise Stop

    config = LlmRunConfig(**{**SMALL_RUN, "budget": 4, "checkpoints": (4,)})
    with pytest.raises(Stop):
        run_llm(config, out=tmp_path, run_id="cut", on_game=stop)
    run_dir = tmp_path / "cut"
    salt = (run_dir / SALT_FILE).read_text().strip()
    assert not (run_dir / "metrics.json").exists()
    run_llm(resume=run_dir)
    shown = commitment_of(run_dir)
    assert shown["salt"] == salt and shown["condition"] == TRUE_TEXT
    assert verify(TRUE_TEXT, salt, json.loads((run_dir / "manifest.json").read_text())["condition_sha256"])
    assert replay_run(run_dir).ok
