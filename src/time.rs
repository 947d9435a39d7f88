//! Time as the protocol shows it: RFC 3339 in UTC, without a calendar crate for one format.

use std::time::SystemTime;

/// A duration in milliseconds, to a tenth: what the fire response, the log and the record show of how
/// long a hook or a fire took (enough to read, short to write).
pub fn tenths_of_ms(duration: std::time::Duration) -> f64 {
    (duration.as_secs_f64() * 10_000.0).round() / 10.0
}

/// The current time as RFC 3339 in UTC, to the second (`2026-11-30T08:01:02Z`).
pub fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

fn rfc3339(time: SystemTime) -> String {
    let mut text = rfc3339_millis(time);
    text.truncate(19);
    text.push('Z');
    text
}

/// `time` as RFC 3339 in UTC, to the millisecond (`2026-11-30T08:01:02.345Z`): always 24 characters,
/// so that such times sort as strings in the order they happened (the record's `time`).
pub fn rfc3339_millis(time: SystemTime) -> String {
    let since = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let (seconds, millis) = (since.as_secs(), since.subsec_millis());
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// An RFC 3339 time (`2026-12-01T09:30:00Z`, `2026-12-01T10:30:00.5+01:00`; a space for the `T` is taken
/// too) as a [`SystemTime`]; `None` when it is not one, or before 1970. For `hookd log --since`.
pub fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let text = text.trim();
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        part.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let bytes = text.as_bytes();
    if bytes.len() < 20
        || bytes[4] != b'-'
        || bytes[7] != b'-'
        || !matches!(bytes[10], b'T' | b't' | b' ')
        || bytes[13] != b':'
        || bytes[16] != b':'
    {
        return None;
    }
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &text[19..];
    let mut nanos = 0u32;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let kept = &fraction[..digits.min(9)];
        nanos = kept.parse::<u32>().ok()? * 10u32.pow(9 - kept.len() as u32);
        rest = &fraction[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let zone = rest.get(1..)?;
            let (h, m) = zone.split_once(':')?;
            if h.len() != 2 || m.len() != 2 {
                return None;
            }
            let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
            if h > 23 || m > 59 {
                return None;
            }
            sign * (h * 3600 + m * 60)
        }
    };
    let days = days_from_civil(year, month as u32, day as u32);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    let seconds = u64::try_from(seconds).ok()?;
    Some(SystemTime::UNIX_EPOCH + std::time::Duration::new(seconds, nanos))
}

/// A proleptic Gregorian date to days since 1970-01-01 (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let month = i64::from(month);
    let doy = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_rfc3339_in_utc() {
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_026_862);
        assert_eq!(rfc3339(t), "2026-11-30T08:21:02Z");
        let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00Z");
        let millis = t + Duration::from_micros(45_678);
        assert_eq!(rfc3339(millis), "2026-11-30T08:21:02Z");
        assert_eq!(rfc3339_millis(millis), "2026-11-30T08:21:02.045Z");
    }

    #[test]
    fn parses_rfc3339_back() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_796_026_862_045);
        assert_eq!(parse_rfc3339("2026-11-30T08:21:02.045Z"), Some(t));
        assert_eq!(parse_rfc3339(&rfc3339_millis(t)), Some(t));
        assert_eq!(
            parse_rfc3339("2026-11-30 09:21:02.045+01:00"),
            Some(t),
            "an offset is taken away"
        );
        assert_eq!(
            parse_rfc3339("2000-02-29T00:00:00Z"),
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400))
        );
        for bad in [
            "",
            "2026-11-30",
            "2026-11-30T08:21:02",
            "2026-13-30T08:21:02Z",
            "2026-11-30T08:21:02.Z",
            "2026-11-30T08:21:02+1:00",
            "1969-12-31T23:59:59Z",
            "yesterday",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
