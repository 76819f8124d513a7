"""The goal tools (docs/contracts.md §11.5 (tool list)): set_goals, plus milestone goals (the milestone_goals data source, docs/contracts.md §10 (data sources)).

The model reads goals with fetch_data (`category_goals`, `muscle_goals`, `milestone_goals`) and writes
them here. Weights are auto-normalised (50/30/20 and 0.5/0.3/0.2 mean the same). Seed 001 sends category
goals as a list of `{category, description, percentage}`; that form is accepted besides the canonical
`{category: weight}` map.
"""

from __future__ import annotations

import uuid
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints, model_validator
from pydantic.json_schema import SkipJsonSchema

from datasources_app import selectors, services
from datasources_app.formatters import number, percent
from datasources_app.models import MilestoneGoal, MilestoneStatus
from tools_app.formatting import summary
from tools_app.registry import register
from tools_app.types import Tool, ToolContext, ToolOutcome

NonEmptyText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Weight = Annotated[float, Field(ge=0)]


class SetGoalsInput(BaseModel):
    goal_type: Literal["category", "muscle"]
    category_goals: dict[str, Weight] | None = Field(
        default=None,
        description='Weight per category, any names, e.g. {"Strength": 50, "Zone 2 Cardio": 50}.',
    )
    category_descriptions: dict[str, str] | None = Field(
        default=None, description='e.g. {"Strength": "Compound lifts"}.'
    )
    muscle_goals: dict[str, Weight] | None = Field(
        default=None, description="Weight per muscle, of the 16 muscles."
    )

    @model_validator(mode="before")
    @classmethod
    def _accept_seed_001_list(cls, data: Any) -> Any:
        """Seed 001: category_goals: [{category, description?, percentage}, ...]."""
        if not isinstance(data, dict) or not isinstance(data.get("category_goals"), list):
            return data
        data = dict(data)
        weights: dict[str, Any] = {}
        descriptions: dict[str, Any] = dict(data.get("category_descriptions") or {})
        for item in data["category_goals"]:
            if not isinstance(item, dict) or "category" not in item:
                return data  # let validation name the bad shape
            name = str(item["category"])
            weights[name] = item.get("percentage", item.get("weight"))
            if item.get("description"):
                descriptions[name] = item["description"]
        data["category_goals"] = weights
        if descriptions:
            data["category_descriptions"] = descriptions
        return data


class CreateMilestoneInput(BaseModel):
    title: NonEmptyText = Field(description="e.g. 'Bench 100 kg'.")
    target_value: float = Field(gt=0)
    unit: str | None = Field(default=None, description="e.g. 'kg', 'km', 'min'.")
    metric: str | None = Field(default=None, description="e.g. 'bench press 1RM', '5K time'.")
    current_value: float | None = Field(default=None, ge=0)
    deadline: date | None = None


class UpdateMilestoneInput(BaseModel):
    milestone_id: NonEmptyText = Field(description="From the milestone_goals data.")
    current_value: float | None = Field(default=None, ge=0, description="Progress so far.")
    status: Literal["active", "achieved", "abandoned"] | None = None
    target_value: float | None = Field(default=None, gt=0)
    deadline: date | None = None
    title: str | None = None
    # Seed 001's milestone table spells the title goal_name.
    goal_name: SkipJsonSchema[str | None] = None


def _failure(message: str) -> ToolOutcome:
    return ToolOutcome(success=False, data={"error": message}, text=message)


def set_goals(args: SetGoalsInput, ctx: ToolContext) -> ToolOutcome:
    """Replace the user's category or muscle goals with the given weights, normalised to sum 1."""
    wanted, other = ("category_goals", "muscle_goals")
    if args.goal_type == "muscle":
        wanted, other = other, wanted
    goals: dict[str, float] | None = getattr(args, wanted)
    if getattr(args, other):
        return _failure(
            f"{other} was given with goal_type '{args.goal_type}'. Call set_goals once per goal type."
        )
    if not goals:
        return _failure(f"goal_type '{args.goal_type}' needs {wanted} with at least one weight above 0.")
    try:
        if args.goal_type == "category":
            saved = services.set_category_goals(
                user_id=ctx.user_id, goals=goals, descriptions=args.category_descriptions
            )
            rows = [(goal.category, goal.weight) for goal in saved]
        else:
            saved_muscles = services.set_muscle_goals(user_id=ctx.user_id, goals=goals)
            rows = [(goal.muscle, goal.weight) for goal in saved_muscles]
    except ValueError as exc:
        return _failure(f"Goals not saved: {exc}")
    data = {
        "goal_type": args.goal_type,
        "count": len(rows),
        "goals": [{"name": name, "weight": round(weight, 4)} for name, weight in rows],
    }
    listing = ", ".join(f"{name} {percent(weight)}" for name, weight in rows)
    return ToolOutcome(success=True, data=data, text=f"{args.goal_type} goals set: {listing}")


