"""What the injury checks read in a user's words and in a model's free text: an everyday word is no lift ("hard
but clean"), a deep knee bend is one whatever its pattern (a child's pose), and a knee that is only mildly bothered
in deep lunges keeps knee-friendly quad work (the 2026-11-27 trials)."""

from __future__ import annotations

import pytest

from datasources_app.catalog import MILD_BODY_PARTS, derive_movement_pattern
from datasources_app.models import Exercise, Preference
from datasources_app.services import set_current_location, set_location_equipment, upsert_profile
from tests.datasources_app.factories import LocationFactory
from tests.tools_app.test_plan_drafting import demo_week
from tests.tools_app.workout_support import GYM_EQUIPMENT, Trainee, hold_exercise, make_trainee, reps_exercise
from tools_app.workout_validation import Injury, injuries_from, unsafe_named_exercises

DEMO_KNEE = "Mild discomfort in the left knee during deep lunges; no other injuries."
EVERYONE = injuries_from(
    profile_injuries="ACL surgery on the left knee; lower back pain; shoulder impingement; sore hip",
    limitations=[],
    preferences=(),
)


def refused(text: str) -> list[str]:
    return unsafe_named_exercises([("Wed", text)], EVERYONE)


@pytest.mark.parametrize(
    "text",
    [
        "First time on these, so adjust the loads so the last rep is hard but clean.",
        "Keep every rep slow and clean",
        "Clean form over heavy weight; keep it clean",
        "Three sessions in a row is fine",
        "Leg swings and arm swings, 10 each side",
        "Dip your hips at the bottom; a dip in energy is normal",
        "Good morning! Today is pull day",
        "Hop in the shower after",
        "Jump straight into your working sets",
        "Finish with an easy walk",
        "You're bound to feel sore; the fatigue may carry over",
        "This week has a twist: bridge the gap with more volume",
    ],
)
def test_everyday_words_in_free_text_are_no_lift(text: str) -> None:
    assert refused(text) == []


@pytest.mark.parametrize(
    "text, named",
    [
        ("Power clean 5x3 @ 60kg", "Power clean"),
        ("Hang clean — 4x3", "Hang clean"),
        ("Cleans 5x3", "Cleans"),
        ("Clean and jerk 5x2", "Clean"),
        ("Clean & press 3x5", "Clean & press"),
        ("Kettlebell swings 3x15", "Kettlebell swings"),
        ("Swings 3x15", "Swings"),
        ("Push-ups, dips", "dips"),
        ("Bench dip 3x10", "Bench dip"),
        ("Barbell good morning 3x8", "Barbell good morning"),
        ("Upright row 3x12", "Upright row"),
        ("Pogo hops 3x20", "Pogo hops"),
        ("Box jumps 3x5", "Box jumps"),
        ("Box jump up to a 50 cm box, 3x5", "Box jump up to a"),
        ("Farmer's walk 3x40m", "Farmer's walk"),
        ("Russian twists 3x20", "Russian twists"),
        ("Lateral bounds 3x6", "Lateral bounds"),
        ("Single-leg glute bridge 3x12", "Single-leg glute bridge"),
    ],
)
def test_exercise_names_in_free_text_are_still_caught(text: str, named: str) -> None:
    assert any(problem.startswith(f"Wed: '{named}' is unsafe") for problem in refused(text)), refused(text)


def test_the_recorded_week_note_hard_but_clean_passes_the_knee_check() -> None:
    """The 2026-11-27 trial's week (demo user, knee): its pull day's note read 'clean' as the olympic lift."""
    knee = injuries_from(profile_injuries=DEMO_KNEE, limitations=["knee"], preferences=())
    note = "First time on most of these here, so the loads are a starting point: adjust so the last rep is hard but clean."
    assert unsafe_named_exercises([("Wed", note)], knee) == []


def test_a_childs_pose_is_a_deep_knee_bend_for_a_knee() -> None:
    knee = injuries_from(profile_injuries=DEMO_KNEE, limitations=["knee"], preferences=())
    problems = unsafe_named_exercises([("Wed", "## Cool Down\n- Child's pose, 45s")], knee)
    assert len(problems) == 1 and "'Child's pose' is unsafe for the user's knee" in problems[0]
    assert "deep bend" in problems[0]


