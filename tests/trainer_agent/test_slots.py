"""Work slots: at most N threads work at once; a thread gives its slot back while it waits on a model."""

from __future__ import annotations

import threading
import time

from trainer_agent.slots import WorkSlots


def _run_turns(slots: WorkSlots, turns: int, *, model_wait_s: float, work_s: float) -> int:
    """Start `turns` threads that work, wait on a "model", work again; return the most that worked at once."""
    working = 0
    most = 0
    lock = threading.Lock()

    def work() -> None:
        nonlocal working, most
        with lock:
            working += 1
            most = max(most, working)
        time.sleep(work_s)
        with lock:
            working -= 1

    def turn() -> None:
        with slots.held():
            work()
            with slots.released():
                time.sleep(model_wait_s)
            work()

    threads = [threading.Thread(target=turn) for _ in range(turns)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)
    return most


def test_no_more_threads_work_at_once_than_there_are_slots() -> None:
    assert _run_turns(WorkSlots(2), 12, model_wait_s=0.05, work_s=0.02) <= 2


def test_turns_waiting_on_their_model_let_others_work() -> None:
    """With one slot, turns still wait on their models together: the slot goes to another turn meanwhile."""
    slots = WorkSlots(1)
    waiting = 0
    most_waiting = 0
    lock = threading.Lock()
    all_waiting = threading.Barrier(4, timeout=10)

    def turn() -> None:
        nonlocal waiting, most_waiting
        with slots.held(), slots.released():
            with lock:
                waiting += 1
                most_waiting = max(most_waiting, waiting)
            all_waiting.wait()  # only passes once all four wait on their model at the same time
            with lock:
                waiting -= 1

    threads = [threading.Thread(target=turn) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert most_waiting == 4


def test_a_thread_without_a_slot_is_not_limited() -> None:
    slots = WorkSlots(1)
    with slots.held():  # another thread's turn holds the only slot
        done = threading.Event()

        def chat_request() -> None:
            with slots.released():  # e.g. /agent/chat calling its model: no slot to give back, no wait
                pass
            done.set()

        threading.Thread(target=chat_request).start()
        assert done.wait(5)
