"""Settings: one frozen object built from defaults < ``$KGMEM_HOME/kgmem.toml`` < ``KGMEM_*``.

This is the only module that reads the process environment. Every setting is declared once,
as a dataclass field whose metadata carries its help text and bounds; the README's table is
checked against these declarations by a test.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import platformdirs

from kgmem.errors import ConfigFileError, GraphNameError, InvalidSetting, UnknownSetting
from kgmem.store.graphs import check_id

__all__ = [
    "CONFIG_FILE_NAME",
    "ENV_PREFIX",
    "Settings",
    "apply_offline_env",
    "load_settings",
    "model_api_key",
]

ENV_PREFIX = "KGMEM_"
CONFIG_FILE_NAME = "kgmem.toml"
# Environment variables that locate the configuration rather than being settings themselves.
_META_ENV = {"KGMEM_HOME", "KGMEM_CONFIG", "KGMEM_REQUIRE_SHARED"}
_REPO_ROOT = Path(__file__).resolve().parent.parent


def _setting(
    default: Any,
    help: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    choices: tuple[str, ...] = (),
    permutation_of: tuple[str, ...] = (),
) -> Any:
    meta = {
        "help": help,
        "minimum": minimum,
        "maximum": maximum,
        "choices": choices,
        "permutation_of": permutation_of,
    }
    return field(default=default, metadata=meta)


def _default_home() -> Path:
    return Path(platformdirs.user_data_dir("kgmem", appauthor=False))


@dataclass(frozen=True)
class Settings:
    """Every kgmem setting, with its default and help text."""

    home: Path = field(
        default_factory=_default_home,
        metadata={
            "help": "Data directory: store, index, vault, keys (set by KGMEM_HOME only).",
            "minimum": None,
            "maximum": None,
            "choices": (),
        },
    )
    host: str = _setting("127.0.0.1", "Address the HTTP server binds to.")
    port: int = _setting(8765, "Port the HTTP server listens on.", minimum=1, maximum=65535)
    log_level: str = _setting(
        "info", "Server log level.", choices=("debug", "info", "warning", "error")
    )
    shapes_dir: Path = _setting(  # noqa: RUF009 - a Path is immutable; computed once
        _REPO_ROOT / "shapes", "Directory of SHACL shape files (*.ttl) applied to every write."
    )
    sweep_interval_seconds: float = _setting(
        60.0, "How often consolidation looks for idle chats.", minimum=1
    )
    idle_threshold_seconds: float = _setting(
        300.0, "How long a chat must be quiet before it is consolidated.", minimum=0
    )
    concurrency: int = _setting(
        4, "Parallel consolidation passes and page authoring jobs.", minimum=1, maximum=64
    )
    search_results: int = _setting(
        8, "Results memory_search returns by default.", minimum=1, maximum=100
    )
    short_memory_half_life_days: float = _setting(
        14.0, "Half-life of short-memory notes in prompt context.", minimum=0.01
    )
    short_memory_threshold: float = _setting(
        0.1,
        "Decay score below which a short-memory note leaves the prompt context.",
        minimum=0.0001,
        maximum=1,
    )
    short_memory_cap: int = _setting(
        20, "Most short-memory notes one prompt context carries.", minimum=0, maximum=1000
    )
    playbook_index_cap: int = _setting(
        20,
        "Most playbooks and procedures the playbook index of one prompt context lists.",
        minimum=0,
        maximum=1000,
    )
    context_budget_tokens: int = _setting(
        2000,
        "Token budget of one prompt context (estimated as characters / 4); profile first, "
        "then short memory, then playbooks.",
        minimum=200,
        maximum=100000,
    )
    stage_attempts: int = _setting(
        3, "Attempts per consolidation stage before recovery or abandonment.", minimum=1
    )
    auto_activate_confidence: float = _setting(
        0.75,
        "Confidence at which an agent draft activates without review.",
        minimum=0,
        maximum=1,
    )
    batch_max: int = _setting(
        25, "Most memories one batch draft may carry (the least is 1).", minimum=1, maximum=1000
    )
    max_tags: int = _setting(20, "Most tags one memory may carry.", minimum=0, maximum=1000)
    max_body_bytes: int = _setting(
        1048576,
        "Largest request body the HTTP API accepts, in bytes (larger: 413).",
        minimum=1024,
    )
    search_resident_documents: int = _setting(
        1000000,
        "Most search-index documents held in memory (over all users; ~0.8 KB each as loaded, "
        "their text staying in the saved file, and ~1.2 KB for each of the 1,024 a user read "
        "last); past it, the users searched least recently are let go (saved first if "
        "changed) and loaded again when next searched (~8 ms for 10k documents).",
        minimum=1000,
    )
    graph_buffer_megabytes: int = _setting(
        0,
        "Most memory the graph projection (Kùzu) keeps of its database's pages, in MB (0: "
        "Kùzu's own default, 80% of the machine's memory, which it fills as it reads). "
        "128 holds a 100k-memory user; at 1M memories a repair's commit needed more.",
        minimum=0,
    )
    search_save_seconds: float = _setting(
        600.0,
        "Seconds between saves of a changing user's search index to disk (it is also saved "
        "when the server stops; a crash costs a rebuild of the users changed since).",
        minimum=1,
        maximum=86400,
    )
    sparql_result_limit: int = _setting(
        10000, "Most rows (or triples) one user SPARQL query may return.", minimum=1
    )
    sparql_timeout_seconds: float = _setting(
        10.0,
        "Seconds one user SPARQL query may run before /sparql answers with a timeout error.",
        minimum=0.01,
        maximum=3600,
    )
    sparql_slots: int = _setting(
        4,
        "User SPARQL queries that may run at once (one per user; more wait their turn).",
        minimum=1,
        maximum=64,
    )
    sparql_memory_megabytes: int = _setting(
        256,
        "Memory all running user SPARQL queries may use together, in MB (split evenly between "
        "the slots; a query that needs more than its share is stopped).",
        minimum=16,
    )
    authority_order: str = _setting(
        "user,tool,task,agent",
        "Whose word outranks whose when claims conflict, strongest first (comma-separated).",
        permutation_of=("agent", "task", "tool", "user"),
    )
    default_user: str = _setting(
        "me", "User id the command line acts for when a command is given no --user."
    )
    embedding_model: str = _setting(
        "",
        "Directory of a static embedding model for search (kgmem index distill makes one; "
        "needs kgmem[embeddings]); empty: <home>/models/static when it holds one, else none.",
    )
    model_primary: str = _setting(
        "",
        "Model for every model stage, as provider/name (e.g. openai/gpt-4o-mini); empty: no "
        "model, so only deterministic stages run and raw transcripts wait.",
    )
    model_memory: str = _setting(
        "", "Model for the memory stages (extract, classify, resolve, assemble); empty: primary."
    )
    model_api_base: str = _setting(
        "", "Base URL of the model API, e.g. a local OpenAI-compatible server; empty: provider's."
    )
    model_api_key_env: str = _setting(
        "", "Name of the environment variable holding the model API key (never the key itself)."
    )
    model_timeout_seconds: float = _setting(
        60.0,
        "Seconds one try of a model call may wait for the server's answer before it fails.",
        minimum=1,
    )
    model_retries: int = _setting(
        3,
        "Times a model call is tried again after a transient failure (timeout, 429, 5xx, "
        "dropped connection) before its stage fails; the wait doubles from 1 s, or is the "
        "server's Retry-After.",
        minimum=0,
        maximum=10,
    )
    vault: str = _setting(
        "on",
        "on: every entity's page follows each committed change and is kept as a Markdown "
        "file in its user's vault; off: pages are written by consolidation passes only.",
        choices=("on", "off"),
    )
    vaults: str = _setting(
        "",
        "Vaults of chosen users, e.g. an existing Obsidian vault, as user=directory pairs "
        "separated by ';'; every other user's is <home>/vault/<user>.",
    )

    @property
    def store_dir(self) -> Path:
        """Where the embedded Oxigraph store lives."""
        return self.home / "store"

    @property
    def local_shapes_dir(self) -> Path:
        """Where an admin's own SHACL shapes files live (added over the admin API)."""
        return self.home / "shapes"

    @property
    def search_dir(self) -> Path:
        """Where each user's search index is saved (:mod:`kgmem.index.lexical.saved`)."""
        return self.home / "index" / "search"

    @property
    def catalogue_index_path(self) -> Path:
        """Where the catalogue's term index and vocabulary are kept between processes."""
        return self.home / "index" / "catalogue.sqlite3"

    @property
    def digests_path(self) -> Path:
        """Where the digests of every user's nodes are kept (:mod:`kgmem.index.digests`)."""
        return self.home / "index" / "digests.sqlite3"

    @property
    def periodic_path(self) -> Path:
        """Where the stamps periodic consolidation last read each user at are kept."""
        return self.home / "index" / "periodic.json"

    @property
    def embedding_dir(self) -> Path:
        """Where the embedding model is (or would be): ``embedding_model`` or the default."""
        if self.embedding_model:
            return Path(self.embedding_model).expanduser()
        return self.home / "models" / "static"

    def vault_dir(self, uid: str) -> Path:
        """``uid``'s vault: the directory ``vaults`` names for them, else <home>/vault/<uid>."""
        for pair in self.vaults.split(";"):
            user, sep, directory = pair.partition("=")
            if sep and user.strip() == uid and directory.strip():
                return Path(directory.strip()).expanduser()
        return self.home / "vault" / uid

    @property
    def server_file(self) -> Path:
        """Written by a running server so the CLI can find it."""
        return self.home / "server.json"

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"


