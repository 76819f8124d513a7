"""fetch_data and set_current_location (docs/contracts.md §11.4 (data and location tools))."""

from __future__ import annotations

import uuid

import pytest

from datasources_app.catalog import EQUIPMENT_SLUGS
from datasources_app.models import Location
from datasources_app.sources import fetch_and_format, source_names
from sessions_app.services import create_session
from tests.datasources_app.factories import LocationFactory, WorkoutLogFactory
from tests.tools_app.workout_support import Trainee, make_trainee, told
from tools_app.registry import execute_tool, get_tool, tool_specs
from tools_app.types import ToolContext

pytestmark = pytest.mark.django_db


@pytest.fixture
def trainee() -> Trainee:
    return make_trainee()


def current_names(user_id: uuid.UUID) -> list[str]:
    return list(Location.objects.filter(user_id=user_id, is_current=True).values_list("name", flat=True))


@pytest.mark.parametrize(
    ("name", "start", "done"),
    [
        ("fetch_data", "Gathering your info...", "Context ready"),
        ("set_current_location", "Switching location...", "Location updated"),
    ],
)
def test_status_messages_follow_the_seed_table(name: str, start: str, done: str) -> None:
    """docs/contracts.md §11.2 (observations and status messages) status messages."""
    tool = get_tool(name)
    assert (tool.status_start, tool.status_done) == (start, done)


# --- fetch_data ------------------------------------------------------------------------------------------------------


def test_fetch_data_schema_lists_the_source_names() -> None:
    """The model is told which sources exist."""
    (spec,) = tool_specs(["fetch_data"])
    assert spec["input_schema"]["properties"]["sources"]["items"]["enum"] == source_names()
    assert spec["input_schema"]["required"] == ["sources"]


def test_fetch_data_returns_each_source_formatted(trainee: Trainee) -> None:
    """Every requested source comes back as the registry formats it, in full, in request order."""
    result = trainee.run("fetch_data", {"sources": ["all_locations", "user_settings"]})
    assert result.success, result.formatted
    assert list(result.data) == ["all_locations", "user_settings"]
    for source in ("all_locations", "user_settings"):
        expected = fetch_and_format(user_id=trainee.user_id, source=source).text
        assert result.data[source] == expected
        assert f'<source name="{source}">\n{expected}\n</source>' in result.raw_formatted
    assert "Home (current)" in result.data["all_locations"]
    assert result.status_message == "Context ready"


def test_fetch_data_passes_per_source_params(trainee: Trainee) -> None:
    """params reach their source: a one-workout limit shows only the newest workout."""
    WorkoutLogFactory.create(user_id=trainee.user_id, title="Older session")
    WorkoutLogFactory.create(user_id=trainee.user_id, title="Newest session")
    params = {"workout_history": {"limit": 1}}
    result = trainee.run("fetch_data", {"sources": ["workout_history"], "params": params})
    expected = fetch_and_format(user_id=trainee.user_id, source="workout_history", params={"limit": 1}).text
    assert result.data == {"workout_history": expected}
    unlimited = fetch_and_format(user_id=trainee.user_id, source="workout_history").text
    assert expected != unlimited


def test_fetch_data_accepts_the_seed_001_form(trainee: Trainee) -> None:
    """Seed 001's {source: {fetch: true, ...params}} arguments work too."""
    args = {
        "user_settings": {"fetch": True},
        "workout_history": {"fetch": True, "limit": 2},
        "muscle_goals": {"fetch": False},
    }
    result = trainee.run("fetch_data", args)
    assert result.success, result.formatted
    assert list(result.data) == ["user_settings", "workout_history"]


def test_fetch_data_rejects_unknown_sources_naming_the_valid_ones(trainee: Trainee) -> None:
    """An unknown source name fails the call before anything is fetched, listing every valid name."""
    result = trainee.run("fetch_data", {"sources": ["user_settings", "horoscope"]})
    assert not result.success
    assert result.data["error"] == (
        f"Unknown data source(s): horoscope. Valid sources: {', '.join(source_names())}."
    )
    assert result.formatted.startswith('<tool_error name="fetch_data">')


def test_fetch_data_reports_a_failing_source_and_returns_the_others(trainee: Trainee) -> None:
    """A source with bad params is reported; the other sources still come back."""
    params = {"workout_history": {"days_back": 0}}
    result = trainee.run("fetch_data", {"sources": ["workout_history", "user_settings"], "params": params})
    assert result.success
    assert "user_settings" in result.data and "workout_history" not in result.data
    assert result.data["errors"]["workout_history"].startswith(
        "invalid params for workout_history: days_back"
    )
    assert '<source name="workout_history" failed="true">' in result.raw_formatted


def test_fetch_data_fails_when_every_source_fails(trainee: Trainee) -> None:
    """If nothing could be fetched the call is a failure naming each error."""
    result = trainee.run(
        "fetch_data", {"sources": ["workout_history"], "params": {"workout_history": {"bogus": 1}}}
    )
    assert not result.success
    assert result.data["error"].startswith("No data source could be fetched:")
    assert "bogus" in result.data["errors"]["workout_history"]


