"""Settings from environment variables, with defaults that run the demo locally (SQLite, offline model)."""

from __future__ import annotations

import ipaddress
import os
import sys
from pathlib import Path

import dj_database_url
import django_stubs_ext
from django.core.exceptions import ImproperlyConfigured

from config.local_env import load_env_file
from trainer_agent.logs import logging_config

# Lets runtime code subscript Django generics (ModelAdmin[Model], QuerySet[Model]) like the type stubs do.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent
# The checkout's local settings (`make run` writes DEBUG=1 and a random SECRET_KEY there); the environment wins.
load_env_file(BASE_DIR / ".env")


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEV_SECRET_KEY = "dev-insecure-secret-key-change-me"
DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY", DEV_SECRET_KEY)
# pytest sets PYTEST_VERSION; mypy's django plugin imports settings only to read them.
UNDER_TOOLING = bool(os.environ.get("PYTEST_VERSION")) or "mypy" in sys.modules
if not DEBUG and SECRET_KEY == DEV_SECRET_KEY and not UNDER_TOOLING:
    raise ImproperlyConfigured(
        "SECRET_KEY is the built-in development key while DEBUG is off. "
        "Set SECRET_KEY to a long random value, or DEBUG=1 for local use "
        "(`make run` writes both to the checkout's .env)."
    )

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver,[::1]")
PORT = int(os.environ.get("PORT", "8000"))

INSTALLED_APPS = [
    "daphne",
    # Before django.contrib.auth: its `createsuperuser` (staff connection hint) replaces Django's.
    "sessions_app",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "django_tasks_db",
    "datasources_app",
    "tools_app",
    "trainer_agent",
]

MIDDLEWARE = [
    "trainer_agent.middleware.RequestBodyLimitMiddleware",
    "trainer_agent.middleware.DatabaseUnavailableMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "sessions_app.staff.StaffWorkMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASE_URL = os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}"
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several threads write events concurrently (agent worker + request threads): wait instead of failing.
    DATABASES["default"].setdefault("OPTIONS", {}).update({"timeout": 20, "transaction_mode": "IMMEDIATE"})
    DATABASES["default"]["TEST"] = {"NAME": os.environ.get("SQLITE_TEST_NAME") or None}

# --- Connection pool (PostgreSQL; docs/architecture.md "Connections: one pool per process") -----------------
# Each process borrows its connections from Django's psycopg pool: a worker thread holds one only while it uses
# the database (never through a model call, nor while idle: `trainer_agent.connection_pool`), so one worker runs
# many turns on a few connections. DATABASE_POOL=0 turns it off (a connection per thread, as before).
# A borrower waits up to DATABASE_POOL_TIMEOUT s for a free connection, then fails as on a lost connection.
DATABASE_POOL = env_bool("DATABASE_POOL", True)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and DATABASE_POOL:
    from trainer_agent.connection_pool import check_unless_just_given_back

    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": int(os.environ.get("DATABASE_POOL_MIN_SIZE", "2")),
        "max_size": int(os.environ.get("DATABASE_POOL_MAX_SIZE", "16")),
        "timeout": float(os.environ.get("DATABASE_POOL_TIMEOUT", "30")),
        # A connection the database dropped while it sat in the pool (a restart) is replaced before it is lent;
        # one a worker gave back a moment ago is lent without the round trip (trainer_agent.connection_pool).
        "check": check_unless_just_given_back,
    }

# --- Row-level security (PostgreSQL; docs/architecture.md "Tenant isolation in PostgreSQL") ---------------
# A role that every unit of work (trainer_agent.tenancy.acting_for) switches to for its transaction. Empty in
# deployments, whose application login is the application role itself; the test run's privileged login sets
# `trainer_app` so the code under test obeys the policies while the tests' own assertions do not.
DATABASE_ASSUME_ROLE = os.environ.get("DATABASE_ASSUME_ROLE", "")
# Staff work (the admin, its login and SQL views, replay and import) on its own privileged login when the
# application logs in as `trainer_app` (sessions_app/staff.py); without it, `default` does everything.
# The test process itself keeps one login (its per-test transaction is one connection's); the daphne and
# worker processes it starts get the alias (tests/support/live_server.py).
STAFF_DATABASE_URL = "" if os.environ.get("PYTEST_VERSION") else os.environ.get("STAFF_DATABASE_URL", "")
if STAFF_DATABASE_URL:
    DATABASES["staff"] = dj_database_url.parse(STAFF_DATABASE_URL, conn_max_age=0)
