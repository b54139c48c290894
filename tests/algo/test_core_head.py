"""`head_logprobs`' chunked path against the plain `token_logprobs`, in values and gradients.

Written after mutation testing (docs/mutation.md): with only core.py's unit tests run, every edit of the
chunked forward and backward survived, since they were exercised only through the GRPO-step tests.
"""

from __future__ import annotations

import pytest
import torch

from agentic_rl.algo import core
from agentic_rl.algo.core import HEAD_CHUNK, head_logprobs, token_logprobs

N = HEAD_CHUNK + 37  # more rows than one chunk, the last chunk partial
HIDDEN, VOCAB = 6, 11


def inputs(seed: int) -> tuple[torch.nn.Linear, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    head = torch.nn.Linear(HIDDEN, VOCAB, bias=False)
    with torch.no_grad():
        head.weight.copy_(torch.randn(VOCAB, HIDDEN, generator=gen))
    hidden = torch.randn(N, HIDDEN, generator=gen)
    targets = torch.randint(0, VOCAB, (N,), generator=gen)
    return head, hidden, targets


@pytest.mark.parametrize("temperature", [1.0, 0.7])
@pytest.mark.parametrize("grads", ["both", "hidden", "weight"])
def test_chunked_head_matches_the_plain_path(temperature: float, grads: str) -> None:
    """Guards `_HeadLogprobs`: each row's value (all chunks, the partial last one included) and both
    gradients, also when only one of hidden states and weight needs one."""
    head, hidden, targets = inputs(0)
    head.weight.requires_grad_(grads in ("both", "weight"))
    hidden.requires_grad_(grads in ("both", "hidden"))
    weights = torch.linspace(-1.0, 2.0, N)  # a different upstream gradient per row

    chunked = head_logprobs(head, hidden, targets, temperature)
    (chunked * weights).sum().backward()
    got = (hidden.grad, head.weight.grad)
    hidden.grad, head.weight.grad = None, None

    plain = token_logprobs(head(hidden).unsqueeze(0), targets.unsqueeze(0), temperature).squeeze(0)
    (plain * weights).sum().backward()
    want = (hidden.grad, head.weight.grad)

    assert chunked.shape == (N,) and torch.allclose(chunked, plain, atol=1e-5)
    assert (chunked < 0).all()
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if w is not None:
            assert torch.allclose(g, w, atol=1e-4)


def test_head_with_a_bias_takes_the_plain_path(monkeypatch: pytest.MonkeyPatch) -> None:
    head, hidden, targets = inputs(1)
    biased = torch.nn.Linear(HIDDEN, VOCAB, bias=True)
    monkeypatch.setattr(core._HeadLogprobs, "apply", lambda *a: pytest.fail("the chunked path took a bias"))
    out = head_logprobs(biased, hidden, targets, 1.0)
    assert out.shape == (N,)
    assert torch.allclose(out, token_logprobs(biased(hidden)[None], targets[None], 1.0)[0])
    with pytest.raises(ValueError, match="temperature > 0"):
        head_logprobs(head, hidden, targets, 0.0)


def test_a_plain_linear_head_takes_the_chunked_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the dispatch in `head_logprobs`: a bias-free `nn.Linear` goes through `_HeadLogprobs`."""
    head, hidden, targets = inputs(2)
    calls = []
    real_apply = core._HeadLogprobs.apply
    monkeypatch.setattr(core._HeadLogprobs, "apply", lambda *a: calls.append(a) or real_apply(*a))
    out = head_logprobs(head, hidden, targets, 0.9)
    assert len(calls) == 1 and calls[0][0] is hidden and calls[0][3] == 0.9
    assert torch.allclose(out, token_logprobs(head(hidden)[None], targets[None], 0.9)[0], atol=1e-5)
    # the default temperature is 1, as token_logprobs'
    default = head_logprobs(head, hidden, targets)
    assert calls[-1][3] == 1.0
    assert torch.allclose(default, token_logprobs(head(hidden)[None], targets[None])[0], atol=1e-5)
