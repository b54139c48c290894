#!/bin/bash
python -m agentic_rl.hygiene data=toolworld-heldout --out experiments/tool-choice/hygiene/heldout
python -m agentic_rl.hygiene data=toolworld data.limit=null --out experiments/tool-choice/hygiene/train
