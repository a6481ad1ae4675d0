"""`make mutation`: mutmut on the critical modules, one group of modules at a time (docs/testing.md).

Each group names the modules it mutates, the tests that may kill their mutants (mutmut runs, for
each mutant, only those of them that called the mutated function: it records which tests reach
which function in one instrumented run first) and whether numba's JIT is off. A group runs in its
own process (the JIT switch is read once, at numba's import) in its own `mutants/` copy of the
tree; its results are kept in `.mutation/<group>.json` and the table of all kept groups is printed
at the end.

Incremental: a group's `mutants/` is kept after its run (in `.mutation/mutants/<group>`) and put
back for the next, where mutmut re-tests only the mutants of functions whose source changed (it
keeps each function's hash and each mutant's result; a change to pyproject.toml resets them all).
`--fresh` starts the groups from a new copy and tests every mutant.

mutmut leaves decorated functions alone. With the JIT off `njit` returns the function itself, so
in the groups that switch it off (`jit_off`) functions decorated only with `njit` are mutated
too; with the JIT on they cannot be (a trampoline does not compile), so those groups skip them.

Usage: python tests/mutation_run.py [GROUP ...] [--max-children N] [--fresh] [--summary | --show | --survivors]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

RESULTS_DIR = Path(".mutation")


@dataclass(frozen=True)
class Group:
    """Modules mutated together, the tests that may kill their mutants and the JIT switch."""

    name: str
    modules: tuple[str, ...]
    tests: tuple[str, ...]
    jit_off: bool = False


# The hand-computed engine tests (positions, passes, word boundaries, replay), not the perft or the
# reference comparison: with the JIT off and a trampoline on every kernel call those take many minutes.
ENGINE_TESTS = (
    "tests/engine/test_kernel_edges.py",
    "tests/engine/test_rules.py",
    "tests/engine/test_playout_passes.py",
    "tests/engine/test_replay.py",
)

# The kernels and bits groups (JIT off: every kernel runs as Python, each call through mutmut's trampoline): the
# hand-computed kernel tests, not test_playout_passes (21,000 playouts) nor test_replay's random games (each a
# minute or more there); test_kernels_mutants.py checks the same kernels against the reference in seconds.
KERNEL_TESTS = (
    "tests/engine/test_kernels_mutants.py",
    "tests/engine/test_kernels_playouts_mutants.py",
    "tests/engine/test_kernel_edges.py",
    "tests/engine/test_rules.py",
    "tests/engine/test_replay.py::test_a_missing_last_move_and_a_move_after_the_end_are_refused",
    "tests/engine/test_replay.py::test_replay_refuses_moves_that_are_not_ints",
)

# The model layer's unit tests; not the stub-server fault runs (test_stub_faults.py: whole runs, 33 s of the
# 45 s each classification mutant would otherwise cost when it survives).
MODEL_TESTS = (
    "tests/harness/models/test_errors.py",
    "tests/harness/models/test_errors_mutants.py",
    "tests/harness/models/test_fail_fast.py",
    "tests/harness/models/test_model_client.py",
    "tests/harness/models/test_model_options.py",
    "tests/harness/models/test_mock_model.py",
)

GROUPS: tuple[Group, ...] = (
    Group(
        "interval_belief",
        ("agents/interval_belief.py",),
        ("tests/agents/test_interval.py", "tests/agents/test_interval_belief_mutants.py"),
    ),
    Group("rules", ("engine/rules.py", "engine/condition.py"), (*ENGINE_TESTS, "tests/engine/test_rules_mutants.py")),
    Group("kernels", ("engine/kernels.py",), KERNEL_TESTS, jit_off=True),
    Group("bits", ("engine/bits.py",), ("tests/engine/test_bits.py", "tests/engine/test_bits_mutants.py", *KERNEL_TESTS), jit_off=True),
    # Not the test that lists the public attributes of EvaluationGrants: mutmut's mutant methods are attributes too.
    Group(
        "play",
        ("harness/play/game.py", "harness/play/grants.py", "harness/play/decisions.py"),
        ("tests/harness/play", "--deselect",
         "tests/harness/play/test_privileged_grants.py::test_evaluation_grants_do_not_show_the_condition"),
    ),
    # The records' critical path: transcripts (writer, reader, resume), the hash chain, the integrity checks, the
    # commitment, the entries. Not interrupts.py, lock.py (its functions are decorated: no mutants) or provenance.py;
    # not the writer-lock test (a subprocess holder: 40 s for every mutant of the writer that survives the others).
    Group(
        "records",
        (
            "harness/records/transcript.py",
            "harness/records/chain.py",
            "harness/records/integrity.py",
            "harness/records/commitment.py",
            "harness/records/entries.py",
        ),
        (
            "tests/harness/records/test_transcript.py",
            "tests/harness/records/test_chain.py",
            "tests/harness/records/test_commitment.py",
            "tests/harness/records/test_transcript_mutants.py",
            "tests/harness/records/test_chain_mutants.py",
            "tests/harness/records/test_integrity_mutants.py",
            "tests/harness/records/test_entries_mutants.py",
        ),
    ),
    # Replay and rerun: the fast tests on a tiny in-process run and hand-written directories (about 5 s together), not
    # test_replay_records / test_replay_run / test_commitment_run (whole runs, several 20-85 s tests: hours for the group).
    Group(
        "replay",
        ("harness/runs/replay.py", "harness/runs/rerun.py"),
        (
            "tests/harness/runs/test_replay_mutants.py",
            "tests/harness/runs/test_replay_run_mutants.py",
            "tests/harness/runs/test_rerun_mutants.py",
        ),
    ),
    Group(
        "moves",
        ("harness/prompting/moves.py",),
        (
            "tests/harness/prompting/test_moves.py",
            "tests/harness/prompting/test_parse_spans.py",
            "tests/harness/prompting/test_moves_call_failures.py",
            "tests/harness/prompting/test_moves_mutants.py",
        ),
    ),
    Group("errors", ("harness/models/errors.py",), MODEL_TESTS),
    Group(
        "client",
        ("harness/models/client.py",),
        (
            *MODEL_TESTS,
            "tests/harness/models/test_client_mutants.py",
            "tests/harness/models/test_client_failures_mutants.py",
            "tests/harness/models/test_client_setup_mutants.py",
        ),
    ),
    Group(
        "search",
        ("agents/search/*.py",),
        (
            "tests/agents/test_minimax.py",
            "tests/agents/test_endgame.py",
            "tests/agents/test_mcts.py",
            "tests/agents/test_search_features.py",
            "tests/agents/test_adaptive_minimax.py",
        ),
    ),
)
GROUP_BY_NAME = {group.name: group for group in GROUPS}
# A mutant that runs past its CPU-time limit (an endless loop) is detected too: counted as killed, shown apart.
KILLED = {"killed", "caught by type check", "timeout"}


def _is_njit(decorator: object) -> bool:
    import libcst as cst

    if isinstance(decorator, cst.Call):
        decorator = decorator.func
    return isinstance(decorator, cst.Name) and decorator.value == "njit"


def _let_mutmut_mutate_njit_functions() -> None:
    """With the JIT off, functions decorated only with `njit` are plain Python: mutate them."""
    import libcst as cst
    from libcst.metadata import PositionProvider
    from mutmut.mutation.file_mutation import MutationVisitor

    skip = MutationVisitor._skip_node_and_children

    def skip_unless_njit(self: MutationVisitor, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.FunctionDef) and node.decorators and all(_is_njit(d.decorator) for d in node.decorators):
            position = self.get_metadata(PositionProvider, node, None)
            if position is None or position.start.line not in self._ignored_node_lines:
                return False
        return skip(self, node)

    MutationVisitor._skip_node_and_children = skip_unless_njit  # type: ignore[method-assign]


def show_survivors(group: Group) -> None:
    """Print the diff of every mutant that survived in the group's kept report (mutants regenerated in memory)."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    from mutmut.mutation.file_mutation import mutate_file_contents

    if group.jit_off:
        _let_mutmut_mutate_njit_functions()
    survivors = json.loads((RESULTS_DIR / f"{group.name}.json").read_text())["survivors"]
    sources: dict[str, str] = {}
    for survivor in survivors:
        module = survivor["mutant"].split(".x")[0]
        path = module.replace(".", "/") + ".py"
        if path not in sources:
            sources[path] = mutate_file_contents(path, Path(path).read_text()).code
        print(f"# {survivor['mutant']}: {survivor['status']}")
        print(get_diff_for_mutant(survivor["mutant"], source=sources[path], path=path))