def _milestone_data(milestone: MilestoneGoal) -> dict[str, Any]:
    return {
        "id": str(milestone.id),
        "title": milestone.title,
        "metric": milestone.metric,
        "current_value": milestone.current_value,
        "target_value": milestone.target_value,
        "unit": milestone.unit,
        "deadline": milestone.deadline.isoformat() if milestone.deadline else None,
        "status": milestone.status,
    }


def _milestone_progress(milestone: MilestoneGoal) -> str:
    return f"{number(milestone.current_value)}/{number(milestone.target_value)}{milestone.unit}"


def create_milestone_goal(args: CreateMilestoneInput, ctx: ToolContext) -> ToolOutcome:
    """Start tracking a measurable goal."""
    today = selectors.local_today(user_id=ctx.user_id)
    if args.deadline is not None and args.deadline < today:
        return _failure(
            f"deadline {args.deadline.isoformat()} is in the past (today is {today.isoformat()})."
        )
    milestone = services.create_milestone_goal(
        user_id=ctx.user_id,
        title=args.title,
        target_value=args.target_value,
        metric=args.metric or "",
        unit=args.unit or "",
        current_value=args.current_value or 0.0,
        deadline=args.deadline,
    )
    by = f" by {milestone.deadline.isoformat()}" if milestone.deadline else ""
    text = summary(
        "milestone set", f"{milestone.title} {_milestone_progress(milestone)}{by}", f"id={milestone.id}"
    )
    return ToolOutcome(success=True, data={"milestone": _milestone_data(milestone)}, text=text)


def update_milestone_goal(args: UpdateMilestoneInput, ctx: ToolContext) -> ToolOutcome:
    """Record progress on, change, or close one of the user's milestones."""
    title = args.title or args.goal_name
    if all(
        value is None for value in (args.current_value, args.status, args.target_value, args.deadline, title)
    ):
        return _failure("Nothing to update: give current_value, status, target_value, deadline or title.")
    try:
        milestone_id = uuid.UUID(args.milestone_id)
    except ValueError:
        milestone_id = None
    if (
        milestone_id is None
        or not MilestoneGoal.objects.filter(id=milestone_id, user_id=ctx.user_id).exists()
    ):
        known = selectors.list_milestone_goals(user_id=ctx.user_id, status=MilestoneStatus.ACTIVE)
        listing = "; ".join(f"{item.title} id={item.id}" for item in known) or "none"
        return _failure(f"Milestone {args.milestone_id} not found. Active milestones: {listing}.")
    assert milestone_id is not None
    milestone = services.update_milestone_goal(
        user_id=ctx.user_id,
        milestone_id=milestone_id,
        current_value=args.current_value,
        status=args.status,
        target_value=args.target_value,
        deadline=args.deadline,
        title=title,
    )
    text = summary(
        "milestone updated", f"{milestone.title} {_milestone_progress(milestone)}", milestone.status
    )
    return ToolOutcome(success=True, data={"milestone": _milestone_data(milestone)}, text=text)


SET_GOALS = register(
    Tool(
        name="set_goals",
        description=(
            "Replace the user's category or muscle goals (goal_type; see the current ones first). Weights are"
            " normalised to 100%."
        ),
        input_model=SetGoalsInput,
        handler=set_goals,
        category="goals",
        priority=400,
        observation="summary",
        status_start="Updating your goals...",
        status_done="Goals updated",
    )
)

CREATE_MILESTONE_GOAL = register(
    Tool(
        name="create_milestone_goal",
        description=(
            "Track a measurable target the user names (target_value, e.g. bench 100 kg), optionally by a "
            "deadline."
        ),
        input_model=CreateMilestoneInput,
        handler=create_milestone_goal,
        category="goals",
        priority=410,
        observation="summary",
        status_start="Setting your milestone...",
        status_done="Milestone set",
        aliases={"goal_name": "title", "target_unit": "unit", "target_date": "deadline"},
    )
)

UPDATE_MILESTONE_GOAL = register(
    Tool(
        name="update_milestone_goal",
        description=("Record progress on a milestone, change its target or deadline, or close it."),
        input_model=UpdateMilestoneInput,
        handler=update_milestone_goal,
        category="goals",
        priority=411,
        observation="summary",
        status_start="Updating your milestone...",
        status_done="Milestone updated",
        aliases={"target_date": "deadline"},
    )
)
