//! What a capability link may do: the workflow's rules for the doorway, with no web in them.
//!
//! `resolve` turns a link into an instance, its version and the participant the link was
//! issued for, or refuses it; `Resolved::now` says what the link may answer at this moment;
//! `check` validates an answer; `record` records it. Payments (`payment`) are confirmed only
//! by the provider's signed notice.

use std::sync::Arc;

use serde::Serialize;

use crate::domain::capability::{self, Claims, Kind};
use crate::domain::files;
use crate::domain::instance::progress;
use crate::domain::keys::SiteKeys;
use crate::domain::workflow::versions::Cache;
use crate::domain::workflow::{
    Definition, Field, FieldKind, InstanceState, Interaction, Participant, Shown, Step, check_form,
    values,
};
use crate::error::Error;
use crate::i18n::{Lang, Message};
use crate::store::instances::{Answer, InstanceRow};
use crate::store::{self, Db};

pub mod code;
pub mod forward;
pub mod payment;

/// A link or handle that resolved: its instance, the instance's version and the participant.
pub struct Resolved {
    pub instance: InstanceRow,
    pub definition: Arc<Definition>,
    pub claims: Claims,
    pub participant: Participant,
    /// The token as it came, to send the visitor back to it.
    pub link: String,
    /// For a handle: the payment it returns to.
    pub payment: Option<HandlePayment>,
    /// For a link: the branches that had answered the current step when it was read (the same
    /// read as the instance's).
    pub answered: Vec<String>,
    /// For a link: its record, when it has one.
    pub link_id: Option<i64>,
}

/// The payment a handle returns to, as the resolving read found it.
#[derive(Clone, Copy, Debug)]
pub struct HandlePayment {
    pub id: i64,
    pub state: payment::PaymentState,
}

