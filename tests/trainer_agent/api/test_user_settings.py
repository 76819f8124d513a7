"""GET / PUT /user-settings: the caller's units and time zone, validated before anything is saved."""

from __future__ import annotations

from typing import Any

import pytest

from datasources_app.models import UserSettings
from tests.datasources_app.factories import UserSettingsFactory
from tests.trainer_agent.api.support import ApiUser, row_counts

URL = "/user-settings"


@pytest.mark.django_db
def test_get_without_saved_settings_returns_defaults_and_writes_nothing(alice: ApiUser) -> None:
    """A user with no settings row reads kg / km / UTC; reading does not create the row."""
    response = alice.get(URL)
    assert response.status_code == 200
    assert response.json() == {"weight_unit": "kg", "distance_unit": "km", "timezone": "UTC"}
    assert not UserSettings.objects.filter(user_id=alice.user_id).exists()


@pytest.mark.django_db
def test_get_returns_the_callers_own_settings(alice: ApiUser, bob: ApiUser) -> None:
    """Each user reads their own row."""
    UserSettingsFactory(
        user_id=alice.user_id, weight_unit="lb", distance_unit="mi", timezone="America/Denver"
    )
    UserSettingsFactory(user_id=bob.user_id, weight_unit="kg", distance_unit="km", timezone="Europe/Berlin")
    assert alice.get(URL).json() == {"weight_unit": "lb", "distance_unit": "mi", "timezone": "America/Denver"}


@pytest.mark.django_db
def test_put_updates_only_the_given_fields(alice: ApiUser) -> None:
    """PUT with some fields changes those and keeps the rest."""
    UserSettingsFactory(user_id=alice.user_id, weight_unit="kg", distance_unit="km", timezone="UTC")
    response = alice.put_json(URL, {"weight_unit": "lb", "timezone": "Asia/Tokyo"})
    assert response.status_code == 200
    assert response.json() == {"weight_unit": "lb", "distance_unit": "km", "timezone": "Asia/Tokyo"}
    saved = UserSettings.objects.get(user_id=alice.user_id)
    assert (saved.weight_unit, saved.distance_unit, saved.timezone) == ("lb", "km", "Asia/Tokyo")


@pytest.mark.django_db
def test_put_creates_settings_for_a_new_user(alice: ApiUser) -> None:
    """The first PUT stores a row with defaults for the fields not sent."""
    assert alice.put_json(URL, {"distance_unit": "mi"}).json() == {
        "weight_unit": "kg",
        "distance_unit": "mi",
        "timezone": "UTC",
    }
    assert UserSettings.objects.filter(user_id=alice.user_id).count() == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"weight_unit": "stone"}, "weight_unit"),
        ({"distance_unit": "furlong"}, "distance_unit"),
        ({"timezone": "Mars/Olympus_Mons"}, "timezone"),
        ({"timezone": "../../etc/passwd"}, "timezone"),
        ({"timezone": ""}, "timezone"),
        ({"timezone": "x" * 65}, "timezone"),
        ({"timezone": "Europe/Berlin\u0000"}, "U+0000"),
        ({"timezone": 5}, "timezone"),
        ({"weight_unit": None}, "weight_unit"),
        ({"weight_unit": ["kg"]}, "weight_unit"),
        ({"theme": "dark"}, "unknown field"),
        ({}, "at least one"),
    ],
)
@pytest.mark.django_db
def test_put_with_invalid_input_is_400_and_saves_nothing(
    alice: ApiUser, body: dict[str, Any], field: str
) -> None:
    """Unknown units, unknown or malformed time zones, wrong types, unknown fields and {} are refused."""
    before = row_counts()
    response = alice.put_json(URL, body)
    assert response.status_code == 400
    assert field in response.json()["detail"]
    assert row_counts() == before


@pytest.mark.django_db
def test_put_with_a_non_object_body_is_400(alice: ApiUser) -> None:
    """The body must be a JSON object."""
    response = alice.put_json(URL, ["kg"])
    assert response.status_code == 400
    assert "object" in response.json()["detail"]
