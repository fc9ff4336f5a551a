//! The line format of a definition, which administrators edit in one text area and the CLI
//! prints: parsing it (every error names its line) and writing it back.

use std::collections::BTreeMap;

use super::fields::{FileRule, MAX_FILE_FIELDS, parse_options, slug, split_outside_parens};
use super::translations::{translate, translation_line};
use super::values;
use super::{
    Definition, Expires, Field, FieldKind, Interaction, MAX_DEFINITION_CHARS, MAX_DELAY,
    MAX_FIELDS, MAX_REMINDERS, MAX_STEPS, MIN_EXPIRES_AFTER, MIN_REMIND_AFTER, Participant, Remind,
    Step, format_amount,
};
use super::{condition, route};
use crate::i18n::Message;

impl Definition {
    /// Parses the line format; every error names its line.
    ///
    /// ```text
    /// form: Supplier details | Company*, Email* (email), Quantity (number), Notes (long)
    /// review[legal,finance]: Approve the contract
    /// payment@payer: Pay the order | 49.90 EUR
    /// ```
    ///
    /// `@name` names the participant who answers a step; `[a,b]` makes parallel branches, each a
    /// participant. A step that names none goes to the default participant.
    pub fn parse(text: &str) -> Result<Self, Message> {
        Self::parse_all(text).map_err(|mut errors| errors.swap_remove(0))
    }

