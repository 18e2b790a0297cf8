//! Fuzz target logic.
