//! A form's typed values: numbers, dates and web addresses as a visitor types them in their
//! language, the one canonical spelling an answer stores and sends, and that spelling shown
//! back in a reader's language.
//!
//! Canonical spellings, which the answer JSON (and so the API) carries as strings:
//! - a number: the shortest decimal, `800`, `1250.5`, `-3.25` (no exponent, no separators);
//! - a date: ISO 8601, `2027-12-31`;
//! - a checkbox: `yes` when ticked, empty when not;
//! - a web address: as the `url` crate normalises it, `https://example.org/a`.

use crate::i18n::{Lang, Message, tr};

/// Significant digits a number may hold: as many as a 64-bit float keeps exactly, so the
/// comparisons of conditions and bounds see the number typed.
pub const MAX_DIGITS: usize = 15;

/// The longest web address a `(url)` field takes.
pub const MAX_URL: usize = 2000;

/// What a ticked checkbox posts and stores.
pub const TICKED: &str = "yes";

/// Spaces that group digits: the plain one, the no-break space and the narrow no-break space
/// French puts between thousands, and the thin space some keyboards type.
const SPACES: [char; 4] = [' ', '\u{a0}', '\u{202f}', '\u{2009}'];

fn decimal_mark(lang: Lang) -> char {
    match lang {
        Lang::Fr => ',',
        Lang::En => '.',
    }
}

/// A number as typed in `lang`, in its canonical spelling. Both marks are read as decimal
/// (`1250,50` and `1250.50` are one value) and spaces, commas or dots group thousands when they
/// do nothing else (`1 250,50`, `1.250,50`, `1,250.50`). One mark followed by exactly three
/// digits is the one reading that can go either way: the language's decimal mark is decimal
/// (`1,250` is 1.25 in French, `1.250` is 1.25 in English), English groups with a comma
/// (`1,250` is 1250), and a French `1.250` is refused as ambiguous rather than guessed.
pub fn parse_number(text: &str, lang: Lang) -> Result<String, Message> {
    let bad = || Message::new("field-number");
    let text = text.trim();
    let (negative, rest) = match text.chars().next() {
        Some('-' | '\u{2212}') => (true, &text[text.chars().next().map_or(0, char::len_utf8)..]),
        Some('+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest.is_empty()
        || !rest
            .chars()
            .all(|c| c.is_ascii_digit() || c == ',' || c == '.' || SPACES.contains(&c))
        || !rest.starts_with(|c: char| c.is_ascii_digit() || c == ',' || c == '.')
    {
        return Err(bad());
    }
    let marks = rest.matches([',', '.']).count();
    let last = rest.rfind([',', '.']);
    let decimal = match last {
        None => None,
        Some(at) => {
            let mark = rest[at..].chars().next().unwrap_or('.');
            let others = rest.matches(mark).count();
            let after = &rest[at + 1..];
            let before: String = rest[..at].chars().filter(char::is_ascii_digit).collect();
            // Digits right before it: more than three cannot be a group's end.
            let lead = rest[..at].rsplit(SPACES).next().map_or(0, str::len);
            if marks > others {
                // Both marks: the last one is decimal, and it comes once.
                if others > 1 {
                    return Err(bad());
                }
                Some(at)
            } else if others > 1 {
                None
            } else if after.len() != 3
                || before.is_empty()
                || before == "0"
                || lead > 3
                || mark == decimal_mark(lang)
            {
                // It groups nothing, or it is the language's own decimal mark.
                Some(at)
            } else if lang == Lang::En {
                None
            } else {
                return Err(Message::new("field-number-ambiguous")
                    .arg("typed", text)
                    .arg("whole", text.replace('.', ""))
                    .arg("decimal", text.replace('.', ",")));
            }
        }
    };
    let (whole, fraction) = match decimal {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, ""),
    };
    if decimal.is_some() && (fraction.is_empty() || !fraction.chars().all(|c| c.is_ascii_digit())) {
        return Err(bad());
    }
    let groups: Vec<&str> = whole
        .split(|c: char| c == ',' || c == '.' || SPACES.contains(&c))
        .collect();
    let grouped = groups.len() > 1;
    let well_grouped = groups.iter().enumerate().all(|(i, g)| {
        g.chars().all(|c| c.is_ascii_digit())
            && match (grouped, i) {
                (false, _) => true,
                (true, 0) => (1..=3).contains(&g.len()),
                (true, _) => g.len() == 3,
            }
    });
    if !well_grouped || (whole.is_empty() && fraction.is_empty()) {
        return Err(bad());
    }
    let digits: String = groups.concat();
    let whole = digits.trim_start_matches('0');
    let fraction = fraction.trim_end_matches('0');
    if whole.len() + fraction.len() > MAX_DIGITS {
        return Err(Message::new("field-number-digits").arg("max", MAX_DIGITS.to_string()));
    }
    let mut out = String::new();
    if negative && !(whole.is_empty() && fraction.is_empty()) {
        out.push('-');
    }
    out.push_str(if whole.is_empty() { "0" } else { whole });
    if !fraction.is_empty() {
        out.push('.');
        out.push_str(fraction);
    }
    Ok(out)
}

/// A canonical number's parts: sign, whole digits, fraction digits; `None` for any other text
/// (an answer recorded before numbers were stored canonically).
fn canonical_parts(stored: &str) -> Option<(bool, &str, &str)> {
    let (negative, rest) = match stored.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, stored),
    };
    let (whole, fraction) = rest.split_once('.').unwrap_or((rest, ""));
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    (!whole.is_empty()
        && digits(whole)
        && digits(fraction)
        && (rest.contains('.') != fraction.is_empty()))
    .then_some((negative, whole, fraction))
}

