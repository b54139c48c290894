"""Package list for setuptools (everything else is in pyproject.toml).

conf/ stays at the top of the checkout (the layout is fixed) and is installed inside the package as
`agentic_rl.conf`, so an installed copy finds its Hydra configs without a checkout. pyproject.toml alone
cannot add a mapped package to the ones `find` discovers, hence this file.
"""
from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["agentic_rl", "agentic_rl.*"]) + ["agentic_rl.conf"],
    package_dir={"agentic_rl.conf": "conf"},
)