STAFF_DATABASE = "staff" if STAFF_DATABASE_URL else "default"
DATABASE_ROUTERS = ["sessions_app.staff.StaffRouter"]

# --- Turns run as tasks (django.tasks) ---------------------------------------------------------------------
# The web tier admits a turn and enqueues it; `manage.py worker` runs it. django-tasks-db keeps the queue in
# the database (any number of workers on any machine that reaches it). The ImmediateBackend runs the turn
# inline in the request (the test suite's default; TASKS_BACKEND=immediate elsewhere).
TASKS_BACKEND = os.environ.get("TASKS_BACKEND") or (
    "immediate" if os.environ.get("PYTEST_VERSION") else "database"
)
TASKS = {
    "default": {
        "BACKEND": {
            "database": "django_tasks_db.DatabaseBackend",
            "immediate": "django.tasks.backends.immediate.ImmediateBackend",
        }[TASKS_BACKEND]
    }
}
# A running turn's lease: its worker's heartbeat renews it every third of this; when a worker dies, another
# continues the turn once the lease has lapsed (within this many seconds plus a sweep).
TURN_LEASE_SECONDS = float(os.environ.get("TURN_LEASE_SECONDS", "10"))
# Workers that may start (or continue) one turn before it ends in `error`.
TURN_MAX_ATTEMPTS = int(os.environ.get("TURN_MAX_ATTEMPTS", "3"))
# A turn that waits this long for a worker (queued, or after its worker died) while no worker is alive (their
# heartbeats, `agent_workers`) ends in `error`: the client is told no worker is running.
TURN_PICKUP_SECONDS = float(os.environ.get("TURN_PICKUP_SECONDS", "30"))
# The longest `/agent/chat` waits for a turn's end; then 504 and the turn goes on (the session stream shows it).
AGENT_CHAT_WAIT_SECONDS = float(os.environ.get("AGENT_CHAT_WAIT_SECONDS", "600"))

# --- Traces (trainer_agent/tracing.py) -------------------------------------------------------------------------
# OpenTelemetry traces of turns are on when OTEL_EXPORTER_OTLP_ENDPOINT is set (the standard OTel variables;
# OTEL_SERVICE_NAME defaults to "trainer-agent"). The admin links a turn's trace id to the tracing backend
# with this template ("{trace_id}" is replaced), e.g. "https://jaeger.example/trace/{trace_id}"; empty: the
# admin shows the id without a link.
TRACE_URL_TEMPLATE = os.environ.get("TRACE_URL_TEMPLATE", "")

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "var" / "static"
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").is_dir() else []
# Static files are served by WhiteNoise (middleware above) in every mode: daphne has no static-file view.
# DEBUG off: `collectstatic` (`make run` runs it) writes compressed copies with content hashes in their names
# to STATIC_ROOT, and WhiteNoise serves those with far-future cache headers. The manifest storage refuses to
# render a page whose files were not collected, so DEBUG on and tests do without it: WhiteNoise finds the files
# in the apps and static/ on each request (an edited stylesheet shows on reload; tests need no collectstatic).
static_from_finders = DEBUG or UNDER_TOOLING
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if static_from_finders
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = static_from_finders
WHITENOISE_AUTOREFRESH = static_from_finders

# Request bodies above this size are refused (413) before parsing.
MAX_REQUEST_BYTES = int(os.environ.get("MAX_REQUEST_BYTES", str(64 * 1024)))
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BYTES