def test_a_week_that_keeps_its_knee_work_in_a_pain_free_range_passes_for_a_mild_knee() -> None:
    """The second 2026-11-27 trial: the knee advice recommends step-ups to a low box and a pain-free range, and the
    model's week said exactly that ('Leg press (partial depth, pain-free range)'; 'Step-ups and leg extensions stay
    in a pain-free range'), yet the check refused both as deep bends; the first trial's note saying what a lift
    keeps the knee out of was read as a deep bend itself. A knee said to hurt stays strict, and a deep squat is
    deep whatever the sentence says."""
    mild = injuries_from(profile_injuries=DEMO_KNEE, limitations=["knee"], preferences=())
    strict = injuries_from(profile_injuries="Knee pain", limitations=["knee"], preferences=())
    texts = [
        ("Week 1", "Leg press (partial depth, pain-free range), incline dumbbell press, seated cable row"),
        ("Fri", "Step-ups and leg extensions stay in a pain-free range for the left knee."),
        ("Fri", "3. Dumbbell Step-Up to a low box — 3x8 each leg @ 15kg each hand"),
        # The third trial's week: the qualifier after a colon, or in brackets after the name.
        ("Mon", "1. Squat: Box squat to a high box — 4x5 @ 80kg"),
        ("Wed", "- Dumbbell Step-Up (low box) — 3x8 each leg"),
        ("Wed", "Hack squat to a comfortable depth, leg curls"),
    ]
    assert unsafe_named_exercises(texts, mild) == []
    assert len(unsafe_named_exercises(texts, strict)) == 9
    # The first trial's microcycle note said what a lift keeps the knee out of; it was read as a deep bend.
    note = [("Wed", "Trap bar deadlift keeps the knee out of a deep bend")]
    assert unsafe_named_exercises(note, mild) == unsafe_named_exercises(note, strict) == []
    squat = [("Wed", "Back squat, keeping the knee out of a deep bend")]
    assert unsafe_named_exercises(squat, mild) == []
    assert unsafe_named_exercises(squat, strict)[0].startswith("Wed: 'Back squat' is unsafe")
    (deep,) = unsafe_named_exercises([("Mon", "Deep squats, kept in a pain-free range")], mild)
    assert deep.startswith("Mon: 'Deep squats' is unsafe for the user's knee")
    (bare,) = unsafe_named_exercises([("Fri", "Step-ups 3x8 each leg")], mild)
    assert bare.startswith("Fri: 'Step-ups' is unsafe for the user's knee")


def test_one_problem_in_every_week_is_said_once_with_its_weeks() -> None:
    """A plan's weeks share their notes: the same unsafe lift in six weeks is one problem naming the six weeks
    (the trial's model read the same 600 characters six times)."""
    knee = injuries_from(profile_injuries=DEMO_KNEE, limitations=["knee"], preferences=())
    weeks = [(f"Week {number}", "Back squat, bench press, barbell row") for number in range(1, 7)]
    (problem,) = unsafe_named_exercises(weeks, knee)
    assert problem.startswith("Week 1, Week 2, Week 3, Week 4, Week 5, Week 6: 'Back squat' is unsafe")


def generate(trainee: Trainee, *exercises: dict[str, object]) -> tuple[bool, str]:
    result = trainee.run("generate_workout", {"workout": {"title": "Legs", "exercises": list(exercises)}})
    return result.success, result.raw_formatted


def quads(order: int, name: str, **overrides: object) -> dict[str, object]:
    muscles = [{"muscle": "Quadriceps", "share": 0.7}, {"muscle": "Glutes", "share": 0.3}]
    return reps_exercise(
        order, exercise_name=name, muscles_utilized=muscles, reasoning="Quad work.", **overrides
    )


@pytest.mark.django_db
def test_generate_workout_refuses_a_childs_pose_for_a_knee() -> None:
    trainee = make_trainee()
    upsert_profile(user_id=trainee.user_id, injuries=DEMO_KNEE, limitations=["knee"])
    pose = hold_exercise(
        2, exercise_name="Child's Pose", muscles_utilized=[{"muscle": "Lower Back", "share": 1.0}], sets=1
    )
    pose["hold_sec"] = [45]
    ok, text = generate(
        trainee, quads(1, "Dumbbell Step-Up to a Low Box", equipment=["dumbbells"], implements=2), pose
    )
    assert not ok and "exercise 2 'Child's Pose': unsafe for the user's knee" in text, text
    assert "exercise 1" not in text


