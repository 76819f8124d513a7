from django.apps import AppConfig


class ToolsAppConfig(AppConfig):
    name = "tools_app"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Tool modules register their tools when imported.
        from tools_app import (  # noqa: F401
            analytics_tools,
            calendar_tools,
            communication,
            data_tools,
            goal_tools,
            logging_tools,
            preference_tools,
            timer_tools,
            workout_drafting,
            workout_tools,
        )
