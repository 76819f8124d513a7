"""What the user asked for, read from one message with keywords and patterns (the offline coach's ears).

Pure functions over text: no database, no clock. `parse_message` returns one `Intent` whose `kind` says
what to do and whose fields carry the details found (muscles, duration, style, which exercise, numbers,
what to avoid). It is tolerant: lower-case, punctuation, plurals and common spellings do not matter, and a
message that matches nothing is `ambiguous`, so the coach asks instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

# The draft_workout brief's style and intensity values (its schema lists them).
Style = Literal["strength", "hiit", "cardio", "mobility"]
Intensity = Literal["easy", "hard"]

IntentKind = Literal[
    "plan",
    "week",
    "workout",
    "swap",
    "adjust",
    "remove",
    "log",
    "preference",
    "stats",
    "location",
    "units",
    "greeting",
    "thanks",
    "smalltalk",
    "affirm",
    "decline",
    "ambiguous",
]
StatsView = Literal["summary", "totals", "breakdown", "trends"]
AdjustField = Literal["overall", "sets", "reps", "load", "rest"]
Direction = Literal["up", "down"]

QUICK_MINUTES = 20
LONG_MINUTES = 60
MIN_MINUTES = 10
MAX_MINUTES = 120

# --- Body areas ------------------------------------------------------------------------------------------------
# The areas themselves and their muscles are the drafting tool's (`tools_app.workout_drafting.FOCUS_MUSCLES`).
FOCUS_PATTERNS: tuple[tuple[str, str], ...] = (
    ("full body", r"\b(?:full|whole|total)[\s-]*body\b|\bfull[\s-]*bod\b|\beverything\b"),
    ("upper body", r"\bupper(?:[\s-]*body)?\b"),
    ("lower back", r"\blower[\s-]*back\b|\blumbar\b"),
    ("lower body", r"\blower(?:[\s-]*body)?\b(?![\s-]*back)"),
    ("push", r"\bpush(?:ing)?\b(?![\s-]*ups?\b)"),
    ("pull", r"\bpull(?:ing)?\b(?![\s-]*ups?\b)"),
    ("legs", r"\blegs?\b|\bleg[\s-]*day\b"),
    ("glutes", r"\bglutes?\b|\bbutt\b|\bbooty\b|\bbum\b|\bhips?\b"),
    ("quads", r"\bquads?\b|\bquadriceps\b|\bthighs?\b"),
    ("hamstrings", r"\bhamstrings?\b|\bhammies\b"),
    ("calves", r"\bcal(?:f|ves)\b"),
    ("chest", r"\bchest\b|\bpecs?\b|\bpectorals?\b"),
    ("back", r"(?<!lower )(?<!lower-)\bback\b(?![\s-]*(?:again|to|home|soon))|\blats?\b"),
    ("shoulders", r"\bshoulders?\b|\bdelts?\b|\bdeltoids?\b"),
    ("arms", r"\barms?\b|\bguns\b"),
    ("biceps", r"\bbiceps?\b|\bbis\b"),
    ("triceps", r"\btriceps?\b|\btris\b"),
    ("forearms", r"\bforearms?\b|\bgrip\b"),
    ("core", r"\bcore\b|\babs\b|\babdominals?\b|\bsix[\s-]*pack\b|\bstomach\b|\bobliques?\b|\bmidsection\b"),
    ("traps", r"\btraps?\b|\btrapezius\b"),
    ("neck", r"\bneck\b"),
    ("adductors", r"\badductors?\b|\binner thighs?\b"),
    ("abductors", r"\babductors?\b|\bouter thighs?\b"),
)
_STYLE_PATTERNS: tuple[tuple[Style, str], ...] = (
    (
        "hiit",
        r"\bhiit\b|\btabata\b|\bintervals?\b|\bmetcon\b|\bconditioning\b|\bcircuit\b|\bemom\b|\bamrap\b",
    ),
    (
        "cardio",
        r"\bcardio\b|\brun(?:ning)?\b|\bjog(?:ging)?\b|\bendurance\b|\bcycling\b|\bbike\b|\browing\b|"
        r"\baerobic\b|\bsweat\b|\bzone[\s-]*2\b",
    ),
    (
        "mobility",
        r"\bmobility\b|\bstretch(?:es|ing)?\b|\byoga\b|\bflexib\w*|\bloosen\b|\bcool[\s-]*down\b|"
        r"\bstiff\b|\brecovery (?:session|day|workout)\b|\bactive recovery\b",
    ),
    (
        "strength",
        r"\bstrength\b|\bstrong\w*\b|\blift(?:ing|s)?\b|\bweights?\b|\bhypertrophy\b|\bmuscle\b|\bbulk\b|"
        r"\bpower\b|\bheavy\b",
    ),
)

# --- Vocabulary -------------------------------------------------------------------------------------------------
_ORDINAL_WORDS = "first second third fourth fifth sixth seventh eighth ninth tenth".split()  # noqa: SIM905
_ORDINALS = {word: number for number, word in enumerate(_ORDINAL_WORDS, start=1)}
_ORDINALS |= {
    f"{n}{suffix}": n for n, suffix in zip(range(1, 11), ["st", "nd", "rd", *["th"] * 7], strict=True)
}
# Words that never name an exercise on their own.
_STOPWORDS = frozenset(
    """a an the this that these those it its it's one ones my me i i'm im you your we our to of for with
    and or but on in at by from please pls can could would will should do did does done make made let lets let's
    some any something else other another instead today tonight now just really very so too bit little more less
    fewer lot lots exercise exercises movement movements move moves workout session routine thing stuff
    swap replace substitute switch change remove drop delete skip take out get rid cut leave lose no not don't
    dont hate like want need give gimme hard harder easy easier heavy heavier light lighter set sets rep reps
    weight weights load rest time minute minutes min mins last final number #""".split()  # noqa: SIM905
)
_WORD = re.compile(r"[a-z0-9']+")


