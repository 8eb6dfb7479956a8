//! Named layouts: the classic one, Twitter's and Hutool's, a Sonyflake-like
//! one and a JavaScript-safe one.

use alloc::string::String;

use super::error::{Detail, SnowflakeError};
use super::layout::SnowflakeLayout;

impl SnowflakeLayout {
    /// The epoch of mintid's own presets: 2025-01-01T00:00:00Z.
    pub const MINTID_EPOCH_MS: u64 = 1_735_689_600_000;

    /// Twitter's epoch, 2010-11-04T01:42:54.657Z (also Hutool's default).
    pub const TWITTER_EPOCH_MS: u64 = 1_288_834_974_657;

    /// 41 bits of 1 ms, 10 worker bits, 12 sequence bits, from the mintid
    /// epoch: 1024 workers, 4096 IDs per ms per worker, lasting until
    /// 2094-09-07T15:47:35.552Z.
    pub const CLASSIC: Self = Self::unchecked(41, 10, 12, 0, Self::MINTID_EPOCH_MS, 1);

    /// Twitter's original layout, 41 bits of 1 ms, 5 datacenter + 5 worker
    /// bits, 12 sequence bits, from Twitter's epoch: decodes Twitter's and
    /// Hutool's default IDs. Lasts until 2080-07-10T17:30:30.209Z.
    pub const TWITTER: Self = Self::unchecked(41, 10, 12, 5, Self::TWITTER_EPOCH_MS, 1);

    /// The 41 / 5 + 5 / 12 datacenter + worker split Hutool users know, from
    /// the mintid epoch: 32 datacenters of 32 workers, 4096 IDs per ms per
    /// worker, lasting until 2094-09-07T15:47:35.552Z.
    pub const DATACENTER_WORKER: Self = Self::unchecked(41, 10, 12, 5, Self::MINTID_EPOCH_MS, 1);

    /// Sonyflake's widths, 39 bits of 10 ms ticks, 16 worker (machine) bits
    /// and 8 sequence bits, from the mintid epoch: 65536 workers, 256 IDs per
    /// 10 ms (25 600 per second) per worker, lasting until
    /// 2199-03-19T03:28:58.880Z. Unlike Sonyflake, the worker field comes
    /// before the sequence (as in every mintid layout), so it does not decode
    /// Sonyflake's own IDs.
    pub const SONYFLAKE_LIKE: Self = Self::unchecked(39, 16, 8, 0, Self::MINTID_EPOCH_MS, 10);

    /// IDs below 2^53, exact in a JavaScript `Number`: 41 bits of 1 ms, 6
    /// worker bits and 6 sequence bits (53 in all), from the mintid epoch:
    /// 64 workers, 64 IDs per ms (64 000 per second) per worker, lasting until
    /// 2094-09-07T15:47:35.552Z.
    pub const JS_SAFE: Self = Self::unchecked(41, 6, 6, 0, Self::MINTID_EPOCH_MS, 1);

    /// Every preset with its name, for listings and [`preset`](Self::preset).
    pub const PRESETS: &'static [(&'static str, Self)] = &[
        ("classic", Self::CLASSIC),
        ("twitter", Self::TWITTER),
        ("datacenter-worker", Self::DATACENTER_WORKER),
        ("sonyflake-like", Self::SONYFLAKE_LIKE),
        ("js-safe", Self::JS_SAFE),
    ];

    /// The preset called `name` (`classic`, `twitter`, `datacenter-worker`,
    /// `sonyflake-like`, `js-safe`), ignoring ASCII case and reading `_` as `-`.
    ///
    /// Fails with `snowflake.unknown_preset`.
    pub fn preset(name: &str) -> Result<Self, SnowflakeError> {
        let same = |known: &str| {
            known.len() == name.len()
                && known.bytes().zip(name.bytes()).all(|(k, n)| {
                    let n = if n == b'_' { b'-' } else { n };
                    k == n.to_ascii_lowercase()
                })
        };
        Self::PRESETS
            .iter()
            .find(|(known, _)| same(known))
            .map(|&(_, layout)| layout)
            .ok_or_else(|| SnowflakeError::new(Detail::UnknownPreset(String::from(name))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn presets_are_valid_layouts() {
        for &(name, preset) in SnowflakeLayout::PRESETS {
            let rebuilt = SnowflakeLayout::new(
                preset.time_bits(),
                preset.worker_bits(),
                preset.sequence_bits(),
                preset.epoch_millis(),
                preset.tick_millis(),
            )
            .and_then(|l| l.with_datacenter_bits(preset.datacenter_bits()));
            assert_eq!(rebuilt, Ok(preset), "{name}");
            assert_eq!(SnowflakeLayout::preset(name), Ok(preset));
        }
    }

    #[test]
    fn preset_lifetimes() {
        // 2^41 ms after 2025-01-01 is 2094-09-07T15:47:35.552Z.
        assert_eq!(
            SnowflakeLayout::CLASSIC.expires_at_unix_millis(),
            3_934_712_855_552
        );
        assert_eq!(
            SnowflakeLayout::JS_SAFE.expires_at_unix_millis(),
            3_934_712_855_552
        );
        // Twitter's IDs run out at 2080-07-10T17:30:30.209Z.
        assert_eq!(
            SnowflakeLayout::TWITTER.expires_at_unix_millis(),
            3_487_858_230_209
        );
        // 2^39 ticks of 10 ms: 2199-03-19T03:28:58.880Z.
        assert_eq!(
            SnowflakeLayout::SONYFLAKE_LIKE.expires_at_unix_millis(),
            7_233_247_738_880
        );
    }

    #[test]
    fn js_safe_stays_below_2_pow_53() {
        assert!(SnowflakeLayout::JS_SAFE.is_js_safe());
        assert_eq!(SnowflakeLayout::JS_SAFE.max_id().get(), (1 << 53) - 1);
        assert!(!SnowflakeLayout::CLASSIC.is_js_safe());
    }

    #[test]
    fn lookup_by_name() {
        assert_eq!(
            SnowflakeLayout::preset("JS_SAFE"),
            Ok(SnowflakeLayout::JS_SAFE)
        );
        assert_eq!(
            SnowflakeLayout::preset("Datacenter-Worker"),
            Ok(SnowflakeLayout::DATACENTER_WORKER)
        );
        let error = SnowflakeLayout::preset("snowflake").unwrap_err();
        assert_eq!(error.code(), "snowflake.unknown_preset");
        assert!(error.to_string().contains("\"snowflake\""));
        assert!(error.to_string().contains("js-safe"));
    }
}
