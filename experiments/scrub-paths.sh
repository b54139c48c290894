#!/bin/bash
# Take this machine's paths out of a record's copies, in place: bash experiments/scrub-paths.sh FILE...
# Logs and graders' details name the checkout, the interpreter and its libraries; a record names no machine's
# layout. STUDY_TREE (optional): a worktree the run's code came from, written <study-worktree>.
set -euo pipefail
checkout=$(cd "$(dirname "$0")/.." && pwd)
shared=$(cd "$checkout/../shared" 2>/dev/null && pwd || echo /nonexistent)
# this interpreter's own locations, asked of it
site=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
stdlib=$(python -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
interpreter=$(python -c 'import sys; print(sys.executable)')
sandbox_work=${TMPDIR:-/tmp}/work
for f in "$@"; do
  if [ -f "$f" ]; then
    sed -i -e "s#$checkout#<checkout>#g" -e "s#${STUDY_TREE:-/nonexistent}#<study-worktree>#g" -e "s#$shared#<shared>#g" \
      -e "s#$sandbox_work/#<sandbox-work>/#g" -e "s#$site#<site-packages>#g" -e "s#$interpreter#<python>#g" \
      -e "s#$stdlib/#<stdlib>/#g" "$f"
  fi
done
