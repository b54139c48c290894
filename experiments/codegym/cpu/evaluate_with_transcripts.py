"""`python -m agentic_rl.evaluate` with each episode's transcript added to its results.jsonl record.

For reading the base model's episodes (what it writes, where it stops): the records gain a "transcript" field
(agentic_rl.tracking.wandb_run.transcript: each model turn, prefix included, then the environment's answer).
Everything else is the evaluation as it is; the success filter (data.success) reads these files as any other.

    PYTHONPATH=. python experiments/codegym/cpu/evaluate_with_transcripts.py data=codegym ...   (evaluate's overrides)
"""

from agentic_rl import evaluate
from agentic_rl.evaluation import evaluator
from agentic_rl.tracking.wandb_run import transcript

_record = evaluator.record_from_trajectory


def record_with_transcript(traj, mode, task=None):
    record = _record(traj, mode, task)
    record["transcript"] = transcript(traj)
    return record


evaluator.record_from_trajectory = record_with_transcript

if __name__ == "__main__":
    evaluate.cli()