    /// `parse`, saying what is wrong with every line rather than the first (the definition
    /// editor shows them all); never an empty list of errors.
    pub fn parse_all(text: &str) -> Result<Self, Vec<Message>> {
        if text.chars().count() > MAX_DEFINITION_CHARS {
            return Err(vec![
                Message::new("definition-too-large").arg("max", MAX_DEFINITION_CHARS.to_string()),
            ]);
        }
        let mut steps: Vec<Step> = Vec::new();
        // Each step's line, for what is checked once every step is known.
        let mut lines: Vec<usize> = Vec::new();
        let mut notify: Vec<Participant> = Vec::new();
        let mut notify_line = 0;
        let mut keep: Option<u32> = None;
        let mut errors = Vec::new();
        // Whether the last step line parsed: a translation under a bad step is not judged.
        let mut last_ok = false;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(period) = line.strip_prefix("keep:") {
                match keep_days(period) {
                    Some(days) if keep.is_none() => keep = Some(days),
                    _ => errors
                        .push(Message::new("definition-keep").arg("line", (n + 1).to_string())),
                }
                continue;
            }
            if let Some(list) = line.strip_prefix("notify:") {
                let named: Option<Vec<Participant>> = list
                    .split(',')
                    .map(|p| Participant::parse(p.trim()))
                    .collect();
                match named {
                    Some(named) if notify.is_empty() && !named.is_empty() => {
                        notify = named;
                        notify_line = n + 1;
                    }
                    _ => errors
                        .push(Message::new("definition-notify").arg("line", (n + 1).to_string())),
                }
                continue;
            }
            if let Some((lang, words)) = translation_line(line) {
                match steps.last_mut() {
                    Some(step) if last_ok => {
                        if let Err(e) = translate(step, lang, words, n + 1) {
                            errors.push(e);
                        }
                    }
                    Some(_) => {}
                    None => errors.push(
                        Message::new("definition-translation-first")
                            .arg("line", (n + 1).to_string()),
                    ),
                }
                continue;
            }
            lines.push(n + 1);
            match parse_step(n + 1, line, &steps) {
                Ok(step) => {
                    steps.push(step);
                    last_ok = true;
                }
                Err(e) => {
                    errors.push(e);
                    // Keeps the step count right for later lines' `show` numbers.
                    steps.push(Step {
                        title: String::new(),
                        branches: Vec::new(),
                        participant: Participant::default(),
                        interaction: Interaction::Review,
                        shows: Vec::new(),
                        translations: BTreeMap::new(),
                        help: String::new(),
                        remind: None,
                        expires: None,
                        only_if: Vec::new(),
                        quorum: None,
                        routes: route::Routes::default(),
                        forward: false,
                        verify_email: false,
                    });
                    last_ok = false;
                }
            }
        }
        // A route may name a later step, and a deadline a participant of a later one: known to
        // exist only now.
        let everyone: Vec<Participant> = steps
            .iter()
            .flat_map(|s| s.participants().iter().cloned())
            .collect();
        if notify.iter().any(|p| !everyone.contains(p)) {
            errors.push(Message::new("definition-notify").arg("line", notify_line.to_string()));
        }
        for (step, line) in steps.iter().zip(&lines) {
            if let Some(who) = step.expires.as_ref().and_then(|e| e.then_to.as_ref()) {
                if !step.branches.is_empty() || *who == step.participant || !everyone.contains(who)
                {
                    errors.push(
                        Message::new("definition-expires-to")
                            .arg("line", line.to_string())
                            .arg("participant", who.as_str()),
                    );
                }
            }
            if step
                .routes
                .targets()
                .any(|t| matches!(t, route::Target::Step(i) if i >= steps.len()))
            {
                errors.push(Message::new("definition-route-go").arg("line", line.to_string()));
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        if steps.is_empty() {
            return Err(vec![Message::new("definition-empty")]);
        }
        if steps.len() > MAX_STEPS {
            return Err(vec![
                Message::new("definition-too-long").arg("max", MAX_STEPS.to_string()),
            ]);
        }
        Ok(Self {
            steps,
            notify,
            keep_days: keep,
        })
    }

    /// The line format of this definition; `parse(to_text())` gives it back.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (index, step) in self.steps.iter().enumerate() {
            out.push_str(step.interaction.kind());
            if !step.branches.is_empty() {
                let names: Vec<&str> = step.branches.iter().map(Participant::as_str).collect();
                out.push('[');
                out.push_str(&names.join(","));
                out.push(']');
            } else if !step.participant.is_default() {
                out.push('@');
                out.push_str(step.participant.as_str());
            }
            out.push_str(": ");
            out.push_str(&step.title);
            match &step.interaction {
                Interaction::Form { fields } => {
                    out.push_str(" | ");
                    let fields: Vec<String> = fields.iter().map(Field::to_text).collect();
                    out.push_str(&fields.join(", "));
                }
                Interaction::Review => {}
                Interaction::Payment {
                    amount_cents,
                    currency,
                } => {
                    out.push_str(&format!(" | {} {currency}", format_amount(*amount_cents)));
                }
            }
            if !step.shows.is_empty() {
                let numbers: Vec<String> = step.shows.iter().map(|i| (i + 1).to_string()).collect();
                out.push_str(" | show ");
                out.push_str(&numbers.join(", "));
            }
            if let Some(r) = step.remind {
                out.push_str(&format!(
                    " | remind {} x{}",
                    crate::time::format_duration(r.after),
                    r.times
                ));
            }
            if let Some(e) = &step.expires {
                out.push_str(&format!(
                    " | expires {}",
                    crate::time::format_duration(e.after)
                ));
                if e.then_next {
                    out.push_str(" then next");
                }
                if let Some(who) = &e.then_to {
                    out.push_str(" then to ");
                    out.push_str(who.as_str());
                }
            }
            if step.forward {
                out.push_str(" | forward");
            }
            if step.verify_email {
                out.push_str(" | verify email");
            }
            match step.quorum {
                Some(1) => out.push_str(" | any"),
                Some(k) => out.push_str(&format!(" | {k} of {}", step.branches.len())),
                None => {}
            }
            if !step.only_if.is_empty() {
                out.push_str(" | only if ");
                out.push_str(&condition::to_text(&step.only_if, &self.steps));
            }
            out.push_str(&route::to_text(&step.routes, index, &self.steps));
            if !step.help.is_empty() {
                out.push_str(" | help: ");
                out.push_str(&step.help);
            }
            out.push('\n');
            for (lang, text) in &step.translations {
                out.push_str("  ");
                out.push_str(lang);
                out.push_str(": ");
                out.push_str(&text.title);
                if !text.labels.is_empty() {
                    let labels: Vec<String> = text
                        .labels
                        .iter()
                        .enumerate()
                        .map(
                            |(i, l)| match text.options.get(i).filter(|o| !o.is_empty()) {
                                Some(options) => format!("{l} ({})", options.join(" / ")),
                                None => l.clone(),
                            },
                        )
                        .collect();
                    out.push_str(" | ");
                    out.push_str(&labels.join(", "));
                }
                if !text.help.is_empty() {
                    out.push_str(" | help: ");
                    out.push_str(&text.help);
                }
                out.push('\n');
            }
        }
        if !self.notify.is_empty() {
            let names: Vec<&str> = self.notify.iter().map(Participant::as_str).collect();
            out.push_str(&format!("notify: {}\n", names.join(", ")));
        }
        match self.keep_days {
            Some(0) => out.push_str("keep: forever\n"),
            Some(days) => out.push_str(&format!("keep: {days} days\n")),
            None => {}
        }
        out
    }
}

