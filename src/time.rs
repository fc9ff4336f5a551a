//! Dates for people: Unix seconds shown as UTC, without a date crate for one function.

/// `2026-11-29 16:43 UTC`
pub fn format_utc(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        secs / 3600,
        secs % 3600 / 60
    )
}

/// `2026-11-29T16:43:00Z`, for a `<time datetime>` a script shows in the reader's own zone.
pub fn format_iso(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// A moment's UTC calendar date and time of day: `[year, month, day, hour, minute]`, for
/// words a language writes its own way (`domain::mail::compose::date_words`).
pub fn civil_utc(unix: i64) -> [i64; 5] {
    let secs = unix.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(unix.div_euclid(86_400));
    [y, i64::from(m), i64::from(d), secs / 3600, secs % 3600 / 60]
}

/// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian calendar).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Parses a lifetime such as `3600`, `90s`, `30m`, `12h` or `7d` into seconds.
pub fn parse_duration(s: &str) -> Option<u64> {
    let s = s.trim();
    let (digits, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: u64 = digits.parse().ok()?;
    let factor = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return None,
    };
    n.checked_mul(factor)
}

/// A lifetime in the largest unit that writes it whole, as `parse_duration` reads it back:
/// `7d`, `12h`, `30m`, `90` (seconds).
pub fn format_duration(secs: u64) -> String {
    match secs {
        0 => "0".to_owned(),
        s if s % 86_400 == 0 => format!("{}d", s / 86_400),
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => s.to_string(),
    }
}

/// The Unix second a `YYYY-MM-DD` date starts at (UTC), or `None` for anything else.
pub fn parse_day(text: &str) -> Option<i64> {
    let mut parts = text.trim().splitn(3, '-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let d: i64 = parts.next()?.parse().ok()?;
    if !(1..=9999).contains(&y) || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    // Howard Hinnant's days_from_civil, the inverse of `civil_from_days`.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    // 31 February is no day: the date must come back as it was written.
    let (cy, cm, cd) = civil_from_days(days);
    let y = if m <= 2 { y + 1 } else { y };
    ((cy, cm, cd) == (y, m as u32, d as u32)).then_some(days * 86_400)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lifetime_is_written_in_its_largest_whole_unit_and_reads_back() {
        for (secs, text) in [
            (604_800, "7d"),
            (43_200, "12h"),
            (1800, "30m"),
            (90, "90"),
            (0, "0"),
        ] {
            assert_eq!(format_duration(secs), text);
            assert_eq!(parse_duration(text), Some(secs));
        }
    }

    #[test]
    fn formats_known_dates() {
        assert_eq!(format_utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(format_utc(1_795_970_580), "2026-11-29 16:43 UTC");
        assert_eq!(format_utc(951_782_400), "2000-02-29 00:00 UTC");
    }

    #[test]
    fn parses_lifetimes() {
        assert_eq!(parse_duration("90"), Some(90));
        assert_eq!(parse_duration("30m"), Some(1800));
        assert_eq!(parse_duration("7d"), Some(604_800));
        assert_eq!(parse_duration("1w"), None);
        assert_eq!(parse_duration("-5m"), None);
        assert_eq!(parse_duration(""), None);
    }

    #[test]
    fn a_day_is_read_back_as_written_or_not_at_all() {
        assert_eq!(super::parse_day("1970-01-01"), Some(0));
        assert_eq!(super::parse_day("2026-12-06"), Some(1_796_515_200));
        assert_eq!(
            super::format_iso(super::parse_day("2024-02-29").unwrap()),
            "2024-02-29T00:00:00Z"
        );
        for bad in ["2026-02-30", "2026-13-01", "yesterday", "2026-1", ""] {
            assert_eq!(super::parse_day(bad), None, "{bad}");
        }
    }
}
