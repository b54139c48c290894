#!/usr/bin/env bash
# Create .venv-bcb/ in the repository root: a Python 3.11 interpreter with the third-party libraries
# the BigCodeBench-Hard tasks import (pins in requirements-bcb.txt beside this script).
# Point the sandbox at it with AGENTIC_RL_SANDBOX_PYTHON=.venv-bcb/bin/python or sandbox.python=...
# Usage: bash agentic_rl/sandbox/setup_bcb.sh   (PYTHON=/path/to/python3.11 to choose the base interpreter)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/.venv-bcb"
base_python="${PYTHON:-python3.11}"

if [ ! -x "$venv/bin/python" ]; then
    "$base_python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install -r "$here/requirements-bcb.txt"
"$venv/bin/python" - <<'PY'
import importlib
mods = ["numpy", "pandas", "matplotlib", "sklearn", "scipy", "seaborn", "statsmodels", "requests", "bs4",
        "nltk", "psutil", "flask", "flask_login", "flask_wtf", "flask_mail", "wtforms", "pytz", "cv2", "rsa",
        "lxml", "wordcloud", "shapely", "geopandas", "soundfile", "librosa", "openpyxl", "regex", "keras",
        "tensorflow", "xlwt", "xlrd", "Crypto", "cryptography", "pyquery", "gensim", "Levenshtein", "docx",
        "pytesseract", "PIL", "chardet", "faker", "pytest"]
missing = []
for m in mods:
    try:
        importlib.import_module(m)
    except Exception as e:  # report every broken import, not just the first
        missing.append(f"{m}: {type(e).__name__}: {e}")
print(f"{len(mods) - len(missing)}/{len(mods)} modules import")
for line in missing:
    print("  FAILED", line)
PY
echo "ready: $venv/bin/python"