# --- Result types ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WorkoutAsk:
    """A workout request: which areas, how long, what kind, how hard."""

    focus: tuple[str, ...] = ()  # keys of FOCUS_MUSCLES, in the order the user named them
    duration_min: int | None = None
    style: Style | None = None
    intensity: Intensity | None = None
    bodyweight_only: bool = False
    avoid: tuple[str, ...] = ()  # areas the user said to leave out ("full body, no legs")


@dataclass(frozen=True)
class Adjustment:
    field: AdjustField
    direction: Direction | None = None
    value: float | None = None


@dataclass(frozen=True)
class LoggedSet:
    """Numbers the user reported for one exercise ("3x8 at 20kg on bench")."""

    exercise: str  # the user's words for it ("bench", "the first one"); "" when not said
    sets: int = 1
    reps: int | None = None
    load: float | None = None
    unit: str | None = None


@dataclass(frozen=True)
class Intent:
    kind: IntentKind
    text: str
    workout: WorkoutAsk | None = None
    ref: str = ""  # the words that say which exercise ("swap the 2nd one"); "" when they say none
    replacement: str | None = None  # "replace squats with lunges" → "lunges"
    adjustment: Adjustment | None = None
    logged: tuple[LoggedSet, ...] = ()
    skipped: tuple[str, ...] = ()  # the user's words for each exercise skipped
    rpe: float | None = None
    avoids: bool = False  # the message says what to leave out ("no bench today"); the tools read what
    location: str | None = None
    stats_days: int | None = None
    plan: PlanAsk | None = None
    week: int | None = None  # "prepare week 3"
    show_week: bool = False  # "what's on this week" (read) rather than "prepare my week" (write)
    stats_view: StatsView = "summary"  # "what did I log" → breakdown; "progress on squats" → trends
    stats_exercise: str | None = None  # the exercise a stats question is about ("squats")
    # The day a schedule question is about: "thursday", "today", "tomorrow", "next".
    weekday: str | None = None
    units: dict[str, str] | None = None  # "use pounds from now on" → {"weight": "lb"}


@dataclass(frozen=True)
class PlanAsk:
    """A multi-week plan request: "a 12-week strength plan, 3 days a week"."""

    goal: str
    weeks: int | None = None
    days_per_week: int | None = None


_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
_NUMBER_WORDS |= {"ten": 10, "twelve": 12, "sixteen": 16}
_COUNT = r"(?P<n>\d+|" + "|".join(_NUMBER_WORDS) + r")"
_PLAN = (
    r"\b\d+[\s-]*weeks?\b[\w\s,'-]{0,40}\b(?:plan|program(?:me)?|block)\b|"
    r"\b(?:training|multi-week|weekly) (?:plan|program(?:me)?)\b"
)
_PLAN_WEEKS = re.compile(r"\b(\d+)[\s-]*weeks?\b")
_PLAN_DAYS = re.compile(_COUNT + r"\s*(?:days?|times|x|sessions?)\b(?:\s*(?:a|per|each|/)\s*week\b)?")
_WEEK = (
    r"\b(?:prepare|plan|set up|build|generate|write|make|ready|get)\b.*\b(?:my|this|the|next|coming) week\b|"
    r"\b(?:prepare|generate|build)\b.*\bweek \d+\b|"
    r"\b(?:what'?s|what is|show|see|view)\b.*\b(?:this|next|my|the) week\b|\bweek'?s workouts\b"
)