/// A canonical number as `lang` writes it: `1 250,5` (a narrow no-break space between
/// thousands) in French, `1,250.5` in English; `None` when `stored` is not canonical.
pub fn show_number(stored: &str, lang: Lang) -> Option<String> {
    written(stored, lang, true)
}

/// A canonical number as a form gives it back to edit: the language's decimal mark, no
/// separators (`1250,5`, `1250.5`), which reads back as the same number.
pub fn typed_number(stored: &str, lang: Lang) -> Option<String> {
    written(stored, lang, false)
}

fn written(stored: &str, lang: Lang, grouped: bool) -> Option<String> {
    let (negative, whole, fraction) = canonical_parts(stored)?;
    let group = match lang {
        Lang::Fr => '\u{202f}',
        Lang::En => ',',
    };
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    for (i, digit) in whole.chars().enumerate() {
        if grouped && i > 0 && (whole.len() - i) % 3 == 0 {
            out.push(group);
        }
        out.push(digit);
    }
    if !fraction.is_empty() {
        out.push(decimal_mark(lang));
        out.push_str(fraction);
    }
    Some(out)
}

/// A bound of a `(number, min..max)` field as a definition and an error write it: the
/// shortest decimal (Rust's `Display` of a float never uses an exponent).
pub fn bound_text(bound: f64) -> String {
    format!("{bound}")
}

/// `0..100000`, `-5.5..5.5`: the inclusive bounds of a number field, min first.
pub fn parse_range(text: &str) -> Option<(f64, f64)> {
    let (min, max) = text.trim().split_once("..")?;
    let read = |s: &str| {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite() && !s.trim().is_empty())
    };
    let (min, max) = (read(min)?, read(max)?);
    (min <= max).then_some((min, max))
}

