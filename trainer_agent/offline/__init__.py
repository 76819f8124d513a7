"""The built-in offline coach: the `offline` model, a deterministic trainer that needs no API key.

`coach.OfflineCoach` is the provider (registered in `trainer_agent.apps`), `intents` reads messages,
`workouts` composes workouts from the exercise catalogue.
"""
