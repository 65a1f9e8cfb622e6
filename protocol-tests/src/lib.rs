//! Helpers shared by the protocol suites.
