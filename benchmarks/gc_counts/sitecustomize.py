"""Benchmarks only (`benchmarks/preview_threads.py --gc` puts this directory on the servers' PYTHONPATH, with
GCSTATS=1): counts the garbage collector's runs per generation, the seconds they took, the thread kind that
triggered them, the objects a generation-1 run promoted to generation 2 (what brings the next full run closer)
and the objects a full run went through, and writes them to /tmp/gcstats-<pid>.json every 0.25 s.
GC_THRESHOLD=a,b,c sets `gc.set_threshold` (c huge: no automatic full collection); SWITCH_INTERVAL=s sets
`sys.setswitchinterval` (how long a thread waiting for the GIL waits before asking the holder to drop it)."""

import collections
import gc
import json
import os
import sys
import threading
import time

_stats: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0])  # runs (or count), s, collected
_started: dict[int, float] = {}
_young: dict[int, int] = {}


def _on_collection(phase: str, info: dict[str, int]) -> None:
    ident = threading.get_ident()
    generation = info["generation"]
    if phase == "start":
        if generation == 2:
            _stats["gen2examined"][0] += sum(len(gc.get_objects(each)) for each in range(3))
        if generation == 1:
            _young[ident] = len(gc.get_objects(0)) + len(gc.get_objects(1))
        _started[ident] = time.perf_counter()
        return
    began = _started.pop(ident, None)
    kind = threading.current_thread().name.split("_")[0].split("-")[0]
    runs = _stats[f"gen{generation}"]
    runs[0] += 1
    runs[1] += time.perf_counter() - began if began is not None else 0.0
    runs[2] += info.get("collected", 0)
    _stats[f"gen{generation}:{kind}"][0] += 1
    if generation == 1:
        _stats["gen1promoted"][0] += _young.pop(ident, 0) - info.get("collected", 0)


def _write() -> None:
    path = f"/tmp/gcstats-{os.getpid()}.json"
    while True:
        time.sleep(0.25)
        try:
            with open(path + ".tmp", "w") as out:
                json.dump({key: list(value) for key, value in list(_stats.items())}, out)
            os.replace(path + ".tmp", path)
        except OSError:
            pass


if os.environ.get("GC_THRESHOLD"):
    gc.set_threshold(*[int(each) for each in os.environ["GC_THRESHOLD"].split(",")])
if os.environ.get("SWITCH_INTERVAL"):
    sys.setswitchinterval(float(os.environ["SWITCH_INTERVAL"]))
if os.environ.get("GCSTATS"):
    gc.callbacks.append(_on_collection)
    threading.Thread(target=_write, daemon=True, name="gcstats").start()