/// A token compared against when the instance does not exist, so that refusing a link to a
/// missing instance costs the same HMAC as refusing a bad signature: the time taken says
/// nothing about which instances exist.
const ABSENT_TOKEN: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Resolves a link or handle: parse, one read of the instance (with the link's record, or the
/// handle's payment), HMAC and expiry, then the version from the cache. `Ok(None)` is the one
/// refusal every bad, expired, revoked or unknown link gets.
pub async fn resolve(
    db: &Db,
    versions: &Cache,
    keys: &SiteKeys,
    link: &str,
    now: i64,
) -> Result<Option<Resolved>, Error> {
    Ok(
        match resolve_answer(db, versions, keys, link, now, 0).await? {
            Resolution::Usable(resolved) => Some(resolved),
            Resolution::ExpiredRecently(_) | Resolution::Refused => None,
        },
    )
}

/// How long after its expiry a link's answer is still recognised as its holder's: the page
/// then keeps what was typed and says the link expired, instead of the plain refusal.
pub const ANSWER_GRACE_SECS: i64 = 24 * 3600;

/// What a link resolved to for an answer.
pub enum Resolution {
    Usable(Resolved),
    /// A genuine link (signature, token and record good) that expired within the grace: its
    /// holder is told so, and nothing is recorded. Handles never get here.
    ExpiredRecently(Resolved),
    Refused,
}

/// `resolve`, telling a link that expired less than `grace` seconds ago apart from the other
/// refusals. Only a signature made with the site's keys reaches that answer, so it tells
/// nothing to anyone but the link's holder; it costs one more HMAC in that case alone.
pub async fn resolve_answer(
    db: &Db,
    versions: &Cache,
    keys: &SiteKeys,
    link: &str,
    now: i64,
    grace: i64,
) -> Result<Resolution, Error> {
    let Some(parsed) = capability::parse(link) else {
        return Ok(Resolution::Refused);
    };
    let Some(participant) = Participant::from_claim(parsed.claims.branch.as_deref()) else {
        return Ok(Resolution::Refused);
    };
    let (instance, usable, payment, answered, link_id) = match parsed.claims.kind {
        Kind::Link => {
            let hash = keys.keyed_hash("link", link);
            // A missing instance reads a stand-in row (the store's `NAMED_OR_BEFORE`), so that
            // both cost the same; it is dropped here, and the HMAC below checks against the
            // absent token all the same.
            match store::instances::for_link(db, parsed.claims.instance, &hash).await? {
                // A link issued before links were recorded has no record and stays good until
                // its instance's links are revoked (a new token) or it expires.
                Some(row) if row.instance.id == parsed.claims.instance => (
                    Some(row.instance),
                    row.revoked_at.unwrap_or(0) == 0,
                    None,
                    row.answered,
                    row.link_id,
                ),
                _ => (None, false, None, Vec::new(), None),
            }
        }
        Kind::Handle => {
            let hash = keys.keyed_hash("handle", link);
            match store::instances::for_handle(db, parsed.claims.instance, &hash, now).await? {
                Some(row) if row.instance.id == parsed.claims.instance => {
                    let payment = row.payment_id.zip(row.payment_state).and_then(|(id, s)| {
                        Some(HandlePayment {
                            id,
                            state: payment::PaymentState::parse(&s)?,
                        })
                    });
                    (
                        Some(row.instance),
                        payment.is_some(),
                        payment,
                        Vec::new(),
                        None,
                    )
                }
                _ => (None, false, None, Vec::new(), None),
            }
        }
    };
    let token = instance.as_ref().map_or(ABSENT_TOKEN, |i| i.token.as_str());
    let verified = capability::verify(keys, &parsed, token, now);
    let expires = parsed.claims.expires;
    let expired_recently = !verified
        && grace > 0
        && parsed.claims.kind == Kind::Link
        && expires <= now
        && now - expires < grace
        && instance.is_some()
        && capability::verify(keys, &parsed, token, expires - 1);
    let Some(instance) = instance.filter(|_| (verified || expired_recently) && usable) else {
        return Ok(Resolution::Refused);
    };
    let definition = versions.get(db, instance.version_id).await?;
    let resolved = Resolved {
        instance,
        definition,
        claims: parsed.claims,
        participant,
        link: link.to_owned(),
        payment,
        answered,
        link_id,
    };
    Ok(if verified {
        Resolution::Usable(resolved)
    } else {
        Resolution::ExpiredRecently(resolved)
    })
}

/// What a resolved link may do at this moment.
pub enum Now<'a> {
    /// Answer the current step, under this branch ("" for a step without branches).
    Answer { step: &'a Step, branch: &'a str },
    /// The current step is someone else's.
    NothingHere,
    /// The instance has ended.
    Over(InstanceState),
}

impl Resolved {
    pub fn now(&self) -> Now<'_> {
        if self.instance.state.is_over() {
            return Now::Over(self.instance.state);
        }
        let Some(step) = self.current_step() else {
            return Now::NothingHere;
        };
        match step.branch_of(&self.participant) {
            Some(branch) => Now::Answer { step, branch },
            None => Now::NothingHere,
        }
    }

    pub fn current_step(&self) -> Option<&Step> {
        self.definition
            .steps
            .get(usize::try_from(self.instance.step_index).ok()?)
    }

    pub fn step_number(&self) -> usize {
        self.instance.step_index as usize + 1
    }

    /// Whether this link answers the step after the current one: the page then goes on to it.
    pub fn answers_next(&self) -> bool {
        self.claims.kind == Kind::Link
            && self
                .definition
                .steps
                .get(self.step_number())
                .is_some_and(|s| s.branch_of(&self.participant).is_some())
    }
}

/// What a step page reads from the history, in one statement: the branches that have
/// answered the current step, and the answers of the earlier steps it shows.
#[derive(Debug, Default)]
pub struct Earlier {
    pub answered: Vec<String>,
    pub shown: Vec<ShownStep>,
    /// For a step asked again in a later round: why, and what this branch answered before.
    pub again: Option<store::instances::AskedAgain>,
}

