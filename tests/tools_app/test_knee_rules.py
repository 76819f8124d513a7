"""The knee rules a trainer applies (the 2026-11-27 model trials): a knee with mild discomfort kneels on a pad and
does its knee work moderate (more reps, a lighter load, lowered slowly); a knee that hurts does nothing kneeling or
on all fours."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from datasources_app.catalog import kneels
from datasources_app.demo import DEMO_USER_ID
from datasources_app.services import record_workout_log, seed_demo_user, upsert_profile
from sessions_app.services import create_session
from tests.tools_app.test_coach_loads import alex, line, swapped_in
from tests.tools_app.test_injury_words import DEMO_KNEE, generate, quads
from tests.tools_app.test_plan_day_minutes import demo_day
from tests.tools_app.workout_support import Trainee, hold_exercise, make_trainee, reps_exercise, told
from tools_app.registry import execute_tool
from tools_app.types import ToolContext, ToolResult
from tools_app.workout_validation import KNEE_WORK_CUE, KNEE_WORK_REST_SEC, depth_cues

HURTS = "Knee pain when I squat or kneel."


def demo_user(injuries: str | None = None) -> ToolContext:
    """The demo user (mild knee, at Home with dumbbells up to 25 kg), or with `injuries` instead."""
    user_id = uuid.uuid4()
    seed_demo_user(user_id=user_id)
    if injuries is not None:
        upsert_profile(user_id=user_id, injuries=injuries, limitations=["knee"])
    return ToolContext(user_id=user_id, session=create_session(user_id=user_id))


def drafted(ctx: ToolContext, **brief: Any) -> tuple[ToolResult, dict[str, dict[str, Any]]]:
    result = execute_tool("draft_workout", brief, ctx)
    assert result.success and result.artifact is not None, result.formatted
    return result, {str(e["exercise_name"]): e for e in result.artifact["payload"]["exercises"]}


def stretch(order: int, name: str) -> dict[str, Any]:
    return hold_exercise(
        order,
        exercise_name=name,
        muscles_utilized=[{"muscle": "Quadriceps", "share": 1.0}],
        goals_addressed=[{"goal": "mobility", "share": 1.0}],
        sets=1,
        hold_sec=[30],
        reasoning="Opens the hips.",
    )


def kickback(order: int) -> dict[str, Any]:
    return reps_exercise(
        order,
        exercise_name="Glute Kickback",
        muscles_utilized=[{"muscle": "Glutes", "share": 1.0}],
        load_each=None,
        load_unit=None,
        equipment=[],
        reps=[15, 15, 15],
        reasoning="Glutes.",
    )


def test_kneeling_is_read_from_the_name_or_the_position_it_is_done_in() -> None:
    """Kneeling, half-kneeling and all-fours moves kneel; a cable kickback or a move that says no kneeling does not."""
    for name in (
        "Kneeling Hip Flexor Stretch",
        "Half-kneeling hip flexor stretch",
        "Glute Kickback",
        "Bird Dog",
        "Cat-Cow Stretch",
        "Quadruped Hip Circles",
        "Donkey Kicks",
        "Fire Hydrants",
        "Ab Wheel Rollout",
        "Knee Push-Ups",
    ):
        assert kneels(name), name
    for name in (
        "Cable Glute Kickback",
        "Hip Flexor Stretch (standing, no kneeling)",
        "Glute Bridge",
        "Plank",
    ):
        assert not kneels(name), name


@pytest.mark.django_db
def test_a_mild_knee_stretches_kneeling_on_a_pad() -> None:
    """The demo user's stretching session kept a kneeling hip flexor stretch and a cat-cow with nothing about the
    knee: now each says to kneel on a cushion or a folded mat, and the user is told."""
    result, exercises = drafted(demo_user(), style="mobility", minutes=20)
    kneeling = [name for name in exercises if kneels(name)]
    assert kneeling, list(exercises)
    for name in kneeling:
        assert "Kneel on a cushion or a folded mat" in str(exercises[name].get("notes")), exercises[name]
    assert "kneel on a cushion or a folded mat to pad your knee" in told(result)


@pytest.mark.django_db
def test_a_workout_the_model_writes_gets_the_pad_cue_for_a_mild_knee() -> None:
    """A glute kickback on all fours the model wrote for a mild knee is stored with the pad cue; one whose notes pad
    the knee already is stored as written."""
    trainee = make_trainee()
    upsert_profile(user_id=trainee.user_id, injuries=DEMO_KNEE, limitations=["knee"])
    padded = stretch(2, "Kneeling Hip Flexor Stretch") | {"notes": "Back knee on a folded towel."}
    result = trainee.run(
        "generate_workout", {"workout": {"title": "Glutes", "exercises": [kickback(1), padded]}}
    )
    assert result.success and result.artifact is not None, result.formatted
    stored = result.artifact["payload"]["exercises"]
    assert stored[0]["notes"] == "Kneel on a cushion or a folded mat to pad your knee."
    assert stored[1]["notes"] == "Back knee on a folded towel."


@pytest.mark.django_db
def test_a_knee_that_hurts_does_nothing_kneeling() -> None:
    """A knee that hurts: a kneeling stretch and a kickback on all fours are refused, saying why and what to do
    instead; its stretching session has nothing kneeling or on all fours."""
    trainee = make_trainee()
    upsert_profile(user_id=trainee.user_id, injuries=HURTS, limitations=["knee"])
    ok, text = generate(trainee, kickback(1), stretch(2, "Kneeling Hip Flexor Stretch"))
    assert not ok
    for label in ("exercise 1 'Glute Kickback'", "exercise 2 'Kneeling Hip Flexor Stretch'"):
        assert f"{label}: unsafe for the user's knee" in text, text
    assert "done kneeling or on all fours, with the body's weight pressing on the kneecap" in text
    assert "a standing hip flexor stretch" in text
    _, exercises = drafted(demo_user(HURTS), style="mobility", minutes=20)
    assert not [name for name in exercises if kneels(name)], list(exercises)


@pytest.mark.django_db
def test_a_mild_knee_gets_moderate_knee_work_not_a_strength_set() -> None:
    """The demo user (strength goal first) got Dumbbell Box Squat 3x6 @ 25 kg each hand, rest 120 s: now 12
    controlled reps at a lighter 17.5 kg, rest 90 s, lowered slowly to the box, and the user is told; the hinge
    beside it keeps its strength set."""
    result, exercises = drafted(demo_user(), focus=["legs"], minutes=30)
    squat = exercises["Dumbbell Box Squat"]
    assert squat["reps"] == [12] * squat["sets"]
    assert squat["load_each"] == [17.5] * squat["sets"]
    assert squat["rest_sec"] == 90
    assert squat["notes"] == KNEE_WORK_CUE
    assert exercises["Dumbbell Romanian Deadlift"]["reps"][0] == 6
    assert "the knee work (Dumbbell Box Squat) moderate for your knee" in told(result)


def test_the_knee_work_cue_keeps_nothing_short_of_a_deep_bend() -> None:
    """The cue the tools add to knee work says no depth, so a swap to a full-depth squat is not passed as kept short
    by the tool's own words."""
    assert depth_cues(KNEE_WORK_CUE) == ""


