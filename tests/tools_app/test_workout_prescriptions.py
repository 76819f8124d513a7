"""Prescriptions a user can read one way only (issue 23 item 7): "each hand" only for a pair of dumbbells
(`implements: 2`), and a circuit's rounds said once, its members without sets or "rest 0 s". Checked where the user
or the model reads them: the tool observation, the model's current-workout block, the session admin's page."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from datasources_app.formatters import Units, format_current_workout
from datasources_app.selectors import get_current_workout
from sessions_app.services import append_event
from tests.tools_app.workout_support import (
    Trainee,
    bodyweight_exercise,
    generate,
    length_now,
    make_trainee,
    reps_exercise,
    told,
)
from tests.trainer_agent.observability.support import login_staff

pytestmark = pytest.mark.django_db


@pytest.fixture
def trainee() -> Trainee:
    return make_trainee()


def hip_thrust(order: int = 1, **overrides: Any) -> dict[str, Any]:
    """The issue's exercise: a hip thrust with ONE dumbbell on the hips (not a catalogue exercise)."""
    exercise = reps_exercise(
        order,
        exercise_name="Dumbbell Hip Thrust",
        reps=[10, 10, 10],
        load_each=[25, 25, 25],
        muscles_utilized=[{"muscle": "Glutes", "share": 0.7}, {"muscle": "Hamstrings", "share": 0.3}],
        reasoning="Glutes, one dumbbell across the hips.",
        implements=1,
    )
    exercise.update(overrides)
    return exercise


def line_of(text: str, name: str) -> str:
    return next(line for line in text.splitlines() if name in line)


def admin_artifact_html(trainee: Trainee, artifact: dict[str, Any]) -> str:
    """The session admin's page for a session whose one event is this artifact, as staff see it."""
    append_event(session=trainee.session, event_type="artifact", data=artifact)
    client = login_staff(Client())
    response = client.get(reverse("admin:sessions_app_agentsessionsummary_change", args=[trainee.session.pk]))
    assert response.status_code == 200
    return response.content.decode()


def admin_row(html: str, name: str) -> str:
    start = html.index(f"<td>{name}</td>")
    return html[html.rindex("<tr>", 0, start) : html.index("</tr>", start)]


def test_a_one_dumbbell_hip_thrust_never_says_each_hand_and_a_pair_does(trainee: Trainee) -> None:
    result = generate(
        trainee, {"exercises": [hip_thrust(1), reps_exercise(2, implements=2), bodyweight_exercise(3)]}
    )
    assert result.success, result.formatted
    stored = result.artifact["payload"]["exercises"]  # type: ignore[index]
    assert [exercise.get("implements") for exercise in stored] == [1, 2, None]

    observation = result.raw_formatted
    assert line_of(observation, "Hip Thrust").endswith("3×10 @ 25kg · rest 90s")
    assert "@ 20/20/22.5kg each hand" in line_of(observation, "Bench Press")

    current = get_current_workout(user_id=trainee.user_id)
    context = format_current_workout(current, Units())
    assert line_of(context, "Hip Thrust") == "○ 1. Dumbbell Hip Thrust (reps) 3×10 @ 25kg"
    assert line_of(context, "Bench Press").endswith("3×10/10/8 @ 20/20/22.5kg each hand")

    html = admin_artifact_html(trainee, result.artifact)  # type: ignore[arg-type]
    assert "<td>3×10 @ 25kg</td>" in admin_row(html, "Dumbbell Hip Thrust")
    assert "each hand" not in admin_row(html, "Dumbbell Hip Thrust")
    assert "<td>3×10/10/8 @ 20/20/22.5kg each hand</td>" in admin_row(html, "Dumbbell Bench Press")


def test_a_catalogue_dumbbell_exercise_defaults_to_the_catalogues_count(trainee: Trainee) -> None:
    """Dumbbell Bench Press holds a pair; a Dumbbell Pullover one dumbbell: said without the model's `implements`."""
    pullover = reps_exercise(2, exercise_name="Dumbbell Pullover")
    result = generate(trainee, {"exercises": [reps_exercise(1), pullover]})
    assert result.success, result.formatted
    stored = result.artifact["payload"]["exercises"]  # type: ignore[index]
    assert [exercise["implements"] for exercise in stored] == [2, 1]
    assert "each hand" in line_of(result.raw_formatted, "Bench Press")
    assert "each hand" not in line_of(result.raw_formatted, "Pullover")


