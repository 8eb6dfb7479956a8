//! Times and durations as people read and write them: RFC 3339 UTC
//! timestamps, `15m`-style durations, and lifetimes in days and years.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::CliError;

const MILLIS_PER_DAY: u64 = 86_400_000;

/// The current Unix time in milliseconds (0 if the clock reads before 1970).
pub fn now_unix_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
        })
}

/// A Unix millisecond as RFC 3339 UTC with milliseconds, e.g.
/// `2022-02-22T19:22:22.000Z`. Years past 9999, which RFC 3339 cannot
/// write, use ISO 8601's expanded form with a `+` sign (`+10889-08-02T…`).
pub fn rfc3339(unix_millis: u64) -> String {
    let days = unix_millis / MILLIS_PER_DAY;
    let in_day = unix_millis % MILLIS_PER_DAY;
    let (year, month, day) = civil_from_days(days);
    let year = if year > 9999 {
        format!("+{year}")
    } else {
        format!("{year:04}")
    };
    format!(
        "{year}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    )
}

/// The proleptic Gregorian (year, month, day) of `days` since 1970-01-01,
/// by Howard Hinnant's `civil_from_days` for non-negative day counts.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // Shift the epoch to 0000-03-01 so leap days end each 400-year era.
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153; // 0 = March
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// Reads a duration such as `15m`, `1h`, `3600s`, `500ms` or `7d` (a whole
/// number and one unit) as milliseconds.
pub fn parse_duration(text: &str) -> Result<u64, CliError> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let scale = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => MILLIS_PER_DAY,
        _ => {
            return Err(CliError::usage(format!(
                "invalid duration {text:?}: expected a whole number and a unit (ms, s, m, h or d), e.g. 15m"
            )));
        }
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|count| count.checked_mul(scale))
        .ok_or_else(|| {
            CliError::usage(format!(
                "invalid duration {text:?}: expected a whole number and a unit (ms, s, m, h or d), e.g. 15m"
            ))
        })
}

/// A span of milliseconds for people: `24 750 days (about 67.8 years)`
/// from a day up, hours, minutes and seconds below.
pub fn human_span(millis: u64) -> String {
    let days = millis / MILLIS_PER_DAY;
    if days >= 365 {
        // Display only: the float's rounding cannot mislead at one decimal.
        let years = millis as f64 / (365.2425 * MILLIS_PER_DAY as f64);
        return format!("{days} days (about {years:.1} years)");
    }
    if days >= 1 {
        return format!("{days} days {}h", millis / 3_600_000 % 24);
    }
    let seconds = millis / 1000;
    format!(
        "{}h {:02}m {:02}.{:03}s",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60,
        millis % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(0x017F_22E2_79B0), "2022-02-22T19:22:22.000Z");
        assert_eq!(rfc3339(1_735_689_600_000), "2025-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(3_934_712_855_552), "2094-09-07T15:47:35.552Z");
        assert_eq!(rfc3339(1_288_834_974_657), "2010-11-04T01:42:54.657Z");
        // 2000-02-29 (a leap day in a year divisible by 400), the day after.
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(951_868_799_999), "2000-02-29T23:59:59.999Z");
        assert_eq!(rfc3339(253_402_300_799_999), "9999-12-31T23:59:59.999Z");
        assert_eq!(rfc3339(253_402_300_800_000), "+10000-01-01T00:00:00.000Z");
        assert!(rfc3339(u64::MAX).starts_with('+'));
    }

    #[test]
    fn every_day_follows_the_previous_one() {
        let days_in = |y: u64, m: u64| match m {
            2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let mut expected = (1970, 1, 1);
        for days in 0..200_000 {
            assert_eq!(civil_from_days(days), expected, "day {days}");
            let (y, m, d) = expected;
            expected = if d < days_in(y, m) {
                (y, m, d + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("15m").unwrap(), 900_000);
        assert_eq!(parse_duration("1h").unwrap(), 3_600_000);
        assert_eq!(parse_duration("3600s").unwrap(), 3_600_000);
        assert_eq!(parse_duration("250ms").unwrap(), 250);
        assert_eq!(parse_duration("2d").unwrap(), 172_800_000);
        for bad in [
            "",
            "15",
            "m",
            "1.5h",
            "-1s",
            "1 h",
            "1H",
            "99999999999999999999d",
        ] {
            assert_eq!(parse_duration(bad).unwrap_err().exit(), 2, "{bad:?}");
        }
    }

    #[test]
    fn spans() {
        assert_eq!(human_span(1_500), "0h 00m 01.500s");
        assert_eq!(human_span(90 * 60_000), "1h 30m 00.000s");
        assert_eq!(human_span(3 * MILLIS_PER_DAY + 3_600_000), "3 days 1h");
        assert_eq!(human_span(1 << 41), "25451 days (about 69.7 years)");
    }
}
