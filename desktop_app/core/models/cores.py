"""How many cores may read a prompt right now. Qt-free.

llama.cpp's threads meet at a barrier after every operation, so one thread that shares its
core with other work holds all of them up. On this 2-core machine, reading the same prompts
with 2 threads took 0.51x the time of 1 thread when nothing else ran, and 2.2x when other
work kept both cores busy (``bench/first_word.py threads``; docs/evaluation.md). So the
prompt's thread count is chosen at each prompt from what is running at that moment, not
once: a core another process is using is not counted.

Linux says how many tasks are runnable right now (``/proc/loadavg``'s fourth field); those
of this process and one thread of the one that asked (its parent, or a kept model's
command, still returning from its request) are not counted; the asker's other busy threads
are (the window's embedder while it indexes). Elsewhere the count is not known and the
decode threads read the prompt, as before.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

PROC = Path("/proc")
SAMPLES = 8  # runnable counts read, GAP_S apart (~10 ms in all): a busy process is in most
GAP_S = 0.0015
# A core counts as free when other work uses at most this much of it: at 0.5 of a core
# taken, a second reading thread already waits more than it reads.
SPARE = 0.25


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _running_threads(pid: int, proc: Path) -> int:
    """Threads of process ``pid`` that are runnable now (0 when it is gone)."""
    try:
        tasks = os.listdir(proc / str(pid) / "task")
    except OSError:
        return 0
    count = 0
    for tid in tasks:
        try:
            stat = (proc / str(pid) / "task" / tid / "stat").read_bytes()
        except OSError:
            continue
        end = stat.rfind(b")")  # the name may hold spaces and parentheses; the state follows it
        count += stat[end + 2 : end + 3] == b"R"
    return count


def others_running(proc: Path = PROC, samples: int = SAMPLES, gap_s: float = GAP_S,
                   asker: int | None = None) -> float | None:
    """Mean number of runnable tasks other than this process's and the one thread of the asker
    (by default the parent, which started this process) that may still be finishing its
    request, over a few samples, or None where the system does not say (no /proc/loadavg, or
    a line it cannot read)."""
    me, asking = os.getpid(), os.getppid() if asker is None else asker
    counts: list[int] = []
    for i in range(samples):
        try:
            fields = (proc / "loadavg").read_bytes().split()
            running = int(fields[3].split(b"/")[0])
        except (OSError, IndexError, ValueError):
            return None
        # One runnable thread of the asker is the one that asked; any other (the window's
        # embedder busy indexing, say) is work the prompt's threads would wait for.
        mine = _running_threads(me, proc) + min(1, _running_threads(asking, proc))
        counts.append(max(0, running - mine))
        if i + 1 < samples:
            time.sleep(gap_s)
    return sum(counts) / len(counts)


def free_cores(fallback: int, *, total: int | None = None, others: float | None = None,
               asker: int | None = None) -> int:
    """Cores no other task is using now (at least 1, at most ``total``); ``fallback`` (capped
    the same way) where the system does not say what runs. ``asker``: the process whose
    question this is, when it is not this one's parent (a kept model's command)."""
    total = usable_cores() if total is None else total
    if others is None:
        others = others_running(asker=asker)
    if others is None:
        return max(1, min(fallback, total))
    return max(1, min(total, int(total - others + SPARE)))
