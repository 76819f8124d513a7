#!/usr/bin/env python
"""Build fixtures/exercises.json, the project's exercise catalogue, from the Free Exercise DB extract.

    .venv/bin/python scripts/build_exercise_catalog.py [SOURCE_JSON] [--output PATH]

SOURCE_JSON defaults to ../shared/data/exercise-catalog.json next to the repository (873 public-domain
exercises, see that folder's README). The output is the project's own compact JSON (a list of exercise
dicts sorted by slug, one per line), so the service never reads the source at run time. The output is
deterministic: running the script again on the same source writes identical bytes.

What the script does to each selected source exercise:
- maps the 17 source muscles onto seed 000's 16 and derives muscle shares (primaries 0.7, or 1.0 when
  there are no secondaries; secondaries split the rest; hundredths summing to exactly 1.00);
- derives the exercise type (reps | hold | duration | intervals) from category and name;
- refines the coarse equipment value into the slugs of `datasources_app.catalog.EQUIPMENT`, detecting
  what hides behind "other"/null (pull-up bar, dip station, box, rings, sled, ...) and what a movement
  also needs (bench, squat rack, preacher bench);
- derives each exercise's movement pattern (squat, hinge, overhead press, ...) and the joints it loads
  (`datasources_app.catalog.derive_movement_pattern` / `derive_loaded_joints`), which the workout tools
  check injuries against;
- keeps a curated subset (SELECTION below) with friendlier names, aliases and short instructions written
  for this project, plus a few common exercises the source lacks (CUSTOM_EXERCISES).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from datasources_app.catalog import (  # noqa: E402
    BODYWEIGHT,
    EQUIPMENT_SLUGS,
    MUSCLES,
    derive_loaded_joints,
    derive_movement_pattern,
    exercise_name_key,
    slugify_exercise_name,
)

DEFAULT_SOURCE = REPO_ROOT.parent / "shared" / "data" / "exercise-catalog.json"
DEFAULT_OUTPUT = REPO_ROOT / "fixtures" / "exercises.json"

MIN_EXERCISES = 200
MIN_PRIMARY_PER_MUSCLE = 3

# --- Source vocabularies → ours ---------------------------------------------------------------------------
SOURCE_MUSCLES: dict[str, str] = {
    "abdominals": "Abs",
    "lats": "Back",
    "middle back": "Back",
    "lower back": "Lower Back",
    "traps": "Trapezius",
    "quadriceps": "Quadriceps",
    "hamstrings": "Hamstrings",
    "glutes": "Glutes",
    "calves": "Calves",
    "chest": "Chest",
    "shoulders": "Shoulders",
    "biceps": "Biceps",
    "triceps": "Triceps",
    "forearms": "Forearms",
    "neck": "Neck",
    "abductors": "Abductors",
    "adductors": "Adductors",
}

COARSE_EQUIPMENT: dict[str, str] = {
    "body only": BODYWEIGHT,
    "dumbbell": "dumbbells",
    "barbell": "barbell",
    "kettlebells": "kettlebell",
    "cable": "cable_machine",
    "bands": "resistance_bands",
    "e-z curl bar": "ez_bar",
    "medicine ball": "medicine_ball",
    "exercise ball": "stability_ball",
    "foam roll": "foam_roller",
}
FREE_WEIGHTS = {"dumbbell", "barbell", "e-z curl bar", "kettlebells"}

SOURCE_CATEGORIES: dict[str, str] = {
    "strength": "strength",
    "stretching": "stretching",
    "plyometrics": "plyometrics",
    "powerlifting": "powerlifting",
    "olympic weightlifting": "olympic",
    "strongman": "strongman",
    "cardio": "cardio",
}
SOURCE_LEVELS: dict[str, str] = {"beginner": "beginner", "intermediate": "intermediate", "expert": "advanced"}

# "machine" → which machine, by name (first match wins). Unmatched machines are left out of the catalogue.
MACHINE_RULES: tuple[tuple[str, str], ...] = (
    (r"treadmill", "treadmill"),
    (r"bicycling, stationary|recumbent bike", "stationary_bike"),
    (r"rowing, stationary", "rowing_machine"),
    (r"elliptical", "elliptical"),
    (r"stairmaster|step mill", "stair_climber"),
    (r"smith", "smith_machine"),
    (r"leg press", "leg_press_machine"),
    (r"hack squat", "hack_squat_machine"),
    (r"leg extension", "leg_extension_machine"),
    (r"leg curl", "leg_curl_machine"),
    (r"calf raise|calf press|calf-machine", "calf_raise_machine"),
    (r"chest press|machine bench press", "chest_press_machine"),
    (r"butterfly|reverse machine flyes", "pec_deck"),
    (r"shoulder press|shoulder \(military\) press", "shoulder_press_machine"),
    (r"high row|iso row|t-bar row", "seated_row_machine"),
    (r"bicep curl|preacher curl", "arm_curl_machine"),
    (r"triceps extension|dip machine", "triceps_machine"),
    (r"ab crunch", "ab_crunch_machine"),
    (r"thigh abductor", "hip_abduction_machine"),
    (r"thigh adductor", "hip_adduction_machine"),
    (r"glute ham raise", "glute_ham_developer"),
)

# Bodyweight / "other" / null entries: what the name says they need (first match wins; None = unknown).
STATION_RULES: tuple[tuple[str, frozenset[str] | None], ...] = (
    (r"chin to chest", frozenset()),
    (r"-smr$", None),
    (r"band assisted pull-up", frozenset({"pull_up_bar", "resistance_bands"})),
    (r"weighted pull ups", frozenset({"pull_up_bar", "weight_plates"})),
    (r"ring dips|^muscle up$", frozenset({"gymnastic_rings"})),
    (
        r"pull-?ups?\b|pullup|pulldowns|\bchins?\b|chin-up|\bhang\b|hanging|muscle up",
        frozenset({"pull_up_bar"}),
    ),
    (r"parallel bar|^dips - ", frozenset({"dip_station"})),
    (r"weighted bench dip", frozenset({"bench", "weight_plates"})),
    (r"box (jump|skip|shuffle)|depth jump|high box", frozenset({"plyo_box"})),
    (r"suspended|with straps", frozenset({"suspension_trainer"})),
    (r"hyperextensions \(back", frozenset({"back_extension_bench"})),
    (r"ab roller", frozenset({"ab_wheel"})),
    (r"trap bar", frozenset({"trap_bar"})),
    (r"battling ropes", frozenset({"battle_ropes"})),
    (r"rope jumping", frozenset({"jump_rope"})),
    (r"sled|prowler", frozenset({"sled"})),
    (r"plate|svend press", frozenset({"weight_plates"})),
    (r"farmer's walk", frozenset({"dumbbells"})),
    (r"^inverted row$", frozenset({"barbell", "squat_rack"})),
)

# Barbell lifts normally taken from a rack.
RACK_PATTERN = re.compile(
    r"squat|bench press|military press|shoulder press|push press|press behind|good morning|lunge|step ups|rack|"
    r"pin press|board press|floor press|standing barbell calf raise"
)
RACK_EXCLUDE = re.compile(r"jump squat|hack squat|smith|one-arm")
# Free-weight movements done seated or lying on a bench.
FREE_WEIGHT_BENCH_PATTERN = re.compile(
    r"\bseated\b|\blying\b|fly|flye|pullover|tate press|close-grip dumbbell press|around the worlds|"
    r"one-arm dumbbell row|step ups|hip thrust|skull|concentration curls|jm press|press sit-up"
)

HOLD_PATTERN = re.compile(r"^plank$|side bridge|isometric (neck|chest)|stomach vacuum|one handed hang")
INTERVALS_PATTERN = re.compile(r"battling ropes|mountain climbers|rope jumping|sprint|fast skipping")
# Loaded carries and sled work are prescribed by time or distance. (Cardio is matched by category.)
DURATION_PATTERN = re.compile(r"farmer's walk|yoke walk|sled drag|sled push|carry")
DYNAMIC_STRETCH_PATTERN = re.compile(
    r"circles|inchworm|dynamic|leg raises|groiners|scissor kick|toe touchers|world's greatest|"
    r"elbows back|frog hops|iron crosses|moving claw|windmills"
)


@dataclass(frozen=True)
class Pick:
    """One source exercise kept in the catalogue, with this project's edits."""

    source: str  # the source `name`
    name: str | None = None  # display name, when the source's is awkward (the source name becomes an alias)
    aliases: tuple[str, ...] = ()
    how: str = ""  # short instructions written for this project
    equipment: tuple[str, ...] | None = None  # replaces the derived equipment
    exercise_type: str | None = None
    primary: tuple[str, ...] | None = None  # fixes the source's muscles where they are plainly wrong
    secondary: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Custom:
    """A common exercise the source lacks, written for this project."""

    name: str
    exercise_type: str
    category: str
    level: str
    mechanic: str
    force: str
    primary: tuple[str, ...]
    secondary: tuple[str, ...]
    equipment: tuple[str, ...]
    how: str
    aliases: tuple[str, ...] = ()


