import pytest
from datasources_app.catalog import MILD_BODY_PARTS, BODY_PARTS, deep_knee_bend, derive_movement_pattern
from datasources_app.models import Preference
from tools_app.workout_validation import Injury, unsafe_named_exercises, injuries_from, _describing

MILD = [Injury(part=MILD_BODY_PARTS["knee"], source="mild")]

NAMES = [
    "Back Squat to parallel or below",
    "Back squat to parallel and beyond",
    "Squat at least to parallel",
    "Goblet squat to 90 degrees or deeper",
    "Reverse Lunge (no deep knee bend)",
    "Walking Lunge (no deeper than parallel)",
    "Walking Lunge to parallel",
    "Bulgarian Split Squat (no deeper than 90)",
    "Bulgarian Split Squat to parallel",
    "Bulgarian Split Squat (pain-free range)",
    "Back Squat (no full depth)",
    "Split squat with front knee at 90 degrees",
    "Hack squat to parallel",
    "Sissy squat to parallel",
    "Step-up onto a bench (pain-free range)",
    "Back squat",
    "Nordic curl",
    "Nordic hamstring curl (pain-free range)",
    "Reverse Nordic",
    "Kneeling leg curl",
    "Parallel bar dip",
]

@pytest.mark.parametrize("name", NAMES)
def test_names(name):
    pat = derive_movement_pattern(name)
    print("\nNAME", repr(name), pat, "deep=", deep_knee_bend(pat, name), "mildproblems=", unsafe_named_exercises([("d", name)], MILD))

TEXTS = [
    "Mon: Bulgarian split squat (pain-free range) 3x8. Thu: Bulgarian split squat 4x6 @ 20kg, full depth.",
    "Squat to a high box 3x8. Squat 5x5 heavy.",
    "Lunge to a low step 3x8. Walking lunges 3x12.",
    "Lunges 3x12, no deeper than parallel.",
    "Walking lunges 3x12 to parallel.",
    "Back squat 5x5 to parallel or below.",
    "Leg press in a pain-free range, then back squat 5x5.",
    "Back squat 5x5 and leg press in a pain-free range.",
    "Deep back squat 5x5, leg press pain-free range.",
    "Pistol squats 3x5 (pain-free range)",
    "Reverse lunge 3x10; keep it pain-free.",
    "Reverse lunge 3x10 - not below parallel",
    "Stop the sled before the knee feels it. Sled push 4x20m.",
    "Push the sled 4x20m",
    "Leg press: stop the sled before the knee feels it",
    "Front squat 5x3. Leg press 3x10 pain-free.",
    "Lunge 3x10. Lunge (partial range) 3x10.",
]

@pytest.mark.parametrize("text", TEXTS)
def test_texts(text):
    print("\nTEXT", repr(text), unsafe_named_exercises([("d", text)], MILD))

PREFS = [
    ("Mild discomfort in the left knee during deep lunges", "No pain at rest but sharp pain in deep squats."),
    ("Mild discomfort in the left knee during deep lunges", "Always hurts when I kneel, and the knee swells."),
    ("Mild discomfort in the left knee during deep lunges", "When I squat deep the knee gives way."),
    ("Mild discomfort in the left knee during deep lunges", "If I run, my knee swells up for days."),
    ("Mild discomfort in the left knee during deep lunges", "Only mild in lunges, but my ACL was reconstructed last year."),
    ("Mild discomfort in the left knee during deep lunges", "Started after ACL surgery in March."),
    ("Mild discomfort in the left knee during deep lunges", "Going down stairs the knee locks."),
    ("Mild discomfort in the left knee during deep lunges", "Stop any exercise that causes sharp knee pain."),
    ("Mild discomfort in the left knee during deep lunges", "Knee swells after running"),
    ("Mild discomfort in the left knee during deep lunges", "Training around a torn meniscus"),
    ("Mild discomfort in the left knee during deep lunges", "Use caution: torn meniscus in that knee"),
    ("Mild discomfort in the left knee during deep lunges", "Keep in mind the knee had surgery"),
    ("Mild discomfort in the left knee during deep lunges", "Prefer low impact; meniscus surgery 2022"),
]

@pytest.mark.parametrize("desc,guid", PREFS)
def test_prefs(desc, guid):
    p = Preference(description=desc, guidance=guid, category="injury")
    inj = injuries_from(profile_injuries="", limitations=[], preferences=[p])
    print("\nPREF", repr(guid), "describing=", repr(_describing(guid)), [(i.part.advice[:30]) for i in inj])
