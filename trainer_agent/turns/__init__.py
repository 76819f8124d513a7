"""Turns as tasks: the web tier admits a turn, a worker runs it (and another continues it if that one dies).

One module per role, each depending only on those below it (the `turns` contract in pyproject.toml):

- `runner` (`run_turn`), `deletion` (`delete_session_everywhere`), `sweeper` (`sweep_lapsed_turns`,
  `fail_orphaned_task_rows`): the entry points of the shell, of `DELETE /agent/sessions/<id>` and of the
  workers' periodic sweep.
- `admission` (web): `admit_turn` resolves the session (404 for anyone else's), stores the `user_message`
  (and the client's workout) with a queued `AgentTurn` in one transaction (409 while another turn of the
  session is open), then enqueues it. Nothing is written for a refused request. The body was validated
  before, by `trainer_agent.api.chat.TurnRequestSerializer`, shared by `/agent/chat` and `/agent/stream`.
- `tasks`: `run_turn_task` on Django's task framework (`TASKS`), `enqueue_turn`, the turns' task rows.
  `pickup`: a turn that waits `TURN_PICKUP_SECONDS` for a worker while none is alive is ended in `error`
  (`watch_open_turn`, called by whoever waits for it: the turn endpoints, a session stream, a new message or
  a delete of its session).
- `execution` (worker): `execute_turn` claims the turn with a lease, runs the loop from where the store says
  the turn stands, and finishes it.
- `read_model` (`turn_result`: what a turn did, from its events), `lease` (the lease, the keeper thread that
  renews it, which workers are alive); `request` (`TurnRequest`, the message's rules).

The names below are the package's interface. Some are stored by dotted path and must keep resolving:
`trainer_agent.turns.run_turn_task` (task rows written before the split) and `trainer_agent.turns.WorkerDied`
(the exception path of a dead worker's task rows).
"""

from trainer_agent.turns.admission import admit_turn, adopt_client_workout
from trainer_agent.turns.deletion import delete_session_everywhere
from trainer_agent.turns.execution import execute_turn
from trainer_agent.turns.lease import (
    LeaseKeeper,
    lease_duration,
    lease_keeper,
    live_workers,
    worker_name,
    workers_seen_after,
)
from trainer_agent.turns.pickup import (
    NO_WORKER_KIND,
    NO_WORKER_MESSAGE,
    OpenTurnState,
    end_without_worker,
    release_stranded_turn,
    watch_open_turn,
)
from trainer_agent.turns.read_model import turn_result
from trainer_agent.turns.request import MAX_MESSAGE_CHARS, TurnRequest
from trainer_agent.turns.runner import run_turn
from trainer_agent.turns.sweeper import (
    WorkerDied,
    fail_orphaned_task_rows,
    sweep_lapsed_turns,
    worker_process_of,
)
from trainer_agent.turns.tasks import enqueue_turn, run_turn_task

__all__ = [
    "MAX_MESSAGE_CHARS",
    "NO_WORKER_KIND",
    "NO_WORKER_MESSAGE",
    "LeaseKeeper",
    "OpenTurnState",
    "TurnRequest",
    "WorkerDied",
    "admit_turn",
    "adopt_client_workout",
    "delete_session_everywhere",
    "end_without_worker",
    "enqueue_turn",
    "execute_turn",
    "fail_orphaned_task_rows",
    "lease_duration",
    "lease_keeper",
    "live_workers",
    "release_stranded_turn",
    "run_turn",
    "run_turn_task",
    "sweep_lapsed_turns",
    "turn_result",
    "watch_open_turn",
    "worker_name",
    "worker_process_of",
    "workers_seen_after",
]
