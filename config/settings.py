"""Settings from environment variables, with defaults that run the demo locally (SQLite, offline model)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import dj_database_url
import django_stubs_ext
from django.core.exceptions import ImproperlyConfigured

from config.local_env import load_env_file

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
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "django_eventstream",
    "sessions_app",
    "datasources_app",
    "tools_app",
    "trainer_agent",
]

MIDDLEWARE = [
    "trainer_agent.middleware.RequestBodyLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
# The Server-Sent-Events endpoints run with only these (config/asgi.py): async-native, no thread hops.
STREAM_MIDDLEWARE = ["trainer_agent.middleware.RequestBodyLimitMiddleware"]

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
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A connection pool per process (psycopg_pool): closing a connection returns it, so a thread holds one only
    # while it works with the database (the agent loop hands its back before every model call). Requests and
    # turn threads then share DB_POOL_MAX_SIZE connections instead of each pinning one; past that they wait up
    # to DB_POOL_TIMEOUT seconds. DB_POOL_MAX_SIZE=0 turns pooling off (one connection per thread again).
    # DB_POOL_MIN_SIZE connections stay open while idle; the pool opens more on demand, up to the maximum.
    DB_POOL_MAX_SIZE = int(os.environ.get("DB_POOL_MAX_SIZE", "20"))
    if DB_POOL_MAX_SIZE > 0:
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": min(int(os.environ.get("DB_POOL_MIN_SIZE", "2")), DB_POOL_MAX_SIZE),
            "max_size": DB_POOL_MAX_SIZE,
            "timeout": float(os.environ.get("DB_POOL_TIMEOUT", "30")),
        }
# The agent loop's per-iteration statements run as prepared statements of each connection (config.db
# send_together): parsed and planned once per connection, not on every message. Turn off behind a pooler that
# moves sessions between server connections or resets them (PgBouncer in transaction mode, for one).
DB_PREPARED_STATEMENTS = env_bool("DB_PREPARED_STATEMENTS", True)

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
LLM_TIMEOUT_SECONDS = float(os.environ.get("LLM_TIMEOUT_SECONDS", "60"))
LLM_MAX_RETRIES = int(os.environ.get("LLM_MAX_RETRIES", "2"))
AGENT_MAX_ITERATIONS = 10

# --- Auth (Supabase access tokens) --------------------------------------------------------------------
SUPABASE_PUBLIC_URL = os.environ.get("SUPABASE_PUBLIC_URL", "").rstrip("/")
SUPABASE_JWT_SECRET = os.environ.get("SUPABASE_JWT_SECRET", "")
SUPABASE_JWKS_FILE = os.environ.get("SUPABASE_JWKS_FILE", "")
# Used only while DEBUG is on and no SUPABASE_JWT_SECRET is set, so `manage.py demo_token` works locally.
DEV_JWT_SECRET = "dev-only-jwt-secret-not-for-production-use"

REDIS_URL = os.environ.get("REDIS_URL", "")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["trainer_agent.auth.SupabaseJWTAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["trainer_agent.auth.IsAuthenticatedUser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
    "EXCEPTION_HANDLER": "trainer_agent.api.errors.exception_handler",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        # Its own plain handler only: propagating to the root logger (which daphne configures) prints every line twice.
        "agent.console": {
            "handlers": ["console"],
            "level": os.environ.get("AGENT_LOG_LEVEL", "INFO"),
            "propagate": False,
        },
    },
}

# --- API (owned by the API code: throttling, OpenAPI) -------------------------------------------------
# Per-user throttling of turns (/agent/chat and /agent/stream); "N/sec|min|hour|day" as in DRF, "" for none.
# Read by trainer_agent.api.throttling.AgentTurnThrottle on each request (counts live in the default cache).
AGENT_TURN_RATE = os.environ.get("AGENT_TURN_RATE", "30/min")
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

# --- Streaming (SSE, django-eventstream) ---------------------------------------------------------------
# Worker threads that run agent turns for /agent/stream; further turns queue (their streams have had their first
# frame and get `: ping`s). They share the GIL with the requests being admitted, so more threads finish a burst
# sooner but delay the first frames of the requests still arriving (docs/benchmarks.md "SSE load": 32 balances
# both on 2 cores). On PostgreSQL they draw from the connection pool and hold no connection during model calls.
AGENT_STREAM_THREADS = int(os.environ.get("AGENT_STREAM_THREADS", "32"))
# How many of those run framework code at once (the rest wait for a model, or for a slot): trainer_agent/slots.py.
AGENT_WORK_SLOTS = max(1, int(os.environ.get("AGENT_WORK_SLOTS", "4")))
SSE_HEARTBEAT_SECONDS = float(os.environ.get("SSE_HEARTBEAT_SECONDS", "15"))
# Every /agent/stream frame is also stored on the session's channel ("session-<uuid>"), so that
# GET /agent/sessions/<id>/events can replay from Last-Event-ID; only the session's owner may read it.
# django-eventstream reads these at import time. FrameStorage is its DjangoModelStorage that also hands back
# the id of each stored frame (the SSE `id:` of /agent/stream).
EVENTSTREAM_STORAGE_CLASS = "trainer_agent.eventstream.FrameStorage"
EVENTSTREAM_CHANNELMANAGER_CLASS = "trainer_agent.eventstream.SessionChannelManager"


def redis_connection_kwargs(url: str) -> dict[str, object]:
    """`redis://[user:password@]host[:port][/db]` (or rediss://) as keyword arguments of redis.Redis."""
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(url)
    if parts.scheme not in {"redis", "rediss"}:
        raise ImproperlyConfigured(f"REDIS_URL must start with redis:// or rediss://, got {url!r}")
    kwargs: dict[str, object] = {
        "host": parts.hostname or "127.0.0.1",
        "port": parts.port or 6379,
        "db": int(parts.path.strip("/") or 0),
    }
    if parts.username:
        kwargs["username"] = unquote(parts.username)
    if parts.password:
        kwargs["password"] = unquote(parts.password)
    if parts.scheme == "rediss":
        kwargs["ssl"] = True
    return kwargs


if REDIS_URL:
    # Fan-out between processes: an event sent on one daphne process reaches subscribers on every other.
    EVENTSTREAM_REDIS = redis_connection_kwargs(REDIS_URL)

if os.environ.get("PYTEST_VERSION"):
    # Tests log staff in many times; the production hasher's deliberate slowness buys nothing there.
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# --- Long sessions -------------------------------------------------------------------------------------
# Share of the model's context window at which the next turn starts with a checkpoint.
CHECKPOINT_THRESHOLD = float(os.environ.get("CHECKPOINT_THRESHOLD", "0.8"))