def run_group(group: Group, max_children: int, survivors_only: bool) -> None:
    """Run mutmut on one group in this process (the JIT switch must already be in the environment).

    ``survivors_only``: run again only the mutants the kept report lists as not killed (after new tests),
    and update that report; the others keep their kept result.
    """
    from mutmut import __main__ as mutmut_main
    from mutmut.configuration import config

    cfg = config()
    cfg.only_mutate = list(group.modules)
    cfg.pytest_add_cli_args_test_selection = list(group.tests)
    if group.jit_off:
        _let_mutmut_mutate_njit_functions()
    report_path = Path(os.environ["MUTATION_REPORT"])
    kept = json.loads(report_path.read_text()) if survivors_only else None
    names = [survivor["mutant"] for survivor in kept["survivors"]] if kept else []
    if kept and not names:
        return
    try:
        mutmut_main._run(names, max_children)
    except SystemExit as stop:
        if stop.code not in (0, None):
            raise
    status_by_mutant: dict[str, str] = {}
    for path in mutmut_main.walk_mutatable_files():
        data = mutmut_main.SourceFileMutationData(path=path)
        data.load()
        for key, code in data.exit_code_by_key.items():
            if code is not None:
                status_by_mutant[key] = mutmut_main.status_by_exit_code[code]
    by_module: dict[str, dict[str, int]] = kept["by_module"] if kept else {}
    if kept:
        for survivor in kept["survivors"]:
            counts = by_module[_module_path(survivor["mutant"])]
            counts[survivor["status"]] -= 1
            new = status_by_mutant.get(survivor["mutant"], survivor["status"])
            counts[new] = counts.get(new, 0) + 1
        status_by_mutant = {s["mutant"]: status_by_mutant.get(s["mutant"], s["status"]) for s in kept["survivors"]}
    else:
        for key, status in status_by_mutant.items():
            counts = by_module.setdefault(_module_path(key), {})
            counts[status] = counts.get(status, 0) + 1
    survivors = [{"mutant": key, "status": status} for key, status in status_by_mutant.items() if status not in KILLED]
    report: dict[str, object] = {"group": group.name, "by_module": by_module, "survivors": survivors}
    if kept:
        report["seconds"], report["rerun_seconds"] = kept.get("seconds"), None
    report_path.write_text(json.dumps(report, indent=1) + "\n")


