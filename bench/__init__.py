"""Benchmark scripts; figures land in bench/results/."""
