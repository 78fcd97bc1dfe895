//! flowc-bench: benchmarks and their program generators.