def _module_path(mutant: str) -> str:
    """engine.rules.x_play__mutmut_3 -> engine/rules.py"""
    return mutant.split(".x")[0].replace(".", "/") + ".py"


def spawn_group(group: Group, max_children: int, survivors_only: bool = False, fresh: bool = False) -> int:
    """One group in a fresh process, in its kept `mutants/` copy (a new one if ``fresh``); its report lands in .mutation/."""
    kept = RESULTS_DIR / "mutants" / group.name
    shutil.rmtree("mutants", ignore_errors=True)
    if fresh:
        shutil.rmtree(kept, ignore_errors=True)
    if kept.is_dir():
        shutil.move(str(kept), "mutants")
    RESULTS_DIR.mkdir(exist_ok=True)
    report = RESULTS_DIR / f"{group.name}.json"
    env = dict(os.environ, MUTATION_REPORT=str(report.resolve()))
    if group.jit_off:
        env["NUMBA_DISABLE_JIT"] = "1"
    else:
        env.pop("NUMBA_DISABLE_JIT", None)
    started = time.monotonic()
    again = ["--survivors"] if survivors_only else []
    code = subprocess.call([sys.executable, __file__, "--in-process", group.name, "--max-children", str(max_children), *again], env=env)
    seconds = time.monotonic() - started
    if report.exists():
        data = json.loads(report.read_text())
        data["rerun_seconds" if survivors_only else "seconds"] = round(seconds)
        report.write_text(json.dumps(data, indent=1) + "\n")
    if Path("mutants").is_dir():
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.move("mutants", str(kept))
    return code


def summary() -> float:
    """Print the kill rate per module of every kept group; return the overall rate."""
    killed_all = total_all = 0
    print(f"{'module':40} {'mutants':>7} {'killed':>6} {'survived':>8} {'no tests':>8} {'timeout':>7} {'rate':>6}")
    for report in sorted(RESULTS_DIR.glob("*.json")):
        data = json.loads(report.read_text())
        for module, counts in sorted(data["by_module"].items()):
            total = sum(counts.values())
            killed = sum(counts.get(status, 0) for status in KILLED)
            if not total:
                continue
            killed_all, total_all = killed_all + killed, total_all + total
            print(
                f"{module:40} {total:7} {killed:6} {counts.get('survived', 0):8} {counts.get('no tests', 0):8}"
                f" {counts.get('timeout', 0):7} {100 * killed / total:5.1f}%"
            )
        again = f", survivors run again in {data['rerun_seconds']} s" if data.get("rerun_seconds") else ""
        print(f"  group {data['group']}: {data.get('seconds', '?')} s{again}")
    rate = 100 * killed_all / total_all if total_all else 0.0
    print(f"{'all':40} {total_all:7} {killed_all:6} {'':8} {'':8} {'':7} {rate:5.1f}%")
    return rate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("groups", nargs="*", help=f"groups to run (default all): {', '.join(GROUP_BY_NAME)}")
    parser.add_argument("--max-children", type=int, default=2)
    parser.add_argument("--fresh", action="store_true", help="test every mutant again in a new copy (not only changed functions)")
    parser.add_argument("--summary", action="store_true", help="only print the table of the kept results")
    parser.add_argument("--survivors", action="store_true", help="run again only the kept survivors of the groups named")
    parser.add_argument("--show", action="store_true", help="print the diffs of the kept survivors of the groups named")
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    unknown = [name for name in args.groups if name not in GROUP_BY_NAME]
    if unknown:
        print(f"unknown mutation group {unknown[0]!r}; choose from {', '.join(GROUP_BY_NAME)}", file=sys.stderr)
        return 2
    if args.show:
        for name in args.groups:
            show_survivors(GROUP_BY_NAME[name])
        return 0
    if args.in_process:
        run_group(GROUP_BY_NAME[args.groups[0]], args.max_children, args.survivors)
        return 0
    chosen = [] if args.summary else args.groups or list(GROUP_BY_NAME)
    failed = [name for name in chosen if spawn_group(GROUP_BY_NAME[name], args.max_children, args.survivors, args.fresh)]
    summary()
    if failed:
        print(f"mutmut failed on: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
