"""The workout artifact as the model reads it in the conversation (docs/contracts.md §8.3 (text forms))."""

from __future__ import annotations

from typing import Any

from trainer_agent.context import artifact_text
from trainer_agent.offline.reading import artifact_blocks

CUE = "Pain-free range; stop if the knee aches, and keep the box at or above parallel on every rep of every set."


def squat(**extra: Any) -> dict[str, Any]:
    return {
        "id": "ex_a1b2c3",
        "order": 2,
        "exercise_name": "Goblet Squat",
        "exercise_type": "reps",
        "sets": 3,
        "reps": [10, 10, 10],
        "load_each": [16, 16, 16],
        "load_unit": "kg",
        "rest_sec": 90,
        "equipment": ["dumbbells"],
        **extra,
    }


def block(*exercises: dict[str, Any]) -> str:
    return artifact_text(
        {
            "type": "exercise_list",
            "artifact_id": "art_0123456789ab",
            "title": "Legs",
            "payload": {"exercises": list(exercises)},
        }
    )


def test_an_exercises_note_is_on_its_line_cut_short() -> None:
    """A kept cue ("pain-free range") was invisible to the model, which dropped it when it changed the exercise:
    the line now ends with the note, cut at a word within 60 characters and with no "; " (which separates the tags)."""
    line = block(squat(notes=CUE)).splitlines()[2]
    assert line == (
        "2. [ex_a1b2c3] Goblet Squat — 3×10 @ 16kg, rest 90s; equipment: dumbbells; "
        "note: Pain-free range, stop if the knee aches, and keep the box…"
    )
    assert block(squat()).splitlines()[2].endswith("; equipment: dumbbells")  # no note, no tag


def test_the_offline_model_reads_a_line_with_a_note_as_before() -> None:
    """The offline coach's reader takes the same id, name, sets, type and equipment from a line with a note."""
    [with_note] = artifact_blocks([{"role": "user", "content": block(squat(notes=CUE))}])
    [without] = artifact_blocks([{"role": "user", "content": block(squat())}])
    assert (
        with_note.exercises
        == without.exercises
        == [
            {
                "id": "ex_a1b2c3",
                "order": 2,
                "exercise_name": "Goblet Squat",
                "sets": 3,
                "exercise_type": "reps",
                "equipment": ["dumbbells"],
            }
        ]
    )
