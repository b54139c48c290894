"""Read the records of an offline W&B run file (`run-<id>.wandb`) to check what a run sent, without a server.

The file is a LevelDB-style log: a 7-byte header (":W&B", magic, version), then 32 KiB blocks of chunks,
each with a 7-byte header (crc32c, length, type: 1 full, 2 first, 3 middle, 4 last) holding a serialized
`wandb_internal_pb2.Record`. wandb 0.31 no longer ships a Python reader, hence this one.
"""

from __future__ import annotations

import struct
from pathlib import Path

from wandb.proto import wandb_internal_pb2 as pb

BLOCK = 32 * 1024
HEADER = 7
FULL, LAST = 1, 4


def read_records(path: Path) -> list[pb.Record]:
    data = Path(path).read_bytes()
    if data[:4] != b":W&B":
        raise ValueError(f"{path} is not a W&B run file")
    pos, pending, records = HEADER, b"", []
    while pos + HEADER <= len(data):
        left = BLOCK - pos % BLOCK
        if left < HEADER:  # a block's tail too short for a chunk header is zero padding
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + HEADER])
        if kind == 0:
            pos += left
            continue
        pending += data[pos + HEADER : pos + HEADER + length]
        pos += HEADER + length
        if kind in (FULL, LAST):
            record = pb.Record()
            record.ParseFromString(pending)
            records.append(record)
            pending = b""
    return records


def by_type(records: list[pb.Record], kind: str) -> list:
    return [getattr(r, kind) for r in records if r.WhichOneof("record_type") == kind]