@pytest.mark.django_db
def test_a_mild_knee_keeps_knee_friendly_quad_work_and_says_why() -> None:
    """Mild discomfort in deep lunges: leg extensions, leg curls, box squats, wall sits and step-ups to a low box
    stay; a goblet squat (full depth) and a step-up onto a bench do not, and the refusal says in one sentence what
    is kept and why."""
    trainee = make_trainee()
    upsert_profile(user_id=trainee.user_id, injuries=DEMO_KNEE, limitations=["knee"])
    kept = [
        quads(1, "Leg Extension", equipment=[]),
        quads(2, "Lying Leg Curl", equipment=[]),
        quads(3, "Barbell Box Squat", equipment=["barbell", "squat_rack"]),
        quads(4, "Dumbbell Step-Up to a Low Box", equipment=["dumbbells"], implements=2),
        hold_exercise(5, exercise_name="Wall Sit", muscles_utilized=[{"muscle": "Quadriceps", "share": 1.0}]),
    ]
    ok, text = generate(trainee, *kept)
    assert "unsafe" not in text, text
    ok, text = generate(
        trainee, quads(1, "Goblet Squat", equipment=["dumbbells"]), quads(2, "Dumbbell Step-Up")
    )
    assert not ok and "exercise 1 'Goblet Squat': unsafe for the user's knee" in text
    assert "exercise 2 'Dumbbell Step-Up': unsafe for the user's knee" in text
    assert (
        "the user has only mild discomfort in deep knee bends, so keep the knee out of deep flexion under load"
        in text
    )
    assert "keep knee-friendly quad and hamstring work in a pain-free range" in text


@pytest.mark.django_db
@pytest.mark.parametrize(
    "injuries",
    ["knee pain", "Mild discomfort in the left knee", "ACL surgery in May, mild discomfort in deep lunges"],
)
def test_a_knee_said_to_hurt_or_operated_on_stays_strict(injuries: str) -> None:
    trainee = make_trainee()
    upsert_profile(user_id=trainee.user_id, injuries=injuries, limitations=["knee"])
    ok, text = generate(trainee, quads(1, "Leg Extension", equipment=[]))
    assert not ok and "unsafe for the user's knee" in text


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["Marching Lunge", "Low-Impact Jump Squat", "Low Impact Step-Up"])
def test_a_lunge_or_a_jump_called_marching_or_low_impact_is_still_refused_for_a_knee_that_hurts(
    name: str,
) -> None:
    """The low-impact cardio rule reads the moves it names (marching high knees, step jacks, shadow boxing), not
    any name with "march" or "low impact" in it: a lunge stays a lunge for a sore knee."""
    trainee = make_trainee()
    upsert_profile(user_id=trainee.user_id, injuries="Knee pain when I squat or kneel.", limitations=["knee"])
    ok, text = generate(trainee, quads(1, name, equipment=[]))
    assert not ok and "unsafe for the user's knee" in text, text


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["Marching High Knees", "Low-Impact Skater", "Step Jacks", "Shadow Boxing"])
def test_low_impact_cardio_moves_read_as_cardio_with_a_foot_down(name: str) -> None:
    assert derive_movement_pattern(name) == "cyclical"


@pytest.mark.django_db
def test_draft_workout_gives_a_mildly_bothered_knee_quad_work_and_no_deep_bends() -> None:
    trainee = make_trainee()
    upsert_profile(user_id=trainee.user_id, injuries=DEMO_KNEE, limitations=["knee"])
    machines = LocationFactory.create(
        user_id=trainee.user_id,
        name="Leg Gym",
        equipment=[*GYM_EQUIPMENT, "leg_extension_machine", "plyo_box"],
    )
    set_current_location(user_id=trainee.user_id, location_id=machines.id)
    result = trainee.run("draft_workout", {"focus": ["legs"], "minutes": 45})
    assert result.success, result.formatted
    exercises = result.artifact["payload"]["exercises"] if result.artifact else []
    catalogue = {e.name: e for e in Exercise.objects.filter(name__in=[x["exercise_name"] for x in exercises])}
    quad_work = [name for name, e in catalogue.items() if (e.primary_muscles or [""])[0] == "Quadriceps"]
    assert quad_work, [x["exercise_name"] for x in exercises]
    assert not {"Child's Pose", "Goblet Squat", "Barbell Back Squat", "Dumbbell Lunge"} & set(catalogue)
    # One sentence for the knee: the deep bends left out, and the quad work that stays kept moderate.
    knee = [note for note in result.data["adaptations"] if "deep bends" in note]
    assert len(knee) == 1 and "moderate" in knee[0], result.data["adaptations"]


