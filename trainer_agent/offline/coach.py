"""The built-in offline coach: a deterministic `Provider` that plays the trainer without a model or network.

It reads the request a real model gets and nothing else: the latest real user message (text blocks that are
not injected `<knowledge>`, `<artifact>` or `<checkpoint>` blocks), what already happened in this turn (its own
tool calls and their results, failures included), the user's date, units and locations from `<user_data>`,
the current workout from its latest artifact block. It answers with exactly one call to a tool offered in
`request.tools`, the way a model would, and leaves the coaching to the tools: `draft_workout` builds a workout
from a brief, `swap_exercise` picks replacements, `adjust_exercise` takes a step harder, easier or of one
field. A workout → deliver it with `message_notify_user` → `idle`; change or log the current workout; save a
preference; switch location; ask when the request is unclear.

Nothing is remembered between calls: the same request gives the same response, and any worker can answer any
iteration.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import cached_property
from typing import Any

from trainer_agent.llm.simulated_stream import SimulatedStreaming
from trainer_agent.llm.types import LLMRequest, LLMResponse, ToolCall, Usage, total_characters
from trainer_agent.offline.intents import (
    Adjustment,
    Intent,
    LoggedSet,
    PlanAsk,
    StatsView,
    WorkoutAsk,
    content_words,
    normalise,
    parse_message,
    plan_ask,
    singular,
)
from trainer_agent.offline.reading import Step, UserData, artifact_blocks, knowledge, read_transcript
from trainer_agent.offline.structured import StructuredAnswers

TOOL_ID_PREFIX = "toolu_offline_"
TELL_THE_USER = "Tell the user: "  # how a tool's result closes with what to tell the user
ASK_FOR_A_WORKOUT = 'Ask me for a workout and say "done" when you finish, and I\'ll keep track from there.'
# The loop allows 10 iterations; the coach wraps up before that with a message and idle.
MAX_STEPS_PER_TURN = 8
MAX_CHANGES_PER_TURN = 5
DEFAULT_OPTIONS = ["Full-body strength (45 min)", "Quick 20-minute HIIT", "Upper body", "Legs and glutes"]
_WEEKDAY_ABBREVIATIONS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_LEG_WORK = re.compile(r"squat|lunge|deadlift|leg|step-up|hip thrust|calf|split", re.I)
_EXERCISE_ID = re.compile(r"\bex_[0-9a-f]{6}\b")
# Questions whose answer completes the request that raised them (see `Turn._as_answer`).
ASK_WHICH_LOGGED = "Which exercise was that?"
_WHICH_QUESTIONS = {
    ASK_WHICH_LOGGED: ("log", "log_completed_exercise"),
    "Which exercise should I swap?": ("swap", "swap_exercise"),
    "Which exercise should I remove?": ("remove", "remove_exercise"),
}
# A workout tool's answer to words that match several exercises, listing them ("ex_1a2b3c (2. Goblet Squat)").
_WHICH = re.compile(r"Which exercise\? '.*?' matches \d+: (.+)\. Call again")
_NOT_IN_WORKOUT = "is not in the current workout"
# The user means each exercise the words match ("swap the dumbbell exercises", "remove the curls and the plank").
# adjust_exercise's word for every main exercise of the workout, in one call.
_EVERY_MAIN_EXERCISE = "all"
_EVERY = re.compile(r"\b(?:all|both|every|each|and|exercises|ones)\b")


# --- Decisions -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Decision:
    tool: str
    arguments: dict[str, Any]
    intent: str
    reasoning: str


def _join(items: Sequence[str]) -> str:
    items = list(items)
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' if number != 1 else ''}"


def _sentence(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if not text or text.endswith((".", "!", "?")) else text + "."


def _main(exercises: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [e for e in exercises if ((e.get("group") or {}).get("type")) not in ("warmup", "cooldown")]


class Turn:
    """One decision: the transcript, the tools offered and the user's data, read lazily."""

    def __init__(self, request: LLMRequest) -> None:
        self.request = request
        self.transcript = read_transcript(request.messages)
        self.specs = {tool.name: tool for tool in request.tools}
        self.user = UserData.parse(request.user_data_xml)

    @cached_property
    def intent(self) -> Intent:
        """What the latest message asks for: first as the answer to the coach's pending question, if any."""
        said = self._parse(self.transcript.user_text)
        return self._as_answer(said) or said

    def _parse(self, text: str) -> Intent:
        return parse_message(text, known_locations=self.user.locations or ("Home", "Gym"))

    def _as_answer(self, said: Intent) -> Intent | None:
        """The request the coach's last question was about, completed by this answer (None if it is not one).

        The coach asks when a request lacks one thing (which exercise a log or a swap meant); the next
        message is read as that thing first, typed or picked from the options, so the request goes ahead
        instead of being read on its own. A message that does not answer it is read on its own.
        """
        question = self.transcript.previous_question()
        if question is None or not self.transcript.earlier_user_texts:
            return None
        asked = str(question.arguments.get("question", ""))
        options = [str(option) for option in question.arguments.get("options") or ()]
        chosen = _chosen_option(self.transcript.user_text, options)
        answer = chosen or self.transcript.user_text
        request = self._parse(self.transcript.earlier_user_texts[-1])
        kind, tool = _WHICH_QUESTIONS.get(asked, ("", ""))
        if request.kind != kind or (kind == "log" and not request.logged):
            return None
        # A name or a position (typed, or an option picked), not a new request; once this turn acted on it,
        # the exercise may be gone (removed, swapped): still the answer. The tool reads which one it means.
        names = {
            word for e in self.current_exercises or () for word in content_words(str(e["exercise_name"]))
        }
        acted = self.transcript.calls(tool)
        if not (chosen or acted or said.kind == "ambiguous" or names & set(content_words(answer))):
            return None
        if request.kind != "log":
            return replace(request, ref=answer)
        logged = tuple(
            replace(entry, exercise=answer) if len(request.logged) == 1 or not entry.exercise else entry
            for entry in request.logged
        )
        return replace(request, logged=logged)

    @cached_property
    def said_to_avoid(self) -> list[str]:
        """The messages of this conversation that said what to leave out, in the user's words (the drafting tool
        reads them; honoured even when they could not be saved)."""
        texts = [*self.transcript.earlier_user_texts, self.transcript.user_text]
        said = [text for text in texts if (intent := parse_message(text)).avoids and intent.kind != "workout"]
        return said + [self.transcript.user_text] * (self.intent.kind == "workout" and self.intent.avoids)

    @cached_property
    def current_exercises(self) -> list[dict[str, Any]] | None:
        """The latest workout the conversation shows (its artifact block), unless it was logged since."""
        artifacts = artifact_blocks(self.request.messages)
        if not artifacts or artifacts[-1].artifact_id in self.transcript.logged_artifacts:
            return None
        return artifacts[-1].exercises or None

    def has(self, tool: str) -> bool:
        return tool in self.specs

    # -- the decision --------------------------------------------------------------------------------------------
    def decide(self) -> Decision | None:
        transcript = self.transcript
        last = transcript.last
        if last is not None and last.name in ("message_notify_user", "message_ask_user") and last.ok:
            return self._idle("Delivered the reply; nothing else to do.")
        for name in dict.fromkeys(step.name for step in transcript.steps):
            # An exercise already at its limit is an answer, not an error to give up on.
            failed = [step for step in transcript.failed(name) if "already at the limit" not in step.body]
            if len(failed) >= 2:
                return self._give_up(failed[-1])
        if len(transcript.steps) >= MAX_STEPS_PER_TURN:
            return self._wrap_up()
        if not transcript.user_text:
            return self._ask(
                "What would you like to train today?", self._options(), "No user message found; asking."
            )
        return self._offered(getattr(self, f"_on_{self.intent.kind}")())

    def _offered(self, decision: Decision) -> Decision | None:
        """Only tools offered in the request may be called: fall back to a message, then to idle."""
        if self.has(decision.tool):
            return decision
        if self.has("message_notify_user") and decision.tool != "message_notify_user":
            text = (
                decision.arguments.get("question")
                or "I can't do that here, sorry: that feature isn't available."
            )
            return self._notify(str(text), f"{decision.tool} is not offered; telling the user instead.")
        if self.has("idle"):
            return self._call("idle", "fallback", reason="No suitable tool available.")
        return None

    # -- small builders ------------------------------------------------------------------------------------------
    def _call(self, tool: str, reasoning: str, **arguments: Any) -> Decision:
        return Decision(tool, arguments, self.intent.kind, reasoning)

    def _notify(self, message: str, reasoning: str, artifact_id: str | None = None) -> Decision:
        extra = {"artifact_id": artifact_id} if artifact_id else {}
        return self._call("message_notify_user", reasoning, message=message, **extra)

    def _ask(self, question: str, options: list[str], reasoning: str) -> Decision:
        extra = {"options": options} if options else {}
        return self._call("message_ask_user", reasoning, question=question, **extra)

    def _fetch(self, source: str, params: dict[str, Any], reasoning: str) -> Decision:
        return self._call("fetch_data", reasoning, sources=[source], params={source: params})

    def _idle(self, reason: str) -> Decision:
        return self._call("idle", reason, reason=reason)

    def _give_up(self, step: Step) -> Decision:
        what = {
            "generate_workout": "put that workout together",
            "swap_exercise": "swap that exercise",
            "adjust_exercise": "change that exercise",
            "remove_exercise": "remove that exercise",
            "log_workout": "log your workout",
            "set_current_location": "switch your location",
            "set_preference": "save that preference",
        }.get(step.name, "finish that")
        if self.transcript.steps and self.transcript.steps[-1].name == "message_notify_user":
            return self._idle("Gave up after repeated failures.")
        return self._notify(
            f"Sorry, I couldn't {what}: {step.first_problem()} Could you try asking a different way?",
            f"{step.name} failed twice in this turn; stopping instead of looping.",
        )

    def _wrap_up(self) -> Decision:
        return self._notify(
            "I've made the changes I could in one go. Here's where things stand; tell me what else to adjust.",
            "Step budget for this turn used up; delivering what exists.",
            self._latest_artifact_id(),
        )

    def _latest_artifact_id(self) -> str | None:
        created = [
            found for step in self.transcript.steps if step.ok and (found := _delivered_artifact(step))
        ]
        latest = created or self.transcript.artifact_ids
        return latest[-1] if latest else None

    def _options(self) -> list[str]:
        options = list(DEFAULT_OPTIONS)
        if self._legs_recovering():
            options[3] = "Core and mobility"
        return options

    def _history(self) -> str | None:
        """The workout history this conversation shows: fetched in this turn, else loaded as knowledge."""
        fetched = [
            step.body for step in self.transcript.succeeded("fetch_data") if "workout_history" in step.body
        ]
        return fetched[-1] if fetched else knowledge(self.request.messages, "workout_history")

    def _legs_recovering(self) -> bool:
        """A leg session logged today or yesterday (the history lists days): legs want 48 h."""
        history, today = self._history(), self.user.today
        if not history or today is None:
            return False
        recent = tuple(f"{day:%a} {day.day} {day:%b}" for day in (today, today - timedelta(days=1)))
        return any(line.startswith(recent) and _LEG_WORK.search(line) for line in history.splitlines())

    def _offer_workout(self, opening: str) -> Decision:
        return self._ask(
            f"{opening} Want me to build one?",
            self._options(),
            "The request needs a current workout and there is none; offering to create one.",
        )

    # -- intents: workouts ------------------------------------------------------------------------------------
    def _on_workout(self, ask: WorkoutAsk | None = None) -> Decision:
        ask = ask or self.intent.workout or WorkoutAsk()
        transcript = self.transcript
        switch = self._location_to_switch(self.intent.location)
        if switch and self.has("set_current_location") and not transcript.calls("set_current_location"):
            reasoning = f"The user says they are at {switch}; switching before building the workout."
            return self._call("set_current_location", reasoning, location_name=switch)
        done = transcript.succeeded("draft_workout")
        if done:
            return self._deliver_workout(done[-1])
        failures = transcript.failed("draft_workout")
        if failures and "No workout could be drafted" in failures[-1].body:
            return self._ask(
                "I couldn't find exercises that fit that request with your equipment and preferences. "
                "What should I build instead?",
                self._options(),
                "Nothing fits the brief.",
            )
        brief = self._brief(ask, safe=bool(failures))
        reasoning = f"Workout request: drafting from the brief {brief}."
        if failures:
            reasoning = f"draft_workout failed ({failures[-1].first_problem()}); retrying bodyweight-only. {reasoning}"
        return self._call("draft_workout", reasoning, **brief)

    def _brief(self, ask: WorkoutAsk, *, safe: bool) -> dict[str, Any]:
        """draft_workout's brief: what the message asks for, and what this conversation said to leave out."""
        values: dict[str, Any] = {
            "focus": list(ask.focus),
            "minutes": min(120, max(10, ask.duration_min)) if ask.duration_min else None,
            "style": ask.style,
            "intensity": ask.intensity,
            "bodyweight_only": ask.bodyweight_only or safe,
            "avoid_areas": list(ask.avoid),
            "avoid": list(dict.fromkeys(self.said_to_avoid)),
        }
        return {key: value for key, value in values.items() if value not in (None, [], False)}

    def _location_to_switch(self, name: str | None) -> str | None:
        """The saved location the user says they are at, when it is not the current one."""
        known = _known(name, self.user.other_locations)
        return known if known and not _known(name, (self.user.location or "",)) else None

    def _deliver_workout(self, step: Step) -> Decision:
        """The drafted workout, delivered with what the tool says to tell the user (its adaptations too)."""
        artifact_id = _delivered_artifact(step) or self._latest_artifact_id()
        return self._notify(_relay(step), f"Delivering the new workout {artifact_id}.", artifact_id)

    # -- intents: changing the current workout -------------------------------------------------------------------
    def _equipment_named(self, exercises: list[dict[str, Any]]) -> list[str]:
        """The equipment (of the workout, or at the user's location) the message names: "no bench today"."""
        said = set(content_words(self.transcript.user_text))
        slugs = [slug for e in exercises for slug in e.get("equipment") or ()]
        slugs += [re.sub(r"\W+", "_", name.lower()) for name in self.user.equipment]
        return [slug for slug in dict.fromkeys(slugs) if all(singular(w) in said for w in slug.split("_"))]

    def _which_exercise(self, question: str, names: Sequence[str] = ()) -> Decision:
        """Ask which exercise, offering `names` (those a tool listed), else the workout's main exercises."""
        names = list(names) or [str(e.get("exercise_name")) for e in _main(self.current_exercises or ())]
        return self._ask(question, names[:4], "Could not tell which exercise the user meant; asking.")

    def _targets(self, calls: list[Step]) -> list[str]:
        """What to call a workout tool on next: the user's words first (the tool reads which exercise they
        mean), then each exercise the tool listed when the words matched several."""
        attempted = {str(step.arguments.get("exercise_id")) for step in calls}
        words = [self.intent.ref] if self.intent.ref and not calls else []
        return [
            target for target in [ident for ident, _ in _listed(calls)] or words if target not in attempted
        ]

    def _ask_which_listed(self, calls: list[Step], done: list[Step], verb: str) -> Decision | None:
        """Which one, when the words matched several exercises and the user meant one ("swap the press")."""
        listed = _listed(calls)
        if not listed or done or _EVERY.search(self.intent.ref):
            return None
        return self._which_exercise(ask_which_exercise(verb), [name for _, name in listed])

    def _changing(self, tool: str) -> tuple[list[dict[str, Any]] | None, list[Step], list[Step]]:
        """The current workout's exercises (None without one), this turn's calls of `tool`, those that worked."""
        calls = self.transcript.calls(tool)
        return self.current_exercises, calls, [step for step in calls if step.ok]

    def _on_swap(self) -> Decision:
        intent = self.intent
        exercises, swaps, done = self._changing("swap_exercise")
        if exercises is None and not done:
            if intent.avoids:
                return self._on_preference()
            return self._offer_workout("There's no workout to change yet.")
        exercises = exercises or []
        created = {found for step in done for found in _EXERCISE_ID.findall(step.body.split("→", 1)[-1])[:1]}
        attempted = {str(step.arguments.get("exercise_id")) for step in swaps}
        # "swap the dumbbell bench press" names an exercise; "the bench is taken" names the kit to avoid.
        equipment = self._equipment_named(exercises)
        said = self.transcript.user_text.lower()
        named = any(_letters(str(e.get("exercise_name"))) in _letters(said) for e in exercises)
        avoid = [] if named else equipment
        refused = [step for step in swaps if step.ok is False and step.arguments.get("replacement_name")]
        if avoid and (intent.avoids or re.search(r"\b(?:taken|busy|occupied|broken)\b", said)):
            # "no bench today", "the bench is taken": every exercise that needs it
            pending = [str(e.get("id")) for e in exercises if set(avoid) & set(e.get("equipment") or ())]
            if not pending and not done:
                return self._notify(
                    f"Good news: nothing in your current workout uses the {_join(equipment).replace('_', ' ')}.",
                    "No exercise of the current workout uses the equipment named.",
                )
        elif refused and not done and len(swaps) < 2:
            # The replacement the user named does not fit them: the tool picks one instead, and says why.
            pending, attempted = [str(refused[-1].arguments.get("exercise_id"))], set()
        elif asking := self._ask_which_listed(swaps, done, "swap"):
            return asking
        else:
            pending = self._targets(swaps)
        pending = [target for target in pending if target not in created | attempted]
        if pending and len(swaps) < MAX_CHANGES_PER_TURN:
            arguments: dict[str, Any] = {"exercise_id": pending[0], "reason": "The user asked to replace it."}
            if avoid:
                arguments["avoid_equipment"] = list(avoid)  # only this message says so
            elif intent.replacement and not swaps:
                arguments["replacement_name"] = intent.replacement
            # Otherwise swap_exercise picks the replacement (same movement and muscles, fits the user) and
            # prescribes it: the coaching lives in the tool, for every model.
            return self._call("swap_exercise", f"Swapping {pending[0]}.", **arguments)
        if not done and (not swaps or _NOT_IN_WORKOUT in swaps[-1].body):
            return self._which_exercise(ask_which_exercise("swap"))
        if swaps and not done and "No catalogue exercise fits" in swaps[-1].body:
            return self._notify(
                f"I couldn't find a good alternative to {_names_in(swaps[-1])} with the equipment you have "
                "here. Want me to rebuild the whole workout instead?",
                "No replacement fits.",
            )
        if not done:
            return self._give_up(swaps[-1])
        unused = (
            f"I didn't use {intent.replacement}: {_sentence(refused[-1].first_problem())}" if refused else ""
        )
        return self._notify(
            _relayed(done, unused), "Delivering the updated workout.", _delivered_artifact(done[-1])
        )

    def _on_adjust(self) -> Decision:
        intent = self.intent
        adjustment = intent.adjustment or Adjustment("overall", "down")
        exercises, adjusts, done = self._changing("adjust_exercise")
        if exercises is None and not done:
            return self._offer_workout("There's no workout to adjust yet.")
        # The exercise the words say (each one the tool lists when they match several), else every main one in
        # one call ("all": the tool leaves the warm-up and cool-down alone).
        named = intent.ref and not (adjusts and _NOT_IN_WORKOUT in adjusts[0].body)
        tried_every = any(step.arguments.get("exercise_id") == _EVERY_MAIN_EXERCISE for step in adjusts)
        every = [_EVERY_MAIN_EXERCISE] if _main(exercises or ()) and not tried_every else []
        pending = self._targets(adjusts) if named else every
        if pending and len(adjusts) < MAX_CHANGES_PER_TURN:
            # The tool knows what a step up or down means for each kind of exercise and implement.
            change = f"{adjustment.field} {adjustment.direction or adjustment.value}"
            arguments = {"exercise_id": pending[0], **_adjust_arguments(adjustment)}
            return self._call("adjust_exercise", f"Applying {change} to {pending[0]}.", **arguments)
        if not done:
            if adjusts and not all("already at the limit" in step.body for step in adjusts):
                return self._give_up(adjusts[-1])
            return self._notify(
                "That's already where I'd want it, so I left the workout as it is. Tell me exactly what to "
                'change (e.g. "3 sets of 12 on exercise 2") if you want something different.',
                "No applicable change.",
            )
        return self._notify(_relayed(done), "Delivering the adjusted workout.", _delivered_artifact(done[-1]))

    def _on_remove(self) -> Decision:
        exercises, removals, done = self._changing("remove_exercise")
        if exercises is None and not done:
            return self._offer_workout("There's no workout to change yet.")
        exercises = exercises or []
        if asking := self._ask_which_listed(removals, done, "remove"):
            return asking
        pending = self._targets(removals)
        if pending and len(exercises) > 1 and len(removals) < MAX_CHANGES_PER_TURN:
            reasoning, reason = f"Removing {pending[0]}.", "User asked to remove it."
            return self._call("remove_exercise", reasoning, exercise_id=pending[0], reason=reason)
        if not done:
            if removals and _NOT_IN_WORKOUT not in removals[-1].body:
                return self._give_up(removals[-1])
            if len(exercises) == 1:
                return self._notify(
                    "That's the only exercise left, so I kept it. Want a different workout instead?",
                    "Cannot remove the last exercise.",
                )
            return self._which_exercise(ask_which_exercise("remove"))
        return self._notify(_relayed(done), "Delivering the shorter workout.", _delivered_artifact(done[-1]))

    def _on_log(self) -> Decision:
        intent = self.intent
        logs = self.transcript.calls("log_workout")
        done = [step for step in logs if step.ok]
        if done:
            return self._notify(_relay(done[-1]), "Workout logged; telling the user.")
        single = self._log_single()
        if single is not None:
            return single
        exercises = self.current_exercises
        if exercises is None:
            return self._offer_workout("I don't see a workout to log yet.")
        # What the message says of single exercises, in its words (the tool reads which); the rest as planned.
        # After a failure, the plan is logged as done without what was read from the message.
        only = str(exercises[0].get("id")) if len(exercises) == 1 else ""
        said = [{"exercise_id": words, "skipped": True} for words in intent.skipped] + [
            {"exercise_id": logged.exercise or only, **self._numbers(logged, logged.sets)}
            for logged in intent.logged
            if logged.exercise or only
        ]
        arguments: dict[str, Any] = {
            "completed_exercises": said if not logs else [],
            "others_as_planned": True,
        }
        if intent.rpe is not None:
            arguments["workout_notes"] = f"Session RPE {intent.rpe:g}."
        return self._call("log_workout", "Logging the current workout as done.", **arguments)

    def _log_single(self) -> Decision | None:
        """ "I did 3x8 at 20 kg on bench": log just those sets with log_completed_exercise, when offered."""
        intent = self.intent
        whole = re.search(
            r"\b(?:did it|finished|completed|all done|whole|workout|session|everything)\b", intent.text, re.I
        )
        if not intent.logged or whole or not self.has("log_completed_exercise"):
            return None
        calls = self.transcript.calls("log_completed_exercise")
        entries = intent.logged[:3]
        logged_count = sum(1 for step in calls if step.ok)
        last = calls[-1] if calls else None
        listed = _listed(calls[-1:])
        if listed:
            return self._which_exercise(ASK_WHICH_LOGGED, [name for _, name in listed])
        # Words the workout does not have name another exercise: the tool finds it in the catalogue.
        missed = last is not None and "exercise_id" in last.arguments and _NOT_IN_WORKOUT in last.body
        if logged_count < len(entries) and (last is None or last.ok or missed):
            logged = entries[logged_count]
            by_name = missed or not self.current_exercises  # a position names nothing outside the workout
            if not logged.exercise or (by_name and not content_words(logged.exercise)):
                return self._which_exercise(ASK_WHICH_LOGGED)
            arguments: dict[str, Any] = {"exercise_name" if by_name else "exercise_id": logged.exercise}
            arguments |= self._numbers(logged, logged.sets)
            arguments |= {"rpe": intent.rpe} if intent.rpe is not None else {}
            return self._call("log_completed_exercise", "Logging the sets the user reported.", **arguments)
        done = [step for step in calls if step.ok]
        if not done:
            return self._give_up(calls[-1]) if calls else None
        return self._notify(_relayed(done), "Reported sets logged; telling the user.")

    def _numbers(self, logged: LoggedSet, sets: int) -> dict[str, Any]:
        """The numbers reported, per set (a load in the unit said, else the user's: the tool converts)."""
        numbers: dict[str, Any] = {"sets": sets}
        if logged.reps:
            numbers["reps"] = [logged.reps] * sets
        if logged.load is not None:
            numbers |= {"load_each": [logged.load] * sets, "load_unit": logged.unit or self.user.weight_unit}
        return numbers

    # -- intents: preferences, data, places ---------------------------------------------------------------------
    def _on_preference(self) -> Decision:
        """What to avoid, saved in the user's words (set_preference reads what and for how long), then each
        exercise it rules out of the current workout swapped (the tool lists them), then a confirmation."""
        transcript = self.transcript
        saving = self.has("set_preference")
        if saving and not transcript.calls("set_preference"):
            arguments = {
                "description": transcript.user_text[:300],
                "guidance": "Leave out what the user said; choose alternatives for the same muscles.",
            }
            return self._call("set_preference", "Saving what the user said to avoid.", **arguments)
        saved = transcript.succeeded("set_preference")
        ruled_out = saved[-1].body.partition("rules out of the current workout:")[2] if saved else ""
        attempted = {str(step.arguments.get("exercise_id")) for step in transcript.calls("swap_exercise")}
        pending = [found for found in _EXERCISE_ID.findall(ruled_out) if found not in attempted]
        if pending and self.has("swap_exercise") and len(attempted) < MAX_CHANGES_PER_TURN:
            reason = "It goes against what the user just asked to avoid."
            return self._call(
                "swap_exercise", f"Replacing {pending[0]}.", exercise_id=pending[0], reason=reason
            )
        message = "Got it: I'll leave that out of every workout I build for you in this chat."
        if saving:
            message = (
                _relay(saved[-1])
                if saved
                else "Got it. I couldn't save that permanently, but I'll respect it in this chat."
            )
        swapped = transcript.succeeded("swap_exercise")
        if swapped:
            message += f" I also swapped {_count(len(swapped), 'exercise')} in your current workout."
        artifact = _delivered_artifact(swapped[-1]) if swapped else None
        return self._notify(message, "Confirming the preference.", artifact)

    def _on_plan(self, ask: PlanAsk | None = None) -> Decision:
        """A multi-week plan: create_workout_plan (which starts preparing week 1), then say what it holds."""
        ask = ask or self.intent.plan
        done = self.transcript.calls("create_workout_plan")
        if not done and ask is not None:
            said = {"weeks": ask.weeks, "days_per_week": ask.days_per_week}
            arguments: dict[str, Any] = {"name": f"{ask.weeks or 12}-week plan", "goal": ask.goal}
            arguments |= {key: value for key, value in said.items() if value}
            return self._call("create_workout_plan", "Building the multi-week plan asked for.", **arguments)
        step = done[-1] if done else None
        if step is None or not step.ok:
            problem = step.first_problem() if step is not None else "I could not read the request"
            return self._notify(f"I couldn't build that plan: {_sentence(problem)}", "The plan tool refused.")
        return self._notify(_relay(step), "Summarising the new plan.")

    def _on_week(self) -> Decision:
        """Prepare a plan week (prepare_week), or show what is on the schedule (this week, or one day)."""
        if self.intent.show_week:
            fetched = self.transcript.calls("fetch_data")
            if not fetched:
                return self._fetch("scheduled_workouts", {"days_ahead": 7}, "Reading this week's schedule.")
            return self._notify(self._schedule_reply(fetched[-1].body), "Showing the schedule.")
        done = self.transcript.calls("prepare_week")
        # prepare_week says when there is no plan (plans loaded in earlier turns may be out of date).
        no_plan = bool(done) and "no active plan" in done[-1].body
        plans = self.transcript.fresh_knowledge.get("workout_plans")
        no_plan = no_plan or (not done and plans is not None and "[active]" not in plans)
        if self.transcript.calls("create_workout_plan") or no_plan:
            return self._plan_for_week()
        if not done:
            arguments = {"week": self.intent.week} if self.intent.week else {}
            return self._call("prepare_week", "Preparing the plan week asked for.", **arguments)
        step = done[-1]
        if not step.ok:
            return self._notify(
                f"I couldn't prepare that week: {_sentence(step.first_problem())}", "Refused."
            )
        return self._notify(_relay(step), "The week is being prepared in the background.")

    def _on_stats(self) -> Decision:
        """Statistics, what was logged, or one exercise's progress: the statistics tool's own report, passed on."""
        intent = self.intent
        days = intent.stats_days or 30
        name = "get_training_stats"
        arguments = stats_arguments(intent.stats_view, days=days, exercise=intent.stats_exercise)
        fetched = [step for step in self.transcript.steps if step.name in (name, "fetch_data")]
        if not fetched:
            if self.has(name):
                return self._call(name, f"Reading the user's training ({intent.stats_view}).", **arguments)
            return self._fetch(
                "workout_history", {"days_back": days}, f"Reading {days} days of workout history."
            )
        step = fetched[-1]
        report = _relay(step) if step.ok else _sentence(step.first_problem()) + " " + ASK_FOR_A_WORKOUT
        return self._notify(report, "Passing on the statistics tool's report.")

    def _plan_for_week(self) -> Decision:
        """A week asked for without a plan: the plan, made from the days and goal the message gives, prepares
        its first week; a message that gives neither gets a question."""
        text = normalise(self.transcript.user_text)
        ask = plan_ask(text)
        tried = [step for step in self.transcript.steps if step.name != "prepare_week"]
        if ask.days_per_week is None and ask.goal == text and not tried:
            return self._ask(
                "You don't have a training plan yet, so there's no week to prepare. How many days a week can you "
                "train, and what's your goal?",
                [
                    "3 days a week to get stronger",
                    "4 days a week to build muscle",
                    "3 days a week to get fitter",
                ],
                "No active plan and no days or goal said; asking for them.",
            )
        return self._on_plan(ask)

    def _schedule_reply(self, body: str) -> str:
        """The schedule read, or only the day asked about ("what's on thursday")."""
        text = _for_the_user(body)
        day = self.intent.weekday
        if not day or self.user.today is None:
            return f"Here's your week:\n{text}"
        entries = re.split(r"\n(?=\S)", text) if text.startswith(_WEEKDAY_ABBREVIATIONS) else []
        if day == "next":
            return f"Your next workout: {entries[0]}" if entries else f"{text} Ask me for a workout now."
        if day in ("today", "tomorrow"):
            when = self.user.today + timedelta(days=int(day == "tomorrow"))
            key, label = f"{when:%a} {when.day} {when:%b}", day
        else:
            key, label = day[:3].capitalize(), f"on {day.capitalize()}"
        found = [entry for entry in entries if entry.startswith(key)]
        if found:
            return f"{label[0].upper()}{label[1:]}:\n" + "\n".join(found)
        if entries:
            return f"Nothing is scheduled {label}. Here's your week:\n{text}"
        return (
            f"Nothing is scheduled {label}. {text} Ask me for a workout now, or for a plan "
            '("3 days a week to get stronger") to fill your calendar.'
        )

    def _on_units(self) -> Decision:
        """ "Use pounds from now on": the unit setting (set_units), then a confirmation in words."""
        units = dict(self.intent.units or {})
        if not self.transcript.succeeded("set_units"):
            return self._call("set_units", "Changing the user's units.", **units)
        return self._notify(_relay(self.transcript.succeeded("set_units")[-1]), "Confirming the unit change.")

    def _on_location(self) -> Decision:
        name = self.intent.location or ""
        transcript = self.transcript
        switched = transcript.succeeded("set_current_location")
        target = _known(name, self.user.locations)
        if target is None and not switched:
            known = _join(self.user.locations) or "none yet"
            return self._notify(
                f"I don't know a location called {name}. Your locations: {known}.", "Unknown location."
            )
        elsewhere = target is not None and target != self.user.location
        if not switched and elsewhere and self.has("set_current_location"):
            return self._call("set_current_location", f"Switching to {target}.", location_name=target)
        told = _relay(switched[-1]) if switched else f"You're set to {target or name}."
        return self._ask(
            f"{told} What are we training?",
            self._options(),
            "Location set; asking what to train.",
        )

    # -- intents: conversation ------------------------------------------------------------------------------------
    def _greeting_name(self) -> str:
        name = self.user.name
        return f" {name}" if name else ""

    def _on_greeting(self) -> Decision:
        where = self.user.location
        kit = ""
        if where:
            equipment = sorted(name.lower() for name in self.user.equipment)
            if len(equipment) > 5:
                kit = f" at the {where} with its full kit"
            else:
                kit = f" at {where}" + (f" with your {_join(equipment)}" if equipment else "")
        return self._notify(
            f"Hi{self._greeting_name()}! I can build you a workout{kit}, adjust it while you train and log it "
            "when you're done. What are we training today?",
            "Greeting.",
        )

    def _on_thanks(self) -> Decision:
        if self.current_exercises:
            message = 'Anytime! Enjoy the session, and say "done" when you finish so I can log it.'
        else:
            message = "Anytime! See you next session."
        return self._notify(message, "Acknowledging thanks.")

    def _on_smalltalk(self) -> Decision:
        return self._notify(
            "I'm your offline coach: I build workouts that fit your equipment, injuries and recent training, "
            'swap or adjust exercises while you train, log what you did and show your progress. Try "a quick '
            'chest workout" or "30 minutes of cardio".',
            "Small talk: explaining what the coach does.",
        )

    def _on_decline(self) -> Decision:
        return self._notify("No problem. Just tell me when you want a workout.", "User declined.")

    def _on_affirm(self) -> Decision:
        question = self.transcript.previous_question()
        if question is not None and re.search(
            r"workout|build|train", str(question.arguments.get("question", "")), re.I
        ):
            return self._on_workout(WorkoutAsk())
        return self._on_ambiguous()

    def _on_ambiguous(self) -> Decision:
        if not self.current_exercises and self._history() is None and self.has("fetch_data"):
            # What was trained lately decides which options to offer.
            reasoning = "Reading the last days' training before suggesting what to do."
            return self._fetch("workout_history", {"days_back": 3}, reasoning)
        if self.current_exercises:
            return self._ask(
                "What would you like to do with your current workout?",
                ["Swap an exercise", "Make it easier", "Make it harder", "I finished it, log it"],
                "Unclear request while a workout is active; offering what can be done with it.",
            )
        return self._ask(
            "What would you like to train today?",
            self._options(),
            "The request does not say what to train; asking with a few options.",
        )


