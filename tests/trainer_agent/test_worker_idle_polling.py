"""Idle worker loops: on PostgreSQL an enqueue wakes a loop, so polling is a fallback one loop makes per interval
for the whole process; 100 idle threads must not mean 100 claim queries a second."""

from __future__ import annotations

import threading
import time

from trainer_agent.management.commands.worker import WorkerPool

INTERVAL = 0.05


def _idle_loops(pool: WorkerPool, loops: int, seconds: float) -> tuple[int, int]:
    """Run `loops` threads that go idle again and again for `seconds`: (polls made, wake-ups by an enqueue)."""
    polls = 0
    woken = 0
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def loop() -> None:
        nonlocal polls, woken
        while time.monotonic() < deadline and pool.running:
            polled = pool._idle()
            with lock:
                if polled:
                    polls += 1
                else:
                    woken += 1

    threads = [threading.Thread(target=loop) for _ in range(loops)]
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    pool.running = False
    pool._notify()
    for thread in threads:
        thread.join(timeout=5)
    return polls, woken


def test_idle_loops_woken_by_enqueues_poll_once_per_interval_for_the_whole_process() -> None:
    pool = WorkerPool(threads=40, interval=INTERVAL, sweep=1.0)
    pool.woken_by_enqueue = True
    seconds = 0.5
    polls, _ = _idle_loops(pool, loops=40, seconds=seconds)
    # One poll per interval at most (plus one for the boundary), against 40 per interval if each loop polled.
    assert 1 <= polls <= seconds / INTERVAL + 1


def test_without_wake_ups_every_idle_loop_polls() -> None:
    pool = WorkerPool(threads=10, interval=INTERVAL, sweep=1.0)
    pool.woken_by_enqueue = False  # SQLite: nothing announces a task
    seconds = 0.3
    polls, _ = _idle_loops(pool, loops=10, seconds=seconds)
    assert polls >= 10 * (seconds / INTERVAL) / 2


def test_an_enqueue_wakes_one_idle_loop_at_once() -> None:
    pool = WorkerPool(threads=5, interval=10.0, sweep=1.0)
    pool.woken_by_enqueue = True
    results: list[bool] = []
    threads = [threading.Thread(target=lambda: results.append(pool._idle())) for _ in range(5)]
    for thread in threads:
        thread.start()
    time.sleep(0.1)
    pool._notify(1)
    for _ in range(100):
        if results:
            break
        time.sleep(0.01)
    assert results == [False]  # one loop woke, not by polling, long before the 10 s interval
    pool.running = False
    pool._notify()
    for thread in threads:
        thread.join(timeout=5)
    assert len(results) == 5