def setting_names() -> list[str]:
    return [f.name for f in fields(Settings)]


def setting_help(name: str) -> str:
    return str(next(f for f in fields(Settings) if f.name == name).metadata["help"])


def setting_default(name: str) -> object:
    f = next(f for f in fields(Settings) if f.name == name)
    if f.default is not MISSING:
        return f.default
    return "platform user data dir (e.g. ~/.local/share/kgmem)"


def load_settings(env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Build the settings: defaults, then the TOML file, then ``KGMEM_*``, then ``overrides``.

    ``env`` defaults to the process environment; tests pass their own.
    """
    environ = dict(os.environ if env is None else env)
    home = Path(environ["KGMEM_HOME"]).expanduser() if "KGMEM_HOME" in environ else None
    home = Path(overrides["home"]) if "home" in overrides else home
    settings = Settings() if home is None else Settings(home=home)
    config_path = Path(environ.get("KGMEM_CONFIG", settings.home / CONFIG_FILE_NAME))
    settings = _apply(settings, _read_toml(config_path), f"config file {config_path}")
    from_env = {
        key[len(ENV_PREFIX) :].lower(): value
        for key, value in environ.items()
        if key.startswith(ENV_PREFIX) and key not in _META_ENV
    }
    settings = _apply(settings, from_env, "environment (KGMEM_*)")
    return _apply(settings, overrides, "arguments")


def apply_offline_env() -> None:
    """Keep litellm and Hugging Face from reaching the network; call before importing them."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def model_api_key(settings: Settings, env: Mapping[str, str] | None = None) -> str | None:
    """The model API key from the variable ``model_api_key_env`` names; None when unset.

    Read here because this is the only module that reads the environment; ``env`` defaults
    to the process environment, tests pass their own.
    """
    if not settings.model_api_key_env:
        return None
    value = (os.environ if env is None else env).get(settings.model_api_key_env, "")
    return value or None


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(path, f"not valid TOML: {exc}") from exc
    except OSError as exc:
        raise ConfigFileError(path, f"cannot be read: {exc.strerror or exc}") from exc


def _apply(settings: Settings, values: Mapping[str, Any], origin: str) -> Settings:
    declared = {f.name: f for f in fields(Settings)}
    changes: dict[str, Any] = {}
    for name, raw in values.items():
        if name not in declared:
            raise UnknownSetting(name, origin)
        if name == "home" and origin != "arguments":
            raise InvalidSetting(name, raw, "the data directory is chosen by KGMEM_HOME", origin)
        changes[name] = _coerce(name, raw, declared[name].type, declared[name].metadata, origin)
    return replace(settings, **changes) if changes else settings


def _coerce(name: str, raw: Any, kind: object, meta: Mapping[str, Any], origin: str) -> Any:
    converters: dict[object, type] = {
        "int": int,
        "float": float,
        "str": str,
        "Path": Path,
    }
    convert = converters[kind]
    if isinstance(raw, bool) or (
        convert is not str and convert is not Path and isinstance(raw, str) and not raw.strip()
    ):
        raise InvalidSetting(name, raw, f"expected {kind}", origin)
    try:
        if convert is int and isinstance(raw, float) and not raw.is_integer():
            raise ValueError("not a whole number")
        value = convert(raw)
    except (TypeError, ValueError) as exc:
        raise InvalidSetting(name, raw, f"expected {kind}: {exc}", origin) from exc
    if isinstance(value, Path):
        value = value.expanduser()
    low, high, choices = meta["minimum"], meta["maximum"], meta["choices"]
    if low is not None and value < low:
        raise InvalidSetting(name, raw, f"must be >= {low}", origin)
    if high is not None and value > high:
        raise InvalidSetting(name, raw, f"must be <= {high}", origin)
    if choices and value not in choices:
        raise InvalidSetting(name, raw, f"must be one of {', '.join(choices)}", origin)
    if name == "vaults":
        _check_vaults(str(value), raw, origin)
    wanted = meta.get("permutation_of", ())
    if wanted and sorted(p.strip() for p in str(value).split(",")) != sorted(wanted):
        raise InvalidSetting(
            name,
            raw,
            f"must list {', '.join(wanted)} once each, comma-separated, strongest first",
            origin,
        )
    return value


def _check_vaults(value: str, raw: Any, origin: str) -> None:
    """``user=directory`` pairs separated by ``;``: each user once, each directory absolute
    (``~`` is expanded), and no vault the same as, or inside, another user's."""

    def refuse(why: str) -> InvalidSetting:
        return InvalidSetting("vaults", raw, why, origin)

    seen: dict[str, Path] = {}
    for pair in (p for p in value.split(";") if p.strip()):
        user, sep, directory = (part.strip() for part in pair.partition("="))
        if not sep or not user or not directory:
            raise refuse(f"{pair.strip()!r} is not user=directory")
        try:
            check_id(user, "user")
        except GraphNameError as exc:
            raise refuse(str(exc)) from None
        if user in seen:
            raise refuse(f"{user} is named twice")
        path = Path(directory).expanduser()
        if not path.is_absolute():
            raise refuse(f"the vault of {user} is not an absolute path")
        for other, held in seen.items():
            if path.is_relative_to(held) or held.is_relative_to(path):
                raise refuse(f"the vaults of {other} and {user} overlap")
        seen[user] = path