def stats_arguments(view: StatsView, *, days: int, exercise: str | None = None) -> dict[str, Any]:
    """get_training_stats' arguments for one view of the last `days` days: summary/totals (workouts, sets,
    volume, top exercises), breakdown (each exercise logged) or trends (week by week; one exercise's best
    estimated 1RM when named, else volume)."""
    if view == "breakdown":
        return {"view": "breakdown", "days": days, "group_by": "exercise"}
    if view != "trends":
        return {"view": "totals", "days": days}
    named = {"metric": "e1rm", "exercise_name": exercise} if exercise else {}
    return {"view": "trends", "days": max(14, min(364, days)), **named}


def _relay(step: Step) -> str:
    """What a tool's result says to tell the user: its closing "Tell the user: …" line (a report without one is
    itself for the user)."""
    last = step.body.rstrip().rpartition("\n")[2]
    return last.removeprefix(TELL_THE_USER) if last.startswith(TELL_THE_USER) else _for_the_user(step.body)


def _relayed(steps: Sequence[Step], *more: str) -> str:
    """Several results of one turn as one reply: what each did in one sentence ("I swapped A for B and C for D",
    "Done: A: 3→2 sets; B: 3→2 sets"), then `more`, then the rest of what the last one says."""
    said = [re.split(r"(?<=[.!?])\s+", _relay(step)) for step in steps]
    done = "Done: " * said[0][0].startswith("Done: ")
    firsts = [sentences[0].removeprefix("Done: ").removesuffix(".") for sentences in said]
    verb = re.match(r"\S+(?: [a-z]\S*)*", firsts[0])  # "I swapped", "Removed": said once
    if verb and all(first.startswith(verb[0] + " ") and ":" not in first for first in firsts):
        what = f"{verb[0]} {_join([first.removeprefix(verb[0] + ' ') for first in firsts])}."
    else:
        what = "; ".join(firsts) + "."
    return " ".join(filter(None, [done + what, *more, *said[-1][1:]]))


