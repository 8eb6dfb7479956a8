//! Snowflake ID text forms (decimal, Crockford base32) against independent
//! oracles, and decode/compose round trips for every preset and for layouts
//! built from the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mintid::{SnowflakeId, SnowflakeLayout};
use mintid_fuzz::{check_error, crockford_canonical};

/// Decoding then composing gives the ID back, for any layout it fits.
fn check_layout(layout: &SnowflakeLayout, id: SnowflakeId) {
    match layout.decode(id) {
        Ok(parts) => {
            assert!(id <= layout.max_id());
            let composed = layout.compose_tick(parts.tick, parts.worker, parts.sequence);
            assert_eq!(composed, Ok(id));
            if let Ok(by_time) = layout.compose(parts.unix_millis, parts.worker, parts.sequence) {
                assert_eq!(by_time, id);
            }
        }
        Err(error) => {
            assert!(id > layout.max_id());
            check_error(error.code(), "snowflake.", &error.to_string());
        }
    }
}

fn check_id(id: SnowflakeId, data: &[u8]) {
    assert_eq!(SnowflakeId::from_decimal(&id.to_string()), Ok(id));
    assert_eq!(SnowflakeId::from_base32(&id.to_base32()), Ok(id));
    for (_, layout) in SnowflakeLayout::PRESETS {
        check_layout(layout, id);
    }
    // A layout from the input's first bytes, when they make a valid one.
    if let [time, worker, sequence, tick, epoch @ ..] = data {
        let epoch = epoch
            .iter()
            .take(8)
            .fold(0u64, |acc, &b| acc << 8 | u64::from(b));
        if let Ok(layout) = SnowflakeLayout::new(*time, *worker, *sequence, epoch, u64::from(*tick))
        {
            check_layout(&layout, id);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Decimal: ASCII digits only, at most 2^63 - 1.
    let expected = (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse::<u64>().ok())
        .flatten()
        .filter(|&value| value <= i64::MAX as u64);
    match SnowflakeId::from_decimal(text) {
        Ok(id) => {
            assert_eq!(Some(id.get()), expected);
            let trimmed = text.trim_start_matches('0');
            assert_eq!(
                id.to_string(),
                if trimmed.is_empty() { "0" } else { trimmed }
            );
            check_id(id, data);
        }
        Err(error) => {
            assert_eq!(expected, None, "{text:?}");
            check_error(error.code(), "snowflake.", &error.to_string());
        }
    }
    match SnowflakeId::from_base32(text) {
        Ok(id) => {
            assert_eq!(id.to_base32(), crockford_canonical(text));
            check_id(id, data);
        }
        Err(error) => check_error(error.code(), "snowflake.", &error.to_string()),
    }
    // Every 63-bit value read from the input's bytes.
    if let Ok(bytes) = <[u8; 8]>::try_from(data.get(..8).unwrap_or_default())
        && let Ok(id) = SnowflakeId::new(u64::from_be_bytes(bytes))
    {
        check_id(id, data);
    }
});