/// An earlier step as a later one shows it, in the visitor's language.
#[derive(Debug)]
pub struct ShownStep {
    pub number: usize,
    pub title: String,
    /// Per branch that answered ("" for a step without branches): label and value lines.
    /// A file's line carries its id (`Shown::file`): the doorway makes it a download.
    pub answers: Vec<(String, Vec<(String, Shown)>)>,
}

/// What `step` (the current step) needs from the history. The branches that answered it in
/// this round came with the link's own read (`Resolved::answered`); a step that shows earlier
/// answers reads them, the latest of each branch (a step asked again in a later round shows
/// its new answer), and a step sent back for changes reads what it is sent back with.
pub async fn earlier(
    db: &Db,
    resolved: &Resolved,
    step: &Step,
    branch: &str,
    lang: Lang,
) -> Result<Earlier, Error> {
    let mut out = Earlier {
        answered: resolved.answered.clone(),
        ..Earlier::default()
    };
    if resolved.instance.round > 0 {
        out.again = store::instances::asked_again(
            db,
            resolved.instance.id,
            resolved.instance.step_index,
            branch,
        )
        .await?;
    }
    let (Some(&first), Some(&last)) = (step.shows.iter().min(), step.shows.iter().max()) else {
        return Ok(out);
    };
    let rows =
        store::instances::answers_between(db, resolved.instance.id, first as i64, last as i64)
            .await?;
    for &index in &step.shows {
        let Some(shown) = resolved.definition.steps.get(index) else {
            continue;
        };
        let mut answers: Vec<(String, Vec<(String, Shown)>)> = Vec::new();
        for (_, branch, json) in rows.iter().filter(|(i, _, _)| *i == index as i64) {
            let lines = crate::domain::workflow::history::answer_items(lang, json, Some(shown));
            match answers.iter_mut().find(|(b, _)| b == branch) {
                Some(kept) => kept.1 = lines,
                None => answers.push((branch.clone(), lines)),
            }
        }
        out.shown.push(ShownStep {
            number: index + 1,
            title: shown.title_in(lang).to_owned(),
            answers,
        });
    }
    Ok(out)
}

/// The files an answer, as recorded, brought.
pub fn files_in(json: &str) -> Vec<files::Stored> {
    #[derive(serde::Deserialize)]
    struct Line {
        file: Option<files::Stored>,
    }
    #[derive(serde::Deserialize)]
    struct Answer {
        #[serde(default)]
        fields: Vec<Line>,
    }
    serde_json::from_str::<Answer>(json)
        .map(|a| a.fields.into_iter().filter_map(|l| l.file).collect())
        .unwrap_or_default()
}

impl Earlier {
    /// For a step asked again: what this branch answered before, as the form's values (a
    /// choice's option as it posts, a number as `lang` types it, which reads back the same),
    /// so the form shows it; nothing for a review.
    pub fn typed_before(&self, step: &Step, lang: Lang) -> Invalid {
        let (Some(before), Interaction::Form { fields }) = (
            self.again.as_ref().and_then(|a| a.before.as_deref()),
            &step.interaction,
        ) else {
            return Invalid::default();
        };
        let mut answers = crate::domain::workflow::condition::Answers::default();
        answers.put_json(0, before);
        Invalid {
            values: fields
                .iter()
                .filter_map(|f| {
                    let value = answers.get(0, &f.name)?;
                    let posted = if !f.options.is_empty() {
                        Field::option_value(value)
                    } else if f.kind == FieldKind::Number {
                        values::typed_number(value, lang).unwrap_or_else(|| value.to_owned())
                    } else {
                        value.to_owned()
                    };
                    Some((f.name.clone(), posted))
                })
                .collect(),
            ..Invalid::default()
        }
    }

