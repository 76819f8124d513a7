from django.apps import AppConfig


class TrainerAgentConfig(AppConfig):
    name = "trainer_agent"
    verbose_name = "Trainer agent"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The deployment's own models (LLM_MODELS) join the registry before anything validates a model id.
        from django.conf import settings
        from django.core.signals import setting_changed

        from trainer_agent.llm.models import configured_models_changed, register_configured_models

        register_configured_models(settings.LLM_MODELS)
        setting_changed.connect(configured_models_changed)
        # The offline coach registers itself here so the provider registry never imports it (see
        # trainer_agent.llm.providers). It holds no state, so one instance serves every model config.
        from trainer_agent.llm.providers import register_provider_factory
        from trainer_agent.offline.coach import OfflineCoach

        coach = OfflineCoach()
        register_provider_factory("offline", lambda model: coach)
        from trainer_agent.admin_replay import register as register_admin_replay  # staff admin: step replay

        register_admin_replay()
        # The session admin shows users by their profile's name; sessions_app stores only their ids.
        from datasources_app.selectors import display_names
        from sessions_app.admin_registry import register_user_labeller

        register_user_labeller(lambda user_ids: display_names(user_ids=user_ids))
        # ... and reads a workout's exercises as every other surface does ("3×10 @ 20kg each hand").
        from datasources_app.formatters import exercise_cells
        from sessions_app.admin_registry import register_exercise_format

        register_exercise_format(exercise_cells)
        # fetch_many's threads read the user's data in the user's row-level security context (PostgreSQL).
        from datasources_app.sources import register_thread_context
        from trainer_agent.tenancy import acting_for

        register_thread_context(acting_for)
        # The agents (validated at start), their callbacks, and the sub-agents tools_app's plan tools call.
        from trainer_agent.agents.wiring import wire_agents

        wire_agents()
        from trainer_agent import tracing  # OpenTelemetry traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set

        tracing.configure_from_env()
