from django.apps import AppConfig


class ToolsAppConfig(AppConfig):
    name = "tools_app"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Tool modules register their tools when imported.
        from tools_app import communication  # noqa: F401
