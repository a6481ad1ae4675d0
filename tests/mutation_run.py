"""`make mutation`: mutmut on the critical modules, group by group (docs/testing.md; groups in tests/mutation_groups.py).

Each group names the modules it mutates, the tests that may kill their mutants (mutmut runs, for
each mutant, only those of them that called the mutated function: it records which tests reach
which function in one instrumented run first) and whether numba's JIT is off. A group runs in its
own process (the JIT switch is read once, at numba's import) in its own work directory,
`.mutation/work/<group>` (links to the tree; mutmut's `mutants/` copy inside), so two groups run at
once (`--parallel-groups`, default 2: each group's instrumented and clean runs are serial). Its
results are kept in `.mutation/<group>.json`, its output in `.mutation/<group>.log`; the table of
all kept groups is printed at the end.

Incremental: a group's `mutants/` stays in its work directory, where mutmut re-tests only the
mutants of functions whose source changed (it keeps each function's hash and each mutant's
result; a change to pyproject.toml resets them all). `--fresh` tests every mutant in a new copy.

mutmut leaves decorated functions alone. With the JIT off `njit` returns the function itself, so
in the groups that switch it off (`jit_off`) functions decorated only with `njit` are mutated
too; with the JIT on they cannot be (a trampoline does not compile), so those groups skip them.

Usage: python tests/mutation_run.py [GROUP ...] [--max-children N] [--parallel-groups N] [--fresh]
       [--summary | --show | --survivors]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mutation_groups import GROUP_BY_NAME, Group

RESULTS_DIR = Path(".mutation")
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


# mutmut stops a mutant's tests past a CPU-time limit, (estimate + timeout_constant) x timeout_multiplier x 2 CPU-seconds,
# or past half that in wall-clock seconds; either decides "timeout", counted as killed (an endless loop). The wall clock
# counts the other processes' load too: at load 8-12, legitimate slow mutants passed it. So the CPU-time limit decides
# (pyproject.toml's timeout_multiplier = 2: four times the tests' recorded time, plus 4 s; an endless loop costs 4-10 s,
# not mutmut's default 15-36 s of wall clock) and the wall clock is a backstop for a mutant that blocks without computing.
WALL_CLOCK_BACKSTOP = 8


def _make_the_wall_clock_limit_a_backstop() -> None:
    """mutmut's wall-clock limit, WALL_CLOCK_BACKSTOP times longer (patched before its run forks the mutants' processes)."""
    from mutmut.workers import isolation

    register_timeout = isolation.register_timeout

    def register_backstop(pid: int, timeout_s: float) -> None:
        register_timeout(pid, timeout_s * WALL_CLOCK_BACKSTOP)

    isolation.register_timeout = register_backstop


# Each test of a mutant also gets its own CPU allowance: (its recorded time + PER_TEST_EXTRA_S) x PER_TEST_FACTOR. mutmut's
# one limit covers all of a mutant's tests together, so an endless loop in the first, fast test ran until the whole
# selection's allowance was spent (over 300 s of CPU for two mutants of rules.py's `_bit_indices`); now it stops in
# seconds. Its process then ends on SIGXCPU, as it would at mutmut's limit: "timeout". Not in the clean run.
PER_TEST_EXTRA_S, PER_TEST_FACTOR = 2.0, 4


class _CpuAllowancePerTest:
    """A pytest plugin: before each test, lower the CPU-time soft limit to what this test may use (never above mutmut's)."""

    def __init__(self, duration_by_test: dict[str, float]) -> None:
        self.duration_by_test = duration_by_test
        self.soft, self.hard = resource.getrlimit(resource.RLIMIT_CPU)

    def pytest_runtest_protocol(self, item: object, nextitem: object) -> None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        allowance = (self.duration_by_test.get(item.nodeid, 0.0) + PER_TEST_EXTRA_S) * PER_TEST_FACTOR  # type: ignore[attr-defined]
        limit = math.ceil(usage.ru_utime + usage.ru_stime + allowance)
        if self.soft != resource.RLIM_INFINITY:
            limit = min(limit, self.soft)
        resource.setrlimit(resource.RLIMIT_CPU, (limit, self.hard))


def _limit_each_test_of_a_mutant() -> None:
    """Run each mutant's tests (in its forked process) with :class:`_CpuAllowancePerTest`; the clean run without it."""
    from mutmut.runners.harness import PytestRunner
    from mutmut.state import state
    from mutmut.utils.file_utils import change_cwd

    run_tests = PytestRunner.run_tests

    def run_tests_with_allowances(self: PytestRunner, *, mutant_name: str | None, tests: list[str]) -> int:
        if mutant_name is None:
            return run_tests(self, mutant_name=mutant_name, tests=tests)
        allowances = _CpuAllowancePerTest(state().duration_by_test)
        with change_cwd("mutants"):
            return int(self.execute_pytest(self._pytest_args_regular_run(tests), plugins=[allowances]))

    PytestRunner.run_tests = run_tests_with_allowances  # type: ignore[method-assign]


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

    _make_the_wall_clock_limit_a_backstop()
    _limit_each_test_of_a_mutant()
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


# What a group's work directory links to: mutmut copies these into its `mutants/` (source_paths and also_copy).
TREE = ("engine", "agents", "harness", "tests", "prompts", "examples", "pyproject.toml")


def _work_directory(group: Group, fresh: bool) -> Path:
    """`.mutation/work/GROUP`: links to the tree and the group's kept `mutants/` (removed first if ``fresh``).

    Each group runs in its own directory, so two groups can run at once without sharing a `mutants/`.
    """
    work = (RESULTS_DIR / "work" / group.name).resolve()
    if fresh:
        shutil.rmtree(work / "mutants", ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    for name in TREE:
        link, target = work / name, Path(name).resolve()
        if link.is_symlink() and link.resolve() != target:  # a work directory copied from another tree
            link.unlink()
        if not link.is_symlink():
            link.symlink_to(target)
    return work


def spawn_group(group: Group, max_children: int, survivors_only: bool = False, fresh: bool = False) -> int:
    """One group in a fresh process in its work directory; its report lands in .mutation/GROUP.json, its output in GROUP.log."""
    RESULTS_DIR.mkdir(exist_ok=True)
    work = _work_directory(group, fresh)
    report = RESULTS_DIR / f"{group.name}.json"
    env = dict(os.environ, MUTATION_REPORT=str(report.resolve()))
    if group.jit_off:
        env["NUMBA_DISABLE_JIT"] = "1"
    else:
        env.pop("NUMBA_DISABLE_JIT", None)
    started = time.monotonic()
    again = ["--survivors"] if survivors_only else []
    command = [sys.executable, str(Path(__file__).resolve()), "--in-process", group.name, "--max-children", str(max_children), *again]
    with open(RESULTS_DIR / f"{group.name}.log", "w") as log:
        process = subprocess.Popen(command, env=env, cwd=work, stdout=log, stderr=subprocess.STDOUT)
        # wait4: the group's CPU time with that of every mutant's process (each one waited for by the group's process).
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = code = os.waitstatus_to_exitcode(status)
    seconds, cpu = time.monotonic() - started, usage.ru_utime + usage.ru_stime
    if report.exists():
        data = json.loads(report.read_text())
        data["rerun_seconds" if survivors_only else "seconds"] = round(seconds)
        data["rerun_cpu_seconds" if survivors_only else "cpu_seconds"] = round(cpu)
        report.write_text(json.dumps(data, indent=1) + "\n")
    killed, total = _killed_and_total(report)
    outcome = f"{killed}/{total} killed" if code == 0 else f"mutmut failed (exit {code}; see {RESULTS_DIR / group.name}.log)"
    print(f"group {group.name}: {outcome} in {seconds:.0f} s ({cpu:.0f} s of CPU)", flush=True)
    return code


def _killed_and_total(report: Path) -> tuple[int, int]:
    if not report.exists():
        return 0, 0
    counts = list(json.loads(report.read_text())["by_module"].values())
    return sum(c.get(s, 0) for c in counts for s in KILLED), sum(sum(c.values()) for c in counts)


# Where no group has run yet (a fresh clone): the groups' CPU seconds measured on 2026-11-24, so the longest start first.
FIRST_RUN_CPU_SECONDS = {"search": 900, "search_kernels": 550, "replay": 240, "records": 190, "moves": 120, "rules": 110}


def _expected_seconds(group: Group) -> float:
    report = RESULTS_DIR / f"{group.name}.json"
    if report.exists():
        return float(json.loads(report.read_text()).get("seconds") or 0)
    return float(FIRST_RUN_CPU_SECONDS.get(group.name, 100))


def run_groups(groups: list[Group], max_children: int, parallel: int, survivors_only: bool, fresh: bool) -> list[str]:
    """Run the groups, ``parallel`` at a time, the longest (by their last run, else FIRST_RUN_CPU_SECONDS) first; the names that failed.

    Two groups at once keep both cores busy through each group's serial steps (its instrumented run and clean run).
    A mutant's limit is CPU time, so the extra load does not turn slow mutants into timeouts.
    """
    ordered = sorted(groups, key=_expected_seconds, reverse=True)
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        codes = list(pool.map(lambda group: spawn_group(group, max_children, survivors_only, fresh), ordered))
    print(f"{len(ordered)} group(s) in {time.monotonic() - started:.0f} s of wall-clock time", flush=True)
    return [group.name for group, code in zip(ordered, codes) if code]


def summary() -> float:
    """Print the kill rate per module of every kept group; return the overall rate."""
    killed_all = total_all = cpu_all = 0
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
        cpu = f" ({data['cpu_seconds']} s of CPU)" if data.get("cpu_seconds") else ""
        cpu_all += data.get("cpu_seconds") or 0
        print(f"  group {data['group']}: {data.get('seconds', '?')} s{cpu}{again}")
    rate = 100 * killed_all / total_all if total_all else 0.0
    print(f"{'all':40} {total_all:7} {killed_all:6} {'':8} {'':8} {'':7} {rate:5.1f}%")
    if cpu_all:
        print(f"CPU time of the groups' last full runs: {cpu_all} s ({cpu_all / 120:.1f} minutes on 2 cores)")
    return rate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("groups", nargs="*", help=f"groups to run (default all): {', '.join(GROUP_BY_NAME)}")
    parser.add_argument("--max-children", type=int, default=2, help="mutants tested at once in each group (default 2)")
    parser.add_argument("--parallel-groups", type=int, default=2, help="groups run at once (default 2)")
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
    if args.max_children < 1 or args.parallel_groups < 1:
        print("--max-children and --parallel-groups must be 1 or more", file=sys.stderr)
        return 2
    failed = run_groups([GROUP_BY_NAME[name] for name in chosen], args.max_children, args.parallel_groups, args.survivors, args.fresh)
    summary()
    if failed:
        print(f"mutmut failed on: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