# The goal in the user's words: "… a 12-week plan to get stronger, 3 days a week" → "Get stronger".
_PLAN_GOAL = re.compile(
    r"\b(?:to|so (?:that )?i can)\s+(?P<goal>(?:get|build|gain|lose|drop|improve|increase|run|finish|train|"
    r"prepare|be|become|burn|tone|add|boost|work|bulk|cut|lean|hit|reach|complete)\b[^,.;!?]*)"
)
_PLAN_GOAL_TAIL = re.compile(
    r"\s*(?:\b(?:with|over|starting|from|using|at|and (?:train|work out))\b.*|\bin\s+(?:\d+|the|my)\b.*|"
    + _COUNT
    + r"\s*(?:days?|times|x|sessions?)\b.*|\b(?:a|per|each) week\b.*)$"
)
_PLAN_KIND = re.compile(
    r"\b(strength|hypertrophy|muscle|fat[- ]loss|weight[- ]loss|endurance|running|marathon|half marathon|5k|10k|"
    r"powerlifting|conditioning|mobility)\b[\w\s-]{0,15}\b(?:plan|program(?:me)?|block)\b"
)


def plan_goal(text: str) -> str:
    """What the plan is for, in the user's words: the kind the plan is named for ("a strength plan" →
    "Strength"), else what it is "to" do ("… to get stronger, 3 days a week" → "Get stronger"), else the whole
    request. The plan tool picks the plan's type from these words."""
    kind, found = _PLAN_KIND.search(text), _PLAN_GOAL.search(text)
    goal = kind.group(1).replace("-", " ") if kind else ""
    goal = goal or (_PLAN_GOAL_TAIL.sub("", found.group("goal")).strip() if found else "")
    return goal[0].upper() + goal[1:] if goal else text


def plan_ask(text: str) -> PlanAsk:
    weeks, days = _PLAN_WEEKS.search(text), _PLAN_DAYS.search(text)
    per_week = _number(days.group("n")) if days else None
    days_per_week = per_week if per_week is not None and 1 <= per_week <= 7 else None
    return PlanAsk(plan_goal(text), int(weeks.group(1)) if weeks else None, days_per_week)


# --- Helpers ------------------------------------------------------------------------------------------------------
def normalise(text: str) -> str:
    """Lower case, straight apostrophes, single spaces."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u00d7", "x").lower()
    return " ".join(text.split())


def singular(word: str) -> str:
    """ "squats" → "squat", "benches" → "bench", "stretches" → "stretch" (good enough to match names)."""
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes")):
        return word[:-2]
    return word.removesuffix("s")


def _clean(phrase: str) -> str:
    """A name without the filler around it ("the fly please" → "fly")."""
    phrase = re.sub(
        r"^(?:the|a|an|my|some|doing)\s+|\s+(?:please|today|instead|for now|now)$", "", phrase.strip()
    )
    return phrase.strip(" .,!?'\"")


def content_words(text: str) -> tuple[str, ...]:
    """Singular content words of `text`, in order, without duplicates and stopwords."""
    words = [singular(word.strip("'")) for word in _WORD.findall(normalise(text))]
    skipped = _STOPWORDS | _ORDINALS.keys()
    return tuple(dict.fromkeys(word for word in words if word and word not in skipped and not word.isdigit()))


def _has(pattern: str, text: str) -> bool:
    return re.search(pattern, text) is not None


def _number(token: str) -> int | None:
    return int(token) if token.isdigit() else _NUMBER_WORDS.get(token)


_MINUTES = re.compile(
    r"\b(?:(?P<digits>\d{1,3})\s*-?\s*(?:min(?:ute)?s?|m)\b|(?P<words>"
    + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True))
    + r")[\s-]*min(?:ute)?s?\b)"
)


def parse_duration(text: str) -> int | None:
    """Minutes asked for (in minutes or hours; "quick" is 20 and "long" 60), within 10-120."""
    quick = _has(r"\b(?:quick|short|fast|brief|little|mini|express|in a hurry|no time|busy)\b", text)
    minutes: int | None = None
    match = _MINUTES.search(text)
    if match:
        minutes = _number(match.group("digits") or match.group("words") or "")
    elif _has(r"\bhalf(?:\s+an)?\s+hour\b", text):
        minutes = 30
    elif match_hours := re.search(r"\b(\d(?:\.\d+)?)\s*(?:hours?|hrs?|h)\b", text):
        minutes = round(float(match_hours.group(1)) * 60)
    elif _has(r"\b(?:an|one|1)\s+hour\b|\bhour[\s-]*long\b", text):
        minutes = 60
    elif _has(r"\bhour and a half\b|\b90\b", text):
        minutes = 90
    if minutes is None:
        if quick:
            minutes = QUICK_MINUTES
        elif _has(r"\blong\b|\bbig\b|\bfull session\b", text):
            minutes = LONG_MINUTES
    return max(MIN_MINUTES, min(MAX_MINUTES, minutes)) if minutes is not None else None


def parse_focus(text: str) -> tuple[str, ...]:
    """Areas named in `text`, in the order they appear."""
    found: list[tuple[int, str]] = []
    for name, pattern in FOCUS_PATTERNS:
        match = re.search(pattern, text)
        if match:
            found.append((match.start(), name))
    names = [name for _, name in sorted(found)]
    if "lower back" in names and "lower body" in names:
        names.remove("lower body")
    if "legs" in names and "lower body" in names:
        names.remove("lower body")
    return tuple(dict.fromkeys(names))


def parse_style(text: str) -> Style | None:
    for style, pattern in _STYLE_PATTERNS:
        if _has(pattern, text):
            return style
    return None


def parse_intensity(text: str) -> Intensity | None:
    if _has(r"\b(?:easy|easier|light|gentle|relaxed|low[\s-]*intensity|deload|tired|sore)\b", text):
        return "easy"
    if _has(r"\b(?:hard|harder|intense|tough|brutal|killer|challenging|heavy|beast|crush)\b", text):
        return "hard"
    return None


def exercise_words(text: str) -> str:
    """`text` when it may say which exercise (a name word or a position: "the 2nd", "the last one"), else ""
    ("swap an exercise"): the workout tools read which one from the user's words."""
    said = content_words(text) or set(_WORD.findall(text)) & _ORDINALS.keys()
    return text if said or _has(r"\b(?:last|final)\b|(?:exercises?|numbers?|#)\s*\d", text) else ""