@pytest.mark.django_db
def test_a_swap_to_knee_work_prescribes_it_moderate() -> None:
    """Swapping the demo user's hinge for a box squat prescribes the box squat at 12 reps with the tempo cue."""
    ctx = demo_user()
    _, exercises = drafted(ctx, focus=["legs"], minutes=30)
    deadlift = exercises["Dumbbell Romanian Deadlift"]
    result = execute_tool(
        "swap_exercise", {"exercise_id": deadlift["id"], "replacement_name": "Dumbbell Box Squat"}, ctx
    )
    assert result.success, result.formatted
    new = result.data["new_exercise"]
    assert new["reps"] == [12] * new["sets"], new
    assert new["notes"] == KNEE_WORK_CUE


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("where", "sound", "knee"),
    [
        ("Gym", "Barbell Box Squat 3×8 @ 65 kg", "Barbell Box Squat 3×12 @ 42.5 kg"),
        ("Home", "Dumbbell Box Squat 3×8 @ 25 kg each hand", "Dumbbell Box Squat 3×12 @ 17.5 kg each hand"),
    ],
)
def test_knee_work_is_the_first_load_for_its_reps_made_lighter(where: str, sound: str, knee: str) -> None:
    """The knee's box squat is the first load for 12 reps (four fifths of the estimate, moved by Epley) times the
    knee's lightening, 0.7: 42.5 kg at the Gym where a sound knee starts at 3×8 @ 65 kg (h-knee alone: 57.5 kg,
    0.7 of the old 8-rep estimate)."""
    name = "Barbell Box Squat" if where == "Gym" else "Dumbbell Box Squat"
    assert line(swapped_in(alex(where, sound_knee=True), name)) == sound
    box_squat = swapped_in(alex(where), name)
    assert line(box_squat) == knee
    assert box_squat["rest_sec"] == 90