/// A date as typed in `lang`, as ISO 8601. ISO is read in every language (a date picker posts
/// it); otherwise day first in French (`31/12/2027`), month first in English (`12/31/2027`),
/// with a four-digit year.
pub fn parse_date(text: &str, lang: Lang) -> Result<String, Message> {
    let text = text.trim();
    let example = Message::new("field-date");
    let parts: Vec<&str> = text.split(['/', '.', '-']).collect();
    let number = |s: &str| {
        (!s.is_empty() && s.len() <= 4 && s.chars().all(|c| c.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    let [a, b, c] = parts[..] else {
        return Err(example);
    };
    let iso = a.len() == 4 && text.contains('-');
    let (year, month, day) = if iso {
        (a, b, c)
    } else if c.len() != 4 || text.contains('-') {
        return Err(example);
    } else {
        match lang {
            Lang::Fr => (c, b, a),
            Lang::En => (c, a, b),
        }
    };
    if year.len() != 4 || month.len() > 2 || day.len() > 2 {
        return Err(example);
    }
    let (Some(y), Some(m), Some(d)) = (number(year), number(month), number(day)) else {
        return Err(example);
    };
    if !(1..=12).contains(&m) || d == 0 || d > days_in(y, m) || y == 0 {
        return Err(Message::new("field-date-impossible").arg("typed", text));
    }
    Ok(format!("{y:04}-{m:02}-{d:02}"))
}

fn days_in(year: u32, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// An ISO date as `lang` writes it in full: `31 décembre 2027`, `December 31, 2027`; `None`
/// when `stored` is no ISO date.
pub fn show_date(stored: &str, lang: Lang) -> Option<String> {
    let mut parts = stored.splitn(3, '-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (y, m, d): (u32, u32, u32) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    if !(1..=12).contains(&m) || d == 0 || d > days_in(y, m) {
        return None;
    }
    let month = tr(lang, &format!("month-{m}"), &[]);
    Some(tr(
        lang,
        "date-long",
        &[
            ("day", &d.to_string()),
            ("month", &month),
            ("year", &y.to_string()),
        ],
    ))
}

/// A web address a visitor gave, normalised; only absolute `http` and `https` addresses, with
/// no user name or password in them (which could pass one site off as another), are taken.
pub fn parse_url(text: &str) -> Result<String, Message> {
    let text = text.trim();
    let refused = || Message::new("field-url");
    if text.chars().count() > MAX_URL {
        return Err(Message::new("field-too-long").arg("max", MAX_URL.to_string()));
    }
    let url = url::Url::parse(text).map_err(|_| refused())?;
    if !matches!(url.scheme(), "http" | "https")
        || url.host_str().is_none_or(str::is_empty)
        || !url.username().is_empty()
        || url.password().is_some()
    {
        return Err(refused());
    }
    let normalised = String::from(url);
    if normalised.len() > MAX_URL {
        return Err(Message::new("field-too-long").arg("max", MAX_URL.to_string()));
    }
    Ok(normalised)
}

/// A stored address that may be a link's `href`: one `parse_url` takes as it is. An answer
/// recorded before addresses were checked shows as text.
pub fn link_of(stored: &str) -> Option<String> {
    parse_url(stored).ok().filter(|u| u == stored)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(text: &str, lang: Lang) -> Result<String, String> {
        parse_number(text, lang).map_err(|m| m.id.to_string())
    }

    #[test]
    fn numbers_are_stored_as_their_shortest_decimal() {
        for lang in Lang::ALL {
            for typed in [
                "1 250,50",
                "1\u{a0}250,50",
                "1\u{202f}250,50",
                "1250,50",
                "1250.50",
                "1.250,50",
                "1,250.50",
                " +1250.5 ",
            ] {
                assert_eq!(
                    number(typed, lang).as_deref(),
                    Ok("1250.5"),
                    "{typed} {lang:?}"
                );
            }
            for (typed, stored) in [
                ("800", "800"),
                ("0800", "800"),
                ("-3,25", "-3.25"),
                ("\u{2212}3.25", "-3.25"),
                ("-0", "0"),
                ("0,5", "0.5"),
                (",5", "0.5"),
                ("0.250", "0.25"),
                ("1 000 000", "1000000"),
                ("1.000.000", "1000000"),
                ("1,000,000", "1000000"),
                ("12,5", "12.5"),
            ] {
                assert_eq!(
                    number(typed, lang).as_deref(),
                    Ok(stored),
                    "{typed} {lang:?}"
                );
            }
            for typed in [
                "",
                "abc",
                "1e5",
                "12 34",
                "1 2345",
                "1,2,3",
                "1,250.5.0",
                "1.",
                "--1",
                "1-",
                "NaN",
                "inf",
                "1 250 , 5",
                "1.250,5,0",
            ] {
                assert!(number(typed, lang).is_err(), "{typed} {lang:?}");
            }
        }
        // One mark and three digits: each language's own reading, or a refusal.
        assert_eq!(number("1,250", Lang::En).as_deref(), Ok("1250"));
        assert_eq!(number("1.250", Lang::En).as_deref(), Ok("1.25"));
        assert_eq!(number("1,250", Lang::Fr).as_deref(), Ok("1.25"));
        assert_eq!(number("12345.678", Lang::Fr).as_deref(), Ok("12345.678"));
        assert_eq!(number("12345,678", Lang::En).as_deref(), Ok("12345.678"));
        assert_eq!(
            number("1 234.567", Lang::Fr),
            Err("field-number-ambiguous".into())
        );
        assert_eq!(
            number("1.250", Lang::Fr),
            Err("field-number-ambiguous".into())
        );
        assert_eq!(
            number("1234567890123456", Lang::En),
            Err("field-number-digits".into())
        );
    }

    #[test]
    fn numbers_are_shown_in_the_readers_language() {
        assert_eq!(show_number("1250.5", Lang::Fr).unwrap(), "1\u{202f}250,5");
        assert_eq!(show_number("1250.5", Lang::En).unwrap(), "1,250.5");
        assert_eq!(show_number("-1234567", Lang::En).unwrap(), "-1,234,567");
        assert_eq!(show_number("800", Lang::Fr).unwrap(), "800");
        assert_eq!(typed_number("1250.5", Lang::Fr).unwrap(), "1250,5");
        assert_eq!(typed_number("1250.5", Lang::En).unwrap(), "1250.5");
        assert_eq!(show_number("1 250,50", Lang::En), None);
        // What is shown reads back as the same number in its language.
        for lang in Lang::ALL {
            for stored in ["1250.125", "-0.5", "1000000", "3"] {
                let shown = show_number(stored, lang).unwrap();
                assert_eq!(number(&shown, lang).as_deref(), Ok(stored), "{shown}");
                let typed = typed_number(stored, lang).unwrap();
                assert_eq!(number(&typed, lang).as_deref(), Ok(stored), "{typed}");
            }
        }
    }

    #[test]
    fn ranges_are_min_then_max() {
        assert_eq!(parse_range("0..100000"), Some((0.0, 100000.0)));
        assert_eq!(parse_range(" -5.5 .. 2.25 "), Some((-5.5, 2.25)));
        for bad in ["5..1", "0..", "..1", "a..b", "0-100", "0..inf", "NaN..1"] {
            assert_eq!(parse_range(bad), None, "{bad}");
        }
        assert_eq!(bound_text(100000.0), "100000");
        assert_eq!(bound_text(-3.25), "-3.25");
    }

    #[test]
    fn dates_are_read_in_the_visitors_order_and_stored_as_iso() {
        let date = |t: &str, l: Lang| parse_date(t, l).map_err(|m| m.id.to_string());
        assert_eq!(date("31/12/2027", Lang::Fr).as_deref(), Ok("2027-12-31"));
        assert_eq!(date("1/2/2027", Lang::Fr).as_deref(), Ok("2027-02-01"));
        assert_eq!(date("12/31/2027", Lang::En).as_deref(), Ok("2027-12-31"));
        assert_eq!(date("2/1/2027", Lang::En).as_deref(), Ok("2027-02-01"));
        for lang in Lang::ALL {
            assert_eq!(date("2027-12-31", lang).as_deref(), Ok("2027-12-31"));
            assert_eq!(date("2028-02-29", lang).as_deref(), Ok("2028-02-29"));
            assert_eq!(
                date("2027-02-29", lang),
                Err("field-date-impossible".into())
            );
            for bad in [
                "",
                "tomorrow",
                "31/12/27",
                "2027/12",
                "12-31-2027",
                "2027-12-31-1",
            ] {
                assert_eq!(date(bad, lang), Err("field-date".into()), "{bad}");
            }
        }
        assert_eq!(
            date("31/02/2027", Lang::Fr),
            Err("field-date-impossible".into())
        );
        assert_eq!(
            date("31/12/2027", Lang::En),
            Err("field-date-impossible".into())
        );
        assert_eq!(
            date("1900-02-29", Lang::En),
            Err("field-date-impossible".into())
        );
        assert_eq!(
            show_date("2027-12-31", Lang::Fr).unwrap(),
            "31 décembre 2027"
        );
        assert_eq!(
            show_date("2027-12-31", Lang::En).unwrap(),
            "December 31, 2027"
        );
        assert_eq!(show_date("31/12/2027", Lang::En), None);
    }

    #[test]
    fn only_absolute_web_addresses_are_taken_and_normalised() {
        assert_eq!(
            parse_url(" HTTPS://Example.ORG ").unwrap(),
            "https://example.org/"
        );
        assert_eq!(
            parse_url("http://example.org/a b?q=1").unwrap(),
            "http://example.org/a%20b?q=1"
        );
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "/relative/path",
            "example.org",
            "//example.org/x",
            "ftp://example.org/",
            "https://user:pass@example.org/",
            "http://",
            "mailto:a@example.org",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
        let long = format!("https://example.org/{}", "a".repeat(MAX_URL));
        assert_eq!(parse_url(&long).unwrap_err().id, "field-too-long");
        assert_eq!(
            link_of("https://example.org/").as_deref(),
            Some("https://example.org/")
        );
        assert_eq!(link_of("javascript:alert(1)"), None);
    }
}
