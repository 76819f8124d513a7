"""Where `trainer_agent.turns` finds the client's workout model until its import moves with the turn-edge split
(issue 27 item 4): the workout models live in `datasources_app.workouts`. Import from there; delete this
module once nothing imports it."""

from datasources_app.workouts import ClientWorkout

__all__ = ["ClientWorkout"]