# --- LLM configuration -------------------------------------------------------------------------------
ANTHROPIC_API_KEY = os.environ.get("ANTHROPIC_API_KEY", "")
OPENAI_API_KEY = os.environ.get("OPENAI_API_KEY", "")
OPENAI_BASE_URL = os.environ.get("OPENAI_BASE_URL", "")
PRIMARY_MODEL = os.environ.get("PRIMARY_MODEL") or ("claude-haiku-4-5" if ANTHROPIC_API_KEY else "offline")
INITIALIZER_MODEL = os.environ.get("INITIALIZER_MODEL") or ("gpt-4o-mini" if OPENAI_API_KEY else "offline")
# Models a deployment adds to the built-in ones, as a JSON list, e.g. for an OpenAI-compatible server behind
# OPENAI_BASE_URL: [{"id": "llama3.1", "context_window": 131072}] (fields: README "Configuration").
LLM_MODELS = os.environ.get("LLM_MODELS", "")
LLM_TIMEOUT_SECONDS = float(os.environ.get("LLM_TIMEOUT_SECONDS", "60"))
LLM_MAX_RETRIES = int(os.environ.get("LLM_MAX_RETRIES", "2"))
# Seconds between the pieces of a simulated stream (the offline coach and scripted models write their tool input
# a word at a time, trainer_agent/llm/simulated_stream.py): small, so the demo shows text growing; 0 under pytest.
OFFLINE_STREAM_DELAY_SECONDS = float(
    os.environ.get("OFFLINE_STREAM_DELAY_SECONDS") or ("0" if UNDER_TOOLING else "0.02")
)
# A streamed model call's reader, once caught up with the model, wakes at most this often: the events written
# meanwhile arrive in one read (trainer_agent/llm/partial.py `paced_chunks`; docs/benchmarks.md "Streaming
# providers"). It delays what previews show, and the end of a call, by at most this much; 0 under pytest.
LLM_STREAM_READ_INTERVAL_SECONDS = float(
    os.environ.get("LLM_STREAM_READ_INTERVAL_SECONDS") or ("0" if UNDER_TOOLING else "0.1")
)
AGENT_MAX_ITERATIONS = 10

# --- Auth (Supabase access tokens) --------------------------------------------------------------------
SUPABASE_PUBLIC_URL = os.environ.get("SUPABASE_PUBLIC_URL", "").rstrip("/")
SUPABASE_JWT_SECRET = os.environ.get("SUPABASE_JWT_SECRET", "")
SUPABASE_JWKS_FILE = os.environ.get("SUPABASE_JWKS_FILE", "")
# Used only while DEBUG is on and no SUPABASE_JWT_SECRET is set, so `manage.py demo_token` works locally.
DEV_JWT_SECRET = "dev-only-jwt-secret-not-for-production-use"


REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["trainer_agent.auth.SupabaseJWTAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["trainer_agent.auth.IsAuthenticatedUser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
    "EXCEPTION_HANDLER": "trainer_agent.api.errors.exception_handler",
}

# --- Logs (trainer_agent/logs.py) ------------------------------------------------------------------------
# One setup for web and worker processes: `console` (human lines; the agent console log as docs/contracts.md
# shows it) or `json` (one JSON object per line with the call site's `extra` fields and the turn's ids).
LOG_FORMAT = os.environ.get("LOG_FORMAT", "console").strip().lower()
if LOG_FORMAT not in {"console", "json"}:
    raise ImproperlyConfigured(f"LOG_FORMAT must be 'console' or 'json', got {LOG_FORMAT!r}.")
LOGGING = logging_config(
    log_format=LOG_FORMAT,
    agent_level=os.environ.get("AGENT_LOG_LEVEL", "INFO"),
    level=os.environ.get("LOG_LEVEL", "INFO"),
)

# --- Metrics (trainer_agent/metrics.py; docs/architecture.md "Metrics") -------------------------------------
# `/metrics` answers scrapers from these networks (CIDR, comma-separated; empty: none) ...
METRICS_ALLOWED_NETWORKS = env_list("METRICS_ALLOWED_NETWORKS", "127.0.0.0/8,::1/128")
for _network in METRICS_ALLOWED_NETWORKS:
    try:
        ipaddress.ip_network(_network, strict=False)
    except ValueError:
        raise ImproperlyConfigured(
            f"METRICS_ALLOWED_NETWORKS: {_network!r} is not a network such as 10.0.0.0/8 or 127.0.0.1."
        ) from None