    /// Why a step asked again was sent back: whose answer, and its comment.
    pub fn sent_back(&self) -> Option<(&str, String)> {
        let (who, json) = self.again.as_ref()?.because.as_ref()?;
        let comment = serde_json::from_str::<serde_json::Value>(json)
            .ok()
            .and_then(|v| v.get("comment")?.as_str().map(str::to_owned))
            .unwrap_or_default();
        Some((who.as_str(), comment))
    }
}

/// A review's decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Approve,
    Reject,
}

impl Decision {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "approve" => Some(Self::Approve),
            "reject" => Some(Self::Reject),
            _ => None,
        }
    }
}

/// An answer as recorded: what it shows in the history, labels included, so that it reads the
/// same whatever later versions say.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Given {
    Form { fields: Vec<FieldAnswer> },
    Review { decision: Decision, comment: String },
}

#[derive(Debug, Serialize)]
pub struct FieldAnswer {
    pub name: String,
    pub label: String,
    /// For a file, its name.
    pub value: String,
    /// A file field's file: what it is, never its bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<files::Stored>,
}

impl Given {
    /// The ids of the files the answer holds, which recording it keeps.
    pub fn file_ids(&self) -> Vec<i64> {
        match self {
            Given::Form { fields } => fields
                .iter()
                .filter_map(|f| f.file.as_ref().map(|s| s.id))
                .collect(),
            Given::Review { .. } => Vec::new(),
        }
    }
}

/// An answer that did not pass: what was typed, kept, and what is wrong with it.
#[derive(Debug, Default)]
pub struct Invalid {
    pub values: Vec<(String, String)>,
    pub field_errors: Vec<(String, Message)>,
    pub decision: String,
    pub comment: String,
    pub errors: Vec<Message>,
}

pub const MAX_COMMENT: usize = 2000;

/// A posted field's value, trimmed; empty when it was not posted.
pub(crate) fn posted(submitted: &[(String, String)], name: &str) -> String {
    submitted
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.trim().to_owned())
        .unwrap_or_default()
}

/// The review's comment box, as it posts.
pub const COMMENT: &str = "comment";

/// Checks an answer to a form or a review step, as typed by a visitor reading `lang`. A
/// payment step takes no answer from the visitor: only the provider's notice pays it.
pub fn check(step: &Step, submitted: &[(String, String)], lang: Lang) -> Result<Given, Invalid> {
    check_with_files(step, submitted, &[], lang)
}

