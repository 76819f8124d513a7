"""Latency views for the staff dashboard, and (PostgreSQL) a full-text index over what staff search for.

- agent_latency_samples (both vendors): one row per measurement, with its UTC day, model and metric:
  - `model_call`: an llm_response's duration_ms (every purpose), the model of the response;
  - `turn_duration`: a finished turn, from its admission (the user message stored) to its end;
  - `first_frame`: a turn, from its admission to the first frame the stream shows after "Message received":
    its first tool call, checkpoint, error or knowledge picked with a reason (trainer_agent/frames.py).
- agent_daily_latency (PostgreSQL only): p50 / p95 (`percentile_cont`, linear interpolation) and the number of
  samples per day, model and metric. On SQLite sessions_app.dashboards computes the same figures in Python over
  agent_latency_samples (`percentile`, the same interpolation).
- agent_evt_search_idx (PostgreSQL only): a GIN index on `to_tsvector('english', …)` of the searchable text of an
  event (a user message, a tool call's name and arguments, an error's message): the expression that
  sessions_app.selectors.search_sessions uses, so its full-text search reads the index.

The samples view reads agent_turns, agent_session_events and agent_event_facts (0004): a migration that alters
those tables must drop these views first (see 0004's caution) and recreate them with this module's functions.
"""

from django.db import migrations

# The searchable text of an event; sessions_app.selectors.SEARCH_DOCUMENT_SQL is the same expression.
SEARCH_DOCUMENT_SQL = (
    "CASE event_type"
    " WHEN 'user_message' THEN coalesce(data ->> 'message', '')"
    " WHEN 'tool_call' THEN coalesce(data ->> 'tool_name', '') || ' ' || coalesce(data ->> 'arguments', '')"
    " WHEN 'error' THEN coalesce(data ->> 'message', '')"
    " ELSE '' END"
)


def _samples(vendor: str) -> str:
    if vendor == "postgresql":
        day = "(t.enqueued_at AT TIME ZONE 'UTC')::date"
        since = "ROUND(EXTRACT(EPOCH FROM ({end} - t.enqueued_at)) * 1000)::bigint"
        reason = "(e.event_type = 'knowledge' AND coalesce(e.data ->> 'reason', '') <> '')"
    else:
        day = "date(t.enqueued_at)"
        since = "CAST(ROUND((julianday({end}) - julianday(t.enqueued_at)) * 86400000.0) AS INTEGER)"
        reason = "(e.event_type = 'knowledge' AND coalesce(json_extract(e.data, '$.reason'), '') <> '')"
    return f"""
CREATE VIEW agent_latency_samples AS
SELECT f.day AS day, coalesce(f.model, '') AS model, 'model_call' AS metric, f.duration_ms AS value_ms
FROM agent_event_facts f
WHERE f.event_type = 'llm_response' AND f.duration_ms IS NOT NULL
UNION ALL
SELECT {day} AS day, t.model AS model, 'turn_duration' AS metric, {since.format(end="t.finished_at")} AS value_ms
FROM agent_turns t
WHERE t.finished_at IS NOT NULL AND t.enqueued_at IS NOT NULL
UNION ALL
SELECT {day} AS day, t.model AS model, 'first_frame' AS metric, {since.format(end='MIN(e."timestamp")')} AS value_ms
FROM agent_turns t
JOIN agent_session_events e
  ON e.session_id = t.session_id
 AND e.sequence_number > t.start_sequence
 AND (t.end_sequence IS NULL OR e.sequence_number <= t.end_sequence)
WHERE e.event_type IN ('tool_call', 'checkpoint', 'error') OR {reason}
GROUP BY t.id, t.enqueued_at, t.model
"""


DAILY_LATENCY = """
CREATE VIEW agent_daily_latency AS
SELECT day, model, metric, COUNT(*) AS samples,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY value_ms) AS p50_ms,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY value_ms) AS p95_ms
FROM agent_latency_samples
GROUP BY day, model, metric
"""


def create_views(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    schema_editor.execute(_samples(vendor), params=None)
    if vendor == "postgresql":
        schema_editor.execute(DAILY_LATENCY, params=None)
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS agent_evt_search_idx ON agent_session_events "
            f"USING GIN (to_tsvector('english'::regconfig, {SEARCH_DOCUMENT_SQL}))",
            params=None,
        )


def drop_views(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS agent_evt_search_idx", params=None)
        schema_editor.execute("DROP VIEW IF EXISTS agent_daily_latency", params=None)
    schema_editor.execute("DROP VIEW IF EXISTS agent_latency_samples", params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0011_agent_turn_trace_id"),
    ]

    operations = [
        migrations.RunPython(create_views, drop_views, elidable=False),
    ]