# ... and any client sending `Authorization: Bearer <METRICS_TOKEN>` (empty: no token is accepted).
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
# The client library's multiprocess mode: every process of the host (daphne, workers) writes its series there
# and `/metrics` serves their sum. The directory must exist and be emptied when the host's processes start.
PROMETHEUS_MULTIPROC_DIR = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")
if PROMETHEUS_MULTIPROC_DIR and not Path(PROMETHEUS_MULTIPROC_DIR).is_dir():
    raise ImproperlyConfigured(
        f"PROMETHEUS_MULTIPROC_DIR={PROMETHEUS_MULTIPROC_DIR!r} is not a directory: create it (empty) first."
    )

# --- API (owned by the API code: throttling, OpenAPI) -------------------------------------------------
# Per-user throttling of turns (/agent/chat and /agent/stream); "N/sec|min|hour|day" as in DRF, "" for none.
# Read by trainer_agent.api.throttling.AgentTurnThrottle on each request (counts live in the default cache).
AGENT_TURN_RATE = os.environ.get("AGENT_TURN_RATE", "30/min")
# The default cache holds those counts, so it is shared by every web process and outlives restarts: Redis when
# REDIS_URL is set (Django's RedisCache), else the database's `django_cache` table (trainer_agent's migration
# 0003 creates it, so `migrate` is all a deployment runs). A per-process LocMemCache would let each process
# count on its own.
REDIS_URL = os.environ.get("REDIS_URL", "")
CACHE_TABLE = "django_cache"
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": CACHE_TABLE}
    )
}
# Strict JSON (no NaN, no BOM, bounded nesting) and JSON for clients whose Accept we cannot meet (no 406).
REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"] = ["trainer_agent.api.parsers.StrictJSONParser"]
REST_FRAMEWORK["DEFAULT_CONTENT_NEGOTIATION_CLASS"] = "trainer_agent.api.negotiation.JSONFallbackNegotiation"
SPECTACULAR_SETTINGS = {
    "TITLE": "Trainer agent API",
    "DESCRIPTION": "AI personal-trainer agent: chat, SSE streaming, sessions and the user's training data.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PUBLIC": True,
    "TAGS": [
        {"name": "agent", "description": "Turns (chat and SSE stream) and sessions."},
        {"name": "user", "description": "The signed-in user's settings and training data."},
    ],
    # The SSE endpoints and frame shapes are added by a hook, independent of the streaming views.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "trainer_agent.api.schema.document_streaming_endpoints",
    ],
    "ENUM_NAME_OVERRIDES": {
        "SessionStatusEnum": "sessions_app.models.SessionStatus",
        "WeightUnitEnum": "datasources_app.models.WeightUnit",
        "DistanceUnitEnum": "datasources_app.models.DistanceUnit",
    },
}

# --- Streaming (SSE) -------------------------------------------------------------------------------------
SSE_HEARTBEAT_SECONDS = float(os.environ.get("SSE_HEARTBEAT_SECONDS", "15"))
# Without push (SQLite) followers re-read the store this often; with LISTEN/NOTIFY, at least this often.
SSE_POLL_SECONDS = float(os.environ.get("SSE_POLL_SECONDS", "0.2"))
SSE_RECHECK_SECONDS = float(os.environ.get("SSE_RECHECK_SECONDS", "5"))
# Preview frames (trainer_agent/previews.py): a worker publishes a streaming model call's previews at most this
# often per session (the latest state; the rest when the call's input is complete).
PREVIEW_INTERVAL_SECONDS = float(os.environ.get("PREVIEW_INTERVAL_SECONDS", "0.075"))
# Threads (and so database connections) a web process uses for the turn endpoints and every stream it serves.
WEB_DB_THREADS = int(os.environ.get("WEB_DB_THREADS", "8"))


if os.environ.get("PYTEST_VERSION"):
    # Tests log staff in many times; the production hasher's deliberate slowness buys nothing there.
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# --- Long sessions -------------------------------------------------------------------------------------
# Share of the model's context window at which the next turn starts with a checkpoint.
CHECKPOINT_THRESHOLD = float(os.environ.get("CHECKPOINT_THRESHOLD", "0.8"))
