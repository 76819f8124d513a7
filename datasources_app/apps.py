from django.apps import AppConfig


class DatasourcesAppConfig(AppConfig):
    name = "datasources_app"
    verbose_name = "Users' training data"
    default_auto_field = "django.db.models.BigAutoField"
