"""What a user's words say to leave out: exercise phrases, equipment, and for how long.

Read from a stored preference's free text when it has no exclusion lists ("I hate burpees and jumping"), from
the `avoid` words of a workout brief ("burpees", "barbell", "the bench"), and by the offline coach from a chat
message. Pure functions over text: no database, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from datasources_app.catalog import EQUIPMENT

# Equipment as people say it → the catalogue's equipment slug.
EQUIPMENT_WORDS: dict[str, str] = {
    **{display.lower(): slug for slug, display, _ in EQUIPMENT},
    **{slug.replace("_", " "): slug for slug, _, _ in EQUIPMENT},
    "dumbbell": "dumbbells",
    "db": "dumbbells",
    "dbs": "dumbbells",
    "barbells": "barbell",
    "kettlebells": "kettlebell",
    "kb": "kettlebell",
    "bands": "resistance_bands",
    "band": "resistance_bands",
    "resistance band": "resistance_bands",
    "bench": "bench",
    "benches": "bench",
    "rack": "squat_rack",
    "squat rack": "squat_rack",
    "pull-up bar": "pull_up_bar",
    "pullup bar": "pull_up_bar",
    "cables": "cable_machine",
    "cable": "cable_machine",
    "treadmill": "treadmill",
    "bike": "stationary_bike",
    "rower": "rowing_machine",
    "rope": "jump_rope",
    "skipping rope": "jump_rope",
    "box": "plyo_box",
    "rings": "gymnastic_rings",
    "trx": "suspension_trainer",
}
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "ten": 10}


@dataclass(frozen=True)
class PreferenceAsk:
    """Something to avoid: exercise phrases and equipment, and for how long."""

    phrases: tuple[str, ...] = ()
    equipment: tuple[str, ...] = ()
    expires_in_days: int | None = None  # None = permanent
    today_only: bool = False


def singular(word: str) -> str:
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def _has(pattern: str, text: str) -> bool:
    return re.search(pattern, text) is not None


def _number(token: str) -> int | None:
    return int(token) if token.isdigit() else _NUMBER_WORDS.get(token)


def parse_equipment(text: str) -> tuple[str, ...]:
    """Equipment slugs named in `text` (longest names first, so "squat rack" beats "rack")."""
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for phrase in sorted(EQUIPMENT_WORDS, key=len, reverse=True):
        for match in re.finditer(rf"\b{re.escape(phrase)}s?\b", text):
            span = (match.start(), match.end())
            if any(start < span[1] and span[0] < end for start, end in taken):
                continue
            taken.append(span)
            found.append((match.start(), EQUIPMENT_WORDS[phrase]))
    return tuple(dict.fromkeys(slug for _, slug in sorted(found)))


def equipment_named(phrase: str) -> tuple[str, ...]:
    """The equipment a phrase names as a whole ("the bench", "dumbbells or bands"); none for an exercise that
    names its equipment ("bench press", "dumbbell curl": leaving the exercise out keeps the bench)."""
    found = parse_equipment(phrase)
    rest = phrase
    for word in sorted(EQUIPMENT_WORDS, key=len, reverse=True):
        rest = re.sub(rf"\b{re.escape(word)}s?\b", " ", rest)
    rest = re.sub(r"\b(?:the|a|an|my|and|or|any)\b|[,&/]", " ", rest)
    return found if not rest.strip() else ()


def clean_phrase(phrase: str) -> str:
    """An exercise phrase without its filler ("doing burpees this week" → "burpees")."""
    phrase = re.sub(r"^(?:doing|to do|any|the|a|an|all|more|those|these|with)\s+", "", phrase.strip())
    phrase = re.sub(
        r"\s+(?:this week|this month|today|anymore|any more|please|ever|again|for now|from now on|for a while|"
        r"for \w+ (?:days?|weeks?|months?)|until \w+|at all|in my workouts?|in workouts?)$",
        "",
        phrase,
    )
    return phrase.strip(" .,!?'\"")


def split_avoid(phrases: Iterable[str], *, not_exercises: Collection[str] = ()) -> PreferenceAsk:
    """Phrases to leave out, sorted into exercise phrases and equipment ("the bench" is equipment, "burpees"
    an exercise). A phrase in the user's words ("legs today, no lunges") gives what it says to leave out, less
    the words in `not_exercises` ("no legs" says an area, which is no exercise's name)."""
    named: list[str] = []
    for phrase in phrases:
        said = parse_preference(phrase.lower())
        if said.phrases or said.equipment:
            named += [word for word in said.phrases if singular(word) not in not_exercises]
            named += said.equipment
        else:
            named.append(phrase)
    cleaned = [clean_phrase(phrase.lower().replace("_", " ")) for phrase in named]
    cleaned = [phrase for phrase in dict.fromkeys(cleaned) if phrase]
    equipment = tuple(dict.fromkeys(slug for phrase in cleaned for slug in equipment_named(phrase)))
    return PreferenceAsk(
        phrases=tuple(phrase for phrase in cleaned if not equipment_named(phrase)),
        equipment=equipment,
    )


def parse_preference(text: str) -> PreferenceAsk:
    """What to avoid and for how long, from a preference message."""
    phrases: list[str] = []
    for match in re.finditer(
        r"(?:hate|don'?t like|do not like|dislike|can'?t stand|not a fan of|no more|never (?:give me|do|want)|"
        r"please no|avoid|sick of|tired of|don'?t have|do not have|don'?t own|without|no)\s+"
        r"(?P<what>[a-z][a-z0-9' -]*?)(?=\s*(?:[,.;!?]|\band\b|\bbut\b|\bbecause\b|\bsince\b|$))",
        text,
    ):
        phrase = clean_phrase(match.group("what"))
        if phrase and phrase not in ("it", "that", "this", "them", "those"):
            phrases.append(phrase)
    equipment = tuple(dict.fromkeys(slug for phrase in phrases for slug in equipment_named(phrase)))
    exercise_phrases = tuple(phrase for phrase in dict.fromkeys(phrases) if not equipment_named(phrase))
    expires: int | None = None
    today_only = _has(r"\btoday\b|\btonight\b|\bthis session\b|\bright now\b", text)
    if weeks := re.search(r"\bfor (\d+|a|one|two|three|four) weeks?\b", text):
        expires = 7 * (_number(weeks.group(1)) or 1)
    elif days := re.search(r"\bfor (\d+|a|one|two|three|four|five|six|seven|ten) days?\b", text):
        expires = _number(days.group(1)) or 1
    elif _has(r"\bthis week\b|\bfor a week\b|\bfor now\b|\buntil (?:monday|next week)\b", text):
        expires = 7
    elif _has(r"\bthis month\b|\bfor a month\b", text):
        expires = 30
    elif _has(r"\bfor a while\b|\bfor (?:a )?(?:couple|few) (?:of )?weeks\b", text):
        expires = 14
    return PreferenceAsk(
        phrases=exercise_phrases,
        equipment=equipment,
        expires_in_days=None if today_only else expires,
        today_only=today_only,
    )