def _for_the_user(text: str) -> str:
    """A tool's report without the markup and ids meant for the model."""
    return re.sub(r"</?[a-z_]+(?:\s[^>]*)?>|\s*\bid=\S+", "", text).strip()


def ask_which_exercise(verb: str) -> str:
    return f"Which exercise should I {verb}?"


def _chosen_option(text: str, options: Sequence[str]) -> str | None:
    """The option an answer picks: its text (a chip sends it as typed), or its number ("2")."""
    said = normalise(text).strip(" .!?")
    for option in options:
        if normalise(option) == said:
            return option
    if said.isdigit() and 0 < int(said) <= len(options):
        return options[int(said) - 1]
    return None


def _letters(text: str) -> str:
    """Only the letters, lower-cased: "Push-Ups" is found in "swap the pushups"."""
    return re.sub(r"[^a-z]", "", text.lower())


def _listed(steps: Sequence[Step]) -> list[tuple[str, str]]:
    """(id, name) of each exercise the first "Which exercise?" failure among `steps` lists."""
    found = next((found for step in steps if not step.ok and (found := _WHICH.search(step.body))), None)
    return re.findall(r"(\S+) \(\d+\. (.+?)\)(?:, |$)", found.group(1)) if found else []


def _delivered_artifact(step: Step) -> str | None:
    """The artifact a successful workout tool created: the one its result says to deliver (artifact_id=…)."""
    found = re.search(r"artifact_id=(art_[0-9a-zA-Z]+)", step.body)
    return found.group(1) if found else None


