"""The server's own namespaces, made once at start: a mount namespace where `hide_paths` are covered,
a network namespace with only loopback, and the world-writable directories each call's tmpfs covers."""

from __future__ import annotations

import os
import stat
import sys

from agentic_rl.sandbox.linux import (
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWUSER,
    MNT_DETACH,
    MS_BIND,
    MS_NODEV,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
    MS_REMOUNT,
    check_rc,
    libc,
    loopback_up,
    mount,
    unshare,
    within,
)

# Where world-writable directories are looked for at server start (a bounded walk; see world_writable_dirs).
WORLD_WRITABLE_SKIP = ("/proc", "/sys", "/dev")
WORLD_WRITABLE_DEPTH = 4


def keep_paths() -> list[str]:
    """Directories the interpreter needs after start-up (lazy imports); they stay visible when hidden.

    Only the installation itself: other sys.path entries (an editable checkout of the project, say)
    are hidden with their parent.
    """
    import site

    paths = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        os.path.dirname(sys.executable),
        os.path.dirname(os.path.realpath(sys.executable)),
        *site.getsitepackages(),
    }
    real = sorted({os.path.realpath(p) for p in paths})
    # keep only outermost directories
    return [p for p in real if not any(q != p and within(p, q) for q in real)]


def hide_paths(hide: list[str], stage_dir: str, own_dir: str) -> list[str]:
    """In our private mount namespace, cover each directory in `hide` with an empty read-only tmpfs.

    Interpreter directories inside a hidden one are bind-mounted back at the same path (staged first,
    because the tmpfs covers the source). Every runner forked later inherits this view.
    """
    keep = keep_paths()
    hidden = []
    for i, target in enumerate(sorted({os.path.realpath(p) for p in hide if os.path.isdir(p)})):
        if any(within(target, k) for k in keep) or within(own_dir, target):
            continue  # hiding part of the interpreter, or the server's own directory, would break us
        staged = []
        for j, k in enumerate(k for k in keep if within(k, target)):
            stage = os.path.join(stage_dir, f"{i}-{j}")
            os.makedirs(stage, exist_ok=True)
            mount(k, stage, None, MS_BIND | MS_REC)
            staged.append((stage, k))
        mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
        for stage, k in staged:
            os.makedirs(k, exist_ok=True)
            mount(stage, k, None, MS_BIND | MS_REC)
            check_rc(libc.umount2(stage.encode(), MNT_DETACH), f"umount {stage}")
        mount(None, target, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
        hidden.append(target)
    return hidden


def enter_namespaces(config: dict) -> tuple[bool, list[str], list[str]]:
    """Once per server: as root, a private mount namespace (where `hide_paths` get covered); and, for
    network "none", a network namespace with only loopback (without root: inside an unprivileged user
    namespace, where the kernel allows one). Each step that fails is reported, not fatal (a container
    may deny namespaces even to root). Returns (mount namespace made, hidden paths, problems)."""
    problems: list[str] = []
    mounts = False
    if config["privileged"]:
        try:
            unshare(CLONE_NEWNS)
            mount(None, "/", None, MS_REC | MS_PRIVATE)
            mounts = True
        except OSError as e:
            problems.append(f"no mount namespace ({e}): calls share the host's /tmp, no path is hidden")
    if config["network"] == "none":
        try:
            unshare(CLONE_NEWNET if config["privileged"] else CLONE_NEWUSER | CLONE_NEWNET)
        except OSError as e:
            problems.append(f"no network namespace ({e}): sandboxed code has the caller's network")
        else:
            try:
                loopback_up()
            except OSError as e:
                problems.append(f"loopback stays down: {e}")
    hidden: list[str] = []
    if mounts and config["hide_paths"]:
        scratch = config["scratch_dir"]
        try:
            hidden = hide_paths(config["hide_paths"], os.path.join(scratch, "stage"), os.path.dirname(scratch))
        except OSError as e:
            problems.append(f"could not hide paths: {e}")
    return mounts, hidden, problems


def world_writable_dirs() -> list[str]:
    """Directories every user may write to (/tmp, /var/tmp, /run/lock, /dev/shm...), found once at start.

    Each call gets its own tmpfs over all of them (the same one as its /tmp), so nothing written there
    outlives the call or counts outside the call's `tmp_mb`. The walk is bounded (depth 4, no /proc,
    /sys; of /dev only /dev/shm): a deeper world-writable directory would stay shared (README.md).
    """
    found = []
    for top in ["/", "/dev/shm"]:
        base_depth = top.rstrip("/").count("/")
        for root, dirs, _ in os.walk(top):
            depth = root.rstrip("/").count("/") - base_depth
            dirs[:] = [
                d
                for d in dirs
                if not (top == "/" and root == "/" and f"/{d}" in WORLD_WRITABLE_SKIP) and depth < WORLD_WRITABLE_DEPTH
            ]
            try:
                st = os.lstat(root)
            except OSError:
                continue
            if stat_is_world_writable_dir(st):
                found.append(root)
                dirs[:] = []  # what is below belongs to that tmpfs anyway
    return sorted(set(found))


def stat_is_world_writable_dir(st: os.stat_result) -> bool:
    return stat.S_ISDIR(st.st_mode) and bool(st.st_mode & stat.S_IWOTH)