def test_fetch_data_needs_at_least_one_source(trainee: Trainee) -> None:
    """An empty source list is an argument error naming the field."""
    result = trainee.run("fetch_data", {"sources": []})
    assert not result.success and result.data["error"].startswith(
        "Invalid arguments for fetch_data: sources:"
    )


# --- set_current_location --------------------------------------------------------------------------------------------


def test_switch_by_id_clears_every_other_current_flag(trainee: Trainee) -> None:
    """The target becomes the only current location (docs/contracts.md §11.4 (data and location tools)) and is
    described in the result; the user hears where they are and, for a long list, how much equipment."""
    result = trainee.run("set_current_location", {"location_id": str(trainee.gym.id)})
    assert result.success, result.formatted
    assert current_names(trainee.user_id) == ["Gym"]
    assert result.data == {
        "location": {
            "id": str(trainee.gym.id),
            "name": "Gym",
            "description": "",
            "equipment_count": 7,
            "equipment_summary": "Adjustable Bench, Squat Rack, Treadmill, Barbell, Dumbbells, Kettlebell, Cable Machine",
        }
    }
    assert result.raw_formatted.startswith("current location: Gym (7 equipment: Adjustable Bench")
    assert told(result) == (
        "You're set to Gym (Adjustable Bench, Squat Rack, Treadmill, Barbell, Dumbbells, Kettlebell, Cable Machine)."
    )
    LocationFactory.create(user_id=trainee.user_id, name="Big Gym", equipment=EQUIPMENT_SLUGS[:14])
    big = trainee.run("set_current_location", {"location_name": "Big Gym"})
    assert told(big) == "You're set to Big Gym (14 pieces of equipment)."  # a long list is counted
    assert result.status_message == "Location updated"


@pytest.mark.parametrize("name", ["gym", "GYM", " Gym ", "gy"])
def test_switch_by_name_is_case_insensitive(trainee: Trainee, name: str) -> None:
    """location_name matches ignoring case and spaces; a unique partial name matches too."""
    result = trainee.run("set_current_location", {"location_name": name})
    assert result.success, result.formatted
    assert current_names(trainee.user_id) == ["Gym"]


def test_a_name_passed_as_the_id_still_finds_the_location(trainee: Trainee) -> None:
    """A model that puts the name in location_id is understood."""
    result = trainee.run("set_current_location", {"location_id": "Gym"})
    assert result.success and current_names(trainee.user_id) == ["Gym"]


def test_switching_to_the_current_location_keeps_it_current(trainee: Trainee) -> None:
    """Selecting the current location again is a success with no change."""
    result = trainee.run("set_current_location", {"location_name": "home"})
    assert result.success and current_names(trainee.user_id) == ["Home"]


def test_several_matching_names_fail_and_list_them(trainee: Trainee) -> None:
    """An ambiguous name is a failure listing the candidates with their ids; nothing changes."""
    hotel = LocationFactory.create(user_id=trainee.user_id, name="Hotel Gym")
    result = trainee.run("set_current_location", {"location_name": "o"})
    assert not result.success
    assert result.data["error"].startswith("Multiple locations match 'o':")
    assert f"Hotel Gym (id {hotel.id})" in result.data["error"] and "Home (id" in result.data["error"]
    assert current_names(trainee.user_id) == ["Home"]


@pytest.mark.parametrize(
    "args",
    [{"location_name": "Beach"}, {"location_id": str(uuid.uuid4())}],
)
def test_unknown_location_fails_listing_the_users_locations(trainee: Trainee, args: dict[str, str]) -> None:
    """A location that does not exist is a failure listing the user's locations; nothing changes."""
    result = trainee.run("set_current_location", args)
    assert not result.success
    assert "not found. Your locations: " in result.data["error"]
    assert f"Home (id {trainee.home.id}, current)" in result.data["error"]
    assert f"Gym (id {trainee.gym.id})" in result.data["error"]
    assert current_names(trainee.user_id) == ["Home"]


def test_another_users_location_is_not_found(trainee: Trainee) -> None:
    """A location id of another user does not resolve, and neither user's flags change."""
    other = LocationFactory.create(name="Elsewhere")
    result = trainee.run("set_current_location", {"location_id": str(other.id)})
    assert not result.success and "not found" in result.data["error"]
    assert current_names(trainee.user_id) == ["Home"]
    assert not Location.objects.get(pk=other.pk).is_current


def test_a_user_without_locations_is_told_so(db: None) -> None:
    """With no locations at all the failure says so."""
    session = create_session(user_id=uuid.uuid4())
    ctx = ToolContext(user_id=session.user_id, session=session)
    result = execute_tool("set_current_location", {"location_name": "Home"}, ctx)
    assert not result.success
    assert result.data["error"] == "Location 'Home' not found. The user has no locations yet."


@pytest.mark.parametrize("args", [{}, {"location_id": "  ", "location_name": ""}])
def test_an_id_or_a_name_is_required(trainee: Trainee, args: dict[str, str]) -> None:
    """Neither location_id nor location_name: a failure saying what to give."""
    result = trainee.run("set_current_location", args)
    assert not result.success and result.data["error"] == "Give location_id (preferred) or location_name."