# --- Intent patterns ------------------------------------------------------------------------------------------
_WORKOUT_NOUN = (
    r"(?:workout|work[\s-]*out|session|routine|wod|training|exercises|circuit|program(?:me)?|plan)"
)
_CREATE = (
    rf"\b(?:give|gimme|make|create|build|generate|design|plan|write|want|need|like|get|do|suggest|"
    rf"recommend|have|up for|ready for|show|send|got)\b.*\b(?:a|an|another|new|some|quick|short|today'?s|\d+[\s-]*min\w*)\b"
    rf"[\w\s,&'-]{{0,40}}\b{_WORKOUT_NOUN}\b"
    rf"|\b(?:leg|arm|chest|back|push|pull|upper|lower|shoulder|core|cardio|hiit)[\s-]*day\b"
    rf"|\blet'?s (?:train|work[\s-]*out|go|lift|do (?:it|this|some))\b"
    rf"|\b(?:train|hit|work|smash|blast)\b\s+(?:my\s+|the\s+)?\w+"
    rf"|^\s*(?:a\s+)?{_WORKOUT_NOUN}\s*(?:please|pls)?[.!]*\s*$"
)
_LOG = (
    r"\b(?:i did it|did it|i(?:'ve| have)? (?:just )?(?:did|done|finished|completed|crushed|nailed)|"
    r"just (?:did|finished|completed)|all done|done with (?:it|the|my|this)|finished|completed|"
    r"log (?:it|this|that|my|the|everything|today)|log\b|logged|i skipped|skipped)\b"
    r"|^\s*done\b|\b(?:i'?m|i am|we'?re|we are)\s+(?:all\s+|now\s+)?(?:done|finished)\b"
)
_SWAP = (
    r"\b(?:swap|replace|substitute|sub out|switch out|exchange|trade)\b|\bswitch (?:the|it|that|this)\b"
    r"|\bsomething else\b|\bsomething different\b|\ban? alternative\b|\binstead\b"
    r"|\bcan'?t do\b|\bcannot do\b|\bunable to do\b|\bdon'?t want to do\b|\bnot feeling\b"
    r"|\bno \w+(?: \w+)? today\b|\b(?:is|are) taken\b|\b(?:is|are) busy\b"
)
_REMOVE = r"\b(?:remove|drop|delete|take out|get rid of|cut|leave out|lose|scrap|ditch|skip)\b"
_ADJUST_PATTERNS: tuple[tuple[str, Adjustment], ...] = (
    (
        r"\b(?:fewer|less|reduce the|lower the|drop a|drop one|remove a|one less|cut a)\s*sets?\b",
        Adjustment("sets", "down"),
    ),
    (r"\b(?:more|add(?: a| an| one)?|extra|another|increase the)\s*sets?\b", Adjustment("sets", "up")),
    (r"\b(?:fewer|less|lower|reduce the)\s*reps?\b", Adjustment("reps", "down")),
    (r"\b(?:more|higher|increase the|extra)\s*reps?\b", Adjustment("reps", "up")),
    (
        r"\b(?:lighter|less weight|too heavy|reduce the (?:weight|load)|lower the (?:weight|load)|"
        r"drop the (?:weight|load))\b",
        Adjustment("load", "down"),
    ),
    (
        r"\b(?:heavier|more weight|too light|increase the (?:weight|load)|add weight|up the (?:weight|load))\b",
        Adjustment("load", "up"),
    ),
    (r"\b(?:more|longer) rest\b|\brest longer\b", Adjustment("rest", "up")),
    (r"\b(?:less|shorter) rest\b|\brest less\b", Adjustment("rest", "down")),
    (
        r"\b(?:easier|too hard|too difficult|tone it down|scale (?:it |this )?(?:down|back)|go easy|"
        r"less intense|dial (?:it )?back|struggling)\b",
        Adjustment("overall", "down"),
    ),
    (
        r"\b(?:harder|too easy|more intense|more challenging|step it up|scale (?:it |this )?up|"
        r"tougher|crank it up|not challenging)\b",
        Adjustment("overall", "up"),
    ),
)
_ADJUST_VALUE = re.compile(
    r"\b(?:change|set|make|put|do|switch)\s+(?:the\s+)?(?P<field>reps?|sets?|rest|weight|load)\s+"
    r"(?:of|for|on|in)\s+(?P<target>.+?)\s+to\s+(?P<value>\d+(?:\.\d+)?)"
    r"|\b(?P<target2>(?:exercise|number|#)\s*\d+|the \w+ (?:one|exercise))\s+(?:to\s+)?"
    r"(?P<value2>\d+(?:\.\d+)?)\s+(?P<field2>reps?|sets?)\b"
    r"|\b(?:make it|change it to|do)\s+(?P<value3>\d+(?:\.\d+)?)\s+(?P<field3>reps?|sets?)\b"
)
_PREFERENCE = (
    r"\b(?:i hate|i really hate|i don'?t like|i do not like|i dislike|i can'?t stand|not a fan of|"
    r"i'?m not a fan of|no more|never (?:give me|again|do|want)|please no|avoid|keep (?:out|away)|"
    r"i don'?t have (?:a |an |any )?|i do not have (?:a |an |any )?|i don'?t own|without (?:a |an |any )?|"
    r"my \w+ is broken|i'?m sick of|i'?m tired of|hate)\b"
    r"|\bno \w+(?:[\s-]\w+)? (?:this|for|until|anymore|any more|please|ever|from now on|again)\b"
)
_STATS = (
    r"\bhow am i doing\b|\bhow (?:have|'?ve) i been doing\b|\bhow did i do\b|\bprogress\w*\b|\bstats?\b|"
    r"\bstatistics\b|\bhow many (?:workouts|sessions|times|sets)\b|\bhow often\b|\bhistory\b|\btrends?\b|"
    r"\bpersonal (?:best|record)s?\b|\bprs?\b|\bconsisten\w+\b|\bvolume\b|\bimprov\w+\b|\bsummary\b|"
    r"\bhow(?:'?s| is| are) my \w+(?: \w+)? (?:going|coming along)\b|\bhow much (?:have|'?ve|did) i\b|\bhow (?:much|many) (?:weight|kg|kilos?|pounds|lbs?)\b|"
    r"\bwhat have i (?:done|lifted|trained)\b|\brecap\b"
)
# Questions about what was logged: answered with the per-exercise breakdown of the period.
_HISTORY_ASK = (
    r"\bwhat (?:did|have) i (?:log|logged|do|done|train|trained|lift|lifted|work(?:ed)? on)\b|"
    r"\bwhat(?:'?s| is| have i) (?:been |already )?logged\b|\bmy (?:logs?|training log|workout log|workout history)\b|"
    r"\b(?:show|list|see)\b.*\b(?:logs?|logged|past workouts|previous workouts)\b"
)
# "how am I progressing on squats", "how's my bench press going": the week-by-week trend of one exercise.
_EXERCISE_PROGRESS = re.compile(
    r"\b(?:progress\w*|improv\w*|doing|getting on)\s+(?:on|with|in|at)\s+(?:my\s+|the\s+)?"
    r"(?P<what>[a-z][a-z' -]{2,30}?)\s*(?:lately|recently|so far)?\s*[?.!]*$|"
    r"\bhow(?:'?s| is| are) my (?P<what2>[a-z][a-z' -]{2,30}?) (?:going|coming along|progressing|doing)\b"
)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# "what's on thursday", "what do I have tomorrow", "when's my next workout": reading the schedule.
_SCHEDULE_ASK = (
    r"^(?:so\s+)?(?:what'?s|what is|what do i have|what am i doing|anything|is there anything|when'?s|when is|"
    r"do i have)\b.*\b(?:" + "|".join(_WEEKDAYS) + r"|tomorrow|today|next (?:workout|session)|schedule[d]?)\b"
    r"|\bmy schedule\b"
)
_GREETING = (
    r"^(?:hi|hello|hey|heya|hiya|yo|howdy|hola|good (?:morning|afternoon|evening)|morning|sup|what'?s up)\b"
)
_THANKS = (
    r"\b(?:thanks|thank you|thx|ty|cheers|appreciate(?: it)?|great|awesome|perfect|nice|cool|love it|"
    r"brilliant|amazing|sweet|excellent|looks good|great job)\b"
)
_SMALLTALK = (
    r"\bhow are you\b|\bwho are you\b|\bwhat (?:can|do) you do\b|\bwhat are you\b|\bare you (?:a )?(?:bot|ai|"
    r"human|real)\b|\bwhat'?s your name\b|\bhow does this work\b"
)
_AFFIRM = (
    r"^(?:yes|yeah|yep|yup|sure|ok|okay|please|go ahead|do it|sounds good|let'?s do it|let'?s go|why not|"
    r"absolutely|definitely|y)\b"
)
_DECLINE = r"^(?:no|nope|nah|not now|never ?mind|no thanks|maybe later|later|cancel|stop)\b"
# A question about something else is small talk: the coach says what it does.
_QUESTION = r"\?\s*$|^(?:what|who|when|where|why|how|is|are|can|could|do|does|will|would)\b"
# Conversation without a request, in the order tried (the first that matches wins).
_CONVERSATION: tuple[tuple[IntentKind, str], ...] = (
    ("smalltalk", _SMALLTALK),
    ("greeting", _GREETING),
    ("thanks", _THANKS),
    ("affirm", _AFFIRM),
    ("decline", _DECLINE),
    ("smalltalk", _QUESTION),
)
_AMBIGUOUS = (
    r"^\s*(?:help|help me|\?+|what should i do|what now|train\??|workout\??|exercise\??|gym\??|"
    r"what do you (?:suggest|recommend)|any ideas|ideas|suggestions?|i'?m bored|what'?s next)\s*[?!.]*\s*$"
)
_LOGGED_SET = re.compile(
    r"(?P<sets>\d{1,2})\s*(?:x|sets? of)\s*(?P<reps>\d{1,3})(?:\s*reps?)?"
    r"(?:\s*(?:@|at|with|of)\s*(?P<load>\d{1,4}(?:\.\d+)?)\s*(?P<unit>kgs?|kilos?|lbs?|pounds?)?)?"
    r"(?:\s*(?:on|of|for|in)\s+(?:the\s+)?(?P<name>[a-z][a-z' -]*?))?(?=\s*(?:[,.;!]|\band\b|\bthen\b|$))"
)
_SKIPPED = re.compile(r"\bskipped\s+(?:the\s+)?(?P<name>[a-z][a-z' -]*?)(?=\s*(?:[,.;!]|\band\b|\bbut\b|$))")


