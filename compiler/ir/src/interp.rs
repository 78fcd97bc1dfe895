//! The IR interpreter (written next).
