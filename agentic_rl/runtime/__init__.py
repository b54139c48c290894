"""What every run shares around its own work: stages, checkpoints, resume, interruption, safe file writes.

`train.py` and `evaluate.py` both read as build -> loop -> finish on top of these modules, so neither entry
point imports the other.
"""
