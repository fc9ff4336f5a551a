//! Where a step sends its instance other than to the next step: `| on reject back to 1` sends
//! a rejected claim back to its first step for changes, `| on approve go 4` and `| on reject go
//! end` jump, `| if Amount > 1000 go 3` routes a form on its own answers. A move to this step
//! or an earlier one starts a new round (the steps from there on are asked again); a workflow
//! has at most `| rounds N` of them (`DEFAULT_ROUNDS` unless said), and a move past that ends
//! the instance as rejected.

use serde::{Deserialize, Serialize};

use super::condition::{self, Answers, Condition};
use super::{Definition, Step};
use crate::i18n::Message;

/// Rounds an instance may go through when the definition does not say.
pub const DEFAULT_ROUNDS: u32 = 5;
/// The most rounds a definition may allow.
pub const MAX_ROUNDS: u32 = 20;

/// A step to go to (0-based), or the instance's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    Step(usize),
    End,
}

/// A form's route on its own answers (or earlier ones): `if Purpose = Travel go 4`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct When {
    pub conditions: Vec<Condition>,
    pub target: Target,
}

/// A step's routes; empty for a step that goes on to the next.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Routes {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_reject: Option<Target>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_approve: Option<Target>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub when: Vec<When>,
    /// `| rounds N`: how many rounds the instance may go through, in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u32>,
}

impl Routes {
    pub fn is_empty(&self) -> bool {
        *self == Routes::default()
    }

    /// Every target this step names, with its words as written: for checks and drawings.
    pub fn targets(&self) -> impl Iterator<Item = Target> + '_ {
        self.on_reject
            .into_iter()
            .chain(self.on_approve)
            .chain(self.when.iter().map(|w| w.target))
    }
}

/// How a step closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Closed {
    Approved,
    Rejected,
}

/// Where a step that closed sends its instance, by its routes: `None` when no route applies
/// (the next step, or the end as rejected for a rejection).
pub fn target_of(
    step: &Step,
    closed: Closed,
    definition: &Definition,
    answers: &Answers,
) -> Option<Target> {
    match closed {
        Closed::Rejected => step.routes.on_reject,
        Closed::Approved => step
            .routes
            .when
            .iter()
            .find(|w| w.conditions.iter().all(|c| c.holds(definition, answers)))
            .map(|w| w.target)
            .or(step.routes.on_approve),
    }
}

/// The rounds an instance of `definition` may go through: the most any step allows.
pub fn rounds(definition: &Definition) -> u32 {
    definition
        .steps
        .iter()
        .filter_map(|s| s.routes.rounds)
        .max()
        .unwrap_or(DEFAULT_ROUNDS)
}

/// Reads one `| …` segment of step `current` (0-based) as a route, into `routes`. `Ok(false)`
/// when the segment is no route; `this` is the step's own fields as far as known, for an `if`.
pub fn parse_segment(
    segment: &str,
    current: usize,
    earlier_and_this: &[Step],
    routes: &mut Routes,
) -> Result<bool, Message> {
    if let Some(rest) = segment.strip_prefix("on reject ") {
        if routes.on_reject.is_some() {
            return Err(Message::new("definition-route-twice"));
        }
        let target = match rest.trim().strip_prefix("back to ") {
            Some(n) => match step_number(n) {
                Some(t) if t < current => Target::Step(t),
                _ => return Err(Message::new("definition-route-back")),
            },
            None => parse_go(rest.trim(), current)?,
        };
        routes.on_reject = Some(target);
        return Ok(true);
    }
    if let Some(rest) = segment.strip_prefix("on approve ") {
        if routes.on_approve.is_some() {
            return Err(Message::new("definition-route-twice"));
        }
        routes.on_approve = Some(parse_go(rest.trim(), current)?);
        return Ok(true);
    }
    if let Some(rest) = segment.strip_prefix("rounds ") {
        let n = rest
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=MAX_ROUNDS).contains(n));
        if routes.rounds.is_some() || n.is_none() {
            return Err(Message::new("definition-rounds").arg("max", MAX_ROUNDS.to_string()));
        }
        routes.rounds = n;
        return Ok(true);
    }
    if let Some(rest) = segment.strip_prefix("if ") {
        let Some((conditions, go)) = rest.rsplit_once(" go ") else {
            return Err(Message::new("definition-route-go"));
        };
        let target = parse_go(&format!("go {}", go.trim()), current)?;
        let conditions = condition::parse(conditions.trim(), earlier_and_this)?;
        routes.when.push(When { conditions, target });
        return Ok(true);
    }
    Ok(false)
}

/// `go N` or `go end`.
fn parse_go(text: &str, current: usize) -> Result<Target, Message> {
    let target = text.strip_prefix("go ").map(str::trim);
    match target {
        Some("end") => Ok(Target::End),
        Some(n) => match step_number(n) {
            Some(t) if t != current => Ok(Target::Step(t)),
            _ => Err(Message::new("definition-route-go")),
        },
        None => Err(Message::new("definition-route-go")),
    }
}

