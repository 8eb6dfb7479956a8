//! Snowflake IDs (placeholder).