# fmt: off
SELECTION: tuple[Pick, ...] = (
    # --- Chest ---------------------------------------------------------------------------------------
    Pick("Barbell Bench Press - Medium Grip", name="Barbell Bench Press", aliases=("Bench Press", "Flat Bench Press"),
         how="Lie on the bench with eyes under the bar, lower it to mid-chest with elbows about 45° from the torso, then press back to lockout."),
    Pick("Barbell Incline Bench Press - Medium Grip", name="Incline Barbell Bench Press", aliases=("Incline Bench Press",),
         how="On a bench set to 30-45°, lower the bar to the upper chest and press it back up over the shoulders."),
    Pick("Decline Barbell Bench Press", how="On a decline bench with feet secured, lower the bar to the lower chest and press it back up."),
    Pick("Wide-Grip Barbell Bench Press"),
    Pick("Dumbbell Bench Press", aliases=("DB Bench Press",),
         how="Lie on a flat bench with a dumbbell in each hand at chest level and press them up until the arms are straight, then lower under control."),
    Pick("Incline Dumbbell Press", aliases=("Incline Dumbbell Bench Press",),
         how="On a bench set to 30-45°, press the dumbbells from shoulder level to above the upper chest, then lower slowly."),
    Pick("Decline Dumbbell Bench Press"),
    Pick("Dumbbell Bench Press with Neutral Grip"),
    Pick("Dumbbell Flyes", name="Dumbbell Fly", aliases=("Dumbbell Flyes", "Chest Fly"),
         how="Lie on a flat bench, arms above the chest with a slight elbow bend, open the arms wide until you feel a chest stretch, then bring them back together."),
    Pick("Incline Dumbbell Flyes", name="Incline Dumbbell Fly"),
    Pick("Straight-Arm Dumbbell Pullover", name="Dumbbell Pullover",
         how="Lie across or along a bench holding one dumbbell over the chest and lower it behind the head with nearly straight arms, then pull it back over."),
    Pick("Pushups", name="Push-Up", aliases=("Pushups", "Press-Up"),
         how="From a straight-arm plank with hands under the shoulders, lower the chest to just above the floor and push back up, body in one line."),
    Pick("Push-Up Wide", name="Wide-Grip Push-Up"),
    Pick("Incline Push-Up", how="With hands on a bench or sturdy ledge, lower the chest to the edge and push back up; an easier push-up."),
    Pick("Decline Push-Up", how="With feet raised on a step or bench, perform a push-up; shifts the work toward the upper chest and shoulders."),
    Pick("Push-Ups With Feet On An Exercise Ball", name="Stability Ball Push-Up"),
    Pick("Plyo Push-up", name="Plyometric Push-Up", aliases=("Clap Push-Up",)),
    Pick("Cable Crossover", how="Standing between high pulleys, bring the handles down and together in front of the chest with a slight elbow bend, then return slowly."),
    Pick("Low Cable Crossover"),
    Pick("Cable Chest Press"),
    Pick("Incline Cable Flye", name="Incline Cable Fly"),
    Pick("Butterfly", name="Pec Deck Fly", aliases=("Butterfly", "Machine Fly", "Pec Deck"),
         how="Sit with the back flat against the pad and bring the handles together in front of the chest, then let them open under control."),
    Pick("Machine Bench Press", name="Machine Chest Press", aliases=("Machine Bench Press",),
         how="Sit with the handles at mid-chest height and press them forward to straight arms, then return without letting the weights touch."),
    Pick("Leverage Incline Chest Press", name="Incline Machine Chest Press"),
    Pick("Smith Machine Bench Press"),
    Pick("Smith Machine Incline Bench Press"),
    Pick("Dips - Chest Version", name="Chest Dip",
         how="On parallel bars, lean the torso forward and lower until the shoulders are just below the elbows, then press back up."),
    Pick("Bench Press - With Bands", name="Band Chest Press", aliases=("Bench Press - With Bands",)),
    Pick("Cross Over - With Bands", name="Band Chest Fly", aliases=("Cross Over - With Bands",)),
    Pick("Medicine Ball Chest Pass", how="Hold the ball at the chest and throw it explosively to a partner or against a wall, then catch and repeat."),
    Pick("Alternating Floor Press", name="Alternating Kettlebell Floor Press"),
    Pick("Svend Press", how="Squeeze two plates together between flat palms at the chest and press them straight out, then bring them back."),
    Pick("Chest Stretch on Stability Ball"),
    Pick("Dynamic Chest Stretch"),
    # --- Back ----------------------------------------------------------------------------------------
    Pick("Pullups", name="Pull-Up", aliases=("Pullups", "Pull Up"),
         how="Hang from the bar with an overhand grip slightly wider than the shoulders and pull until the chin clears the bar, then lower to straight arms."),
    Pick("Chin-Up", how="Hang from the bar with palms facing you, shoulder-width apart, and pull the chest toward the bar, then lower fully."),
    Pick("V-Bar Pullup", name="Neutral-Grip Pull-Up"),
    Pick("Band Assisted Pull-Up", how="Loop a band over the bar and under a knee or foot; the band helps at the bottom so you can complete full pull-ups."),
    Pick("Weighted Pull Ups", name="Weighted Pull-Up"),
    Pick("Wide-Grip Lat Pulldown", name="Lat Pulldown", aliases=("Wide-Grip Lat Pulldown", "Lat Pull-Down"),
         how="Seated with thighs under the pad, pull the wide bar down to the upper chest by driving the elbows down, then let it rise under control."),
    Pick("Close-Grip Front Lat Pulldown", name="Close-Grip Lat Pulldown"),
    Pick("Underhand Cable Pulldowns", name="Reverse-Grip Lat Pulldown", aliases=("Underhand Cable Pulldowns",)),
    Pick("V-Bar Pulldown"),
    Pick("One Arm Lat Pulldown", name="Single-Arm Lat Pulldown"),
    Pick("Straight-Arm Pulldown", how="Facing a high pulley, keep the arms almost straight and sweep the bar down to the thighs, then let it back up slowly."),
    Pick("Seated Cable Rows", name="Seated Cable Row", aliases=("Cable Row",),
         how="Sit tall with a slight knee bend and pull the handle to the lower ribs, squeezing the shoulder blades together, then reach forward again."),
    Pick("Seated One-arm Cable Pulley Rows", name="Single-Arm Cable Row"),
    Pick("Kneeling High Pulley Row"),
    Pick("Bent Over Barbell Row", name="Barbell Row", aliases=("Bent Over Barbell Row", "Bent-Over Row"),
         how="Hinge forward with a flat back, knees soft, and row the bar to the lower ribs, then lower it to straight arms."),
    Pick("Reverse Grip Bent-Over Rows", name="Reverse-Grip Barbell Row"),
    Pick("One-Arm Dumbbell Row", aliases=("Dumbbell Row", "Single-Arm Dumbbell Row"),
         how="With one hand and knee on a bench and a flat back, pull the dumbbell to the hip, then lower until the arm is straight."),
    Pick("Bent Over Two-Dumbbell Row", name="Bent-Over Dumbbell Row",
         how="Hinge forward with a flat back holding two dumbbells and row them to the sides of the ribs, then lower."),
    Pick("Dumbbell Incline Row", name="Chest-Supported Dumbbell Row", aliases=("Dumbbell Incline Row",)),
    Pick("T-Bar Row with Handle", name="T-Bar Row"),
    Pick("Inverted Row", how="Hang under a bar set at hip height with the body straight and pull the chest to the bar, then lower."),
    Pick("Suspended Row", name="Suspension Trainer Row", aliases=("Suspended Row", "TRX Row")),
    Pick("One-Arm Kettlebell Row", name="Single-Arm Kettlebell Row"),
    Pick("Two-Arm Kettlebell Row"),
    Pick("Leverage High Row", name="Machine High Row"),
    Pick("Leverage Iso Row", name="Machine Row", aliases=("Seated Row Machine",)),
    Pick("Smith Machine Bent Over Row", name="Smith Machine Row"),
    Pick("Overhead Slam", name="Medicine Ball Slam", aliases=("Ball Slam",),
         how="Raise the ball overhead on your toes, then slam it into the floor as hard as you can, hinging at the hips; pick it up and repeat."),
    Pick("Latissimus Dorsi-SMR", name="Lat Foam Roll"),
    Pick("Rhomboids-SMR", name="Upper Back Foam Roll"),
    Pick("One Arm Against Wall", name="Wall Lat Stretch"),
    Pick("Middle Back Stretch"),
    # --- Shoulders -------------------------------------------------------------------------------------
    Pick("Standing Military Press", name="Overhead Press", aliases=("Standing Military Press", "Barbell Overhead Press", "OHP"),
         how="Standing with the bar on the front of the shoulders, brace and press it straight overhead, moving the head back and through, then lower to the collarbone."),
    Pick("Seated Barbell Military Press"),
    Pick("Dumbbell Shoulder Press", aliases=("Dumbbell Overhead Press",),
         how="Hold dumbbells at shoulder height, palms forward, and press them overhead until the arms are straight, then lower to the shoulders."),
    Pick("Seated Dumbbell Press", name="Seated Dumbbell Shoulder Press"),
    Pick("Arnold Dumbbell Press", name="Arnold Press",
         how="Start with dumbbells at the chin, palms facing you, and rotate the palms forward as you press overhead; reverse on the way down."),
    Pick("Side Lateral Raise", name="Dumbbell Lateral Raise", aliases=("Lateral Raise", "Side Lateral Raise"),
         how="With a slight elbow bend, raise the dumbbells out to the sides to shoulder height, leading with the elbows, then lower slowly."),
    Pick("Seated Side Lateral Raise", name="Seated Lateral Raise"),
    Pick("Front Dumbbell Raise", name="Dumbbell Front Raise", aliases=("Front Raise",),
         how="Raise the dumbbells in front of you with straight arms to shoulder height, then lower under control."),
    Pick("Reverse Flyes", name="Dumbbell Reverse Fly", aliases=("Rear Delt Fly", "Reverse Flyes")),
    Pick("Seated Bent-Over Rear Delt Raise", name="Seated Rear Delt Raise"),
    Pick("Face Pull", how="Pull a rope from a high pulley toward the face, hands finishing beside the ears and elbows high, then return slowly."),
    Pick("Cable Rear Delt Fly"),
    Pick("Front Cable Raise", name="Cable Front Raise"),
    Pick("Cable Seated Lateral Raise", name="Cable Lateral Raise"),
    Pick("Upright Barbell Row", name="Barbell Upright Row", aliases=("Upright Row",)),
    Pick("Machine Shoulder (Military) Press", name="Machine Shoulder Press",
         how="Sit with the handles at shoulder height and press them overhead, then lower until the hands are level with the shoulders."),
    Pick("Leverage Shoulder Press", name="Lever Shoulder Press"),
    Pick("Smith Machine Overhead Shoulder Press", name="Smith Machine Shoulder Press"),
    Pick("Reverse Machine Flyes", name="Reverse Pec Deck", aliases=("Reverse Machine Fly",)),
    Pick("Band Pull Apart", how="Hold a band in front at shoulder height with straight arms and pull it apart until it touches the chest, squeezing the shoulder blades."),
    Pick("Lateral Raise - With Bands", name="Band Lateral Raise"),
    Pick("Shoulder Press - With Bands", name="Band Shoulder Press"),
    Pick("External Rotation with Band", name="Band External Rotation",
         how="Elbow tucked at the side and bent 90°, rotate the forearm outward against the band, then return slowly."),
    Pick("External Rotation with Cable", name="Cable External Rotation"),
    Pick("Two-Arm Kettlebell Military Press", name="Kettlebell Overhead Press"),
    Pick("Alternating Kettlebell Press"),
    Pick("Kettlebell Thruster", how="Hold kettlebells in the rack position, squat, and drive up to press them overhead in one motion."),
    Pick("Kettlebell Turkish Get-Up (Squat style)", name="Turkish Get-Up", aliases=("Kettlebell Turkish Get-Up",),
         how="Lying with a kettlebell pressed up in one hand, stand up step by step while keeping it locked overhead, then reverse back to the floor."),
    Pick("Push Press", name="Barbell Push Press"),
    Pick("Dumbbell Scaption"),
    Pick("Front Plate Raise", how="Hold a plate at the edges and raise it in front of you to eye level with nearly straight arms, then lower."),
    Pick("Battling Ropes", name="Battle Ropes", aliases=("Battling Ropes",),
         how="Holding one rope end in each hand in a half squat, whip the ropes in fast alternating waves for the work interval."),
    Pick("Arm Circles", how="Arms out to the sides, draw small circles that grow larger, then reverse direction."),
    Pick("Shoulder Stretch"),
    # --- Biceps ----------------------------------------------------------------------------------------
    Pick("Barbell Curl", how="Standing with a shoulder-width underhand grip, curl the bar to the shoulders keeping the elbows at your sides, then lower fully."),
    Pick("EZ-Bar Curl", how="Curl an EZ bar from the thighs to the shoulders with elbows pinned to the sides, then lower slowly."),
    Pick("Dumbbell Bicep Curl", name="Dumbbell Curl", aliases=("Dumbbell Bicep Curl", "Bicep Curl"),
         how="Standing with dumbbells at your sides, palms forward, curl them to the shoulders without swinging, then lower fully."),
    Pick("Dumbbell Alternate Bicep Curl", name="Alternating Dumbbell Curl"),
    Pick("Hammer Curls", name="Hammer Curl",
         how="Curl the dumbbells with palms facing each other, keeping the elbows still, then lower."),
    Pick("Cross Body Hammer Curl"),
    Pick("Incline Dumbbell Curl", how="Lying back on an incline bench with arms hanging, curl the dumbbells up without moving the upper arms."),
    Pick("Concentration Curls", name="Concentration Curl",
         how="Seated, brace the elbow against the inner thigh and curl the dumbbell to the shoulder, then lower fully."),
    Pick("Preacher Curl", name="Barbell Preacher Curl"),
    Pick("One Arm Dumbbell Preacher Curl", name="Dumbbell Preacher Curl"),
    Pick("Spider Curl"),
    Pick("Cable Hammer Curls - Rope Attachment", name="Cable Rope Hammer Curl"),
    Pick("Standing Biceps Cable Curl", name="Cable Curl", aliases=("Standing Biceps Cable Curl",)),
    Pick("Overhead Cable Curl"),
    Pick("Machine Bicep Curl", name="Machine Curl"),
    Pick("Machine Preacher Curls", name="Machine Preacher Curl"),
    Pick("Zottman Curl"),
    Pick("Reverse Barbell Curl"),
    # --- Triceps ---------------------------------------------------------------------------------------
    Pick("Triceps Pushdown", name="Cable Triceps Pushdown", aliases=("Triceps Pushdown", "Tricep Pushdown"),
         how="Facing a high pulley, elbows tucked, push the bar down until the arms are straight, then let it rise to 90° at the elbow."),
    Pick("Triceps Pushdown - Rope Attachment", name="Rope Triceps Pushdown", aliases=("Rope Pushdown",)),
    Pick("Cable Rope Overhead Triceps Extension", name="Overhead Cable Triceps Extension"),
    Pick("EZ-Bar Skullcrusher", name="EZ-Bar Skull Crusher", aliases=("Skull Crusher", "Skullcrusher", "Lying Triceps Extension"),
         how="Lying on a bench with the bar over the chest, bend only at the elbows to lower it toward the forehead, then extend back up."),
    Pick("Close-Grip Barbell Bench Press", aliases=("Close-Grip Bench Press",),
         how="Bench press with hands about shoulder-width apart and elbows close to the body, touching the lower chest."),
    Pick("Dips - Triceps Version", name="Triceps Dip", aliases=("Dips", "Parallel Bar Dip"),
         how="On parallel bars with the torso upright, lower until the elbows reach 90°, then press back to straight arms."),
    Pick("Bench Dips", name="Bench Dip",
         how="Hands on the edge of a bench behind you and legs out in front, bend the elbows to lower the hips, then press back up."),
    Pick("Weighted Bench Dip"),
    Pick("Ring Dips", name="Ring Dip"),
    Pick("Tricep Dumbbell Kickback", name="Dumbbell Triceps Kickback", aliases=("Triceps Kickback",),
         how="Hinged forward with the upper arm parallel to the floor, straighten the elbow to push the dumbbell back, then return."),
    Pick("Standing Dumbbell Triceps Extension", name="Overhead Dumbbell Triceps Extension",
         how="Hold one dumbbell overhead with both hands and lower it behind the head by bending the elbows, then extend back up."),
    Pick("Seated Triceps Press"),
    Pick("Lying Dumbbell Tricep Extension", name="Lying Dumbbell Triceps Extension"),
    Pick("Push-Ups - Close Triceps Position", name="Close-Grip Push-Up", aliases=("Diamond Push-Up", "Triceps Push-Up"),
         how="Perform a push-up with hands close together under the chest and elbows brushing the ribs."),
    Pick("Machine Triceps Extension"),
    Pick("Dip Machine", name="Seated Dip Machine"),
    Pick("Band Skull Crusher"),
    Pick("Dumbbell Floor Press", how="Lying on the floor with knees bent, press the dumbbells up from where the upper arms touch the floor."),
    Pick("Triceps Stretch"),
    # --- Abs -------------------------------------------------------------------------------------------
    Pick("Plank", aliases=("Front Plank", "Forearm Plank"),
         how="Hold a straight line from head to heels on forearms and toes, bracing the abs and squeezing the glutes; do not let the hips sag."),
    Pick("Side Bridge", name="Side Plank", aliases=("Side Bridge",),
         how="Lying on one side, lift the hips onto the forearm and feet so the body forms a straight line, and hold."),
    Pick("Crunches", name="Crunch", aliases=("Crunches",),
         how="Lying on your back with knees bent, curl the shoulders off the floor toward the pelvis, then lower slowly."),
    Pick("Sit-Up", how="Lying with knees bent and feet anchored, sit all the way up, then lower back under control."),
    Pick("Reverse Crunch", how="Lying on your back with knees bent, curl the hips off the floor toward the chest, then lower slowly."),
    Pick("Russian Twist", how="Seated with feet raised and torso leaning back, rotate the shoulders from side to side, optionally holding a weight."),
    Pick("Dead Bug", how="On your back with arms up and knees over the hips, slowly extend the opposite arm and leg while keeping the lower back flat."),
    Pick("Hanging Leg Raise", how="Hanging from a bar, raise the legs to hip height or higher without swinging, then lower slowly."),
    Pick("Knee/Hip Raise On Parallel Bars", name="Captain's Chair Knee Raise", aliases=("Knee Raise", "Hanging Knee Raise")),
    Pick("Flat Bench Lying Leg Raise", name="Bench Leg Raise", aliases=("Lying Leg Raise",)),
    Pick("Air Bike", name="Bicycle Crunch", aliases=("Air Bike",),
         how="On your back with hands behind the head, bring each elbow toward the opposite knee while extending the other leg, alternating."),
    Pick("Cross-Body Crunch"),
    Pick("Oblique Crunches - On The Floor", name="Oblique Crunch"),
    Pick("Decline Crunch"),
    Pick("Jackknife Sit-Up", name="V-Up", aliases=("Jackknife Sit-Up",)),
    Pick("Leg Pull-In", name="Seated Knee Tuck", aliases=("Leg Pull-In",)),
    Pick("Bent-Knee Hip Raise"),
    Pick("Cable Crunch", how="Kneeling below a high pulley with a rope at the head, crunch the ribs toward the hips, then return slowly."),
    Pick("Ab Crunch Machine"),
    Pick("Exercise Ball Crunch", name="Stability Ball Crunch"),
    Pick("Exercise Ball Pull-In", name="Stability Ball Knee Tuck"),
    Pick("Ab Roller", name="Ab Wheel Rollout", aliases=("Ab Roller", "Ab Wheel"),
         how="Kneeling with hands on the wheel, roll forward as far as you can keep the back flat, then pull back to the start."),
    Pick("Pallof Press", how="Standing side-on to a cable at chest height, press the handle straight out and hold, resisting the pull to rotate."),
    Pick("Standing Cable Wood Chop", name="Cable Wood Chop"),
    Pick("Weighted Crunches", name="Medicine Ball Crunch", aliases=("Weighted Crunch",)),
    Pick("Medicine Ball Full Twist"),
    Pick("Kettlebell Windmill"),
    Pick("Dumbbell Side Bend"),
    Pick("Plate Twist"),
    # --- Lower back --------------------------------------------------------------------------------------
    Pick("Barbell Deadlift", name="Deadlift", aliases=("Barbell Deadlift", "Conventional Deadlift"),
         how="With the bar over mid-foot, hinge down with a flat back, grip just outside the knees, and stand up by pushing the floor away; lower the same way."),
    Pick("Rack Pulls", name="Rack Pull"),
    Pick("Hyperextensions (Back Extensions)", name="Back Extension", aliases=("Hyperextension", "Hyperextensions"),
         how="On a back extension bench, hinge down at the hips with a flat back, then raise the torso until in line with the legs."),
    Pick("Hyperextensions With No Hyperextension Bench", name="Floor Back Extension"),
    Pick("Weighted Ball Hyperextension", name="Stability Ball Back Extension"),
    Pick("Stiff Leg Barbell Good Morning", name="Stiff-Leg Good Morning"),
    Pick("Superman", how="Lying face down, lift the arms, chest and legs a few centimetres off the floor, pause, and lower."),
    Pick("Child's Pose", how="Kneel, sit back on the heels and reach the arms forward on the floor, letting the back relax; breathe slowly."),
    Pick("Cat Stretch", name="Cat-Cow Stretch", aliases=("Cat Stretch", "Cat Cow"), exercise_type="reps",
         how="On hands and knees, slowly round the back up toward the ceiling, then let it sag while lifting the chest; move with the breath."),
    Pick("Hug Knees To Chest", name="Knees-to-Chest Stretch"),
    Pick("Pelvic Tilt Into Bridge"),
    Pick("Lower Back-SMR", name="Lower Back Foam Roll"),
    # --- Quadriceps --------------------------------------------------------------------------------------
    Pick("Barbell Squat", name="Barbell Back Squat", aliases=("Back Squat", "Squat", "Barbell Squat"),
         how="With the bar on the upper back, brace and sit down between the heels until the thighs are at least parallel, then drive back up."),
    Pick("Front Squat (Clean Grip)", name="Barbell Front Squat", aliases=("Front Squat",),
         how="With the bar resting on the front of the shoulders and elbows high, squat down with an upright torso and stand back up."),
    Pick("Box Squat", name="Barbell Box Squat", equipment=("barbell", "plyo_box", "squat_rack")),
    # Done with one dumbbell held at the chest, the way a home with dumbbells does it; a place with only kettlebells
    # has the Kettlebell Goblet Squat (CUSTOM_EXERCISES).
    Pick("Goblet Squat", equipment=("dumbbells",), aliases=("Dumbbell Goblet Squat",),
         how="Hold one dumbbell upright at the chest, squat down between the knees with an upright torso, then stand."),
    Pick("Bodyweight Squat", aliases=("Air Squat",),
         how="Feet shoulder-width apart, sit the hips back and down until the thighs are parallel, keeping the heels down, then stand up."),
    Pick("Dumbbell Squat"),
    Pick("Front Squats With Two Kettlebells", name="Double Kettlebell Front Squat"),
    Pick("Squats - With Bands", name="Band Squat"),
    Pick("Freehand Jump Squat", name="Jump Squat", aliases=("Squat Jump",),
         how="Squat to parallel, then jump as high as you can; land softly and go straight into the next rep."),
    Pick("Dumbbell Lunges", name="Dumbbell Lunge", aliases=("Lunge", "Forward Lunge"),
         how="Holding dumbbells, step forward and lower until both knees are near 90°, then push back to standing; alternate legs."),
    Pick("Dumbbell Rear Lunge", name="Dumbbell Reverse Lunge", aliases=("Reverse Lunge",)),
    Pick("Barbell Lunge"),
    Pick("Barbell Walking Lunge"),
    Pick("Bodyweight Walking Lunge", name="Walking Lunge", aliases=("Bodyweight Walking Lunge",),
         how="Step forward into a lunge, then bring the back foot through into the next lunge, travelling forward."),
    Pick("Split Squat with Dumbbells", name="Dumbbell Split Squat",
         how="In a staggered stance holding dumbbells, lower the back knee toward the floor and press back up; finish one side before switching."),
    Pick("Dumbbell Step Ups", name="Dumbbell Step-Up", aliases=("Step-Up",),
         how="Holding dumbbells, step onto a bench or box, drive through the front heel to stand tall, then step down with control."),
    Pick("Trap Bar Deadlift", aliases=("Hex Bar Deadlift",),
         how="Stand inside the trap bar, grip the handles, and stand up by driving through the whole foot with a flat back; lower the same way."),
    Pick("Leg Press", how="Feet shoulder-width on the platform, lower it until the knees reach about 90°, then press back without locking the knees."),
    Pick("Leg Extensions", name="Leg Extension",
         how="Seated with the pad on the lower shins, straighten the knees to lift the weight, pause, and lower slowly."),
    Pick("Hack Squat", name="Machine Hack Squat"),
    Pick("Smith Machine Squat"),
    Pick("Mountain Climbers", name="Mountain Climber", aliases=("Mountain Climbers",),
         how="From a push-up position, drive the knees toward the chest one after the other as fast as you can with control."),
    Pick("Split Jump", name="Jumping Lunge", aliases=("Split Jump",)),
    Pick("Star Jump"),
    Pick("Running, Treadmill", name="Treadmill Run", aliases=("Treadmill Running", "Running, Treadmill"),
         how="Run at a steady, conversational pace unless the workout sets a target pace or incline."),
    Pick("Jogging, Treadmill", name="Treadmill Jog"),
    Pick("Walking, Treadmill", name="Treadmill Walk", aliases=("Incline Treadmill Walk",),
         how="Walk briskly; raise the incline to make it harder without running."),
    Pick("Trail Running/Walking", name="Outdoor Run", aliases=("Running", "Jogging", "Trail Running")),
    Pick("Bicycling, Stationary", name="Stationary Bike", aliases=("Exercise Bike", "Cycling"),
         how="Set the saddle so the knee stays slightly bent at the bottom and pedal at a steady cadence and resistance."),
    Pick("Recumbent Bike"),
    Pick("Elliptical Trainer", how="Stride smoothly, pushing and pulling the handles, at a steady effort."),
    Pick("Rowing, Stationary", name="Rowing Machine", aliases=("Rower", "Erg", "Indoor Rowing"),
         how="Drive with the legs, then lean back slightly and pull the handle to the lower ribs; return arms, body, then legs."),
    Pick("Stairmaster", name="Stair Climber", aliases=("Stairmaster",)),
    Pick("Rope Jumping", name="Jump Rope", aliases=("Skipping", "Rope Jumping"),
         how="Jump just high enough to clear the rope, turning it with the wrists and landing softly on the balls of the feet."),
    Pick("Sled Push", how="Hands on the sled's uprights and body leaning forward, drive it with short, powerful steps."),
    Pick("Quad Stretch", name="Standing Quad Stretch", aliases=("Quad Stretch",),
         how="Standing on one leg, pull the other heel toward the glute with knees together and hips pushed forward, and hold."),
    Pick("Kneeling Hip Flexor", name="Kneeling Hip Flexor Stretch"),
    Pick("Quadriceps-SMR", name="Quad Foam Roll"),
    # --- Hamstrings -------------------------------------------------------------------------------------
    Pick("Romanian Deadlift", aliases=("RDL", "Barbell Romanian Deadlift"),
         how="Holding the bar at the hips, push the hips back with soft knees and a flat back until the hamstrings stretch, then stand up."),
    Pick("Stiff-Legged Dumbbell Deadlift", name="Dumbbell Romanian Deadlift", aliases=("Dumbbell RDL", "Stiff-Legged Dumbbell Deadlift"),
         how="Holding dumbbells in front of the thighs, hinge at the hips with soft knees until you feel the hamstrings, then drive the hips forward."),
    Pick("Stiff-Legged Barbell Deadlift", name="Stiff-Legged Deadlift"),
    Pick("Smith Machine Stiff-Legged Deadlift"),
    Pick("Kettlebell One-Legged Deadlift", name="Single-Leg Kettlebell Deadlift", aliases=("Single-Leg Deadlift",)),
    Pick("Sumo Deadlift"),
    Pick("Good Morning", name="Barbell Good Morning"),
    Pick("Band Good Morning"),
    Pick("Lying Leg Curls", name="Lying Leg Curl", aliases=("Hamstring Curl",),
         how="Lying face down with the pad above the heels, curl the heels toward the glutes, then lower slowly."),
    Pick("Seated Leg Curl", how="Seated with the pad behind the lower legs, curl them down and back as far as you can, then return slowly."),
    Pick("Standing Leg Curl"),
    Pick("Ball Leg Curl", name="Stability Ball Leg Curl"),
    Pick("Glute Ham Raise"),
    Pick("Natural Glute Ham Raise", name="Nordic Hamstring Curl", aliases=("Nordic Curl", "Natural Glute Ham Raise"),
         equipment=(), how="Kneeling with the ankles held down, lower the body forward as slowly as you can, then push off the floor to return."),
    Pick("One-Arm Kettlebell Swings", name="One-Arm Kettlebell Swing"),
    Pick("Power Clean"),
    Pick("Front Box Jump", name="Box Jump", aliases=("Front Box Jump",),
         how="From a quarter squat, swing the arms and jump onto the box, landing softly with both feet; step down."),
    Pick("Knee Tuck Jump", name="Tuck Jump"),
    Pick("Hamstring Stretch", how="Lying on your back, raise one straight leg and gently pull it toward you until the back of the thigh stretches, and hold."),
    Pick("Seated Floor Hamstring Stretch"),
    Pick("Inchworm", how="From standing, walk the hands out to a plank keeping the legs straight, then walk the feet up to the hands."),
    Pick("World's Greatest Stretch", how="From a lunge, put the inside hand down, rotate the other arm toward the ceiling, then straighten the front leg; alternate sides."),
    Pick("Hamstring-SMR", name="Hamstring Foam Roll"),
    # --- Glutes -----------------------------------------------------------------------------------------
    Pick("Barbell Hip Thrust", name="Hip Thrust", aliases=("Barbell Hip Thrust",),
         how="Upper back on a bench and the bar over the hips, drive the hips up until the body is flat from knees to shoulders, then lower."),
    Pick("Barbell Glute Bridge"),
    Pick("Butt Lift (Bridge)", name="Glute Bridge", aliases=("Bridge", "Hip Bridge"),
         how="Lying on your back with knees bent, squeeze the glutes to lift the hips until knees, hips and shoulders line up, then lower."),
    Pick("Single Leg Glute Bridge", name="Single-Leg Glute Bridge"),
    Pick("Glute Kickback", how="On hands and knees, drive one heel back and up until the thigh is level with the body, then lower; keep the back still."),
    Pick("One-Legged Cable Kickback", name="Cable Glute Kickback"),
    Pick("Pull Through", name="Cable Pull-Through", aliases=("Pull Through",),
         how="Facing away from a low pulley with the rope between the legs, hinge back, then drive the hips forward to stand tall."),
    Pick("Hip Lift with Band", name="Banded Glute Bridge"),
    Pick("Hip Extension with Bands", name="Band Hip Extension"),
    Pick("Physioball Hip Bridge", name="Stability Ball Hip Bridge"),
    Pick("Step-up with Knee Raise", name="Bodyweight Step-Up with Knee Raise", equipment=("bench",)),
    Pick("Flutter Kicks"),
    Pick("One Knee To Chest", name="Single Knee-to-Chest Stretch"),
    Pick("Ankle On The Knee", name="Figure-Four Stretch", aliases=("Ankle On The Knee", "Piriformis Stretch")),
    Pick("Piriformis-SMR", name="Glute Foam Roll"),
    # --- Calves ----------------------------------------------------------------------------------------
    Pick("Standing Calf Raises", name="Machine Standing Calf Raise", aliases=("Standing Calf Raises",),
         how="Shoulders under the pads and balls of the feet on the step, rise as high as you can, pause, then lower the heels below the step."),
    Pick("Seated Calf Raise", name="Machine Seated Calf Raise", aliases=("Seated Calf Raise",)),
    Pick("Standing Dumbbell Calf Raise", name="Dumbbell Calf Raise",
         how="Holding dumbbells, rise onto the balls of the feet as high as you can, pause, and lower slowly."),
    Pick("Standing Barbell Calf Raise", name="Barbell Calf Raise"),
    Pick("Smith Machine Calf Raise"),
    Pick("Calf Press On The Leg Press Machine", name="Leg Press Calf Raise"),
    Pick("Dumbbell Seated One-Leg Calf Raise", name="Seated Dumbbell Calf Raise"),
    Pick("Calf Raises - With Bands", name="Band Calf Raise"),
    Pick("Standing Gastrocnemius Calf Stretch", name="Wall Calf Stretch", aliases=("Calf Stretch",),
         how="Hands on a wall, step one foot back with the heel down and knee straight, and lean in until the calf stretches."),
    Pick("Ankle Circles"),
    Pick("Calves-SMR", name="Calf Foam Roll"),
    # --- Trapezius ---------------------------------------------------------------------------------------
    Pick("Barbell Shrug", how="Holding the bar at arm's length, lift the shoulders straight up toward the ears, pause, and lower."),
    Pick("Dumbbell Shrug", how="Holding dumbbells at your sides, shrug the shoulders straight up, pause, and lower slowly."),
    Pick("Cable Shrugs", name="Cable Shrug"),
    Pick("Smith Machine Behind the Back Shrug", name="Smith Machine Shrug"),
    Pick("Standing Dumbbell Upright Row", name="Dumbbell Upright Row"),
    Pick("Upright Cable Row", name="Cable Upright Row"),
    Pick("Upright Row - With Bands", name="Band Upright Row"),
    Pick("Kettlebell Sumo High Pull"),
    Pick("Scapular Pull-Up", how="Hanging from a bar with straight arms, pull the shoulder blades down and together to lift the body slightly, then relax."),
    Pick("Smith Machine Upright Row"),
    # --- Forearms --------------------------------------------------------------------------------------
    Pick("Palms-Up Barbell Wrist Curl Over A Bench", name="Barbell Wrist Curl"),
    Pick("Palms-Down Wrist Curl Over A Bench", name="Barbell Reverse Wrist Curl"),
    Pick("Seated Dumbbell Palms-Up Wrist Curl", name="Dumbbell Wrist Curl", aliases=("Wrist Curl",),
         how="Forearms on the thighs with palms up, let the dumbbells roll to the fingers, then curl the wrists up."),
    Pick("Seated Dumbbell Palms-Down Wrist Curl", name="Dumbbell Reverse Wrist Curl", aliases=("Reverse Wrist Curl",)),
    Pick("Cable Wrist Curl"),
    Pick("Farmer's Walk", name="Farmer's Carry", aliases=("Farmer's Walk", "Farmers Walk"),
         how="Pick up heavy dumbbells and walk tall with short, quick steps for the set distance or time."),
    Pick("Plate Pinch", how="Pinch two plates together smooth sides out with the fingers and thumb and hold them at your side."),
    Pick("Finger Curls", name="Barbell Finger Curl"),
    Pick("Bottoms-Up Clean From The Hang Position", name="Bottoms-Up Kettlebell Clean"),
    Pick("Wrist Circles"),
    Pick("Kneeling Forearm Stretch"),
    # --- Neck ------------------------------------------------------------------------------------------
    Pick("Isometric Neck Exercise - Front And Back", name="Isometric Neck Hold - Front and Back",
         how="Press a hand against the forehead, then the back of the head, resisting with the neck so the head does not move; hold each."),
    Pick("Isometric Neck Exercise - Sides", name="Isometric Neck Hold - Sides",
         how="Press a hand against the side of the head and resist with the neck so the head stays still; hold, then switch sides."),
    Pick("Lying Face Down Plate Neck Resistance", name="Plate Neck Extension",
         how="Lying face down on a bench with the head off the end and a plate held on the back of the head, raise the head, then lower."),
    Pick("Lying Face Up Plate Neck Resistance", name="Plate Neck Flexion",
         how="Lying face up on a bench with the head off the end and a plate held on the forehead, tuck the chin to lift the head, then lower."),
    Pick("Chin To Chest Stretch", how="Gently lower the chin toward the chest until the back of the neck stretches, and hold."),
    Pick("Side Neck Stretch", how="Tilt an ear toward the shoulder, optionally with light hand pressure, and hold; switch sides."),
    # --- Abductors ---------------------------------------------------------------------------------------
    Pick("Monster Walk", name="Band Monster Walk", aliases=("Monster Walk", "Banded Lateral Walk"),
         how="With a band around the legs and knees slightly bent, take wide steps forward, sideways or diagonally, keeping tension on the band."),
    Pick("Thigh Abductor", name="Hip Abduction Machine", aliases=("Thigh Abductor", "Abductor Machine"),
         how="Seated with the pads on the outside of the knees, push the legs apart as far as you can, then return slowly."),
    Pick("Standing Hip Circles"),
    Pick("Hip Circles (prone)", name="Quadruped Hip Circles", aliases=("Hip Circles (prone)",)),
    Pick("Iliotibial Tract-SMR", name="IT Band Foam Roll"),
    Pick("Windmills", name="Lying Windmill Stretch"),
    # --- Adductors ---------------------------------------------------------------------------------------
    Pick("Thigh Adductor", name="Hip Adduction Machine", aliases=("Thigh Adductor", "Adductor Machine"),
         how="Seated with the pads on the inside of the knees, squeeze the legs together, then let them open slowly."),
    Pick("Band Hip Adductions", name="Band Hip Adduction"),
    Pick("Cable Hip Adduction", primary=("adductors",), secondary=(),
         how="With a low-pulley cuff on the inner ankle, sweep that leg across in front of the standing leg, then return slowly."),
    Pick("Groiners", name="Groiner"),
    Pick("Side Lying Groin Stretch"),
    Pick("Adductor/Groin", name="Butterfly Groin Stretch"),
    Pick("Adductor", name="Adductor Foam Roll"),
    Pick("Lateral Bound", how="Bound sideways off one leg and land softly on the other, stick the landing, then bound back."),
)
# fmt: on

