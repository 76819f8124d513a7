"""Which exercise of the current workout a reference means: the one resolver of every tool that takes one.

A reference is what the model passes as `exercise_id`, in its own or the user's words:
- an id (`ex_…`, or any id an earlier workout carried) or a 1-based order number ("2", "#2"), as listed;
- a position: a number as listed ("exercise 3", "#3"), or in words ("the first one", "2nd", "the last one"),
  which count the main exercises (not the warm-up's or the cool-down's unless the words name them);
- a name, whole or in part ("goblet squat", "the curls", "bench"), or the equipment ("the dumbbell one").

A name the reference holds whole wins over names that only share words with it; among those, the words
that say what an exercise is count more than its equipment or stance ("dumbbell", "seated"). Equipment is
tried last (for one exercise: not for parts joined by "and"). Where reported sets are meant
(`positions="main"`: the logging tools), a number counts the main exercises too, the ones sets are done
for. A reference that matches several exercises, or none, is an `Unresolved` whose error
lists the candidates (or the workout) with their ids: the model calls again with one, or asks the user.

A tool that can act on several exercises at once (adjust_exercise) reads its reference with
`resolve_exercises`: "all" ("every exercise", "everything", "all main exercises") means every main exercise,
the warm-up and cool-down only when the words name them; parts joined by commas or "and" are each read; and
words that match several exercises mean each of them when they are plural ("the presses", "both curls",
"the dumbbell ones"). Singular words that match several stay a "Which exercise?" ("the press").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from datasources_app.catalog import exercise_name_key, name_words
from datasources_app.workouts import StoredExercise

REFERENCE_DESCRIPTION = "Id (ex_...), order number, or the user's words: 'the last one', 'the curls'."
REFERENCES_DESCRIPTION = (
    REFERENCE_DESCRIPTION[:-1]
    + ". Several in one call: 'all' (every main exercise; the warm-up or cool-down "
    "only if named), ids or numbers joined by commas, or plural words ('the presses')."
)
# Said about an exercise, never naming one ("the one", "that exercise").
_FILLER = frozenset(
    "a an the this that these those it my your to of for with and or on in at please one exercise movement move".split()  # noqa: SIM905
)
# Words of a name that say how, not what: they count less than the others.
_GENERIC = frozenset({"dumbbell", "barbell", "kettlebell", "cable", "machine", "band", "seated", "standing"})
_GENERIC_WEIGHT = 0.3
_ORDINALS = {
    word: number
    for number, word in enumerate(
        "first second third fourth fifth sixth seventh eighth ninth tenth".split(),  # noqa: SIM905
        start=1,
    )
}
_POSITION = re.compile(
    r"\b(?P<ordinal>" + "|".join(_ORDINALS) + r"|(?P<nth>\d{1,2})(?:st|nd|rd|th))\b"
    r"|\b(?:exercises?|numbers?|no\.?|ex)\s*#?\s*(?P<number>\d{1,2})\b|#\s*(?P<hash>\d{1,2})\b"
    r"|\b(?P<last>last|final)\b(?!\s+(?:week|month|time|session|workout|year|night))"
)


@dataclass(frozen=True)
class Unresolved:
    """A reference that names several exercises or none: the error for the model, and the candidates."""

    error: str
    candidates: tuple[StoredExercise, ...] = ()


def resolve_exercise(
    exercises: Sequence[StoredExercise],
    reference: str,
    *,
    positions: Literal["workout", "main"] = "workout",
) -> int | Unresolved:
    """The index in `exercises` of the one exercise `reference` means, else why not (see the module).

    Parts joined by "and" are read one by one ("the fly and the push-ups": both, so it asks which), unless a
    name held whole has the "and" ("Clean and Jerk")."""
    wanted = reference.strip()
    parts = [wanted]
    if not any(
        " and " in f" {exercises[index].exercise_name.lower()} "
        for index in _by_whole_name(exercises, wanted)
    ):
        parts = [part for part in re.split(r"\band\b|&", wanted) if part.strip()] or [wanted]
    indexes = list(
        dict.fromkeys(
            index for part in parts for index in _matches(exercises, part.strip(), positions, len(parts) == 1)
        )
    )
    if len(indexes) == 1:
        return indexes[0]
    return _unresolved(exercises, reference, [exercises[index] for index in indexes])


# Words that mean the whole workout ("all", "everything", "every exercise", "all main exercises"), and the words
# that may come with them without naming an exercise.
_ALL = frozenset("all every everything each whole entire".split())  # noqa: SIM905
_ALL_COMPANIONS = _FILLER | frozenset(
    "exercises main workout them including include plus too also as well rest other others session".split()  # noqa: SIM905
)
_PARTS = {"warmup": ("warm",), "cooldown": ("cool",)}
# "All but the squat": the exercises the words leave out of "all" (the words after it, read as a reference).
_EXCEPT = re.compile(r"\b(?:except(?: for)?|but|apart from|other than|besides|save for)\b", re.IGNORECASE)
# Words saying the main exercises are meant besides a warm-up or cool-down named ("everything including the warm-up").
_MAIN_TOO = frozenset("everything main including include plus too also and well".split())  # noqa: SIM905
_SINGULAR_S = frozenset(
    {"biceps", "triceps", "abs", "glutes", "lats", "quads", "hamstrings", "calves", "traps"}
)
_PLURAL = frozenset("all both each every ones them these those exercises".split())  # noqa: SIM905


def resolve_exercises(exercises: Sequence[StoredExercise], reference: str) -> list[int] | Unresolved:
    """The indexes in `exercises`, in workout order, of every exercise `reference` means (see the module): one
    or several, else why not."""
    wanted = reference.strip()
    cut = _EXCEPT.search(wanted)
    head, rest = (wanted[: cut.start()], wanted[cut.end() :].strip()) if cut else (wanted, "")
    whole = _whole_workout(exercises, head)
    if whole is not None and rest:  # "all but the squat", "everything except the curls"
        left_out = resolve_exercises(exercises, rest)
        if isinstance(left_out, Unresolved):
            return left_out
        whole = [index for index in whole if index not in left_out]
    if whole is not None:
        return whole or _unresolved(exercises, wanted, [])
    if not any(
        " and " in f" {exercises[i].exercise_name.lower()} " for i in _by_whole_name(exercises, wanted)
    ):
        parts = [part.strip() for part in re.split(r"\band\b|&|,|;", wanted) if part.strip()] or [wanted]
    else:
        parts = [wanted]
    found: list[int] = []
    for part in parts:
        indexes = _matches(exercises, part, "workout", len(parts) == 1)
        if not indexes or (len(indexes) > 1 and not _plural(part)):
            return _unresolved(exercises, part, [exercises[index] for index in indexes])
        found.extend(indexes)
    return sorted(set(found))


def _whole_workout(exercises: Sequence[StoredExercise], text: str) -> list[int] | None:
    """The exercises words like "all" or "everything including the warm-up" mean, or None for other words."""
    words = re.findall(r"[a-z]+", text.lower().replace("-", " "))
    if not words or not _ALL & set(words):
        return None
    named = {part for part, (first,) in _PARTS.items() if first in words}
    said = {word for word in words if word not in ("up", "down", "warmup", "cooldown")} - {
        first for (first,) in _PARTS.values()
    }
    if not said <= _ALL | _ALL_COMPANIONS:
        return None
    named |= {part for part in _PARTS if part in words}
    main = not named or bool(_MAIN_TOO & set(words))
    return [
        index
        for index, exercise in enumerate(exercises)
        if (main and exercise.section == "main")
        or (exercise.group is not None and exercise.group.type in named)
    ]


def _plural(text: str) -> bool:
    """Whether words mean more than one exercise: "both", "the dumbbell ones", a plural noun ("the presses")."""
    words = re.findall(r"[a-z]+", text.lower())
    return any(
        word in _PLURAL or (word.endswith("s") and word not in _SINGULAR_S and name_words(word) != (word,))
        for word in words
    )


def _matches(
    exercises: Sequence[StoredExercise], wanted: str, positions: str, by_equipment: bool
) -> list[int]:
    for index, exercise in enumerate(exercises):
        if str(exercise.id or "").lower() == wanted.lower():
            return [index]
    number = wanted.lstrip("#")
    if number.isascii() and number.isdigit():
        return [index for index, exercise in enumerate(exercises) if exercise.order == int(number)]
    return (
        _by_position(exercises, wanted.lower(), positions)
        or _by_whole_name(exercises, wanted)
        or _by_name_words(exercises, wanted)
        or (_by_equipment(exercises, wanted) if by_equipment else [])
    )


def named_exactly(exercises: Sequence[StoredExercise], name: str) -> int | None:
    """The index of the one exercise called `name` (case, spacing and plurals aside), else None: for a name
    that may be of an exercise outside the workout, which a partial match must not claim."""
    key = exercise_name_key(name)
    named = [
        index for index, exercise in enumerate(exercises) if exercise_name_key(exercise.exercise_name) == key
    ]
    return named[0] if key and len(named) == 1 else None


def exercise_listing(exercises: Sequence[StoredExercise]) -> str:
    """ "ex_1a2b3c (1. Goblet Squat), …": the references a tool that was given a wrong one can offer."""
    return ", ".join(f"{ex.id} ({ex.order}. {ex.exercise_name})" for ex in exercises)


def _unresolved(
    exercises: Sequence[StoredExercise], reference: str, candidates: list[StoredExercise]
) -> Unresolved:
    ask = "Call again with one id, or ask the user which one."
    if candidates:
        return Unresolved(
            f"Which exercise? '{reference}' matches {len(candidates)}: {exercise_listing(candidates)}. {ask}",
            tuple(candidates),
        )
    return Unresolved(
        f"Exercise '{reference}' is not in the current workout. Exercises: {exercise_listing(exercises)}. {ask}"
    )


def _by_position(exercises: Sequence[StoredExercise], text: str, positions: str) -> list[int]:
    """ "the 2nd", "exercise 3", "the last one": by order in the workout, or among its main exercises. "The
    last one" is the last main exercise either way (people do not count the cool-down's stretch as the last
    exercise: two model trials read it so), unless the words name the cool-down, a stretch or the warm-up."""
    counted = [
        index
        for index, exercise in enumerate(exercises)
        if positions == "workout" or exercise.section == "main"
    ] or list(range(len(exercises)))
    last = _last_meant(exercises, text)
    # In words ("the first one", "2nd") a position counts what the words name: the warm-up's or cool-down's
    # exercises when they name one, else the main exercises (asked to "swap the first exercise", two model trials
    # meant the first lift, not the warm-up's inchworm); a number as listed ("exercise 3", "#3") counts them all.
    in_words = _section_meant(exercises, text)
    found: list[int] = []
    for match in _POSITION.finditer(text):
        if match.group("last"):
            found += last
            continue
        said = match.group("number") or match.group("hash")
        number = int(said) if said else int(match.group("nth") or _ORDINALS[match.group("ordinal")])
        listed = counted if said else in_words
        if 0 < number <= len(listed):
            found.append(listed[number - 1])
    return list(dict.fromkeys(found))


def _named_section(exercises: Sequence[StoredExercise], text: str) -> tuple[bool, list[int] | None]:
    """Whether the words name a section or a stretch, and the positions of the warm-up's or cool-down's
    exercises when they name one of those (None otherwise)."""
    named = _SECTION_WORDS.search(text)
    section = (
        {"warm": "warmup", "cool": "cooldown"}.get((named.group("part") or "").lower()) if named else None
    )
    if section is None:
        return named is not None, None
    return True, [
        i for i, exercise in enumerate(exercises) if exercise.group and exercise.group.type == section
    ]


def _main_positions(exercises: Sequence[StoredExercise]) -> list[int]:
    return [index for index, exercise in enumerate(exercises) if exercise.section == "main"]


def _section_meant(exercises: Sequence[StoredExercise], text: str) -> list[int]:
    """The exercises a position in words counts: the warm-up's or cool-down's when the words name one, else the
    main exercises (all of them when the workout has none)."""
    named, listed = _named_section(exercises, text)
    if named and listed is None:  # "the first stretch": the cool-down's, else the whole workout's
        _, listed = _named_section(exercises, "cool-down")
        listed = listed or list(range(len(exercises)))
    return listed or _main_positions(exercises) or list(range(len(exercises)))


def _last_meant(exercises: Sequence[StoredExercise], text: str) -> list[int]:
    """The exercise "the last" means: of the warm-up or cool-down when the words name one, the workout's last
    entry for "the last stretch", else the last main exercise."""
    named, listed = _named_section(exercises, text)
    if listed is not None:
        return listed[-1:]
    main = _main_positions(exercises)
    return main[-1:] if main and not named else [len(exercises) - 1] if exercises else []


_SECTION_WORDS = re.compile(r"\b(?P<part>cool|warm)[\s-]?(?:down|up)s?\b|\bstretch", re.IGNORECASE)


def _words(text: str) -> list[str]:
    """Canonical words (singular, "db" → "dumbbell"), "-ing" dropped ("rowing" → "row")."""
    words = [word[:-3] if word.endswith("ing") and len(word) > 5 else word for word in name_words(text)]
    return [word for word in words if word not in _FILLER]


def _by_whole_name(exercises: Sequence[StoredExercise], text: str) -> list[int]:
    """The exercises whose whole name the reference holds, word-aligned ("swap the dumbbell bench press");
    a name inside another one found ("Dumbbell Fly" in "Incline Dumbbell Fly") does not count."""
    words = name_words(text)
    joined = "".join(words)
    bounds = {sum(len(word) for word in words[:count]) for count in range(len(words) + 1)}
    keys = {index: exercise_name_key(exercise.exercise_name) for index, exercise in enumerate(exercises)}
    held = {
        index: key
        for index, key in keys.items()
        if key
        and any(
            start in bounds and start + len(key) in bounds
            for start in (match.start() for match in re.finditer(f"(?={re.escape(key)})", joined))
        )
    }
    return [
        index
        for index, key in held.items()
        if not any(key in other and key != other for other in held.values())
    ]


def _by_name_words(exercises: Sequence[StoredExercise], text: str) -> list[int]:
    """The exercises sharing the most words with the reference, at least one that is not generic."""
    said = set(_words(text))
    scores = [
        sum(
            _GENERIC_WEIGHT if word in _GENERIC else 1.0
            for word in said & set(_words(exercise.exercise_name))
        )
        for exercise in exercises
    ]
    best = max(scores, default=0.0)
    return [index for index, score in enumerate(scores) if score == best] if best >= 1.0 else []


def _by_equipment(exercises: Sequence[StoredExercise], text: str) -> list[int]:
    """The exercises using equipment the reference names ("the dumbbell one"; "the band one" for resistance
    bands: a slug's last word names it)."""
    said = set(_words(text))
    return [
        index
        for index, exercise in enumerate(exercises)
        if any(
            (words := _words(slug.replace("_", " "))) and words[-1] in said
            for slug in exercise.equipment or ()
        )
    ]