@pytest.mark.django_db
def test_the_demo_users_plan_week_holds_knee_friendly_quad_work() -> None:
    """The demo user (mild discomfort in deep lunges) at the Gym: a plan's drafted week has quad work a coach keeps
    for that knee, and no deep squat, lunge or child's pose."""
    week = demo_week(("main lifts 3×8-12, RPE 7; accessories 3×10-15",) * 3)
    names = {exercise["exercise_name"] for day in week for exercise in day["draft"]["exercises"]}
    catalogue = {exercise.name: exercise for exercise in Exercise.objects.filter(name__in=names)}
    quad_work = {name for name, e in catalogue.items() if (e.primary_muscles or [""])[0] == "Quadriceps"}
    assert quad_work & {"Leg Extension", "Barbell Box Squat", "Wall Sit"}, quad_work
    deep = {
        "Barbell Back Squat",
        "Goblet Squat",
        "Leg Press",
        "Dumbbell Lunge",
        "Walking Lunge",
        "Child's Pose",
    }
    assert not deep & names, deep & names


# --- the last read's cases: what a range word, a tag or a number must not let through --------------------------
HURTING = injuries_from(profile_injuries="Knee pain", limitations=["knee"], preferences=())
MILD = injuries_from(profile_injuries=DEMO_KNEE, limitations=["knee"], preferences=())


@pytest.mark.parametrize(
    "text",
    [
        "Hip thrusts keep the knee out of deep flexion and jump squats 3x10",
        "Trap bar deadlift keeps the knee out of a deep bend and reverse lunges 3x10",
        "Jump up onto a box 3x5",
        "Jump on the box 3x5",
        "Hop on one leg 3x10",
    ],
)
def test_a_knee_that_hurts_still_refuses_the_lift_after_a_safety_phrase_or_a_word_with_sets(
    text: str,
) -> None:
    assert unsafe_named_exercises([("Wed", text)], HURTING), text


@pytest.mark.parametrize(
    "text",
    [
        "Front squats 4x6 and Bulgarian split squats 3x8; stay pain-free",
        "Week 2: back squats 4x6, walking lunges 3x10… Keep everything pain-free.",
        "Back squat 5x5. Step-ups to a low box",
    ],
)
def test_a_range_word_in_another_sentence_keeps_no_lift_short_for_a_mild_knee(text: str) -> None:
    assert unsafe_named_exercises([("Wed", text)], MILD), text


@pytest.mark.parametrize(
    ("injuries", "tags"),
    [
        (DEMO_KNEE, ["acl_reconstruction"]),
        (DEMO_KNEE, ["knee pain"]),
        ("A lot of discomfort in my knee when squatting", ["knee"]),
        ("My knee hurts a lot when I squat, not just mild discomfort", ["knee"]),
        ("Moderate knee pain during squats", ["knee"]),
        ("Mild discomfort in the knee during squats, post-op 2 months", ["knee"]),
        ("Mild discomfort in the knee during squats after a knee replacement", ["knee"]),
        ("Discomfort in the left knee during deep lunges", ["knee"]),
    ],
)
def test_a_knee_said_to_be_more_than_mildly_bothered_stays_strict(injuries: str, tags: list[str]) -> None:
    knee = injuries_from(profile_injuries=injuries, limitations=tags, preferences=())
    assert unsafe_named_exercises([("Wed", "Leg extension 3x12")], knee), (injuries, tags)
    assert unsafe_named_exercises([("Wed", "Leg extension 3x12")], MILD) == []


def test_a_name_that_rules_out_a_deep_bend_is_no_deep_bend() -> None:
    assert unsafe_named_exercises([("Wed", "Hip Thrust (no deep knee bend) 3x10")], MILD) == []


# The knee trial of 2026-11-27 evening: the user said "my left knee has been cranky on deep squats lately" and the
# model saved this note; the knee turned strict (every squat, leg extension and leg curl out of a "stronger legs"
# plan) because the guidance's own safety rule said "sharp knee pain".
TRIAL_KNEE_NOTE = Preference(
    category="injury",
    description="Left knee has been cranky on deep squats lately (also mild discomfort on deep lunges).",
    guidance=(
        "Keep knee-dominant lifts in a pain-free range: box squats to a box at or just above parallel, no "
        "deep/ass-to-grass squats or deep lunges, no jumping or pistol-type single-leg squats. Favour hip-dominant "
        "work (hinges, hip thrusts, glute bridges) and controlled tempo; build quads with partial-range and machine "
        "work that the knee tolerates. Stop any exercise that causes sharp knee pain."
    ),
)


