//! Where an instance stands: who still has something to answer. Read by the operations here and
//! by the email sender (which imports this file alone, not the instance's operations).

use crate::domain::workflow::condition::{self, Answers};
use crate::domain::workflow::route::{self, Closed, Target};
use crate::domain::workflow::{Definition, Participant};
use crate::store::{self, Db};

/// The participants of an instance's version who still have something to answer, in the order
/// they answer. A participant of a parallel step who has answered it waits for a later step.
pub async fn participants_left(
    db: &Db,
    instance: &store::instances::InstanceRow,
    definition: &Definition,
) -> Result<Vec<Participant>, sqlx::Error> {
    if instance.state.is_over() {
        return Ok(Vec::new());
    }
    let answered =
        store::instances::answered_branches(db, instance.id, instance.step_index).await?;
    Ok(left_given(instance, definition, &answered))
}

/// `participants_left` from the branches already answered at the current step, known without
/// a read (an instance's whole history in hand).
pub fn left_given(
    instance: &store::instances::InstanceRow,
    definition: &Definition,
    answered: &[String],
) -> Vec<Participant> {
    if instance.state.is_over() {
        return Vec::new();
    }
    let current = instance.step_index as usize;
    let mut left: Vec<Participant> = Vec::new();
    for (i, step) in definition.steps.iter().enumerate().skip(current) {
        for p in step.participants() {
            let done_here = i == current
                && step
                    .branch_of(p)
                    .is_some_and(|b| answered.iter().any(|a| a == b));
            if !done_here && !left.contains(p) {
                left.push(p.clone());
            }
        }
    }
    left
}

/// Where step `from` sends its instance once complete: the first later step whose conditions
/// hold over `answers`, the steps skipped on the way, or completion past the last.
pub fn then_after<'a>(
    definition: &'a Definition,
    from: usize,
    answers: &Answers,
) -> store::instances::Then<'a> {
    let (next, skipped) = condition::next_after(definition, from, answers);
    then_of(definition, next, skipped, false)
}

/// Where a route from step `from` to `target` sends its instance: to that step (or the first
/// from there whose conditions hold), the steps passed over on a jump forward noted as skipped;
/// a move to `from` or before is a new round. `Target::End` completes it.
pub fn then_to<'a>(
    definition: &'a Definition,
    from: usize,
    target: Target,
    answers: &Answers,
) -> store::instances::Then<'a> {
    let Target::Step(to) = target else {
        return then_of(definition, None, Vec::new(), false);
    };
    let passed: Vec<usize> = (from + 1..to).collect();
    let (next, skipped) = match to.checked_sub(1) {
        Some(before) => condition::next_after(definition, before, answers),
        // The first step has no conditions: nothing comes before it.
        None => (Some(0), Vec::new()),
    };
    let skipped = passed.into_iter().chain(skipped).collect();
    then_of(definition, next, skipped, to <= from)
}

fn then_of(
    definition: &Definition,
    next: Option<usize>,
    skipped: Vec<usize>,
    again: bool,
) -> store::instances::Then<'_> {
    let step_of = |i: usize| &definition.steps[i];
    store::instances::Then {
        step: next.map(|i| i as i64),
        start: next.map(|i| step_of(i).start()).unwrap_or_default(),
        skipped: skipped
            .into_iter()
            .map(|i| {
                let s = step_of(i);
                (i as i64, s.title.as_str(), s.interaction.kind())
            })
            .collect(),
        end: definition.steps.len() as i64,
        again,
        title: next.map_or("", |i| step_of(i).title.as_str()),
        kind: next.map_or("", |i| step_of(i).interaction.kind()),
    }
}

/// Where a step that closed sends its instance: `then` when approved (or answered), and
/// `on_reject` when rejected (`None`: it ends as rejected), by its routes.
pub fn routes_from<'a>(
    definition: &'a Definition,
    from: usize,
    answers: &Answers,
) -> (
    store::instances::Then<'a>,
    Option<store::instances::Then<'a>>,
) {
    let step = &definition.steps[from];
    let then = match route::target_of(step, Closed::Approved, definition, answers) {
        Some(target) => then_to(definition, from, target, answers),
        None => then_after(definition, from, answers),
    };
    let on_reject = match step.routes.on_reject {
        Some(target @ Target::Step(_)) => Some(then_to(definition, from, target, answers)),
        Some(Target::End) | None => None,
    };
    (then, on_reject)
}

/// The answers a move from step `from` may depend on: read only when a step has conditions or
/// the step routes on answers (a definition without any costs no read). Every round's answers,
/// the latest of each field winning.
pub async fn answers_for(
    db: &Db,
    instance: i64,
    definition: &Definition,
    from: usize,
) -> Result<Answers, sqlx::Error> {
    let conditional = definition.steps.iter().any(|s| !s.only_if.is_empty())
        || definition
            .steps
            .get(from)
            .is_some_and(|s| !s.routes.when.is_empty());
    if !conditional {
        return Ok(Answers::default());
    }
    let rows = store::instances::answers_between(db, instance, 0, from as i64).await?;
    Ok(Answers::from_history(&rows))
}
