from django.apps import AppConfig


class DatasourcesAppConfig(AppConfig):
    name = "datasources_app"
    default_auto_field = "django.db.models.BigAutoField"