/// A `keep:` line's period: `365 days` (1 to 36500, `1 day` too), or `forever` (0).
fn keep_days(period: &str) -> Option<u32> {
    let period = period.trim();
    if period == "forever" {
        return Some(0);
    }
    let (number, unit) = period.split_once(char::is_whitespace)?;
    let days: u32 = number.parse().ok()?;
    let max = crate::domain::settings::MAX_RETENTION_DAYS as u32;
    (matches!(unit.trim(), "days" | "day") && (1..=max).contains(&days)).then_some(days)
}

/// A form's fields, or what is wrong with them (the caller adds the line).
fn parse_fields(details: &str) -> Result<Vec<Field>, Message> {
    let mut fields: Vec<Field> = Vec::new();
    for spec in split_outside_parens(details)
        .into_iter()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let mut options = Vec::new();
        let mut file = None;
        let mut range = None;
        let named = |id: &'static str, label: &str| {
            Message::new(id).arg("field", label.trim().trim_end_matches('*').trim_end())
        };
        let (label, kind) = match spec.split_once('(') {
            Some((label, kind)) => {
                let kind = kind
                    .strip_suffix(')')
                    .ok_or_else(|| named("definition-field", label))?
                    .trim();
                match kind.strip_prefix("choice:") {
                    Some(list) => {
                        options = parse_options(list)
                            .ok_or_else(|| named("definition-options", label))?;
                        (label.trim(), FieldKind::Choice)
                    }
                    None => {
                        let mut args = kind.split(',').map(str::trim);
                        let name = args.next().unwrap_or("");
                        let args: Vec<&str> = args.collect();
                        let kind = FieldKind::parse(name).ok_or_else(|| {
                            named("definition-field-kind", label)
                                .arg("kind", name)
                                .arg("allowed", FieldKind::names())
                        })?;
                        if kind == FieldKind::File {
                            file = Some(FileRule::parse(&args).ok_or_else(|| {
                                named("definition-file", label)
                                    .arg("kinds", crate::domain::files::Kind::names())
                            })?);
                        } else if kind == FieldKind::Number && args.len() == 1 {
                            range = Some(values::parse_range(args[0]).ok_or_else(|| {
                                named("definition-range", label).arg("given", args[0])
                            })?);
                        } else if !args.is_empty() {
                            return Err(named("definition-field", label));
                        }
                        (label.trim(), kind)
                    }
                }
            }
            None => (spec, FieldKind::Text),
        };
        let (label, required) = match label.strip_suffix('*') {
            Some(l) => (l.trim(), true),
            None => (label, false),
        };
        let name = slug(label);
        if name.is_empty() || label.chars().count() > 100 {
            return Err(named("definition-field", label));
        }
        if fields.iter().any(|f| f.name == name) {
            return Err(named("definition-field-twice", label));
        }
        fields.push(Field {
            name,
            label: label.to_owned(),
            kind,
            required,
            options,
            file,
            range,
        });
    }
    if fields.is_empty() {
        return Err(Message::new("definition-no-fields"));
    }
    if fields.iter().filter(|f| f.kind == FieldKind::File).count() > MAX_FILE_FIELDS {
        return Err(Message::new("definition-files").arg("max", MAX_FILE_FIELDS.to_string()));
    }
    Ok(fields)
}