CUSTOM_EXERCISES: tuple[Custom, ...] = (
    Custom(
        "Burpee",
        "reps",
        "plyometrics",
        "beginner",
        "compound",
        "push",
        ("quadriceps",),
        ("chest", "shoulders", "triceps", "abdominals", "glutes"),
        (),
        "Squat down, jump the feet back to a plank, do a push-up, jump the feet in, then jump up with hands overhead.",
        aliases=("Burpees",),
    ),
    Custom(
        "Jumping Jacks",
        "duration",
        "cardio",
        "beginner",
        "compound",
        "push",
        ("calves",),
        ("quadriceps", "shoulders", "glutes"),
        (),
        "Jump the feet out while raising the arms overhead, then jump back together; keep a steady rhythm.",
    ),
    Custom(
        "High Knees",
        "intervals",
        "cardio",
        "beginner",
        "compound",
        "push",
        ("quadriceps",),
        ("abdominals", "calves"),
        (),
        "Run on the spot driving each knee to hip height with quick arm swings for the work interval.",
    ),
    Custom(
        "Wall Sit",
        "hold",
        "strength",
        "beginner",
        "isolation",
        "static",
        ("quadriceps",),
        ("glutes",),
        (),
        "Back flat against a wall, slide down until the thighs are parallel to the floor and the knees at 90°, and hold.",
    ),
    Custom(
        "Kettlebell Swing",
        "reps",
        "strength",
        "intermediate",
        "compound",
        "pull",
        ("glutes",),
        ("hamstrings", "lower back", "abdominals"),
        ("kettlebell",),
        "Hike the bell back between the legs, then snap the hips forward to float it to chest height; let it fall back into the next hinge.",
        aliases=("Russian Kettlebell Swing", "Two-Arm Kettlebell Swing"),
    ),
    Custom(
        "Bulgarian Split Squat",
        "reps",
        "strength",
        "intermediate",
        "compound",
        "push",
        ("quadriceps",),
        ("glutes", "hamstrings"),
        ("bench", "dumbbells"),
        "Rear foot on a bench and holding dumbbells, lower the back knee toward the floor, then drive up through the front heel.",
        aliases=("Rear-Foot Elevated Split Squat",),
    ),
    # Knee-friendly quad work for a home with dumbbells, a bench and bands: a squat stopped at parallel by the
    # bench, and a squat held back by a band so the shins stay vertical.
    Custom(
        "Dumbbell Box Squat",
        "reps",
        "strength",
        "beginner",
        "compound",
        "push",
        ("quadriceps",),
        ("glutes", "hamstrings", "calves", "adductors"),
        ("bench", "dumbbells"),
        "A dumbbell in each hand at your sides, sit back to a bench behind you until you touch it with the thighs about parallel, then stand up without rocking.",
        aliases=("Dumbbell Bench Squat",),
    ),
    Custom(
        "Spanish Squat",
        "reps",
        "strength",
        "beginner",
        "compound",
        "push",
        ("quadriceps",),
        ("glutes",),
        ("resistance_bands",),
        "With a heavy band anchored in front and looped behind both knees, sit back into the band with the shins vertical to about parallel, pause, then stand.",
    ),
    # The same squat held still (the isometric a knee's rehab uses): a plan's 'Spanish squat hold 3×30s' is this,
    # timed, while 'Spanish squat 3×12' is the one above.
    Custom(
        "Spanish Squat Hold",
        "hold",
        "strength",
        "beginner",
        "compound",
        "static",
        ("quadriceps",),
        ("glutes",),
        ("resistance_bands",),
        "With a heavy band anchored in front and looped behind both knees, sit back into the band with the shins vertical until the thighs are about parallel, and hold there.",
        aliases=("Isometric Spanish Squat",),
    ),
    Custom(
        "Kettlebell Goblet Squat",
        "reps",
        "strength",
        "beginner",
        "compound",
        "push",
        ("quadriceps",),
        ("shoulders", "hamstrings", "glutes", "calves"),
        ("kettlebell",),
        "Hold a kettlebell by the horns at the chest, squat down between the knees with an upright torso, then stand.",
    ),
    # Bodyweight cardio for a place with no cardio machines (a home workout's "cardio"): impact moves, and the
    # low-impact ones a knee or a quiet flat asks for (`derive_movement_pattern` files them as cyclical, not
    # the locomotion of running and jumping).
    Custom(
        "Skater",
        "intervals",
        "cardio",
        "intermediate",
        "compound",
        "push",
        ("glutes",),
        ("quadriceps", "abductors", "calves"),
        (),
        "Bound sideways onto one foot, swinging the other leg behind and touching the floor with the opposite hand, then bound back.",
        aliases=("Skaters", "Skater Jumps", "Speed Skaters"),
    ),
    Custom(
        "Butt Kicks",
        "intervals",
        "cardio",
        "beginner",
        "compound",
        "push",
        ("hamstrings",),
        ("calves", "quadriceps"),
        (),
        "Jog on the spot flicking each heel up toward the glutes, arms swinging, at a quick rhythm.",
        aliases=("Butt Kickers", "Heel Flicks"),
    ),
    Custom(
        "Bench Step-Up",
        "intervals",
        "cardio",
        "beginner",
        "compound",
        "push",
        ("quadriceps",),
        ("glutes", "hamstrings", "calves"),
        ("bench",),
        "Step up onto a bench with one foot, bring the other up, step back down and switch the lead leg, at a brisk pace.",
        aliases=("Cardio Step-Up", "Alternating Step-Up"),
    ),
    Custom(
        "Marching High Knees",
        "intervals",
        "cardio",
        "beginner",
        "compound",
        "push",
        ("quadriceps",),
        ("abdominals", "calves"),
        (),
        "March on the spot at a brisk pace, lifting each knee to hip height and pumping the arms; one foot always on the floor.",
        aliases=("High Knee March", "Marching in Place", "Low-Impact High Knees"),
    ),
    Custom(
        "Step Jacks",
        "intervals",
        "cardio",
        "beginner",
        "compound",
        "push",
        ("shoulders",),
        ("abductors", "calves", "glutes"),
        (),
        "Step one foot out to the side while raising both arms overhead, step back in, then the other side; no jump.",
        aliases=("Low-Impact Jumping Jacks", "Step-Out Jacks"),
    ),
    Custom(
        "Low-Impact Skater",
        "intervals",
        "cardio",
        "beginner",
        "compound",
        "push",
        ("glutes",),
        ("quadriceps", "abductors", "calves"),
        (),
        "Step wide to one side and sweep the other leg behind, reaching across with the opposite hand, then step back the other way; no jump.",
        aliases=("Skater Step", "Low-Impact Skaters"),
    ),
    Custom(
        "Shadow Boxing",
        "intervals",
        "cardio",
        "beginner",
        "compound",
        "push",
        ("shoulders",),
        ("chest", "triceps", "abdominals", "calves"),
        (),
        "In a boxing stance on light feet, throw quick jabs, crosses and hooks, turning the hips into each punch and keeping the guard up.",
        aliases=("Shadowboxing", "Boxing Punches"),
    ),
    Custom(
        "Dead Hang",
        "hold",
        "strength",
        "beginner",
        "isolation",
        "static",
        ("forearms",),
        ("lats", "shoulders"),
        ("pull_up_bar",),
        "Hang from a pull-up bar with straight arms and a shoulder-width grip, shoulders engaged, for the set time.",
    ),
    Custom(
        "Bird Dog",
        "reps",
        "strength",
        "beginner",
        "compound",
        "static",
        ("abdominals",),
        ("lower back", "glutes"),
        (),
        "On hands and knees, extend the opposite arm and leg until level with the body, pause without rotating the hips, and return.",
    ),
    Custom(
        "Side-Lying Leg Raise",
        "reps",
        "strength",
        "beginner",
        "isolation",
        "push",
        ("abductors",),
        ("glutes",),
        (),
        "Lying on one side with legs straight, raise the top leg to about 45° leading with the heel, then lower slowly.",
    ),
    Custom(
        "Clamshell",
        "reps",
        "strength",
        "beginner",
        "isolation",
        "push",
        ("abductors",),
        ("glutes",),
        (),
        "Lying on one side with knees bent and heels together, lift the top knee without rolling the hips back, then lower.",
        aliases=("Clam Shell", "Clams"),
    ),
    Custom(
        "Copenhagen Plank",
        "hold",
        "strength",
        "intermediate",
        "isolation",
        "static",
        ("adductors",),
        ("abdominals",),
        ("bench",),
        "In a side plank with the top leg resting on a bench and the bottom leg lifted, hold the body in a straight line.",
        aliases=("Copenhagen Adductor Plank",),
    ),
    Custom(
        "Hollow Body Hold",
        "hold",
        "strength",
        "intermediate",
        "isolation",
        "static",
        ("abdominals",),
        (),
        (),
        "Lying on your back, press the lower back into the floor and lift the shoulders and straight legs a few centimetres; hold.",
        aliases=("Hollow Hold",),
    ),
)