def _location_named(text: str, known_locations: Sequence[str]) -> str | None:
    """A known location the user says they are at or want to switch to."""
    for name in sorted(known_locations, key=len, reverse=True):
        key = re.escape(normalise(name))
        if key and _has(
            rf"\b(?:at|in|to|from|for)\s+(?:the\s+|my\s+)?{key}\b|\b{key}\s+(?:today|tonight|now|workout|session)\b"
            rf"|^\s*(?:the\s+)?{key}\s*[.!]*\s*$",
            text,
        ):
            return name
    return None


def _adjustment(text: str) -> tuple[Adjustment | None, str | None]:
    match = _ADJUST_VALUE.search(text)
    if match:
        groups = match.groupdict()
        word = (groups["field"] or groups["field2"] or groups["field3"] or "").removesuffix("s")
        value = float(groups["value"] or groups["value2"] or groups["value3"] or 0)
        target = groups["target"] or groups["target2"] or ""
        field_name: AdjustField = {"rep": "reps", "set": "sets", "weight": "load"}.get(word, word)  # type: ignore[assignment]
        return Adjustment(field_name, None, value), target or None
    for pattern, adjustment in _ADJUST_PATTERNS:
        if _has(pattern, text):
            return adjustment, None
    return None, None


def _logged_sets(text: str) -> tuple[LoggedSet, ...]:
    found = []
    for match in _LOGGED_SET.finditer(text):
        unit = match.group("unit") or None
        found.append(
            LoggedSet(
                exercise=exercise_words(match.group("name") or ""),
                sets=int(match.group("sets")),
                reps=int(match.group("reps")),
                load=float(match.group("load")) if match.group("load") else None,
                unit=("lb" if unit.startswith(("lb", "pound")) else "kg") if unit else None,
            )
        )
    return tuple(found)