def test_what_changed_says_each_hand_only_for_a_pair(trainee: Trainee) -> None:
    """What adjust_exercise says to tell the user follows `implements` as the line after "Now:" does: a
    one-dumbbell hip thrust made harder is "25→27.5 kg" (only the weight moves), a pair's new load "each hand" (the
    2026-11-26 trial)."""
    result = generate(trainee, {"exercises": [hip_thrust(1), reps_exercise(2, implements=2)]})
    assert result.success, result.formatted
    ids = [exercise["id"] for exercise in result.artifact["payload"]["exercises"]]  # type: ignore[index]

    harder = trainee.run("adjust_exercise", {"exercise_id": ids[0], "change": "harder"})
    assert harder.success, harder.formatted
    assert told(harder) == (
        "Done: Dumbbell Hip Thrust: 25→27.5 kg (only the weight: the same sets and reps). "
        + length_now(harder)
    )
    assert "Now: " in harder.raw_formatted and "@ 27.5kg · rest" in harder.raw_formatted

    heavier = trainee.run(
        "adjust_exercise", {"exercise_id": ids[1], "adjustments": {"load_each": [25, 25, 25]}}
    )
    assert heavier.success, heavier.formatted
    assert told(heavier) == "Done: Dumbbell Bench Press: 20/20/22.5→25 kg each hand. " + length_now(heavier)


def test_what_changed_says_one_or_a_pair_in_words(trainee: Trainee) -> None:
    """One bell made a pair of heavier ones (the 2026-11-27 trial's kettlebell press): what to tell the user reads
    "8 kg→16 kg each hand, one → a pair", never the field name "implements 1→2"."""
    result = generate(trainee, {"exercises": [hip_thrust(1, load_each=[8, 8, 8])]})
    assert result.success, result.formatted
    pair = trainee.run(
        "adjust_exercise",
        {"exercise_id": 1, "adjustments": {"load_each": [16, 16, 16], "implements": 2}},
    )
    assert pair.success, pair.formatted
    assert told(pair) == "Done: Dumbbell Hip Thrust: 8 kg→16 kg each hand, one → a pair. " + length_now(pair)


def test_how_many_dumbbells_must_be_said_and_a_pair_is_only_for_dumbbells_or_kettlebells(
    trainee: Trainee,
) -> None:
    unsaid = hip_thrust(1)
    del unsaid["implements"]
    result = generate(trainee, {"exercises": [unsaid]})
    assert result.data["problems"] == [
        "exercise 1 'Dumbbell Hip Thrust': say how many dumbbells load_each is for: implements: 1 (one) or 2 "
        "(a pair, load_each is each one's weight)"
    ]

    barbell = hip_thrust(1, exercise_name="Barbell Hip Thrust", equipment=["barbell", "bench"], implements=2)
    problems = generate(trainee, {"exercises": [barbell]}).data["problems"]
    assert (
        "exercise 1 'Barbell Hip Thrust': implements 2 (a pair) is for dumbbells or kettlebells only, and this "
        "exercise uses barbell, bench: omit implements"
    ) in problems


def test_a_circuit_says_its_rounds_once_and_its_members_without_sets_or_rest(trainee: Trainee) -> None:
    circuit = {"id": "c1", "type": "circuit", "position": 1, "name": "Glute circuit", "rounds": 3}
    circuit |= {"rest_between_rounds_sec": 60}
    workout = {
        "exercises": [
            hip_thrust(1, sets=1, reps=[12], load_each=[25], rest_sec=0, group=circuit),
            bodyweight_exercise(
                2, sets=1, reps=[15], rest_sec=0, group={"id": "c1", "type": "circuit", "position": 2}
            ),
        ]
    }
    result = generate(trainee, workout)
    assert result.success, result.formatted

    context = format_current_workout(get_current_workout(user_id=trainee.user_id), Units())
    assert line_of(context, "Hip Thrust") == (
        "○ 1. Dumbbell Hip Thrust (reps) 12 @ 25kg [circuit c1, 3 rounds, rest 60s between rounds]"
    )
    assert line_of(context, "Push-Up") == "○ 2. Push-Up (reps) 15 [circuit c1]"

    html = admin_artifact_html(trainee, result.artifact)  # type: ignore[arg-type]
    rows = admin_row(html, "Dumbbell Hip Thrust") + admin_row(html, "Push-Up")
    assert rows.count("3 rounds") == 1 and "rest 60s between rounds" in rows
    assert "<td>12 @ 25kg</td>" in rows and "<td>15</td>" in rows
    assert "<td>0s</td>" not in rows, "no rest between the members of a circuit"
