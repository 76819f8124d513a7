"""The built-in offline coach: the `offline` model, a deterministic trainer that needs no API key.

`coach.OfflineCoach` is the provider (registered in `trainer_agent.apps`), `intents` reads messages, and
`structured` answers its structured calls (`complete_json`: the initializer's selection, the sub-agents' JSON)
from the request alone. Workouts are drafted by the tools (`tools_app.workout_drafting`).
"""