def _stats_days(text: str) -> int:
    if _has(r"\btoday\b", text):
        return 1
    if _has(r"\byesterday\b", text):
        return 2
    if _has(r"\b(?:this|last|past) week\b|\bweekly\b", text):
        return 7
    if match := re.search(r"\b(?:last|past) (\d+) (day|week|month)s?\b", text):
        return int(match.group(1)) * {"day": 1, "week": 7, "month": 30}[match.group(2)]
    if _has(r"\b(?:this|last|past) year\b|\bannual\b|\ball[\s-]*time\b|\bever\b", text):
        return 365
    if _has(r"\b(?:3|three) months\b|\bquarter\b", text):
        return 90
    return 30


def workout_ask(text: str) -> WorkoutAsk:
    minutes = parse_duration(text)
    style = parse_style(text)
    avoided = re.findall(
        r"\b(?:no|without|skip(?:ping)?|except|not|avoid(?:ing)?|minus|but not)\s+(?:any\s+|the\s+|my\s+)?"
        r"([a-z][a-z -]{1,20}?)(?=\s*(?:[,.;!?]|\band\b|\bbut\b|\btoday\b|\bplease\b|$))",
        text,
    )
    avoid = tuple(dict.fromkeys(name for phrase in avoided for name in parse_focus(phrase)))
    focus = tuple(name for name in parse_focus(text) if name not in avoid)
    bodyweight = _has(
        r"\bno[\s-]*equipment\b|\bbody[\s-]*weight\b|\bwithout (?:any )?(?:equipment|weights)\b|"
        r"\bno weights\b|\bhotel\b|\btravel(?:l?ing)?\b|\bnothing but\b|\bequipment[\s-]*free\b",
        text,
    )
    return WorkoutAsk(
        focus=focus,
        duration_min=minutes,
        style=style,
        intensity=parse_intensity(text),
        bodyweight_only=bodyweight,
        avoid=avoid,
    )


