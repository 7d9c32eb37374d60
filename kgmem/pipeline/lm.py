"""Which model each group of stages uses, built from the settings; no model is a supported mode.

Two groups: ``memory`` (extract, classify, resolve, assemble) falls back to ``primary`` (every
other model stage, e.g. page authoring). An empty ``model_primary`` with an empty
``model_memory`` means no model: :meth:`ModelSet.lm` returns ``None`` and the caller takes its
deterministic path (label matching, the page renderer, raw transcripts waiting).

DSPy is imported only when an LM is built, after :func:`kgmem.config.apply_offline_env`, so
``import kgmem`` stays fast and no import opens a socket. The LM is never installed globally:
stages pass it per call (``dspy.context(lm=...)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from kgmem.config import Settings, apply_offline_env, model_api_key

if TYPE_CHECKING:
    import dspy

__all__ = ["NO_KEY", "ModelGroup", "ModelSet", "ModelSpec"]

#: The key sent to a configured ``model_api_base`` when ``model_api_key_env`` names none (a
#: local server that checks no key takes it; one that checks refuses it with a 401).
NO_KEY = "no-key"


class ModelGroup(StrEnum):
    PRIMARY = "primary"
    MEMORY = "memory"  # falls back to primary


@dataclass(frozen=True)
class ModelSpec:
    """One model: ``provider/name`` and how to reach it.

    ``engine`` is the I/O seam: a DSPy engine object (``complete(Request) -> Response``) that
    replaces the provider connection, as the scripted test engine does. A custom engine owns
    its connection, so ``api_base``/``api_key``/``timeout_seconds`` are not passed with it.
    """

    model: str
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout_seconds: float = 60.0
    num_retries: int = 3  # tries again after transient failures (timeouts, 429, 5xx, resets)
    engine: Any = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not self.model.strip():
            raise ValueError("a model spec needs a model name (provider/name)")

    def build(self) -> dspy.LM:
        """A fresh ``dspy.LM``; response caching off (a retried stage must ask again)."""
        apply_offline_env()
        import dspy

        if self.engine is not None:
            return dspy.LM(
                self.model, engine=self.engine, cache=False, num_retries=self.num_retries
            )
        client: dict[str, Any] = {"timeout": self.timeout_seconds}
        if self.api_base:
            client["api_base"] = self.api_base
            # never the provider's own variable (OPENAI_API_KEY...) to a server kgmem was
            # pointed at: the key model_api_key_env names, or a placeholder
            client["api_key"] = self.api_key or NO_KEY
        elif self.api_key:
            client["api_key"] = self.api_key
        return dspy.LM(self.model, cache=False, num_retries=self.num_retries, **client)


@dataclass(frozen=True)
class ModelSet:
    """The model of each group; a group without one (and without a fallback) has none."""

    primary: ModelSpec | None = None
    memory: ModelSpec | None = None

    @classmethod
    def from_settings(cls, settings: Settings, env: Mapping[str, str] | None = None) -> ModelSet:
        """Specs from ``model_*`` settings; the key is read by config from the named variable."""
        key = model_api_key(settings, env)

        def spec(model: str) -> ModelSpec | None:
            if not model.strip():
                return None
            return ModelSpec(
                model=model.strip(),
                api_base=settings.model_api_base or None,
                api_key=key,
                timeout_seconds=settings.model_timeout_seconds,
                num_retries=settings.model_retries,
            )

        return cls(primary=spec(settings.model_primary), memory=spec(settings.model_memory))

    def spec(self, group: ModelGroup) -> ModelSpec | None:
        """The spec ``group`` uses: its own, else (for ``memory``) the primary one."""
        if group is ModelGroup.MEMORY and self.memory is not None:
            return self.memory
        return self.primary

    def configured(self, group: ModelGroup) -> bool:
        """Whether ``group`` has a model (for status: without one, raw transcripts wait)."""
        return self.spec(group) is not None

    def lm(self, group: ModelGroup) -> dspy.LM | None:
        """A ``dspy.LM`` for ``group``, or ``None`` when no model is configured for it."""
        spec = self.spec(group)
        return None if spec is None else spec.build()