# --- Derivations -----------------------------------------------------------------------------------------
def map_muscles(primary_src: list[str], secondary_src: list[str]) -> tuple[list[str], list[str]]:
    """Source muscle names → ours: primaries in source order, secondaries in canonical order, no repeats."""
    primary: list[str] = []
    for name in primary_src:
        muscle = SOURCE_MUSCLES[name]
        if muscle not in primary:
            primary.append(muscle)
    mapped = {SOURCE_MUSCLES[name] for name in secondary_src} - set(primary)
    return primary, [muscle for muscle in MUSCLES if muscle in mapped]


def _split_hundredths(pool: int, count: int) -> list[int]:
    base, extra = divmod(pool, count)
    return [base + (1 if index < extra else 0) for index in range(count)]


def muscle_shares(primary: list[str], secondary: list[str]) -> dict[str, float]:
    """Primaries share 0.70 (1.00 without secondaries), secondaries the rest; hundredths summing to 100."""
    primary_pool = 70 if secondary else 100
    parts = _split_hundredths(primary_pool, len(primary))
    if secondary:
        parts += _split_hundredths(100 - primary_pool, len(secondary))
    return {muscle: part / 100 for muscle, part in zip(primary + secondary, parts, strict=True)}


def _machine_slug(lowered_name: str) -> str | None:
    for pattern, slug in MACHINE_RULES:
        if re.search(pattern, lowered_name):
            return slug
    return None