def _looks_like_workout_request(text: str, ask: WorkoutAsk) -> bool:
    if _has(_CREATE, text):
        return True
    if ask.focus or ask.style or ask.duration_min:
        return True
    if (ask.intensity or ask.bodyweight_only) and _has(r"\b(?:something|anything|give|want|need)\b", text):
        return True
    return _has(rf"\b{_WORKOUT_NOUN}\b", text) and not _has(
        r"\b(?:the|this|that|my current)\s+workout\b", text
    )


_UNIT_WORDS = {
    "lb": r"pounds?|lbs?",
    "kg": r"kilos?|kilograms?|kgs?",
    "mi": r"miles?",
    "km": r"kilometers?|kilometres?|kms?",
}
_UNIT_SWITCH = r"\b(?:use|using|switch(?: me)?(?: over)? to|change(?: my units?)? to|prefer)\b"


def units_asked(text: str) -> dict[str, str] | None:
    """ "use pounds from now on", "switch to km": the units the user asks for (a number before the unit, as in
    "20 kg dumbbells", is a load, not a request)."""
    found: dict[str, str] = {}
    for unit, words in _UNIT_WORDS.items():
        if re.search(_UNIT_SWITCH + r"[^.?!\d]{0,20}\b(?:" + words + r")\b", text) and not re.search(
            r"\d\s*(?:" + words + r")\b", text
        ):
            found["weight" if unit in ("lb", "kg") else "distance"] = unit
    return found or None


