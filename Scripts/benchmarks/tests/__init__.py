"""The harness's unit tests: python3 Scripts/benchmarks/harness.py test."""