def _needs_bench(lowered_name: str, coarse: str | None, gear: set[str]) -> bool:
    if coarse == "machine" or "no hyperextension bench" in lowered_name or "smith" in lowered_name:
        return "smith" in lowered_name and bool(re.search(r"bench|incline|decline", lowered_name))
    if "bench" in lowered_name:
        return True
    if re.search(r"push-?ups?\b|push up", lowered_name):
        return False
    if re.search(r"incline|decline", lowered_name):
        return True
    free_weight = coarse in FREE_WEIGHTS or "weight_plates" in gear
    if coarse == "kettlebells" and "seated" in lowered_name:  # kettlebell seated work is done on the floor
        return False
    if coarse == "cable" and "lying" in lowered_name:
        return True
    return free_weight and bool(FREE_WEIGHT_BENCH_PATTERN.search(lowered_name))


def derive_equipment(source: dict[str, Any]) -> list[str] | None:
    """Everything the exercise needs, as our slugs (empty = bodyweight); None when it cannot be told."""
    name: str = source["name"]
    lowered = name.lower()
    coarse: str | None = source["equipment"]
    gear: set[str]
    if coarse == "machine":
        slug = _machine_slug(lowered)
        if slug is None:
            return None
        gear = {slug}
    elif coarse in COARSE_EQUIPMENT:
        gear = {COARSE_EQUIPMENT[coarse]} - {BODYWEIGHT}
    else:
        gear = set()
    if coarse in (None, "other", "body only"):
        for pattern, needs in STATION_RULES:
            if re.search(pattern, lowered):
                if needs is None:
                    return None
                gear |= needs
                break
        else:
            if coarse == "other" and source["category"] != "stretching":
                return None  # an unnamed implement we cannot identify
    if "smith" in lowered:
        gear = (gear - {"barbell"}) | {"smith_machine"}
    if _needs_bench(lowered, coarse, gear):
        gear.add("bench")
    if coarse == "barbell" and RACK_PATTERN.search(lowered) and not RACK_EXCLUDE.search(lowered):
        gear.add("squat_rack")
    if re.search(r"preacher|spider curl", lowered) and coarse in FREE_WEIGHTS | {"cable"}:
        gear.add("preacher_bench")
    return sorted(gear)