fn parse_amount(details: &str) -> Option<(i64, String)> {
    let (amount, currency) = details.split_once(' ')?;
    let currency = currency.trim();
    if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let (units, cents) = match amount.split_once(['.', ',']) {
        Some((u, c)) if c.len() == 2 => (u, c),
        Some(_) => return None,
        None => (amount, "00"),
    };
    if units.is_empty() || !units.bytes().all(|b| b.is_ascii_digit()) || units.len() > 9 {
        return None;
    }
    let cents: i64 = cents
        .parse()
        .ok()
        .filter(|_| cents.bytes().all(|b| b.is_ascii_digit()))?;
    let total = units.parse::<i64>().ok()? * 100 + cents;
    (total > 0).then(|| (total, currency.to_owned()))
}

/// One line of a definition as a step, or what is wrong with it (`line` counts from 1).
fn parse_step(line_number: usize, line: &str, earlier_steps: &[Step]) -> Result<Step, Message> {
    let earlier = earlier_steps.len();
    let at = |id: &'static str| Message::new(id).arg("line", line_number.to_string());
    let (head, rest) = line
        .split_once(':')
        .ok_or_else(|| at("definition-no-colon"))?;
    let (head, participant) = match head.split_once('@') {
        Some((head, who)) => (
            head,
            Participant::parse(who.trim()).ok_or_else(|| at("definition-participant"))?,
        ),
        None => (head, Participant::default()),
    };
    let (kind, branches) = match head.trim().split_once('[') {
        Some(_) if !participant.is_default() => {
            return Err(at("definition-participant-and-branches"));
        }
        Some((kind, list)) => {
            let list = list
                .strip_suffix(']')
                .ok_or_else(|| at("definition-branches"))?;
            let branches = list
                .split(',')
                .map(|b| Participant::parse(b.trim()))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| at("definition-branch-name"))?;
            let mut unique = branches.clone();
            unique.sort();
            unique.dedup();
            if unique.len() != branches.len() {
                return Err(at("definition-branch-twice"));
            }
            (kind.trim(), branches)
        }
        None => (head.trim(), Vec::new()),
    };
    let mut segments = rest.split('|').map(str::trim);
    let title = segments.next().unwrap_or("");
    let mut details = "";
    let mut shows = Vec::new();
    let mut help = String::new();
    let mut remind = None;
    let mut expires = None;
    let mut only_if = Vec::new();
    let mut quorum = None;
    let mut quorum_said = false;
    let mut routes = route::Routes::default();
    let mut forward = false;
    let mut verify_email = false;
    // An `if` may name the step's own fields: read once they are.
    let mut ifs = Vec::new();
    for segment in segments {
        if segment.starts_with("if ") {
            ifs.push(segment);
            continue;
        }
        if segment == "forward" {
            if forward {
                return Err(at("definition-segments"));
            }
            forward = true;
            continue;
        }
        if segment == "verify email" {
            if verify_email {
                return Err(at("definition-segments"));
            }
            verify_email = true;
            continue;
        }
        if route::parse_segment(segment, earlier, earlier_steps, &mut routes)
            .map_err(|m| m.arg("line", line_number.to_string()))?
        {
            continue;
        }
        if let Some(spec) = segment.strip_prefix("remind ") {
            if remind.is_some() {
                return Err(at("definition-remind"));
            }
            remind = Some(parse_remind(spec).ok_or_else(|| at("definition-remind"))?);
        } else if let Some(spec) = segment.strip_prefix("expires ") {
            if expires.is_some() {
                return Err(at("definition-expires"));
            }
            expires = Some(parse_expires(spec).ok_or_else(|| at("definition-expires"))?);
        } else if let Some(words) = segment.strip_prefix("help:") {
            if !help.is_empty() || words.trim().is_empty() || words.chars().count() > 500 {
                return Err(at("definition-help"));
            }
            help = words.trim().to_owned();
        } else if let Some((needed, of)) = parse_quorum(segment) {
            let all = branches.len();
            match needed {
                Some(k)
                    if !quorum_said && (1..=all).contains(&k) && of.is_none_or(|n| n == all) =>
                {
                    quorum = Some(k).filter(|&k| k < all);
                    quorum_said = true;
                }
                _ => return Err(at("definition-quorum")),
            }
        } else if let Some(conditions) = segment.strip_prefix("only if ") {
            if !only_if.is_empty() {
                return Err(at("definition-condition-twice"));
            }
            only_if = condition::parse(conditions, earlier_steps)
                .map_err(|m| m.arg("line", line_number.to_string()))?;
        } else if let Some(list) = show_list(segment) {
            if !shows.is_empty() {
                return Err(at("definition-show"));
            }
            shows = parse_shows(list, earlier).ok_or_else(|| at("definition-show"))?;
        } else if details.is_empty() {
            details = segment;
        } else {
            return Err(at("definition-segments"));
        }
    }
    if title.is_empty() || title.chars().count() > 200 {
        return Err(at("definition-title"));
    }
    let interaction = match kind {
        "form" => {
            let fields =
                parse_fields(details).map_err(|m| m.arg("line", line_number.to_string()))?;
            if fields.len() > MAX_FIELDS {
                return Err(at("definition-too-many-fields").arg("max", MAX_FIELDS.to_string()));
            }
            Interaction::Form { fields }
        }
        "review" if details.is_empty() => Interaction::Review,
        "review" => return Err(at("definition-segments")),
        "payment" => {
            let (amount, currency) =
                parse_amount(details).ok_or_else(|| at("definition-amount"))?;
            Interaction::Payment {
                amount_cents: amount,
                currency,
            }
        }
        _ => return Err(at("definition-kind")),
    };
    let mut step = Step {
        title: title.to_owned(),
        branches,
        participant,
        interaction,
        shows,
        translations: BTreeMap::new(),
        help,
        remind,
        expires,
        only_if,
        quorum,
        routes: route::Routes::default(),
        forward,
        verify_email,
    };
    if !ifs.is_empty() {
        let mut with_this = earlier_steps.to_vec();
        with_this.push(step.clone());
        for segment in ifs {
            route::parse_segment(segment, earlier, &with_this, &mut routes)
                .map_err(|m| m.arg("line", line_number.to_string()))?;
        }
    }
    step.routes = routes;
    Ok(step)
}

