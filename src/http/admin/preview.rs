//! The workflow editor's preview: the definition as typed, parsed and shown as each step's
//! participant will see it, and drawn, without saving anything. The steps are read-only: the
//! preview shows a form, it does not answer one.

use crate::domain::workflow::drawing::Flow;
use crate::domain::workflow::{Definition, Field, Interaction, format_amount_for};
use crate::http::context::PageContext;

pub struct Preview {
    /// The typed definition's flow (an inline SVG, its user text escaped).
    pub flow: String,
    pub steps: Vec<StepView>,
}

/// A step as its participant's page shows it, in the reader's language.
pub struct StepView {
    pub number: usize,
    /// `form`, `review` or `payment`.
    pub kind: &'static str,
    pub title: String,
    pub help: String,
    /// "Form · supplier": the kind and who answers.
    pub who: String,
    pub fields: Vec<FieldView>,
    pub amount: String,
}

pub struct FieldView {
    /// The element id: the step's number and the field's name, unique on the page.
    pub id: String,
    pub label: String,
    /// `text`, `email`, `number`, `long` or `choice`.
    pub kind: &'static str,
    pub required: bool,
    pub options: Vec<String>,
}

pub fn of(ctx: &PageContext, label: &str, definition: &Definition) -> Preview {
    let lang = ctx.lang;
    let steps = definition
        .steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let who: Vec<&str> = step.participants().iter().map(|p| p.as_str()).collect();
            let field = |(index, f): (usize, &Field)| FieldView {
                id: format!("p{}-{}", i + 1, f.name),
                label: step.label_in(lang, index).unwrap_or(&f.label).to_owned(),
                kind: f.kind.name(),
                required: f.required,
                options: step.options_in(lang, index).to_vec(),
            };
            let (fields, amount) = match &step.interaction {
                Interaction::Form { fields } => (
                    fields.iter().enumerate().map(field).collect(),
                    String::new(),
                ),
                Interaction::Review => (Vec::new(), String::new()),
                Interaction::Payment {
                    amount_cents,
                    currency,
                } => (Vec::new(), format_amount_for(lang, *amount_cents, currency)),
            };
            StepView {
                number: i + 1,
                kind: step.interaction.kind(),
                title: step.title_in(lang).to_owned(),
                help: step.help_in(lang).to_owned(),
                who: format!(
                    "{} · {}",
                    ctx.t(step.interaction.message_id()),
                    who.join(", ")
                ),
                fields,
                amount,
            }
        })
        .collect();
    // A new workflow may have no label yet: its drawing is named as the page is.
    let name = match label.trim() {
        "" => ctx.t("workflow-new"),
        label => label.to_owned(),
    };
    Preview {
        flow: Flow {
            definition,
            lang,
            name: &name,
            id: "preview-flow",
            standing: None,
            edges: &crate::domain::workflow::drawing::route_edges(definition, lang),
        }
        .svg(),
        steps,
    }
}
