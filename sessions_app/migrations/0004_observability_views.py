"""SQL views for staff observability (docs/contracts.md §15.2 (SQL views)), read through unmanaged models.

- agent_event_facts: one row per event with the numbers the other views sum (token buckets and cost of
  llm_response events, model/purpose/tool name, iteration and failure flags). Internal building block.
- agent_session_summaries: one row per session with event counts, token buckets, cost, cache hit rate,
  first/last event time and duration.
- agent_daily_metrics: per UTC day and user (days are those of the events, so a session spanning midnight
  counts on both days).
- agent_daily_model_metrics: per UTC day, model and purpose (trainer | initializer): llm_response events.
- agent_daily_tool_metrics: per UTC day and tool: tool_result events.

The SQL differs per vendor only in JSON extraction (PostgreSQL jsonb `->`/`->>`, SQLite json_extract /
json_type), the UTC day and the duration. Non-numeric token or cost values count as 0, like
sessions_app.services.end_session; fractional token counts are truncated the same way.
cache_hit_rate = cached / (prompt + cached + cache_write), a fraction in 0..1 (0 without input tokens).

Caution for later migrations: SQLite refuses to rename a table a view refers to, and Django rebuilds a SQLite
table (create, copy, drop, rename) for most column changes; PostgreSQL refuses to change the type of a column
a view uses. A migration that alters agent_sessions or agent_session_events must drop these views first and
recreate them afterwards, e.g. with `importlib.import_module("sessions_app.migrations.0004_observability_views")`
and its `drop_views` / `create_views` functions (or a newer migration's, if one replaced the views).
"""

from django.db import migrations, models

VIEWS = (
    "agent_event_facts",
    "agent_session_summaries",
    "agent_daily_metrics",
    "agent_daily_model_metrics",
    "agent_daily_tool_metrics",
)

BUCKETS = ("prompt", "completion", "cached", "cache_write", "total")


class _SQLite:
    @staticmethod
    def text(key: str) -> str:
        return f"json_extract(e.data, '$.{key}')"

    @staticmethod
    def number(*path: str, integer: bool) -> str:
        json_path = "$." + ".".join(path)
        value = f"json_extract(e.data, '{json_path}')"
        if integer:
            value = f"CAST({value} AS INTEGER)"
        return f"CASE WHEN json_type(e.data, '{json_path}') IN ('integer', 'real') THEN {value} ELSE 0 END"

    @staticmethod
    def is_false(key: str) -> str:
        return f"json_type(e.data, '$.{key}') = 'false'"

    day = 'date(e."timestamp")'

    @staticmethod
    def duration_ms(start: str, end: str) -> str:
        return f"CAST(ROUND((julianday({end}) - julianday({start})) * 86400000.0) AS INTEGER)"

    @staticmethod
    def ratio(numerator: str, denominator: str) -> str:
        return f"CASE WHEN {denominator} > 0 THEN CAST({numerator} AS REAL) / {denominator} ELSE 0.0 END"

    bigint = "INTEGER"
    double = "REAL"


class _PostgreSQL:
    @staticmethod
    def text(key: str) -> str:
        return f"e.data ->> '{key}'"

    @staticmethod
    def number(*path: str, integer: bool) -> str:
        node = "e.data" + "".join(f" -> '{part}'" for part in path[:-1])
        last = path[-1]
        value = f"({node} ->> '{last}')::numeric"
        if integer:
            value = f"trunc({value})"
        return f"CASE WHEN jsonb_typeof({node} -> '{last}') = 'number' THEN {value} ELSE 0 END"

    @staticmethod
    def is_false(key: str) -> str:
        return f"jsonb_typeof(e.data -> '{key}') = 'boolean' AND (e.data ->> '{key}') = 'false'"

    day = "(e.\"timestamp\" AT TIME ZONE 'UTC')::date"

    @staticmethod
    def duration_ms(start: str, end: str) -> str:
        return f"ROUND(EXTRACT(EPOCH FROM ({end} - {start})) * 1000)::bigint"

    @staticmethod
    def ratio(numerator: str, denominator: str) -> str:
        return (
            f"CASE WHEN {denominator} > 0 THEN CAST({numerator} AS double precision) / {denominator} "
            "ELSE 0.0 END"
        )

    bigint = "bigint"
    double = "double precision"