/// `2 of 3` or `any`: how many branches close a step, and of how many; `None` when the
/// segment is no quorum (a number too large to read is `Some((None, _))`).
fn parse_quorum(segment: &str) -> Option<(Option<usize>, Option<usize>)> {
    if segment == "any" {
        return Some((Some(1), None));
    }
    let mut words = segment.split_whitespace();
    let (k, of, n) = (words.next()?, words.next()?, words.next()?);
    let number = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit());
    (of == "of" && number(k) && number(n) && words.next().is_none())
        .then(|| (k.parse().ok(), Some(n.parse().unwrap_or(usize::MAX))))
}

/// `2d x3`: the wait (at least an hour) and how many reminders (1 to `MAX_REMINDERS`; one
/// when not said).
fn parse_remind(spec: &str) -> Option<Remind> {
    let mut words = spec.split_whitespace();
    let after = crate::time::parse_duration(words.next()?)?;
    let times = match words.next() {
        Some(n) => n.strip_prefix('x')?.parse().ok()?,
        None => 1,
    };
    let ok = words.next().is_none()
        && (MIN_REMIND_AFTER..=MAX_DELAY).contains(&after)
        && (1..=MAX_REMINDERS).contains(&times);
    ok.then_some(Remind { after, times })
}

/// `7d`, `7d then next` or `7d then to director`.
fn parse_expires(spec: &str) -> Option<Expires> {
    let mut words = spec.split_whitespace();
    let after = crate::time::parse_duration(words.next()?)?;
    let (then_next, then_to) = match (words.next(), words.next(), words.next(), words.next()) {
        (None, ..) => (false, None),
        (Some("then"), Some("next"), None, _) => (true, None),
        (Some("then"), Some("to"), Some(who), None) => (false, Some(Participant::parse(who)?)),
        _ => return None,
    };
    (MIN_EXPIRES_AFTER..=MAX_DELAY)
        .contains(&after)
        .then_some(Expires {
            after,
            then_next,
            then_to,
        })
}

