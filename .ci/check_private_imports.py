"""Fail when a module of agentic_rl takes a private name (one leading underscore) from another of its modules.

A private name is a module's own business; a name another module needs is made public, or moved to where both
can reach it. Checked: `from agentic_rl.x import _name` and `module._name` on a module imported from
agentic_rl. Tests are not checked (they may look inside a module).

    python .ci/check_private_imports.py [ROOT]     # ROOT: the checkout (default: this file's parent's parent)
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a `from ... import` reads from (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def findings(root: Path) -> list[str]:
    out = []
    for path in sorted((root / "agentic_rl").rglob("*.py")):
        module = _module_name(root, path)
        tree = ast.parse(path.read_text(), str(path))
        modules: dict[str, str] = {}  # local name -> agentic_rl module it stands for
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _resolve(module, path.name == "__init__.py", node)
                if not source.startswith("agentic_rl"):
                    continue
                for alias in node.names:
                    if _private(alias.name) and source != module:
                        out.append(f"{path.relative_to(root)}:{node.lineno}: {alias.name} from {source}")
                    modules[alias.asname or alias.name] = f"{source}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("agentic_rl") and alias.asname:
                        modules[alias.asname] = alias.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                    and _private(node.attr)):
                out.append(f"{path.relative_to(root)}:{node.lineno}: {node.attr} of {modules[node.value.id]}")
    return out


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    found = findings(root)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} private name(s) taken across modules: make them public or move them", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
