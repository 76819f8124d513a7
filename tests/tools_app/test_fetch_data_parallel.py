import threading
import uuid
from typing import Any

import pytest

from datasources_app import services, sources
from datasources_app.sources import DataSource, NoParams
from sessions_app.services import create_session
from tools_app.registry import execute_tool
from tools_app.types import ToolContext


@pytest.mark.django_db(transaction=True)
def test_fetch_data_tool_fetches_sources_in_parallel(monkeypatch: pytest.MonkeyPatch) -> None:
    """fetch_data through execute_tool runs its sources at the same time (docs/contracts.md §11.4 (data and location tools)), not one by one."""
    if not sources.runs_concurrently():
        pytest.skip("in-memory SQLite: fetch_many runs sequentially (see runs_concurrently)")
    barrier = threading.Barrier(2, timeout=20)

    def rendezvous(user_id: uuid.UUID, params: Any) -> str:
        barrier.wait()  # returns only if the other fetch is running at the same moment
        return "met"

    for name in ("rendezvous_a", "rendezvous_b"):
        source = DataSource(
            name=name,
            display_name=name,
            description="test",
            params=NoParams,
            fetch=rendezvous,
            format=lambda raw, units: raw,
        )
        monkeypatch.setitem(sources._REGISTRY, name, source)
    user_id = uuid.uuid4()
    services.upsert_settings(user_id=user_id, weight_unit="kg")
    ctx = ToolContext(user_id=user_id, session=create_session(user_id=user_id))

    result = execute_tool("fetch_data", {"sources": ["rendezvous_a", "rendezvous_b"]}, ctx)

    assert result.success, result.formatted
    assert result.data["rendezvous_a"].count("met") == 1 and "met" in result.data["rendezvous_b"]
