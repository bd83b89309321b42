"""How many cores may read a prompt: other processes' runnable tasks count against the
machine's cores; this process's and its parent's do not; where the system does not say,
the fallback stands."""

from __future__ import annotations

import os
from pathlib import Path

from desktop_app.core.models import cores


def _proc(root: Path, running: int, family_states: dict[int, str], asker: int | None = None) -> Path:
    (root / "loadavg").write_text(f"0.50 0.40 0.30 {running}/321 4242\n")
    for n, (pid, states) in enumerate(((os.getpid(), family_states.get(0, "R")),
                                        (asker or os.getppid(), family_states.get(1, "")))):
        for i, state in enumerate(states):
            task = root / str(pid) / "task" / str(1000 * n + i)
            task.mkdir(parents=True)
            # a name with a space and a parenthesis, as /proc may show it
            task.joinpath("stat").write_text(f"{1000 * n + i} (py (x) y) {state} 1 2 3\n")
    return root


def test_runnable_tasks_of_other_processes_count_and_the_askers_request_does_not(tmp_path: Path) -> None:
    proc = _proc(tmp_path, running=4, family_states={0: "RS", 1: "RSS"})
    # 4 runnable, 1 of them this process's sampling thread and 1 its parent's request: 2 others
    assert cores.others_running(proc, samples=3, gap_s=0.0) == 2.0


def test_the_askers_other_busy_threads_count(tmp_path: Path) -> None:
    # the window asks while its embedder (two threads) indexes: those two are work
    proc = _proc(tmp_path, running=4, family_states={0: "R", 1: "RRR"})
    assert cores.others_running(proc, samples=2, gap_s=0.0) == 2.0
    assert cores.free_cores(1, total=2, others=2.0) == 1
    assert cores.free_cores(1, total=2, others=2.0) == 1
    assert cores.free_cores(1, total=4, others=2.0) == 2


def test_a_quiet_machine_reads_with_every_core(tmp_path: Path) -> None:
    proc = _proc(tmp_path, running=2, family_states={0: "R", 1: "R"})
    assert cores.others_running(proc, samples=2, gap_s=0.0) == 0.0
    assert cores.free_cores(1, total=2, others=0.0) == 2


def test_a_core_half_taken_is_not_free() -> None:
    # a second reading thread that shares its core waits at every barrier (cores.SPARE)
    assert cores.free_cores(1, total=2, others=0.5) == 1
    assert cores.free_cores(1, total=2, others=0.2) == 2
    assert cores.free_cores(1, total=2, others=7.0) == 1  # never below one


def test_where_the_system_does_not_say_the_fallback_stands(tmp_path: Path) -> None:
    assert cores.others_running(tmp_path / "nowhere", samples=2, gap_s=0.0) is None
    (tmp_path / "loadavg").write_text("garbled\n")
    assert cores.others_running(tmp_path, samples=2, gap_s=0.0) is None
    assert cores.free_cores(3, total=2, others=None) in (1, 2)  # the live system, or the fallback capped


def test_the_real_system_gives_a_count_within_the_machines_cores() -> None:
    free = cores.free_cores(1)
    assert 1 <= free <= cores.usable_cores()


def test_a_kept_models_asker_is_the_command_not_the_parent(tmp_path: Path) -> None:
    # a kept model's parent is long gone; the command it serves is the one still returning
    asker = os.getpid() + 100_000
    proc = _proc(tmp_path, running=2, family_states={0: "R", 1: "R"}, asker=asker)
    assert cores.others_running(proc, samples=2, gap_s=0.0, asker=asker) == 0.0
    assert cores.others_running(proc, samples=2, gap_s=0.0) == 1.0  # the command counted as other work
