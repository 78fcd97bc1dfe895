//! The value-info lattice (not written yet).
