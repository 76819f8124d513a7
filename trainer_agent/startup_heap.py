"""The objects a server process makes before it serves, kept out of the garbage collector's full runs.

A worker or web process holds ~300k objects after Django's set-up (models, the tool registry, pydantic schemas,
the URLconf), all alive until it exits. CPython's full collection (generation 2) traverses every tracked object,
so each one cost the worker 200-400 ms of CPU under the GIL on this VM, every ~20 turns of a burst, with all its
threads stopped (docs/benchmarks.md "Previews end to end", "Where the worker's CPU goes, per thread"): ~10 % of
its CPU per turn, and a pause that every preview in flight waited through. `gc.freeze()` moves them to the
permanent generation, which no collection looks at; they are still freed by reference counting as before.
"""

from __future__ import annotations

import gc


def freeze_startup_objects() -> int:
    """Collect what start-up left as garbage, then exempt every object alive now from later collections.
    Returns how many objects are frozen in all."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
