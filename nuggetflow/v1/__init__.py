"""Generated protobuf code. Do not edit."""
