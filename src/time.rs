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
    Stamps::default().millis(time).to_string()
}

/// Times as [`rfc3339_millis`] writes them, for one who writes many a second (the journal's writer): the
/// date and the second are worked out once per second, and each time after it only its milliseconds
/// are put in: formatting every time whole was among the writer's top costs under load.
#[derive(Debug, Default)]
pub struct Stamps {
    /// The second `text` holds, since the epoch; `None` before the first.
    second: Option<u64>,
    /// `2026-11-30T08:01:02.345Z`: the last time written.
    text: [u8; 24],
    /// `2026-11-30T08:01:02.`: the second `text` holds, as text, for [`Stamps::write_millis`].
    second_text: String,
}

impl Stamps {
    /// `time` as RFC 3339 in UTC to the millisecond: 24 characters, borrowed until the next call.
    pub fn millis(&mut self, time: SystemTime) -> &str {
        let since = time
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let (seconds, millis) = (since.as_secs(), since.subsec_millis());
        self.write_second(seconds);
        self.text[20] = b'0' + (millis / 100) as u8;
        self.text[21] = b'0' + (millis / 10 % 10) as u8;
        self.text[22] = b'0' + (millis % 10) as u8;
        // Only ASCII digits and punctuation were written.
        std::str::from_utf8(&self.text).unwrap_or_default()
    }

    /// [`Stamps::millis`] written into `into` (emptied first), with no check of the text's bytes (the
    /// journal's writer writes one per record).
    pub fn write_millis(&mut self, time: SystemTime, into: &mut String) {
        let since = time
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let (seconds, millis) = (since.as_secs(), since.subsec_millis());
        self.write_second(seconds);
        into.clear();
        into.push_str(&self.second_text);
        for digit in [millis / 100, millis / 10 % 10, millis % 10] {
            into.push(char::from(b'0' + digit as u8));
        }
        into.push('Z');
    }

    /// The date and the second of `seconds` since the epoch written, unless they are already.
    fn write_second(&mut self, seconds: u64) {
        if self.second != Some(seconds) {
            let (days, rest) = (seconds / 86_400, seconds % 86_400);
            let (year, month, day) = civil_from_days(days as i64);
            // A year past 9999 has no place in four digits: shown as 9999, as `{:04}` would not.
            let year = year.clamp(0, 9999) as u32;
            let fields = [
                (0, year / 100),
                (2, year % 100),
                (5, month),
                (8, day),
                (11, (rest / 3600) as u32),
                (14, (rest % 3600 / 60) as u32),
                (17, (rest % 60) as u32),
            ];
            self.text = *b"0000-00-00T00:00:00.000Z";
            for (at, value) in fields {
                self.text[at] = b'0' + (value / 10) as u8;
                self.text[at + 1] = b'0' + (value % 10) as u8;
            }
            self.second = Some(seconds);
            self.second_text.clear();
            // Only ASCII digits and punctuation were written.
            self.second_text
                .push_str(std::str::from_utf8(&self.text[..20]).unwrap_or_default());
        }
    }
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
    fn stamps_write_what_formatting_each_time_whole_writes() {
        let mut stamps = Stamps::default();
        let start = SystemTime::UNIX_EPOCH + Duration::from_millis(1_796_026_861_990);
        // Across seconds, a day, a month, a leap day and a year; each written as a whole format would.
        let whole = |t: SystemTime| {
            let since = t.duration_since(SystemTime::UNIX_EPOCH).unwrap();
            let (s, ms) = (since.as_secs(), since.subsec_millis());
            let (y, mo, d) = civil_from_days((s / 86_400) as i64);
            let rest = s % 86_400;
            format!(
                "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
                rest / 3600,
                rest % 3600 / 60,
                rest % 60
            )
        };
        let mut times: Vec<SystemTime> = (0..3000)
            .map(|i| start + Duration::from_millis(i * 7))
            .collect();
        for base in [0u64, 951_782_399, 951_868_799, 1_798_761_599, 4_102_444_799] {
            let at = SystemTime::UNIX_EPOCH + Duration::from_secs(base);
            times.extend([
                at,
                at + Duration::from_millis(999),
                at + Duration::from_millis(1000),
            ]);
        }
        // Going back in time (a clock set back) is written as well.
        times.push(start);
        let mut written = String::from("left over");
        let mut other = Stamps::default();
        for t in times {
            assert_eq!(stamps.millis(t), whole(t));
            assert_eq!(rfc3339_millis(t), whole(t));
            other.write_millis(t, &mut written);
            assert_eq!(written, whole(t));
        }
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