def _event_facts(v) -> str:
    llm_response = "e.event_type = 'llm_response'"
    token_columns = ",\n    ".join(
        f"CASE WHEN {llm_response} THEN {v.number('tokens', bucket, integer=True)} ELSE 0 END AS {bucket}_tokens"
        for bucket in BUCKETS
    )
    return f"""
CREATE VIEW agent_event_facts AS
SELECT
    e.id AS event_id,
    e.session_id AS session_id,
    s.user_id AS user_id,
    e.sequence_number AS sequence_number,
    e.event_type AS event_type,
    e."timestamp" AS "timestamp",
    {v.day} AS day,
    e.duration_ms AS duration_ms,
    CASE WHEN e.event_type IN ('llm_request', 'llm_response') THEN {v.text("model")} END AS model,
    CASE WHEN e.event_type IN ('llm_request', 'llm_response')
         THEN COALESCE({v.text("purpose")}, 'trainer') END AS purpose,
    CASE WHEN e.event_type IN ('tool_call', 'tool_result') THEN {v.text("tool_name")} END AS tool_name,
    {token_columns},
    CASE WHEN {llm_response} THEN {v.number("cost_cents", integer=False)} ELSE 0 END AS cost_cents,
    CASE WHEN e.event_type = 'llm_request' AND COALESCE({v.text("purpose")}, 'trainer') <> 'initializer'
         THEN 1 ELSE 0 END AS is_iteration,
    CASE WHEN e.event_type = 'tool_result' AND {v.is_false("success")} THEN 1 ELSE 0 END AS is_failure
FROM agent_session_events e
JOIN agent_sessions s ON s.id = e.session_id
"""


def _counts(v) -> str:
    """Aggregate columns shared by the summary and the per-day views (over agent_event_facts f)."""
    kinds = {
        "user_messages": "user_message",
        "llm_calls": "llm_response",
        "tool_calls": "tool_call",
        "errors": "error",
        "artifacts": "artifact",
        "knowledge": "knowledge",
    }
    columns = [
        f"SUM(CASE WHEN f.event_type = '{kind}' THEN 1 ELSE 0 END) AS {name}" for name, kind in kinds.items()
    ]
    columns += [
        "SUM(f.is_iteration) AS iterations",
        "SUM(f.is_failure) AS tool_failures",
        *(f"CAST(SUM(f.{bucket}_tokens) AS {v.bigint}) AS {bucket}_tokens" for bucket in BUCKETS),
        f"CAST(SUM(f.cost_cents) AS {v.double}) AS cost_cents",
    ]
    return ",\n        ".join(columns)


COUNT_COLUMNS = (
    "user_messages",
    "llm_calls",
    "tool_calls",
    "errors",
    "artifacts",
    "knowledge",
    "iterations",
    "tool_failures",
)
TOKEN_COLUMNS = tuple(f"{bucket}_tokens" for bucket in BUCKETS)


def _cache_hit_rate(v, prefix: str) -> str:
    cached = f"{prefix}cached_tokens"
    base = f"({prefix}prompt_tokens + {prefix}cached_tokens + {prefix}cache_write_tokens)"
    return v.ratio(cached, base)


def _session_summaries(v) -> str:
    zero_filled = ",\n    ".join(
        f"COALESCE(a.{column}, 0) AS {column}" for column in ("event_count", *COUNT_COLUMNS, *TOKEN_COLUMNS)
    )
    hit_rate = v.ratio(
        "COALESCE(a.cached_tokens, 0)",
        "(COALESCE(a.prompt_tokens, 0) + COALESCE(a.cached_tokens, 0) + COALESCE(a.cache_write_tokens, 0))",
    )
    return f"""
CREATE VIEW agent_session_summaries AS
SELECT
    s.id AS id,
    s.user_id AS user_id,
    s.created_at AS created_at,
    s.updated_at AS updated_at,
    s.status AS status,
    s.context_start_sequence AS context_start_sequence,
    s.metadata AS metadata,
    COALESCE((SELECT {v.text("model")} FROM agent_session_events e
      WHERE e.session_id = s.id AND e.event_type = 'llm_request'
        AND COALESCE({v.text("purpose")}, 'trainer') <> 'initializer'
      ORDER BY e.sequence_number DESC LIMIT 1), '') AS model,
    {zero_filled},
    COALESCE(a.cost_cents, 0.0) AS cost_cents,
    {hit_rate} AS cache_hit_rate,
    COALESCE(a.last_sequence, -1) AS last_sequence,
    a.first_event_at AS first_event_at,
    a.last_event_at AS last_event_at,
    COALESCE({v.duration_ms("a.first_event_at", "a.last_event_at")}, 0) AS duration_ms
FROM agent_sessions s
LEFT JOIN (
    SELECT
        f.session_id AS session_id,
        COUNT(*) AS event_count,
        MAX(f.sequence_number) AS last_sequence,
        MIN(f."timestamp") AS first_event_at,
        MAX(f."timestamp") AS last_event_at,
        {_counts(v)}
    FROM agent_event_facts f
    GROUP BY f.session_id
) a ON a.session_id = s.id
"""