def knee_with(*notes: Preference) -> tuple[Injury, ...]:
    return injuries_from(profile_injuries=DEMO_KNEE, limitations=["knee"], preferences=notes)


def test_a_note_whose_guidance_holds_safety_rules_keeps_a_mild_knee_mild() -> None:
    knee = knee_with(TRIAL_KNEE_NOTE)
    assert unsafe_named_exercises([("Mon", "Box squat 4x6, leg extension 3x12, leg curl 3x12")], knee) == []
    assert unsafe_named_exercises([("Mon", "Back squat to full depth 5x5")], knee)
    assert unsafe_named_exercises([("Mon", "Walking lunges 3x10")], knee)


@pytest.mark.parametrize(
    "description",
    [
        "My knee has been cranky on deep squats",
        "Knee gets a bit achy during lunges",
        "Grumpy knee when squatting",
    ],
)
def test_everyday_words_for_a_mild_knee_are_mild(description: str) -> None:
    knee = knee_with(Preference(category="injury", description=description, guidance=""))
    assert unsafe_named_exercises([("Mon", "Leg extension 3x12")], knee) == []


@pytest.mark.parametrize(
    ("description", "guidance"),
    [
        ("Cranky knee on deep squats", "The user had ACL surgery on this knee in May."),
        ("Knee cranky on squats after a meniscus tear", "Keep it pain-free."),
        ("My knee hurts when I squat", "Stop if it hurts."),
    ],
)
def test_a_note_that_says_more_of_the_knee_still_makes_it_strict(description: str, guidance: str) -> None:
    knee = knee_with(Preference(category="injury", description=description, guidance=guidance))
    assert unsafe_named_exercises([("Mon", "Leg extension 3x12")], knee), (description, guidance)


@pytest.mark.django_db
def test_a_refusals_safe_options_are_not_the_workouts_own_and_not_bands_at_a_gym() -> None:
    """The knee trial's refused box squat offered 'Trap Bar Deadlift' (already exercise 2), a band good morning
    and a band adduction at a gym with barbells and machines."""
    trainee = make_trainee()
    set_location_equipment(
        location=trainee.gym, equipment_slugs=[*GYM_EQUIPMENT, "trap_bar", "resistance_bands"]
    )
    set_current_location(user_id=trainee.user_id, location_id=trainee.gym.pk)
    upsert_profile(user_id=trainee.user_id, injuries="knee pain when squatting", limitations=["knee"])
    hinge = reps_exercise(
        2,
        exercise_name="Trap Bar Deadlift",
        equipment=["trap_bar"],
        load_each=[60, 60, 60],
        muscles_utilized=[{"muscle": "Hamstrings", "share": 0.6}, {"muscle": "Glutes", "share": 0.4}],
        reasoning="Hinge.",
    )
    squat = quads(1, "Barbell Box Squat", equipment=["barbell", "squat_rack"], load_each=[60, 60, 60])
    ok, text = generate(trainee, squat, hinge)
    assert not ok
    options = text.split("safe options here for these muscles: ", 1)[1].split("\n", 1)[0].split(", ")
    assert len(options) == 4, options
    assert "Trap Bar Deadlift" not in options, options
    assert not [name for name in options if name.startswith("Band ")], options


def test_a_nordic_curl_is_no_knee_friendly_hamstring_work_even_for_a_mild_knee() -> None:
    """Two trials' legs drafts gave the mildly bothered demo knee Nordic curls: kneeling, the hamstrings at their
    limit. Leg curls on a machine stay."""
    assert unsafe_named_exercises([("Mon", "Nordic hamstring curl 3x6")], MILD)
    assert unsafe_named_exercises([("Mon", "Lying leg curl 3x12")], MILD) == []