def parse_message(text: str, *, known_locations: Sequence[str] = ("Home", "Gym")) -> Intent:
    """Classify one user message. The first matching rule wins; see the module docstring."""
    raw = text
    text = normalise(text)
    if not text:
        return Intent("ambiguous", raw)
    location = _location_named(text, known_locations)
    ask = workout_ask(text)
    creating = _has(_CREATE, text)

    if _has(_AMBIGUOUS, text):
        return Intent("ambiguous", raw, location=location)
    if units := units_asked(text):
        return Intent("units", raw, units=units)

    if _has(_HISTORY_ASK, text):
        return Intent("stats", raw, stats_days=_stats_days(text), stats_view="breakdown")
    if _has(_SCHEDULE_ASK, text) and not _has(_STATS, text) and not creating:
        day = next((name for name in _WEEKDAYS if name in text), None)
        day = day or next((word for word in ("tomorrow", "today") if word in text), None)
        day = day or ("next" if _has(r"\bnext (?:workout|session|training)\b", text) else None)
        return Intent("week", raw, show_week=True, weekday=day)
    per_week = _has(_COUNT + r"\s*(?:days?|times|x|sessions?)\s*(?:a|per|each|/)\s*week\b", text)
    if (_has(_PLAN, text) or (per_week and not creating)) and not _has(_LOG, text):
        return Intent("plan", raw, plan=plan_ask(text))
    if _has(_WEEK, text) and not _has(_LOG, text) and not _has(_STATS, text):
        number = re.search(r"\bweek (\d+)\b", text)
        reading = _has(r"\b(?:what'?s|what is|show|see|view)\b", text) and not _has(r"\bprepare\b", text)
        return Intent("week", raw, week=int(number.group(1)) if number else None, show_week=reading)

    if _has(_LOG, text) and not creating and not _has(r"\b(?:should|can|could|will) i\b|\?$", text):
        skipped = tuple(exercise_words(match.group("name") or "") for match in _SKIPPED.finditer(text))
        rpe = re.search(r"\brpe\s*(?:of\s*)?(\d+(?:\.\d)?)\b", text)
        return Intent(
            "log",
            raw,
            logged=_logged_sets(text),
            skipped=tuple(words for words in skipped if words),
            rpe=float(rpe.group(1)) if rpe else None,
        )
    # "I got 3x8 on bench", or numbers first as a set is noted down: "3x8 at 27.5 on the bench press".
    reported = _has(r"\b(?:i|did|done|got|managed|hit)\b|^\d{1,2}\s*(?:x|sets? of)\s*\d", text)
    if _LOGGED_SET.search(text) and reported and not creating:
        return Intent("log", raw, logged=_logged_sets(text))

    if _has(_SWAP, text) and not creating:
        replacement = None
        if match := re.search(
            r"\b(?:with|for|by)\s+(?:a |an |some |the )?(?P<what>[a-z][a-z' -]+?)\s*[.!?]*$", text
        ):
            what = _clean(match.group("what"))
            if what and not re.search(r"\b(?:something|anything|else|different|alternative|other)\b", what):
                replacement = what
        ref_text = re.split(r"\b(?:with|for)\b", text, maxsplit=1)[0] if replacement else text
        avoids = _has(r"\bno \w+", text)
        return Intent("swap", raw, ref=exercise_words(ref_text), replacement=replacement, avoids=avoids)

    if _has(_REMOVE, text) and not creating and not _has(_PREFERENCE, text):
        return Intent("remove", raw, ref=exercise_words(text))

    adjustment, adjust_ref = _adjustment(text)
    if adjustment is not None and not (creating and adjustment.field == "overall"):
        return Intent("adjust", raw, ref=exercise_words(adjust_ref or text), adjustment=adjustment)

    if _has(_PREFERENCE, text) and not creating and content_words(text):
        return Intent("preference", raw, avoids=True)

    if _has(_STATS, text) and not creating:
        named = _EXERCISE_PROGRESS.search(text)
        what = _clean(named.group("what") or named.group("what2") or "") if named else ""
        if what and not _has(r"\b(?:week|month|year|training|workouts?|overall|it|things|goals?)\b", what):
            return Intent(
                "stats", raw, stats_days=_stats_days(text), stats_view="trends", stats_exercise=what
            )
        return Intent("stats", raw, stats_days=_stats_days(text))

    if _looks_like_workout_request(text, ask):
        avoids = _has(r"\b(?:no|without|avoid(?:ing)?|skip(?:ping)?|except|minus|hate)\b", text)
        return Intent("workout", raw, workout=ask, location=location, avoids=avoids)

    if location is not None:
        return Intent("location", raw, location=location)
    for kind, pattern in _CONVERSATION:
        if _has(pattern, text):
            return Intent(kind, raw)
    return Intent("ambiguous", raw, location=location)