_STEPS = {
    "overall": ("harder", "easier"),
    "sets": ("more_sets", "fewer_sets"),
    "reps": ("more_reps", "fewer_reps"),
}
_STEPS |= {"load": ("heavier", "lighter"), "rest": ("more_rest", "less_rest")}


def _adjust_arguments(adjustment: Adjustment) -> dict[str, Any]:
    """adjust_exercise's arguments for what the user asked: a number for a field (the tool reads the reps of a
    hold as its seconds), else a step the tool takes."""
    if adjustment.value is None or adjustment.field == "overall":
        up, down = _STEPS[adjustment.field]
        return {"change": up if adjustment.direction == "up" else down}
    name = {"load": "load_each", "rest": "rest_sec"}.get(adjustment.field, adjustment.field)
    value = adjustment.value if name == "load_each" else int(adjustment.value)
    return {"adjustments": {name: value}}


def _names_in(step: Step) -> str:
    """The exercise a failed call was about, as its message names it ("in place of Goblet Squat with …")."""
    found = re.search(r"in place of (.+?) with", step.body)
    return found.group(1) if found else "that exercise"


def _known(name: str | None, names: Sequence[str]) -> str | None:
    """The saved name `name` means (case aside), or None."""
    return next((known for known in names if name and known.casefold() == name.casefold()), None)