# The words_and_plan trial of 2026-11-27 (demo knee): the plan step passed Full Body C's "leg press in a pain-free
# range", then the week step refused the same day's week for its note's "Leg press:" and its leg press "sled".
PLAN_FULL_BODY_C = (
    "Full Body C (week 1). Full Body C. Romanian deadlift, incline dumbbell press, seated cable row, leg press in a "
    "pain-free range; core: pallof press. Main lifts 4×5 @ 70% 1RM, RPE 7.0; accessories 3×8-10. Knee: no deep "
    "squats or lunges; keep knee bends in a pain-free range."
)
WEEK_FULL_BODY_C = (
    "Hamstrings, Quadriceps, Chest, Back, Abs. Full Body C. Main lifts 4×5 @ 70% 1RM, RPE 7; accessories 3×8-10\n"
    "# Full Body C (week 1)\n## Warm-Up\n1. Inchworm — 1x10\n## Main Workout\n"
    "1. Romanian Deadlift — 4x5 @ 80kg, rest 120s\n"
    "3. Seated Cable Row — 3x8 @ 42.5kg, rest 90s\n"
    "4. Leg Press (pain-free range) — 3x10 @ 100kg, rest 90s\n"
    "5. Pallof Press — 3x10 each side, rest 60s\n## Notes\n"
    "Main lifts at about RPE 7. Leg press: stop the sled before the left knee feels it; no deep squats or lunges."
)


def test_a_leg_press_kept_in_a_pain_free_range_passes_the_plan_and_the_week_for_a_mild_knee() -> None:
    """One reading wherever the leg press is written: the week's note names the leg press its day keeps in a
    pain-free range, and "the sled" there is the leg press's. A bare leg press is a squat-pattern machine whose sled
    takes the knee past 90°: still a deep bend for this knee, and a knee that hurts keeps no leg press at all."""
    assert unsafe_named_exercises([("week 1 Fri", PLAN_FULL_BODY_C)], MILD) == []
    assert unsafe_named_exercises([("Fri", WEEK_FULL_BODY_C)], MILD) == []
    bare = WEEK_FULL_BODY_C.replace("Leg Press (pain-free range)", "Leg Press")
    problems = unsafe_named_exercises([("Fri", bare)], MILD)  # the item and its note's label
    assert {problem.split("'")[1].lower() for problem in problems} == {"leg press"}, problems
    assert all("deep bend" in problem for problem in problems)
    (problem,) = unsafe_named_exercises([("Fri", "Leg press 3x10")], MILD)
    assert problem.startswith("Fri: 'Leg press' is unsafe for the user's knee") and "deep bend" in problem
    assert unsafe_named_exercises([("Fri", WEEK_FULL_BODY_C)], HURTING)
    # A day's pain-free leg press keeps no other lift short: the other day's bare one is still a deep bend.
    days = [("Mon", "Leg press 3x10"), ("Fri", "Leg press in a pain-free range 3x10")]
    (problem,) = unsafe_named_exercises(days, MILD)
    assert problem.startswith("Mon: 'Leg press' is unsafe")


def test_a_leg_press_kept_short_in_its_name_or_by_no_deep_bend_reads_the_same() -> None:
    """ "(no deep knee bend)" is a depth cue, not what a sentence leaves out: it keeps a mild knee's leg press, and a
    knee that hurts no longer has it waved through as a sentence of "no"."""
    line = "4. Leg Press (no deep knee bend) — 3x10 @ 100kg, rest 90s"
    assert unsafe_named_exercises([("Fri", line)], MILD) == []
    assert unsafe_named_exercises([("Fri", line)], HURTING)[0].startswith("Fri: 'Leg Press' is unsafe")


@pytest.mark.parametrize(
    "text",
    [
        "Leg press: stop the sled before the left knee feels it",
        "Leg press: load the sled light and stop before it hurts",
        "Leg press, 3x10: the sled is shared, so wait your turn",
    ],
)
def test_the_sled_of_a_leg_press_is_no_sled_push(text: str) -> None:
    problems = unsafe_named_exercises([("Fri", text)], MILD)
    assert not [problem for problem in problems if "locomotion" in problem], problems


@pytest.mark.parametrize(
    "text, named",
    [
        ("Sled push 4x20m", "Sled push"),
        ("Sled drag, 4 x 20m", "Sled drag"),
        ("Heavy sled pull 4x20m", "Heavy sled pull"),
        ("Push the sled 4x20m", "Push the sled"),
        ("Sleds 4x20m", "Sleds"),
    ],
)
def test_a_sled_used_as_a_lift_is_still_locomotion_for_a_knee_that_hurts(text: str, named: str) -> None:
    """Sled work is locomotion for a knee that hurts; a mildly bothered knee keeps it (no deep bend, no impact)."""
    assert unsafe_named_exercises([("Fri", text)], MILD) == []
    (problem,) = unsafe_named_exercises([("Fri", text)], HURTING)
    assert problem.startswith(f"Fri: '{named}' is unsafe") and "locomotion" in problem, problem