def _daily_metrics(v) -> str:
    return f"""
CREATE VIEW agent_daily_metrics AS
SELECT d.*, {_cache_hit_rate(v, "d.")} AS cache_hit_rate
FROM (
    SELECT
        f.day AS day,
        f.user_id AS user_id,
        COUNT(DISTINCT f.session_id) AS sessions,
        COUNT(DISTINCT CASE WHEN f.event_type = 'error' THEN f.session_id END) AS sessions_with_errors,
        COUNT(*) AS events,
        {_counts(v)}
    FROM agent_event_facts f
    GROUP BY f.day, f.user_id
) d
"""


def _daily_model_metrics(v) -> str:
    columns = ",\n        ".join(
        f"CAST(SUM(f.{column}) AS {v.bigint}) AS {column}" for column in TOKEN_COLUMNS
    )
    return f"""
CREATE VIEW agent_daily_model_metrics AS
SELECT d.*, {_cache_hit_rate(v, "d.")} AS cache_hit_rate
FROM (
    SELECT
        f.day AS day,
        COALESCE(f.model, 'unknown') AS model,
        f.purpose AS purpose,
        COUNT(*) AS llm_calls,
        {columns},
        CAST(SUM(f.cost_cents) AS {v.double}) AS cost_cents,
        CAST(SUM(COALESCE(f.duration_ms, 0)) AS {v.bigint}) AS total_duration_ms
    FROM agent_event_facts f
    WHERE f.event_type = 'llm_response'
    GROUP BY f.day, COALESCE(f.model, 'unknown'), f.purpose
) d
"""


def _daily_tool_metrics(v) -> str:
    return f"""
CREATE VIEW agent_daily_tool_metrics AS
SELECT
    f.day AS day,
    COALESCE(f.tool_name, 'unknown') AS tool_name,
    COUNT(*) AS calls,
    SUM(f.is_failure) AS failures,
    CAST(SUM(COALESCE(f.duration_ms, 0)) AS {v.bigint}) AS total_duration_ms,
    MAX(f.duration_ms) AS max_duration_ms
FROM agent_event_facts f
WHERE f.event_type = 'tool_result'
GROUP BY f.day, COALESCE(f.tool_name, 'unknown')
"""


DIALECTS = {"sqlite": _SQLite, "postgresql": _PostgreSQL}


def view_statements(vendor: str) -> list[str]:
    """The CREATE VIEW statements for a database vendor, in dependency order."""
    dialect = DIALECTS.get(vendor)
    if dialect is None:
        raise NotImplementedError(f"observability views are written for SQLite and PostgreSQL, not {vendor}")
    return [
        _event_facts(dialect),
        _session_summaries(dialect),
        _daily_metrics(dialect),
        _daily_model_metrics(dialect),
        _daily_tool_metrics(dialect),
    ]


def create_views(apps, schema_editor):
    for statement in view_statements(schema_editor.connection.vendor):
        schema_editor.execute(statement, params=None)


