"""The model layer: neutral request/response types, the model registry with prices, cost, and providers.

Everything above this package (context builder, initializer, loop) speaks only these types; which SDK
serves a model is decided here, by ``get_provider(model_id)``.
"""

from trainer_agent.llm.cost import cost_cents
from trainer_agent.llm.models import ModelConfig, UnknownModel, get_model, model_ids, register_model
from trainer_agent.llm.providers import (
    ProviderNotRegistered,
    get_provider,
    get_structured_provider,
    override_provider,
    register_provider_factory,
)
from trainer_agent.llm.types import (
    INVALID_ARGUMENTS_KEY,
    LLMError,
    LLMRequest,
    LLMResponse,
    Provider,
    StructuredOutputProvider,
    StructuredResult,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = [
    "INVALID_ARGUMENTS_KEY",
    "LLMError",
    "LLMRequest",
    "LLMResponse",
    "ModelConfig",
    "Provider",
    "ProviderNotRegistered",
    "StructuredOutputProvider",
    "StructuredResult",
    "ToolCall",
    "ToolSpec",
    "UnknownModel",
    "Usage",
    "cost_cents",
    "get_model",
    "get_provider",
    "get_structured_provider",
    "model_ids",
    "override_provider",
    "register_model",
    "register_provider_factory",
]
