"""Settings: defaults < kgmem.toml < KGMEM_* < arguments, typed and validated."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from kgmem.config import Settings, load_settings
from kgmem.errors import ConfigFileError, InvalidSetting, UnknownSetting


def env_for(home: Path, **extra: str) -> dict[str, str]:
    return {"KGMEM_HOME": str(home), **extra}


def test_defaults_match_the_design_table(home: Path) -> None:
    s = load_settings(env=env_for(home))
    assert s.home == home
    assert (s.host, s.port) == ("127.0.0.1", 8765)
    assert s.sweep_interval_seconds == 60
    assert s.idle_threshold_seconds == 300
    assert s.concurrency == 4
    assert s.search_results == 8
    assert s.short_memory_half_life_days == 14
    assert s.stage_attempts == 3
    assert s.auto_activate_confidence == 0.75
    assert s.batch_max == 25
    assert s.max_tags == 20
    assert s.store_dir == home / "store"


def test_default_home_is_the_platform_data_dir() -> None:
    assert load_settings(env={}).home.name == "kgmem"


def test_file_overrides_defaults_and_env_overrides_file(home: Path) -> None:
    (home / "kgmem.toml").write_text("port = 9001\nconcurrency = 2\nlog_level = 'debug'\n")
    s = load_settings(env=env_for(home, KGMEM_CONCURRENCY="3"))
    assert (s.port, s.concurrency, s.log_level) == (9001, 3, "debug")
    s = load_settings(env=env_for(home, KGMEM_CONCURRENCY="3"), concurrency=5)
    assert s.concurrency == 5


def test_kgmem_config_points_at_another_file(home: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere.toml"
    other.write_text("search_results = 12\n")
    s = load_settings(env=env_for(home, KGMEM_CONFIG=str(other)))
    assert s.search_results == 12


def test_env_values_are_converted_to_the_setting_type(home: Path) -> None:
    s = load_settings(
        env=env_for(home, KGMEM_AUTO_ACTIVATE_CONFIDENCE="0.5", KGMEM_SHAPES_DIR="~/shapes")
    )
    assert s.auto_activate_confidence == 0.5
    assert s.shapes_dir == Path("~/shapes").expanduser()


def test_settings_are_frozen(home: Path) -> None:
    s = load_settings(env=env_for(home))
    with pytest.raises(AttributeError):
        s.port = 1  # type: ignore[misc]


def test_unknown_setting_in_file_names_key_and_file(home: Path) -> None:
    (home / "kgmem.toml").write_text("prot = 9001\n")
    with pytest.raises(UnknownSetting) as info:
        load_settings(env=env_for(home))
    assert info.value.name == "prot"
    assert str(home / "kgmem.toml") in str(info.value)


def test_unknown_setting_in_env_is_refused(home: Path) -> None:
    with pytest.raises(UnknownSetting, match="'sweep' in environment"):
        load_settings(env=env_for(home, KGMEM_SWEEP="5"))


def test_malformed_toml_names_the_file(home: Path) -> None:
    (home / "kgmem.toml").write_text("port = = 1\n")
    with pytest.raises(ConfigFileError, match="not valid TOML"):
        load_settings(env=env_for(home))


def test_unreadable_config_file(home: Path, tmp_path: Path) -> None:
    directory = tmp_path / "a-directory.toml"
    directory.mkdir()
    with pytest.raises(ConfigFileError, match="cannot be read"):
        load_settings(env=env_for(home, KGMEM_CONFIG=str(directory)))


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        ("port", "0", ">= 1"),
        ("port", "70000", "<= 65535"),
        ("port", "eighty", "expected int"),
        ("auto_activate_confidence", "1.5", "<= 1"),
        ("concurrency", "2.5", "expected int"),
        ("log_level", "loud", "one of"),
        ("max_tags", "", "expected int"),
        ("vault", "sometimes", "one of"),
        ("vaults", "alice", "is not user=directory"),
        ("vaults", "alice=Obsidian/Alice", "not an absolute path"),
        ("vaults", "alice=/srv/a;alice=/srv/b", "named twice"),
        ("vaults", "al ice=/srv/a", "user must be"),
        ("vaults", "alice=/srv/v;bob=/srv/v", "overlap"),
        ("vaults", "alice=/srv/v;bob=/srv/v/bob", "overlap"),
    ],
)
def test_invalid_env_values_name_the_setting(home: Path, key: str, value: str, reason: str) -> None:
    with pytest.raises(InvalidSetting, match=reason) as info:
        load_settings(env=env_for(home, **{f"KGMEM_{key.upper()}": value}))
    assert info.value.name == key


def test_invalid_file_value_type(home: Path) -> None:
    (home / "kgmem.toml").write_text("port = true\n")
    with pytest.raises(InvalidSetting, match="port"):
        load_settings(env=env_for(home))


def test_home_cannot_be_set_from_the_file(home: Path) -> None:
    (home / "kgmem.toml").write_text("home = '/elsewhere'\n")
    with pytest.raises(InvalidSetting, match="KGMEM_HOME"):
        load_settings(env=env_for(home))


def test_every_setting_has_help_text() -> None:
    for f in fields(Settings):
        assert len(str(f.metadata["help"])) > 10, f.name


def test_authority_order_must_name_each_authority_once(home: Path) -> None:
    s = load_settings(env=env_for(home, KGMEM_AUTHORITY_ORDER="tool, user, task, agent"))
    assert s.authority_order == "tool, user, task, agent"
    for bad in ("user,tool,task", "user,user,task,agent", "user,tool,task,robot"):
        with pytest.raises(InvalidSetting, match="once each"):
            load_settings(env=env_for(home, KGMEM_AUTHORITY_ORDER=bad))


def test_each_named_vault_is_that_users_and_the_others_are_under_home(home: Path) -> None:
    settings = load_settings(
        env=env_for(home, KGMEM_VAULTS=" alice = ~/Obsidian/Alice ; bob=/srv/b")
    )
    assert settings.vault_dir("alice") == Path("~/Obsidian/Alice").expanduser()
    assert settings.vault_dir("bob") == Path("/srv/b")
    assert settings.vault_dir("carol") == home / "vault" / "carol"