def drop_views(apps, schema_editor):
    for view in reversed(VIEWS):
        schema_editor.execute(f"DROP VIEW IF EXISTS {view}", params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0003_event_append_only_triggers"),
    ]

    operations = [
        migrations.RunPython(create_views, drop_views, elidable=False),
        migrations.CreateModel(
            name='AgentSessionSummary',
            fields=[
                ('prompt_tokens', models.BigIntegerField()),
                ('completion_tokens', models.BigIntegerField()),
                ('cached_tokens', models.BigIntegerField()),
                ('cache_write_tokens', models.BigIntegerField()),
                ('total_tokens', models.BigIntegerField()),
                ('cost_cents', models.FloatField()),
                ('cache_hit_rate', models.FloatField()),
                ('user_messages', models.IntegerField()),
                ('llm_calls', models.IntegerField()),
                ('iterations', models.IntegerField(help_text='LLM requests of the trainer loop (initializer calls excluded)')),
                ('tool_calls', models.IntegerField()),
                ('tool_failures', models.IntegerField()),
                ('errors', models.IntegerField()),
                ('artifacts', models.IntegerField()),
                ('knowledge', models.IntegerField()),
                ('id', models.UUIDField(primary_key=True, serialize=False)),
                ('user_id', models.UUIDField()),
                ('created_at', models.DateTimeField()),
                ('updated_at', models.DateTimeField()),
                ('status', models.CharField(choices=[('active', 'Active'), ('completed', 'Completed'), ('error', 'Error')], max_length=16)),
                ('context_start_sequence', models.IntegerField()),
                ('metadata', models.JSONField(default=dict)),
                ('model', models.CharField(blank=True, help_text='Model of the latest trainer LLM request', max_length=100)),
                ('event_count', models.IntegerField()),
                ('last_sequence', models.IntegerField(help_text='-1 when the session has no events')),
                ('first_event_at', models.DateTimeField(null=True)),
                ('last_event_at', models.DateTimeField(null=True)),
                ('duration_ms', models.BigIntegerField(help_text='From the first to the last event (0 without events)')),
            ],
            options={
                'verbose_name': 'session',
                'verbose_name_plural': 'sessions',
                'db_table': 'agent_session_summaries',
                'ordering': ('-created_at',),
                'managed': False,
            },
        ),
        migrations.CreateModel(
            name='DailyMetrics',
            fields=[
                ('prompt_tokens', models.BigIntegerField()),
                ('completion_tokens', models.BigIntegerField()),
                ('cached_tokens', models.BigIntegerField()),
                ('cache_write_tokens', models.BigIntegerField()),
                ('total_tokens', models.BigIntegerField()),
                ('cost_cents', models.FloatField()),
                ('cache_hit_rate', models.FloatField()),
                ('user_messages', models.IntegerField()),
                ('llm_calls', models.IntegerField()),
                ('iterations', models.IntegerField(help_text='LLM requests of the trainer loop (initializer calls excluded)')),
                ('tool_calls', models.IntegerField()),
                ('tool_failures', models.IntegerField()),
                ('errors', models.IntegerField()),
                ('artifacts', models.IntegerField()),
                ('knowledge', models.IntegerField()),
                ('pk', models.CompositePrimaryKey('day', 'user_id', blank=True, editable=False, primary_key=True, serialize=False)),
                ('day', models.DateField()),
                ('user_id', models.UUIDField()),
                ('sessions', models.IntegerField(help_text='Sessions with at least one event that day')),
                ('sessions_with_errors', models.IntegerField()),
                ('events', models.IntegerField()),
            ],
            options={
                'verbose_name_plural': 'daily metrics',
                'db_table': 'agent_daily_metrics',
                'ordering': ('day', 'user_id'),
                'managed': False,
            },
        ),
        migrations.CreateModel(
            name='DailyModelMetrics',
            fields=[
                ('prompt_tokens', models.BigIntegerField()),
                ('completion_tokens', models.BigIntegerField()),
                ('cached_tokens', models.BigIntegerField()),
                ('cache_write_tokens', models.BigIntegerField()),
                ('total_tokens', models.BigIntegerField()),
                ('cost_cents', models.FloatField()),
                ('cache_hit_rate', models.FloatField()),
                ('pk', models.CompositePrimaryKey('day', 'model', 'purpose', blank=True, editable=False, primary_key=True, serialize=False)),
                ('day', models.DateField()),
                ('model', models.CharField(max_length=100)),
                ('purpose', models.CharField(max_length=32)),
                ('llm_calls', models.IntegerField()),
                ('total_duration_ms', models.BigIntegerField()),
            ],
            options={
                'verbose_name_plural': 'daily model metrics',
                'db_table': 'agent_daily_model_metrics',
                'ordering': ('day', 'model', 'purpose'),
                'managed': False,
            },
        ),
        migrations.CreateModel(
            name='DailyToolMetrics',
            fields=[
                ('pk', models.CompositePrimaryKey('day', 'tool_name', blank=True, editable=False, primary_key=True, serialize=False)),
                ('day', models.DateField()),
                ('tool_name', models.CharField(max_length=100)),
                ('calls', models.IntegerField()),
                ('failures', models.IntegerField()),
                ('total_duration_ms', models.BigIntegerField()),
                ('max_duration_ms', models.IntegerField(null=True)),
            ],
            options={
                'verbose_name_plural': 'daily tool metrics',
                'db_table': 'agent_daily_tool_metrics',
                'ordering': ('day', 'tool_name'),
                'managed': False,
            },
        ),
    ]