# --- The provider ---------------------------------------------------------------------------------------------------
class OfflineCoach(SimulatedStreaming, StructuredAnswers):
    """A deterministic `Provider`: one tool call per request, chosen from the request and the user's data."""

    def complete(self, request: LLMRequest) -> LLMResponse:
        decision = Turn(request).decide()
        return build_response(request, decision)


def build_response(request: LLMRequest, decision: Decision | None) -> LLMResponse:
    """The neutral response for a decision, with honest token estimates (chars / 4)."""
    count = len(request.messages)
    last = json.dumps(request.messages[-1] if request.messages else {}, sort_keys=True, default=str)
    digest = hashlib.sha256(last.encode()).hexdigest()[:8]
    calls = (
        [ToolCall(f"{TOOL_ID_PREFIX}{count}_{digest}", decision.tool, decision.arguments)] if decision else []
    )
    content = [
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments} for call in calls
    ]
    output = json.dumps(content, sort_keys=True, default=str)
    usage = Usage(input_tokens=total_characters(request) // 4, output_tokens=max(1, len(output) // 4))
    stop_reason = "tool_use" if calls else "end_turn"
    raw = {
        "id": f"msg_offline_{count}_{digest}",
        "type": "message",
        "role": "assistant",
        "model": request.model,
        "content": content,
        "stop_reason": stop_reason,
        "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens},
        "offline_coach": {
            "intent": decision.intent if decision else None,
            "reasoning": decision.reasoning if decision else "No tool is available to answer with.",
        },
    }
    return LLMResponse(calls, "", usage, stop_reason, request.model, raw=raw, duration_ms=0)