/// A step number from 1, as an index.
fn step_number(text: &str) -> Option<usize> {
    let n: usize = text.trim().parse().ok()?;
    n.checked_sub(1)
}

/// The route segments of step `current`, written back as a definition has them.
pub fn to_text(routes: &Routes, current: usize, steps: &[Step]) -> String {
    let target = |t: Target| match t {
        Target::Step(i) => (i + 1).to_string(),
        Target::End => "end".to_owned(),
    };
    let mut out = String::new();
    for w in &routes.when {
        out.push_str(&format!(
            " | if {} go {}",
            condition::to_text(&w.conditions, steps),
            target(w.target)
        ));
    }
    if let Some(t) = routes.on_approve {
        out.push_str(&format!(" | on approve go {}", target(t)));
    }
    match routes.on_reject {
        Some(Target::Step(i)) if i < current => {
            out.push_str(&format!(" | on reject back to {}", i + 1));
        }
        Some(t) => out.push_str(&format!(" | on reject go {}", target(t))),
        None => {}
    }
    if let Some(n) = routes.rounds {
        out.push_str(&format!(" | rounds {n}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLAIM: &str = "form@employee: Claim | Amount* (number), Purpose (choice: Travel / Meals) | if Amount > 5000 and Purpose = Travel go 4\n\
                         review@manager: Manager | on reject back to 1 | rounds 3\n\
                         review@finance: Finance | on approve go end | on reject go 4\n\
                         review@board: Board\n";

    #[test]
    fn routes_read_and_write_back_as_written() {
        let definition = Definition::parse(CLAIM).unwrap();
        let steps = &definition.steps;
        assert_eq!(steps[0].routes.when[0].target, Target::Step(3));
        assert_eq!(steps[0].routes.when[0].conditions.len(), 2);
        assert_eq!(steps[1].routes.on_reject, Some(Target::Step(0)));
        assert_eq!(steps[1].routes.rounds, Some(3));
        assert_eq!(steps[2].routes.on_approve, Some(Target::End));
        assert_eq!(steps[2].routes.on_reject, Some(Target::Step(3)));
        assert_eq!(rounds(&definition), 3);
        let again = Definition::parse(&definition.to_text()).unwrap();
        assert_eq!(again, definition);
        assert!(definition.to_text().contains("| on reject back to 1"));
        assert!(definition.to_text().contains("| on reject go 4"));
    }

    #[test]
    fn a_route_to_nowhere_is_refused_with_its_line() {
        for (text, id, line) in [
            (
                "review: A | on reject back to 1\n",
                "definition-route-back",
                "1",
            ),
            (
                "review: A\nreview: B | on reject back to 2\n",
                "definition-route-back",
                "2",
            ),
            (
                "review: A\nreview: B | on approve go 7\n",
                "definition-route-go",
                "2",
            ),
            (
                "review: A | on approve go 1\nreview: B\n",
                "definition-route-go",
                "1",
            ),
            (
                "review: A\nreview: B | on approve go\n",
                "definition-route-go",
                "2",
            ),
            (
                "review: A\nreview: B | rounds 0\n",
                "definition-rounds",
                "2",
            ),
            (
                "review: A\nreview: B | rounds 21\n",
                "definition-rounds",
                "2",
            ),
            (
                "review: A\nreview: B | on reject go end | on reject go 1\n",
                "definition-route-twice",
                "2",
            ),
            (
                "form: A | X (text) | if Y = 1 go end\n",
                "definition-condition-field",
                "1",
            ),
        ] {
            let errors = Definition::parse_all(text).unwrap_err();
            assert_eq!(errors[0].id, id, "{text}");
            let said = errors[0].args.iter().find(|(k, _)| *k == "line");
            assert_eq!(said.map(|(_, v)| v.as_str()), Some(line), "{text}");
        }
    }

    #[test]
    fn a_deadline_hands_a_step_to_a_participant_of_the_workflow_only() {
        let ok = "form@employee: A | X (text)\nreview@manager: B | forward | expires 3d then to director\nreview@director: C\n";
        let definition = Definition::parse(ok).unwrap();
        let expires = definition.steps[1].expires.as_ref().unwrap();
        assert_eq!(
            expires.then_to.as_ref().map(|p| p.as_str()),
            Some("director")
        );
        assert!(definition.steps[1].forward);
        assert_eq!(
            Definition::parse(&definition.to_text()).unwrap(),
            definition
        );
        for bad in [
            "review@manager: B | expires 3d then to nobody\n",
            "review@manager: B | expires 3d then to manager\n",
            "review[a,b]: B | expires 3d then to a\nreview@c: C\n",
        ] {
            let errors = Definition::parse_all(bad).unwrap_err();
            assert_eq!(errors[0].id, "definition-expires-to", "{bad}");
        }
    }

    #[test]
    fn a_definition_without_routes_keeps_its_json() {
        let definition = Definition::parse("review: A\nreview: B\n").unwrap();
        assert!(!definition.to_json().contains("routes"));
        assert_eq!(rounds(&definition), DEFAULT_ROUNDS);
    }
}
