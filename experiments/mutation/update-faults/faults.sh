#!/bin/bash
# Four hand-made faults in the update, one at a time, on a scratch worktree of HEAD: do tests/algo fail?
#   bash experiments/mutation/update-faults/faults.sh            (all four)
#   ONLY=adapter bash experiments/mutation/update-faults/faults.sh (the faults whose name holds the text)
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
W=${TMPDIR:-/tmp}/update-faults; rm -rf "$W"; git -C "$ROOT" worktree prune; git -C "$ROOT" worktree add --detach "$W" HEAD -q
cd "$W" || exit 1
run() { # name file python-expression-to-apply
  case "$1" in *"${ONLY:-}"*) ;; *) return ;; esac  # ONLY=TEXT: the faults whose name holds TEXT
  git checkout -q -- agentic_rl
  python - "$2" "$3" "$4" <<'PY'
import sys
path, old, new = sys.argv[1:4]
s = open(path).read(); assert old in s, old; open(path, "w").write(s.replace(old, new, 1))
PY
  [ $? -eq 0 ] || { echo "== $1: the fault's text is not in $2 (the code moved): not run"; return; }
  start=$(date +%s)
  out=$(PYTHONPATH=$W timeout 1200 python -m pytest -x -q -p no:cacheprovider tests/algo 2>&1 | tail -3)
  echo "== $1 ($(( $(date +%s) - start )) s): $(echo "$out" | grep -E 'passed|failed|error' | tail -1)"
  echo "$out" | grep -E "^FAILED" | head -2
}
run "advantage sign flipped" agentic_rl/algo/core.py "return ((r - r.mean()) / (r.std(unbiased=False) + eps)).float()" "return ((r.mean() - r) / (r.std(unbiased=False) + eps)).float()"
run "loss mask shifted one token" agentic_rl/algo/core.py "    return (per_token * mask).sum() / max(group_tokens, 1)" "    return (per_token * mask.roll(1, -1)).sum() / max(group_tokens, 1)"
run "reference with the adapter on" agentic_rl/algo/logprobs.py "    return _adapter_disabled(model) if reference is None else reference.active(model)" "    return contextlib.nullcontext() if reference is None else reference.active(model)"
run "KL against the policy itself" agentic_rl/algo/core.py "    d = ref_logp - logp
" "    d = logp.detach() - logp
"
git checkout -q -- agentic_rl
cd "$ROOT" && git worktree remove --force "$W"
