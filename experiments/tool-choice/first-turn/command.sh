#!/bin/bash
python experiments/tool-choice/first-turn/first_turn.py > experiments/tool-choice/first-turn/output.txt
