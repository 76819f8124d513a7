"""Work slots: how many turn threads run framework code (not waiting on a model) at the same time.

In one process every thread shares one GIL. A burst of streamed turns starting together (initializer,
knowledge, context building: tens of milliseconds of CPU each) leaves the event loop, which writes every
stream's frames to its socket, one turn in dozens of chances to run: frames already handed to the server reach
clients a second late. A streamed turn therefore holds one of `AGENT_WORK_SLOTS` slots while it works and gives
it back while it waits on a model (the loop and the initializer call `released()` around model calls, where
they hold no database connection), so turns still overlap their model waits freely but only a few compete for
the CPU. A thread must never wait for a slot while holding a connection: the slot holders may be waiting for
one. (A sub-agent's model call runs inside its tool's transaction, so the turn keeps its slot through it.)

A thread that holds no slot (a `/agent/chat` request, `manage.py chat`) is not limited: `released()` is then a
no-op.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class WorkSlots:
    def __init__(self, size: int) -> None:
        self.size = size
        self._free = threading.BoundedSemaphore(size)
        self._local = threading.local()

    def _holding(self) -> bool:
        return bool(getattr(self._local, "holding", False))

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold a slot for the block (a whole turn); waits for one to be free."""
        self._free.acquire()
        self._local.holding = True
        try:
            yield
        finally:
            if self._holding():
                self._local.holding = False
                self._free.release()

    @contextmanager
    def released(self) -> Iterator[None]:
        """Give this thread's slot back for the block (a model call) and take one again after it."""
        if not self._holding():
            yield
            return
        self._local.holding = False
        self._free.release()
        try:
            yield
        finally:
            self._free.acquire()
            self._local.holding = True


_slots: WorkSlots | None = None
_slots_lock = threading.Lock()


def work_slots() -> WorkSlots:
    """The process's slots, `settings.AGENT_WORK_SLOTS` of them (made on first use)."""
    global _slots
    from django.conf import settings

    with _slots_lock:
        if _slots is None:
            _slots = WorkSlots(settings.AGENT_WORK_SLOTS)
        return _slots