/// `show 1, 2` in a step line: the list after the word, if the segment is one.
fn show_list(segment: &str) -> Option<&str> {
    let list = segment.strip_prefix("show")?;
    (list.starts_with(char::is_whitespace)
        && list
            .split(',')
            .all(|n| !n.trim().is_empty() && n.trim().bytes().all(|b| b.is_ascii_digit())))
    .then_some(list)
}

/// Step numbers (from 1) of earlier steps, as indices; `None` if one is not an earlier step.
fn parse_shows(list: &str, earlier: usize) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for n in list.split(',') {
        let n: usize = n.trim().parse().ok()?;
        if n == 0 || n > earlier {
            return None;
        }
        if !out.contains(&(n - 1)) {
            out.push(n - 1);
        }
    }
    out.sort_unstable();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::workflow::check_form;
    use crate::i18n::Lang;

    const SAMPLE: &str = "form: Supplier details | Company*, Email* (email), Quantity (number), Notes (long)\n\
                          review[legal,finance]: Approve the contract\n\
                          payment@payer: Pay the order | 49.90 EUR\n";

    #[test]
    fn reminders_and_deadlines_are_step_options_within_bounds() {
        let def = Definition::parse(
            "review@legal: Sign | remind 2d x3 | expires 14d\n\
             payment@payer: Pay | 5.00 EUR | expires 7d then next | help: Pay soon\n\
             review@legal: Check | remind 12h\n",
        )
        .unwrap();
        assert_eq!(
            def.steps[0].remind,
            Some(Remind {
                after: 2 * 86_400,
                times: 3
            })
        );
        assert_eq!(
            def.steps[0].expires,
            Some(Expires {
                after: 14 * 86_400,
                then_next: false,
                then_to: None,
            })
        );
        assert_eq!(
            def.steps[1].expires,
            Some(Expires {
                after: 7 * 86_400,
                then_next: true,
                then_to: None,
            })
        );
        assert_eq!(
            def.steps[2].remind,
            Some(Remind {
                after: 12 * 3600,
                times: 1
            })
        );
        assert_eq!(Definition::parse(&def.to_text()).unwrap(), def);
        let start = def.steps[0].start();
        assert_eq!(start.remind_after, Some(2 * 86_400));
        assert_eq!(start.expires_after, Some(14 * 86_400));
        for bad in [
            "review: Sign | remind 30m",
            "review: Sign | remind 2d x11",
            "review: Sign | remind 2d x0",
            "review: Sign | remind soon",
            "review: Sign | remind 2d | remind 3d",
            "review: Sign | expires 30s",
            "review: Sign | expires 400d",
            "review: Sign | expires 7d then",
            "review: Sign | expires 7d then stop",
        ] {
            let error = Definition::parse(bad).unwrap_err();
            assert!(
                ["definition-remind", "definition-expires"].contains(&error.id),
                "{bad}: {error:?}"
            );
        }
    }

    #[test]
    fn the_line_format_round_trips() {
        let def = Definition::parse(SAMPLE).unwrap();
        assert_eq!(def.steps.len(), 3);
        let branches: Vec<&str> = def.steps[1].branches.iter().map(|b| b.as_str()).collect();
        assert_eq!(branches, ["legal", "finance"]);
        assert_eq!(def.steps[2].participant.as_str(), "payer");
        assert!(def.steps[0].participant.is_default());
        assert_eq!(
            def.steps[2].interaction,
            Interaction::Payment {
                amount_cents: 4990,
                currency: "EUR".into()
            }
        );
        assert_eq!(Definition::parse(&def.to_text()).unwrap(), def);
        assert_eq!(Definition::from_json(&def.to_json()).unwrap(), def);
    }

    #[test]
    fn errors_name_their_line() {
        let err = Definition::parse("review: fine\nquiz: What?").unwrap_err();
        assert_eq!(err.id, "definition-kind");
        assert_eq!(err.args, [("line", "2".to_string())]);
        for bad in [
            "",
            "review[Legal]: x",
            "review[a,a]: x",
            "payment: x | 1.5 EUR",
            "form: x | a (time)",
            "form: x | a (number, 5..1)",
            "form: x | a (date, 1..2)",
            "form: x",
            "review@: x",
            "review@Legal: x",
            "review[a,b]@c: x",
        ] {
            assert!(Definition::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn form_answers_are_checked_and_kept() {
        let def = Definition::parse(SAMPLE).unwrap();
        let Interaction::Form { fields } = &def.steps[0].interaction else {
            panic!()
        };
        let check = check_form(
            fields,
            &[
                ("company".into(), "".into()),
                ("email".into(), "not-an-email".into()),
                ("quantity".into(), "many".into()),
            ],
            Lang::En,
        );
        let failed: Vec<_> = check
            .errors
            .iter()
            .map(|(f, m)| (f.as_str(), m.id))
            .collect();
        assert_eq!(
            failed,
            [
                ("company", "field-required"),
                ("email", "field-email"),
                ("quantity", "field-number")
            ]
        );
        assert_eq!(check.values[1], ("email".into(), "not-an-email".into()));
    }
}

#[cfg(test)]
mod quorum_tests {
    use super::*;

    #[test]
    fn k_of_n_is_read_written_back_and_refused_where_it_cannot_be() {
        let d = Definition::parse("review[a,b,c]: Sign off | 2 of 3\nreview[x,y]: Any | any\n")
            .unwrap();
        assert_eq!((d.steps[0].quorum, d.steps[0].needed()), (Some(2), 2));
        assert_eq!((d.steps[1].quorum, d.steps[1].needed()), (Some(1), 1));
        assert_eq!(Definition::parse(&d.to_text()).unwrap(), d);
        // Every branch is what a step without it needs, and is stored as before.
        let all = Definition::parse("review[a,b]: Both | 2 of 2\n").unwrap();
        assert_eq!((all.steps[0].quorum, all.steps[0].needed()), (None, 2));
        assert!(!all.to_json().contains("quorum"));
        for bad in [
            "review@a: One | any",
            "review[a,b]: Two | 3 of 2",
            "review[a,b]: Two | 0 of 2",
            "review[a,b,c]: Three | 2 of 4",
            "review[a,b,c]: Three | 2 of 3 | any",
            "review[a,b]: Two | 99999999999999999999999 of 2",
        ] {
            let error = Definition::parse(bad)
                .unwrap_err()
                .render(crate::i18n::Lang::En);
            assert!(error.starts_with("Line 1: \"2 of 3\""), "{bad}: {error}");
        }
    }
}
