"""The `envs` config node: no servers by default, N or a list of URLs compose and validate, a typo is named."""

from __future__ import annotations

import pytest
from hydra import compose, initialize_config_dir

from agentic_rl.config import register_configs, validate
from agentic_rl.envs.serve import ServersConfig
from agentic_rl.errors import ConfigError
from agentic_rl.paths import CONF_DIR
from agentic_rl.registry import to_dataclass


def compose_train(overrides):
    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("train", overrides=overrides)


@pytest.mark.parametrize(
    "overrides, servers",
    [
        ([], 0),
        (["envs.servers=2"], 2),
        (
            ["envs.servers=[http://10.0.0.7:8765,http://10.0.0.8:8765]"],
            ["http://10.0.0.7:8765", "http://10.0.0.8:8765"],
        ),
    ],
)
def test_envs_composes_and_validates(overrides, servers):
    cfg = compose_train(overrides)
    validate(cfg)
    parsed = to_dataclass(cfg.envs, ServersConfig)
    assert parsed.servers == servers


def test_a_misspelt_envs_key_is_named():
    with pytest.raises(ConfigError, match="envs.sever"):
        validate(compose_train(["+envs.sever=2"]))
