"""Shared fixtures for the model-layer tests."""

from __future__ import annotations

import pytest

from tests.support.llm_fakes import sample_llm_request
from trainer_agent.llm.types import LLMRequest


@pytest.fixture
def llm_request() -> LLMRequest:
    return sample_llm_request()