@pytest.mark.django_db
def test_a_heavy_box_squat_written_for_a_mild_knee_is_refused() -> None:
    """A box squat of 5 reps at the heaviest dumbbells for the demo user's knee is refused with what to send instead;
    the same at 12 reps is created."""
    trainee: Trainee = make_trainee()
    upsert_profile(user_id=trainee.user_id, injuries=DEMO_KNEE, limitations=["knee"])
    heavy = quads(1, "Dumbbell Box Squat", reps=[5, 5, 5], load_each=[25, 25, 25], implements=2)
    ok, text = generate(trainee, heavy)
    assert not ok
    assert "exercise 1 'Dumbbell Box Squat': too heavy a set for the user's knee" in text, text
    assert "never 5 reps; send reps of 8 or more (e.g. 12)" in text
    ok, text = generate(trainee, heavy | {"reps": [12, 12, 12], "load_each": [20, 20, 20]})
    assert ok, text


def log_box_squat(user_id: uuid.UUID, *, reps: int) -> None:
    """A barbell box squat of 3 sets at 60 kg, the last set `reps` reps, the knee's 12 planned, two days ago."""
    record_workout_log(
        user_id=user_id,
        entries=[
            {
                "exercise_name": "Barbell Box Squat",
                "exercise_slug": "barbell-box-squat",
                "muscles": [{"muscle": "Quadriceps", "share": 0.7}, {"muscle": "Glutes", "share": 0.3}],
                "target_reps": [12, 12, 12],
                "actual_sets": 3,
                "actual_reps": [12, 12, reps],
                "actual_load_each": [60, 60, 60],
                "load_unit": "kg",
            }
        ],
        completed_at=timezone.now() - timedelta(days=2),
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("reps", "prescribed", "said"),
    [
        (
            11,
            "Barbell Box Squat 3×12 @ 57.5 kg",
            "Last time: 60 kg × 12, 12, 11; lighter for 12 moderate reps for your knee.",
        ),
        (12, "Barbell Box Squat 3×12 @ 62.5 kg", "Up from 60 kg × 12 last time."),
    ],
)
def test_one_rep_short_of_the_knee_works_12_moves_the_load_by_epley_not_by_a_third(
    reps: int, prescribed: str, said: str
) -> None:
    """After a box squat of 60 kg × 11 the knee's next 12 reps were 42.5 kg (0.7 of the last load, said as "Last
    time: 60 kg × 11."), after 60 × 12 62.5 kg: one rep cut the load by 30 %. Now 60 kg × 11 is moved to 12 reps
    (57.5 kg, said why), the same rule as 60 × 12 completed (one step up), in a swap and a drafted plan day."""
    trainee = alex("Gym")
    log_box_squat(trainee.user_id, reps=reps)
    box_squat = swapped_in(trainee, "Barbell Box Squat")
    assert line(box_squat) == prescribed
    assert said in box_squat["reasoning"], box_squat["reasoning"]

    seed_demo_user()
    log_box_squat(DEMO_USER_ID, reps=reps)
    day = demo_day("Box squat 3×12; bench press 3×8; barbell row 3×8", minutes=45)
    planned = next(e for e in day["draft"]["exercises"] if e["exercise_name"] == "Barbell Box Squat")
    assert line(planned) == prescribed
    assert said in planned["reasoning"], planned["reasoning"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("prescription", "minutes", "reps"),
    [
        ("Box squat 4×5; bench press 4×5; barbell row 4×5", 45, 12),  # the drafted moderate set kept
        ("Box squat 4×5; bench press 4×5; barbell row 4×5; overhead press 4×5", 30, 12),
        (
            "Box squat 4×5-8; bench press 4×5-8; barbell row 4×5-8; overhead press 4×5-8",
            30,
            8,
        ),  # the range's top
        ("Box squat 4×5-8; bench press 4×5-8; barbell row 4×5-8", 45, 8),
    ],
)
def test_a_plan_days_knee_work_keeps_the_knee_rest_and_is_said_once(
    prescription: str, minutes: int, reps: int
) -> None:
    """A plan day's strength set of knee work kept moderate had whatever rest the day's fit gave it (4×12 rest 120 s
    in a 45-minute day, 4×8 rest 60 s in a 30-minute one): now the knee's 90 s in every day; and the user is told
    once that it is kept moderate, not twice (the draft's note and the plan's)."""
    seed_demo_user()
    day = demo_day(prescription, minutes=minutes)
    squat = next(e for e in day["draft"]["exercises"] if e["exercise_name"] == "Barbell Box Squat")
    assert (squat["sets"], squat["reps"], squat["rest_sec"]) == (4, [reps] * 4, KNEE_WORK_REST_SEC), squat
    said = " ".join(day["draft_notes"])
    assert said.count("moderate for your knee") == 1, day["draft_notes"]  # both notes say it
