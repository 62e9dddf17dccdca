"""Generated protobuf code: the client's copy of nuggetflow.v1 (scripts/gen_protos.py). Do not edit."""
