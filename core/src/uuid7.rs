//! UUIDv7 (placeholder).