@pytest.mark.parametrize(
    "text",
    [
        "Squat only to a box at parallel, 4x5",
        "Box squat to parallel 4x5 @ 80kg",
        "Squats — box squat to parallel, 4x5",
        "Keep the leg press above 90° — 3x10",
        "Leg press 3x10, keep it above 90 degrees",
        "Goblet squat 3x10, no deeper than parallel",
        "Back squat 4x5 — not below parallel",
    ],
)
def test_a_coachs_depth_cue_keeps_a_lift_short_for_a_mild_knee_and_not_for_one_that_hurts(text: str) -> None:
    assert unsafe_named_exercises([("Wed", text)], MILD) == [], text
    assert unsafe_named_exercises([("Wed", text)], HURTING), text


@pytest.mark.django_db
def test_generate_workout_keeps_a_leg_press_named_with_its_depth_for_a_mild_knee() -> None:
    """The workout check reads the depth cue in the name the way the plan and the week read it in their text."""
    trainee = make_trainee()
    upsert_profile(user_id=trainee.user_id, injuries=DEMO_KNEE, limitations=["knee"])
    ok, text = generate(
        trainee,
        quads(1, "Leg Press (above 90°)", equipment=[]),
        quads(2, "Box Squat to Parallel", equipment=["barbell", "squat_rack"]),
        quads(3, "Goblet Squat (no deeper than parallel)", equipment=["dumbbells"]),
    )
    assert "unsafe" not in text, text
    ok, text = generate(trainee, quads(1, "Leg Press", equipment=[]))
    assert not ok and "exercise 1 'Leg Press': unsafe for the user's knee" in text, text


def test_a_lunge_to_parallel_is_still_the_lunge_that_bothers_a_mild_knee() -> None:
    """'To parallel' keeps a squat short of a deep bend; a lunge to parallel is an ordinary lunge, the movement
    the demo knee is bothered in. A partial one stays."""
    assert unsafe_named_exercises([("Mon", "Reverse lunge to parallel 3x8")], MILD)
    assert unsafe_named_exercises([("Mon", "Box squat to parallel 4x5")], MILD) == []
    assert unsafe_named_exercises([("Mon", "Reverse lunge (partial range) 3x8")], MILD) == []


# From the last read of the change (each passed for the demo's mild knee before these fixes).
@pytest.mark.parametrize(
    "guidance",
    [
        "No pain at rest but sharp pain in deep squats.",
        "Always hurts when I kneel, and the knee swells.",
        "When I squat deep the knee gives way.",
        "Keep in mind the knee had surgery.",
        "Use caution: torn meniscus in that knee.",
    ],
)
def test_guidance_that_says_how_bad_the_knee_is_makes_it_strict(guidance: str) -> None:
    note = Preference(category="injury", description="Knee", guidance=guidance)
    assert unsafe_named_exercises([("Mon", "Leg extension 3x12")], knee_with(note)), guidance


@pytest.mark.parametrize(
    "text",
    [
        "Back squat 5x5 to parallel or below.",
        "Squat at least to parallel, 4x6",
        "Goblet squat 3x10 to 90 degrees or deeper",
        "Mon: Bulgarian split squat (pain-free range) 3x8. Thu: Bulgarian split squat 4x6 @ 20kg, full depth.",
        "Squat to a high box 3x8. Squat 5x5 heavy.",
        "Lunge 3x10. Lunge (partial range) 3x10.",
        "Reverse lunge (no deep knee bend) 3x8",
        "Walking lunge (no deeper than parallel) 3x8",
        "Kneeling leg curl 3x10",
    ],
)
def test_what_still_takes_a_mild_knee_deep_is_refused(text: str) -> None:
    assert unsafe_named_exercises([("Mon", text)], MILD), text


def test_a_squat_kept_to_parallel_passes_for_a_mild_knee() -> None:
    assert unsafe_named_exercises([("Mon", "Back squat (no deeper than parallel) 3x5")], MILD) == []
    assert unsafe_named_exercises([("Mon", "Back squat 4x5, not below parallel")], MILD) == []


# The knee trial of the evening: the model's note had a label ("Left knee: keep loaded knee bending at or above
# parallel"), "a moderate box" and "moderate leg extensions", and the knee turned strict again.
EVENING_KNEE_NOTE = Preference(
    category="injury",
    description="My left knee has been cranky on deep squats lately; I want stronger legs without wrecking it.",
    guidance=(
        "Left knee: keep loaded knee bending at or above parallel (box squats to a parallel-or-higher box, leg press "
        "without the bottom range, step-ups to a moderate box, split squats with a short range). Build quads with "
        "knee-friendly options (box squat, leg press, Spanish squat, terminal knee extensions, moderate leg "
        "extensions) and lean on hip-dominant work (RDLs, hip thrusts, hamstring curls). No deep or ass-to-grass "
        "squats, pistols, sissy squats or jumping. Progress load slowly and stop any set that hurts."
    ),
)