/// `check`, for an answer that came with files (each field's `files::Outcome`): a file stored
/// answers its field by its name; a file refused is its field's error. When the answer is
/// refused, a file that had arrived is not kept, and its field says to choose it again.
pub fn check_with_files(
    step: &Step,
    submitted: &[(String, String)],
    uploaded: &[(String, files::Outcome)],
    lang: Lang,
) -> Result<Given, Invalid> {
    let get = |name: &str| posted(submitted, name);
    match &step.interaction {
        Interaction::Form { fields } => {
            // A file field is answered by a file alone: a text posted under its name is not one.
            let is_file = |name: &str| {
                fields
                    .iter()
                    .any(|f| f.name == name && f.kind == crate::domain::workflow::FieldKind::File)
            };
            let mut with_names: Vec<(String, String)> = submitted
                .iter()
                .filter(|(k, _)| !is_file(k))
                .cloned()
                .collect();
            for (field, outcome) in uploaded {
                if let files::Outcome::Stored(file) = outcome {
                    with_names.push((field.clone(), file.name.clone()));
                }
            }
            let mut check = check_form(fields, &with_names, lang);
            for (field, outcome) in uploaded {
                if let files::Outcome::Refused(why) = outcome {
                    check.errors.retain(|(f, _)| f != field);
                    check.errors.push((field.clone(), why.clone()));
                }
            }
            if !check.errors.is_empty() {
                for (field, outcome) in uploaded {
                    if matches!(outcome, files::Outcome::Stored(_))
                        && !check.errors.iter().any(|(f, _)| f == field)
                    {
                        check
                            .errors
                            .push((field.clone(), Message::new("field-file-again")));
                    }
                }
                return Err(Invalid {
                    values: check.values,
                    field_errors: check.errors,
                    errors: vec![Message::new("doorway-form-has-errors")],
                    ..Invalid::default()
                });
            }
            let mut given = labelled(fields, check.stored);
            for answer in &mut given {
                answer.file = uploaded.iter().find_map(|(f, o)| match o {
                    files::Outcome::Stored(file) if *f == answer.name => Some(file.clone()),
                    _ => None,
                });
            }
            Ok(Given::Form { fields: given })
        }
        Interaction::Review => {
            let decision = get("decision");
            let comment = get(COMMENT);
            let mut errors = Vec::new();
            let parsed = Decision::parse(&decision);
            if parsed.is_none() {
                errors.push(Message::new("doorway-review-choose"));
            }
            // The comment's error is the comment box's: shown beside it, the summary says
            // something needs attention.
            let comment_error = if comment.chars().count() > MAX_COMMENT {
                Some(Message::new("field-too-long").arg("max", MAX_COMMENT.to_string()))
            } else if parsed == Some(Decision::Reject) && comment.is_empty() {
                Some(Message::new("doorway-review-reason"))
            } else {
                None
            };
            match (parsed, comment_error) {
                (Some(decision), None) if errors.is_empty() => {
                    Ok(Given::Review { decision, comment })
                }
                (_, comment_error) => {
                    if errors.is_empty() {
                        errors.push(Message::new("doorway-form-has-errors"));
                    }
                    Err(Invalid {
                        decision,
                        comment,
                        errors,
                        field_errors: comment_error
                            .map(|e| (COMMENT.to_owned(), e))
                            .into_iter()
                            .collect(),
                        ..Invalid::default()
                    })
                }
            }
        }
        Interaction::Payment { .. } => Err(Invalid::default()),
    }
}

fn labelled(fields: &[Field], values: Vec<(String, String)>) -> Vec<FieldAnswer> {
    fields
        .iter()
        .zip(values)
        .map(|(f, (name, value))| FieldAnswer {
            name,
            label: f.label.clone(),
            // A choice posts its option's slug; the answer records the option's own words.
            value: f.option_of(&value).map_or(value, str::to_owned),
            file: None,
        })
        .collect()
}

/// Records an answer to the current step for the link's participant, coming from `client` (the
/// client's address as a keyed hash), its holder checked as `verified` says.
pub async fn record(
    db: &Db,
    resolved: &Resolved,
    step: &Step,
    branch: &str,
    given: &Given,
    client: &str,
    verified: Option<&str>,
) -> Result<store::instances::Answered, Error> {
    let rejects = matches!(
        given,
        Given::Review {
            decision: Decision::Reject,
            ..
        }
    );
    let json = serde_json::to_string(given).map_err(|_| Error::Corrupt("unserialisable answer"))?;
    let awaited = step.awaited();
    let from = resolved.instance.step_index as usize;
    let mut answers =
        progress::answers_for(db, resolved.instance.id, &resolved.definition, from).await?;
    answers.put_json(from, &json);
    let (then, on_reject) = progress::routes_from(&resolved.definition, from, &answers);
    Ok(store::instances::record_answer(
        db,
        &Answer {
            instance: resolved.instance.id,
            step: resolved.instance.step_index,
            branch,
            answer_json: &json,
            branches: &awaited,
            rejects,
            needed: step.needed(),
            step_title: &step.title,
            kind: step.interaction.kind(),
            participant: resolved.participant.as_str(),
            then,
            on_reject,
            rounds: i64::from(crate::domain::workflow::route::rounds(&resolved.definition)),
            notify: &resolved.definition.notify_names(),
            files: &given.file_ids(),
            by: store::instances::By {
                link: resolved.link_id,
                client: Some(client),
                verified,
            },
        },
    )
    .await?)
}