def derive_exercise_type(source: dict[str, Any]) -> str:
    lowered = source["name"].lower()
    if HOLD_PATTERN.search(lowered):
        return "hold"
    if INTERVALS_PATTERN.search(lowered):
        return "intervals"
    if source["category"] == "cardio" or DURATION_PATTERN.search(lowered):
        return "duration"
    if source["category"] == "stretching":
        return "reps" if DYNAMIC_STRETCH_PATTERN.search(lowered) else "hold"
    return "reps"


def derive_category(source: dict[str, Any], exercise_type: str) -> str:
    if source["category"] == "stretching" and (
        source["equipment"] == "foam roll" or source["name"].endswith("-SMR") or exercise_type == "reps"
    ):
        return "mobility"  # self-massage and dynamic drills, not static stretches
    return SOURCE_CATEGORIES[source["category"]]


def build_entry(
    *,
    name: str,
    aliases: list[str],
    exercise_type: str,
    category: str,
    level: str,
    mechanic: str,
    force: str,
    primary_src: list[str],
    secondary_src: list[str],
    equipment: list[str],
    instructions: str,
    source_id: str,
) -> dict[str, Any]:
    primary, secondary = map_muscles(primary_src, secondary_src)
    pattern = derive_movement_pattern(
        name, primary_muscles=primary, category=category, mechanic=mechanic, force=force
    )
    return {
        "slug": slugify_exercise_name(name),
        "name": name,
        "aliases": aliases,
        "exercise_type": exercise_type,
        "category": category,
        "level": level,
        "mechanic": mechanic,
        "force": force,
        "primary_muscles": primary,
        "secondary_muscles": secondary,
        "muscle_shares": muscle_shares(primary, secondary),
        "equipment": sorted(equipment),
        "movement_pattern": pattern or "",
        "loaded_joints": derive_loaded_joints(pattern, muscles=[*primary, *secondary], name=name),
        "instructions": instructions,
        "source_id": source_id,
    }


