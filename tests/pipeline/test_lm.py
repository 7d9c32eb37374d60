"""Model configuration per group, no-model mode, per-call LM isolation, strict parsing."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import dspy
import pytest
from dspy.lm15 import RateLimitError

from kgmem.config import load_settings
from kgmem.errors import ModelCallError, ModelOutputError
from kgmem.pipeline import ModelGroup, ModelSet, ModelSpec, run_signature
from kgmem.pipeline.signatures import ClassifyTerm
from tests.pipeline.scripted import ScriptedEngine, reply, scripted_lm

MEMORY, PRIMARY = ModelGroup.MEMORY, ModelGroup.PRIMARY
CANDIDATES = [{"term": "schema:Person", "label": "Person"}]


def _models(tmp_path: Path, **env: str) -> ModelSet:
    environ = {"KGMEM_HOME": str(tmp_path)} | env
    return ModelSet.from_settings(load_settings(env=environ), env=environ)


def _classify(lm: dspy.LM, surface: str = "human") -> object:
    out = run_signature(
        ClassifyTerm, lm, "classify", surface=surface, role="class", context="", candidates=[]
    )
    return out.choice


def test_modelset_without_settings_has_no_model(tmp_path: Path) -> None:
    models = _models(tmp_path)
    assert models.lm(MEMORY) is None
    assert models.lm(PRIMARY) is None
    assert not models.configured(MEMORY)


def test_modelset_memory_falls_back_to_primary(tmp_path: Path) -> None:
    models = _models(tmp_path, KGMEM_MODEL_PRIMARY="openai/big")
    memory = models.lm(MEMORY)
    assert memory is not None and memory.model == "openai/big"
    assert models.configured(MEMORY)


def test_modelset_memory_group_uses_its_own_model(tmp_path: Path) -> None:
    models = _models(tmp_path, KGMEM_MODEL_PRIMARY="openai/big", KGMEM_MODEL_MEMORY="openai/x")
    memory, primary = models.lm(MEMORY), models.lm(PRIMARY)
    assert memory is not None and memory.model == "openai/x"
    assert primary is not None and primary.model == "openai/big"


def test_modelset_memory_only_leaves_primary_empty(tmp_path: Path) -> None:
    models = _models(tmp_path, KGMEM_MODEL_MEMORY="openai/x")
    assert models.lm(PRIMARY) is None
    assert models.configured(MEMORY)


def test_modelset_connection_settings_reach_the_lm(tmp_path: Path) -> None:
    models = _models(
        tmp_path,
        KGMEM_MODEL_PRIMARY="openai/qwen",
        KGMEM_MODEL_API_BASE="http://127.0.0.1:8000/v1",
        KGMEM_MODEL_API_KEY_ENV="LOCAL_LLM_KEY",
        KGMEM_MODEL_TIMEOUT_SECONDS="12",
        KGMEM_MODEL_RETRIES="5",
        LOCAL_LLM_KEY="sk-secret",
    )
    lm = models.lm(PRIMARY)
    assert lm is not None
    assert lm.kwargs["api_base"] == "http://127.0.0.1:8000/v1"
    assert lm.kwargs["api_key"] == "sk-secret"
    assert lm.kwargs["timeout"] == 12.0
    assert lm.num_retries == 5
    assert "sk-secret" not in repr(models)


def test_modelset_key_variable_unset_means_no_key(tmp_path: Path) -> None:
    models = _models(tmp_path, KGMEM_MODEL_PRIMARY="openai/q", KGMEM_MODEL_API_KEY_ENV="NOPE")
    spec = models.spec(PRIMARY)
    assert spec is not None and spec.api_key is None
    lm = models.lm(PRIMARY)
    assert lm is not None and "api_key" not in lm.kwargs


def test_modelspec_refuses_an_empty_model() -> None:
    with pytest.raises(ValueError, match="model name"):
        ModelSpec("  ")


def test_importing_kgmem_and_the_pipeline_loads_no_dspy() -> None:
    code = "import sys, kgmem, kgmem.pipeline; print('dspy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_run_signature_parses_a_typed_answer() -> None:
    engine = ScriptedEngine({ClassifyTerm: [reply(choice={"term": "schema:Person"})]})
    choice = _classify(scripted_lm(engine))
    assert getattr(choice, "term", None) == "schema:Person"
    assert len(engine.requests) == 1


def test_run_signature_accepts_a_fenced_json_answer() -> None:
    fenced = '[[ ## choice ## ]]\n```json\n{"term": "none"}\n```\n\n[[ ## completed ## ]]'
    choice = _classify(scripted_lm(ScriptedEngine({ClassifyTerm: [fenced]})))
    assert getattr(choice, "term", None) == "none"


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ('[[ ## choice ## ]]\n{"term": "schema:Person"\n\n[[ ## completed ## ]]', "choice"),
        ("[[ ## choice ## ]]\n{'term': 'schema:Person'}\n\n[[ ## completed ## ]]", "choice"),
        ('[[ ## choice ## ]]\n{"term": 7}\n\n[[ ## completed ## ]]', "choice"),
        ('[[ ## choice ## ]]\n{"term": "x", "why": "y"}\n\n[[ ## completed ## ]]', "choice"),
        ("I think it is a Person.", "missing output field"),
    ],
    ids=["repairable-json", "python-literal", "wrong-type", "extra-field", "no-fields"],
)
def test_run_signature_refuses_malformed_output_in_one_call(answer: str, reason: str) -> None:
    engine = ScriptedEngine({ClassifyTerm: [answer]})
    with pytest.raises(ModelOutputError, match=reason) as caught:
        _classify(scripted_lm(engine))
    assert caught.value.stage == "classify"
    assert len(engine.requests) == 1  # no hidden JSON-mode retry


def test_run_signature_wraps_a_failed_call_naming_the_stage() -> None:
    engine = ScriptedEngine({ClassifyTerm: [RateLimitError("slow down")]})
    with pytest.raises(ModelCallError) as caught:
        _classify(scripted_lm(engine))
    assert caught.value.stage == "classify"


def test_lms_chosen_per_call_do_not_leak_between_threads() -> None:
    engines = [ScriptedEngine(), ScriptedEngine()]
    barrier = threading.Barrier(2)
    answers: dict[int, object] = {}

    def work(n: int) -> None:
        engines[n].add(ClassifyTerm, *[reply(choice={"term": f"lm{n}"})] * 5)
        lm = scripted_lm(engines[n])
        barrier.wait()
        answers[n] = [getattr(_classify(lm, f"from-{n}"), "term", None) for _ in range(5)]

    threads = [threading.Thread(target=work, args=(n,)) for n in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == {0: ["lm0"] * 5, 1: ["lm1"] * 5}
    for n, engine in enumerate(engines):
        prompts = [m.text or "" for _, r in engine.requests for m in r.messages]
        assert len(prompts) == 5 and all(f"from-{n}" in p for p in prompts)
    assert dspy.settings.lm is None  # nothing was configured globally
