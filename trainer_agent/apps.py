from django.apps import AppConfig


class TrainerAgentConfig(AppConfig):
    name = "trainer_agent"
    verbose_name = "Trainer agent"
    default_auto_field = "django.db.models.BigAutoField"