def entry_from_pick(pick: Pick, source: dict[str, Any]) -> dict[str, Any]:
    equipment = list(pick.equipment) if pick.equipment is not None else derive_equipment(source)
    if equipment is None:
        raise SystemExit(f"cannot tell the equipment of {pick.source!r}; give it explicitly in SELECTION")
    exercise_type = pick.exercise_type or derive_exercise_type(source)
    aliases = list(pick.aliases)
    name = pick.name or source["name"]
    if name != source["name"] and source["name"] not in aliases:
        aliases.append(source["name"])
    return build_entry(
        name=name,
        aliases=aliases,
        exercise_type=exercise_type,
        category=derive_category(source, exercise_type),
        level=SOURCE_LEVELS[source["level"]],
        mechanic=source["mechanic"] or "",
        force=source["force"] or "",
        primary_src=list(pick.primary) if pick.primary is not None else source["primaryMuscles"],
        secondary_src=list(pick.secondary) if pick.secondary is not None else source["secondaryMuscles"],
        equipment=equipment,
        instructions=pick.how,
        source_id=source["id"],
    )


def entry_from_custom(custom: Custom) -> dict[str, Any]:
    return build_entry(
        name=custom.name,
        aliases=list(custom.aliases),
        exercise_type=custom.exercise_type,
        category=custom.category,
        level=custom.level,
        mechanic=custom.mechanic,
        force=custom.force,
        primary_src=list(custom.primary),
        secondary_src=list(custom.secondary),
        equipment=list(custom.equipment),
        instructions=custom.how,
        source_id="",
    )


