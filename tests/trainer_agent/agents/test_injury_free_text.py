"""The sub-agents' free text (a plan's prescriptions and notes) and the injury check that reads it agree with the
prompt that tells a model what it may write."""

from __future__ import annotations

from tools_app.workout_validation import injuries_from, unsafe_named_exercises
from trainer_agent.agents.definitions import USER_FACTS


def test_free_text_may_say_what_it_leaves_out_for_an_injury_but_not_suggest_it() -> None:
    """ "Goblet squats 3x10" is refused for a knee, "No squats or lunges for the knee." is not, as the
    sub-agents' prompt says (a trial's model could not tell whether naming what is left out counted)."""
    knee = injuries_from(profile_injuries="", limitations=["knee"], preferences=())
    texts = [("Mon", "Goblet squats 3x10 @ 16kg"), ("Wed", "No squats or lunges for the knee.")]
    problems = unsafe_named_exercises(texts, knee)
    assert len(problems) == 1 and problems[0].startswith("Mon: 'Goblet squats' is unsafe")
    assert 'saying what is left out, "no squats for the knee", is fine' in " ".join(USER_FACTS.split())