def test_a_labelled_note_with_moderate_loads_keeps_a_mild_knee_mild() -> None:
    (knee,) = knee_with(EVENING_KNEE_NOTE)
    assert knee.part is MILD_BODY_PARTS["knee"]
    kept = "Box squat to a parallel-or-higher box 4x6, leg press without the bottom range 3x10, leg extension 3x12"
    assert unsafe_named_exercises([("Tue", kept)], (knee,)) == []
    assert unsafe_named_exercises([("Tue", "Back squat to full depth 5x5")], (knee,))


def test_a_leg_press_without_the_bottom_range_is_still_a_leg_press_for_a_knee_that_hurts() -> None:
    """'without' is a depth cue there, not a sentence saying what to leave out (which skipped the whole sentence)."""
    assert unsafe_named_exercises([("Tue", "Leg press without the bottom range 3x10")], HURTING)


def test_moderate_pain_is_still_more_than_mild() -> None:
    note = Preference(category="injury", description="Moderate knee pain during squats", guidance="")
    assert unsafe_named_exercises([("Mon", "Leg extension 3x12")], knee_with(note))


@pytest.mark.parametrize(
    "text",
    [
        "Box squat 4x6: squat only as deep as the box",
        "Leg Press (pain-free range, knees never past about 90°) 3x10",
        "Sled push 4x20m",
        "Finish with the sled for 10 minutes",
    ],
)
def test_the_second_knee_trials_knee_friendly_work_passes_for_a_mild_knee_not_for_one_that_hurts(
    text: str,
) -> None:
    """Refused for the demo knee in the second evening trial, each a coach's standard work for a knee bothered only in
    deep squats and lunges."""
    assert unsafe_named_exercises([("Mon", text)], MILD) == []
    assert unsafe_named_exercises([("Mon", text)], HURTING), text


def test_a_terminal_knee_extension_is_no_deep_bend() -> None:
    assert unsafe_named_exercises([("Mon", "Band terminal knee extension 3x15")], MILD) == []


# The third evening knee trial: two notes a model wrote for "my left knee has been cranky on deep squats lately".
THIRD_TRIAL_NOTES = [
    "Left knee: keep knee-dominant work in a pain-free range. Squat to a box at or just above parallel (box squat, "
    "goblet squat to box), leg press and hack squat with controlled depth, step-ups, split squats with a short range, "
    "Spanish squats or wall sits and leg extensions through a comfortable range for quad strength. Load hips and "
    "hamstrings hard (RDLs, hip thrusts, leg curls). No deep/ass-to-grass squats, pistols, sissy squats, deep lunges "
    "or jumping while it is cranky. Progress load before depth; back off anything that hurts above 3/10.",
    "Left knee only. Keep knee bends in a pain-free range: box squats to a box at or just above parallel, leg press "
    "and hack squat with controlled depth, low step-ups, Spanish squats, wall sits and leg extensions for quad "
    "strength. Glutes and hamstrings can be loaded normally (RDLs, glute bridges, leg curls). No deep or "
    "ass-to-grass squats, pistols, sissy squats, deep lunges or jumping while it is cranky. Add load before depth; "
    "stop anything that hurts above 3/10.",
]


@pytest.mark.parametrize("guidance", THIRD_TRIAL_NOTES)
def test_a_models_coaching_in_a_note_neither_injures_the_hip_nor_makes_a_mild_knee_strict(
    guidance: str,
) -> None:
    """The first note made a hip injury of "Load hips and hamstrings hard", the second a strict knee of "Left knee
    only.": how bad the knee is, the user's words say; the guidance counts only where it says more than mild."""
    note = Preference(
        category="injury",
        description="My left knee has been cranky on deep squats lately; I want stronger legs without wrecking it.",
        guidance=guidance,
    )
    injuries = knee_with(note)
    assert [injury.part for injury in injuries] == [MILD_BODY_PARTS["knee"]]


def test_a_sentence_saying_what_was_left_out_names_no_lift() -> None:
    text = "Squats, lunges and hinges left out for now to protect the joint."
    assert unsafe_named_exercises([("Mon", text)], HURTING) == []
