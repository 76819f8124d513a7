"""The data and location tools (docs/contracts.md §11.4 (data and location tools)): fetch_data and set_current_location."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from django.db import DatabaseError
from pydantic import BaseModel, Field, model_validator

from datasources_app import selectors, services
from datasources_app.models import Location
from datasources_app.sources import FormattedSource, all_sources, fetch_many, source_names
from tools_app.registry import register
from tools_app.types import Tool, ToolContext, ToolOutcome

# How many equipment names a location summary spells out before "and N more".
EQUIPMENT_SUMMARY_LIMIT = 12

SourceName = Annotated[str, Field(json_schema_extra={"enum": source_names()})]


class FetchDataInput(BaseModel):
    sources: list[SourceName] = Field(min_length=1)
    params: dict[str, dict[str, Any]] | None = Field(
        default=None, description='Per source, e.g. {"workout_history": {"days_back": 30}}.'
    )

    @model_validator(mode="before")
    @classmethod
    def _accept_seed_001_form(cls, data: Any) -> Any:
        """Seed 001 asks for sources as `{source: {fetch: true, ...params}}` at the top level."""
        if not isinstance(data, dict) or "sources" in data:
            return data
        sources: list[str] = []
        params: dict[str, dict[str, Any]] = {}
        for name, config in data.items():
            if isinstance(config, dict) and config.get("fetch"):
                sources.append(name)
                extra = {key: value for key, value in config.items() if key != "fetch"}
                if extra:
                    params[name] = extra
        return {"sources": sources, "params": params or None} if sources else data


class SetCurrentLocationInput(BaseModel):
    location_id: str | None = None
    location_name: str | None = Field(default=None, description="As the user data lists it, e.g. Gym.")


def fetch_data(args: FetchDataInput, ctx: ToolContext) -> ToolOutcome:
    """Load several data sources at once; each comes back formatted for the model."""
    valid = source_names()
    wanted = list(dict.fromkeys(name.strip() for name in args.sources))
    unknown = [name for name in wanted if name not in valid]
    if unknown:
        message = f"Unknown data source(s): {', '.join(unknown)}. Valid sources: {', '.join(valid)}."
        return ToolOutcome(success=False, data={"error": message}, text=message)
    params = args.params or {}
    results = fetch_many(user_id=ctx.user_id, requests=[(name, params.get(name)) for name in wanted])

    data: dict[str, Any] = {}
    errors: dict[str, str] = {}
    blocks: list[str] = []
    for result in results:
        if isinstance(result, FormattedSource):
            data[result.source] = result.text
            blocks.append(f'<source name="{result.source}">\n{result.text}\n</source>')
        else:
            errors[result.source] = result.error
            blocks.append(f'<source name="{result.source}" failed="true">\n{result.error}\n</source>')
    if errors:
        data["errors"] = errors
    if not any(isinstance(result, FormattedSource) for result in results):
        message = "No data source could be fetched:\n" + "\n".join(blocks)
        return ToolOutcome(success=False, data={"error": message, "errors": errors}, text=message)
    return ToolOutcome(success=True, data=data, text="\n".join(blocks))


def _location_label(location: Location) -> str:
    return f"{location.name} (id {location.id}{', current' if location.is_current else ''})"


def _find_location(
    locations: list[Location], *, location_id: str | None, location_name: str | None
) -> Location | str:
    """The location meant, or a failure message."""
    if location_id:
        try:
            wanted_id = uuid.UUID(location_id.strip())
        except ValueError:
            wanted_id = None
            location_name = location_name or location_id  # a name passed as the id
        found = next((location for location in locations if location.id == wanted_id), None)
        if found is not None:
            return found
        if not location_name:
            return f"Location {location_id} not found."
    name = (location_name or "").strip().casefold()
    exact = [location for location in locations if location.name.casefold() == name]
    if len(exact) == 1:
        return exact[0]
    partial = exact or [location for location in locations if name and name in location.name.casefold()]
    if len(partial) == 1:
        return partial[0]
    if len(partial) > 1:
        return (
            f"Multiple locations match '{location_name}': "
            + ", ".join(_location_label(location) for location in partial)
            + ". Call set_current_location again with the location_id."
        )
    return f"Location '{location_name}' not found."


def equipment_summary(location: Location) -> str:
    names = [item.name for item in location.equipment.all()]
    if not names:
        return "bodyweight only"
    shown = ", ".join(names[:EQUIPMENT_SUMMARY_LIMIT])
    more = len(names) - EQUIPMENT_SUMMARY_LIMIT
    return f"{shown} and {more} more" if more > 0 else shown


def set_current_location(args: SetCurrentLocationInput, ctx: ToolContext) -> ToolOutcome:
    """Make one of the user's locations the current one (all other current flags cleared, one transaction)."""
    if not (args.location_id or "").strip() and not (args.location_name or "").strip():
        message = "Give location_id (preferred) or location_name."
        return ToolOutcome(success=False, data={"error": message}, text=message)
    locations = selectors.list_locations(user_id=ctx.user_id)
    found = _find_location(locations, location_id=args.location_id, location_name=args.location_name)
    if isinstance(found, str):
        available = (
            "Your locations: " + ", ".join(_location_label(location) for location in locations) + "."
            if locations
            else "The user has no locations yet."
        )
        message = found if found.startswith("Multiple") else f"{found} {available}"
        return ToolOutcome(success=False, data={"error": message}, text=message)
    try:
        services.set_current_location(user_id=ctx.user_id, location_id=found.id)
    except (Location.DoesNotExist, DatabaseError) as exc:
        message = f"Could not switch to {found.name}: {type(exc).__name__}: {exc}"
        return ToolOutcome(success=False, data={"error": message}, text=message)
    equipment = equipment_summary(found)
    location = {
        "id": str(found.id),
        "name": found.name,
        "description": found.description,
        "equipment_count": len(found.equipment.all()),
        "equipment_summary": equipment,
    }
    text = f"current location: {found.name} ({location['equipment_count']} equipment: {equipment})"
    # A long list is counted, not read out.
    kit = f"{location['equipment_count']} pieces of equipment" if " more" in equipment else equipment
    return ToolOutcome(
        success=True, data={"location": location}, text=text, tell_user=f"You're set to {found.name} ({kit})."
    )


def _source_params() -> str:
    """'workout_history(limit, days_back), ...' from the data-source registry: the sources that take params."""
    return ", ".join(
        f"{source.name}({', '.join(source.params.model_fields)})"
        for source in all_sources()
        if source.params.model_fields
    )


FETCH_DATA = register(
    Tool(
        name="fetch_data",
        description=(
            "Load more of the user's data when what you have is not enough, several sources per call. "
            f"Params: {_source_params()}."
        ),
        input_model=FetchDataInput,
        handler=fetch_data,
        category="data",
        priority=200,
        observation="full",
        status_start="Gathering your info...",
        status_done="Context ready",
        atomic=False,
    )
)

SET_CURRENT_LOCATION = register(
    Tool(
        name="set_current_location",
        description=("Switch the location the user trains at now; workouts then use its equipment."),
        input_model=SetCurrentLocationInput,
        handler=set_current_location,
        category="location",
        priority=300,
        observation="summary",
        status_start="Switching location...",
        status_done="Location updated",
    )
)