def check_catalogue(entries: list[dict[str, Any]]) -> list[str]:
    """Everything the catalogue promises; returns the broken promises (empty when all hold)."""
    problems: list[str] = []
    if len(entries) < MIN_EXERCISES:
        problems.append(f"only {len(entries)} exercises; at least {MIN_EXERCISES} wanted")
    primaries = Counter(muscle for entry in entries for muscle in entry["primary_muscles"])
    for muscle in MUSCLES:
        if primaries[muscle] < MIN_PRIMARY_PER_MUSCLE:
            problems.append(f"{muscle} is primary in {primaries[muscle]} exercises")
    used = {slug for entry in entries for slug in entry["equipment"]}
    for slug in EQUIPMENT_SLUGS:
        if slug != BODYWEIGHT and slug not in used:
            problems.append(f"no exercise needs {slug}")
    if not any(not entry["equipment"] for entry in entries):
        problems.append("no bodyweight exercise")
    unknown = used - set(EQUIPMENT_SLUGS)
    if unknown:
        problems.append(f"unknown equipment slugs {sorted(unknown)}")
    owners: dict[str, str] = {}
    for entry in entries:
        if sum(round(share * 100) for share in entry["muscle_shares"].values()) != 100:
            problems.append(f"{entry['name']}: muscle shares do not sum to 1.0")
        for label in [entry["name"], *entry["aliases"]]:
            key = exercise_name_key(label)
            if owners.setdefault(key, entry["slug"]) != entry["slug"]:
                problems.append(f"name {label!r} of {entry['slug']} clashes with {owners[key]}")
    problems += [
        f"{entry['name']}: no movement pattern" for entry in entries if not entry["movement_pattern"]
    ]
    slugs = Counter(entry["slug"] for entry in entries)
    problems += [f"duplicate slug {slug}" for slug, count in slugs.items() if count > 1]
    return problems


def build_catalogue(source_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_name = {row["name"]: row for row in source_rows}
    missing = [pick.source for pick in SELECTION if pick.source not in by_name]
    if missing:
        raise SystemExit(f"not in the source: {missing}")
    entries = [entry_from_pick(pick, by_name[pick.source]) for pick in SELECTION]
    entries += [entry_from_custom(custom) for custom in CUSTOM_EXERCISES]
    return sorted(entries, key=lambda entry: entry["slug"])


def render(entries: list[dict[str, Any]]) -> str:
    """One exercise per line: compact, yet diffs stay readable."""
    lines = [json.dumps(entry, ensure_ascii=False) for entry in entries]
    return "[\n" + ",\n".join(lines) + "\n]\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("source", nargs="?", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    source_rows = json.loads(args.source.read_text(encoding="utf-8"))
    entries = build_catalogue(source_rows)
    problems = check_catalogue(entries)
    if problems:
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        return 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(render(entries), encoding="utf-8")
    print(f"wrote {len(entries)} exercises to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
