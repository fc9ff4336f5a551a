//! A doorway answer sent as `multipart/form-data`, the one kind of body the server streams: each
//! file part goes to storage a chunk at a time as it arrives (`domain::files::Incoming`), so
//! memory holds a chunk of each upload, never a file; the other parts are the form's fields,
//! read within the answer's cap as an urlencoded answer is.
//!
//! `body::Limit` counts a streamed body one frame at a time against the budget (`streams`), and
//! its deadline follows the body's progress, so a slow line that keeps sending finishes.

use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Body;
use axum::http::HeaderMap;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use futures_util::StreamExt;

use super::super::body;
use super::super::error::AppError;
use crate::domain::capability::Kind as LinkKind;
use crate::domain::files::{Incoming, Kind, Outcome, Stored};
use crate::domain::interaction::{Now, Resolution};
use crate::domain::workflow::{Field, FieldKind, Interaction, MAX_FILE_FIELDS};
use crate::store::Db;

/// Parts one answer may hold: its fields, its files, and the page's own hidden fields.
const MAX_PARTS: usize = 100;
/// What the multipart parser may hold at once beyond what it gave back: a part's head and a
/// frame or two, never a file.
const HELD: usize = 1 << 20;

/// The most any streamed answer may declare, for the layer's check before routing: every file
/// field at the largest cap a site may set, and the answer's fields.
pub const CEILING: usize =
    MAX_FILE_FIELDS * crate::domain::workflow::MAX_FILE_BYTES as usize + body::ANSWER;

/// The multipart boundary of a request that streams an upload.
pub fn boundary(headers: &HeaderMap) -> Option<String> {
    let content_type = headers.get(CONTENT_TYPE)?.to_str().ok()?;
    let media = content_type.split(';').next()?.trim();
    if !media.eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    multer::parse_boundary(content_type).ok()
}

/// The body's length as it declared it.
pub fn declared(headers: &HeaderMap) -> Option<u64> {
    headers.get(CONTENT_LENGTH)?.to_str().ok()?.parse().ok()
}

/// Where the files of an answer go: the instance and step they are for, and each file field's
/// cap (the field's, within the site's) and kinds.
pub struct Target<'a> {
    pub db: &'a Db,
    pub instance: i64,
    pub step: i64,
    pub fields: &'a [Field],
    pub site_max: u64,
    pub now: i64,
}

impl Target<'_> {
    /// The rule for a file part named `name`, if a file field of the step has that name.
    fn rule(&self, name: &str) -> Option<(u64, &[Kind])> {
        let field = self
            .fields
            .iter()
            .find(|f| f.name == name && f.kind == FieldKind::File)?;
        let rule = field.file.as_ref()?;
        Some((rule.max_bytes.min(self.site_max), rule.kinds.as_slice()))
    }

    /// What an answer to this step may declare: each file at its cap, a little over (a file a
    /// little too large is read and refused beside its field, with what was typed kept), and
    /// the fields.
    pub fn most(&self) -> u64 {
        let files: u64 = self
            .fields
            .iter()
            .filter_map(|f| self.rule(&f.name))
            .map(|(max, _)| max + max / 4 + (64 << 10))
            .sum();
        files + body::ANSWER as u64
    }
}

/// Reads a multipart answer for what `resolution` may answer: files stored under its instance
/// and step when it answers a form now, else read and dropped. A body larger than the step's
/// files may be is refused before a byte of it is read.
pub async fn receive(
    db: &Db,
    snapshot: &crate::domain::site::Snapshot,
    resolution: &Resolution,
    request: axum::extract::Request,
    boundary: String,
    now: i64,
) -> Result<(Posted, Unkept), AppError> {
    let fields = match resolution {
        Resolution::Usable(resolved) if resolved.claims.kind == LinkKind::Link => {
            match resolved.now() {
                Now::Answer { step, .. } => match &step.interaction {
                    Interaction::Form { fields } => Some((resolved, fields.as_slice())),
                    _ => None,
                },
                _ => None,
            }
        }
        _ => None,
    };
    let target = fields.map(|(resolved, fields)| Target {
        db,
        instance: resolved.instance.id,
        step: resolved.instance.step_index,
        fields,
        site_max: snapshot.settings.max_file_bytes(),
        now,
    });
    let most = target.as_ref().map_or(body::ANSWER as u64, Target::most);
    if declared(request.headers()).is_some_and(|n| n > most) {
        return Err(AppError::TooLarge);
    }
    let posted = read(target.as_ref(), request.into_body(), boundary).await?;
    let unkept = Unkept::new(db, posted.stored());
    Ok((posted, unkept))
}

/// What a multipart answer held.
#[derive(Default)]
pub struct Posted {
    pub pairs: Vec<(String, String)>,
    pub files: Vec<(String, Outcome)>,
}

impl Posted {
    /// The files stored, which the answer keeps or which are removed with it.
    pub fn stored(&self) -> Vec<Stored> {
        self.files
            .iter()
            .filter_map(|(_, o)| match o {
                Outcome::Stored(s) => Some(s.clone()),
                _ => None,
            })
            .collect()
    }
}

/// Reads a multipart answer. With no `target` (a link that answers nothing now) files are read
/// and dropped. On any error, what was stored of this body is removed before the error returns.
pub async fn read(
    target: Option<&Target<'_>>,
    body: Body,
    boundary: String,
) -> Result<Posted, AppError> {
    let mut posted = Posted::default();
    let result = read_into(&mut posted, target, body, boundary).await;
    if result.is_err()
        && let Some(target) = target
    {
        crate::domain::files::discard(target.db, &posted.stored()).await?;
    }
    result.map(|()| posted)
}

async fn read_into(
    posted: &mut Posted,
    target: Option<&Target<'_>>,
    body: Body,
    boundary: String,
) -> Result<(), AppError> {
    // What the parser was given and what it gave back as the parts' data: the difference is
    // what it holds (heads, boundaries, a frame). A part's head that never ends would make it
    // hold the whole body, so past `HELD` the body is refused as malformed.
    let given = std::sync::Arc::new(AtomicUsize::new(0));
    let taken = std::sync::Arc::new(AtomicUsize::new(0));
    let stream = {
        let (given, taken) = (given.clone(), taken.clone());
        body.into_data_stream().map(move |frame| {
            let data = frame?;
            let held = given.fetch_add(data.len(), Ordering::Relaxed) + data.len();
            if held.saturating_sub(taken.load(Ordering::Relaxed)) > HELD {
                return Err(axum::Error::new(body::Refused::Broken));
            }
            Ok(data)
        })
    };
    let mut multipart = multer::Multipart::new(stream, boundary);
    let (mut parts, mut text_bytes) = (0, 0);
    while let Some(mut part) = multipart.next_field().await.map_err(refusal)? {
        parts += 1;
        if parts > MAX_PARTS {
            return Err(AppError::TooLarge);
        }
        let name = part.name().unwrap_or("").to_owned();
        // Browsers escape these three in a file's name (HTML's multipart encoding); what else
        // a name holds is cleaned where it is kept (`files::clean_name`).
        let sent_name = part.file_name().map(|n| {
            n.replace("%0A", "\n")
                .replace("%0D", "\r")
                .replace("%22", "\"")
        });
        let Some(sent_name) = sent_name else {
            let mut value = Vec::new();
            while let Some(bytes) = chunk(&mut part, &taken).await.map_err(refusal)? {
                text_bytes += bytes.len();
                if text_bytes > body::ANSWER {
                    return Err(AppError::TooLarge);
                }
                value.extend_from_slice(&bytes);
            }
            if value.contains(&0) {
                return Err(AppError::BadRequest);
            }
            let value = String::from_utf8(value).map_err(|_| AppError::BadRequest)?;
            posted.pairs.push((name, value));
            continue;
        };
        let already = posted.files.iter().any(|(n, _)| *n == name);
        let rule = target.and_then(|t| t.rule(&name).map(|r| (t, r)));
        let Some((target, rule)) = rule.filter(|_| !already) else {
            // Not a file field of this step, or its second file: read and dropped.
            while chunk(&mut part, &taken).await.map_err(refusal)?.is_some() {}
            continue;
        };
        let mut incoming = Incoming::begin(
            target.db,
            target.instance,
            target.step,
            &name,
            &sent_name,
            rule,
            target.now,
        )
        .await?;
        loop {
            match chunk(&mut part, &taken).await {
                Ok(Some(bytes)) => incoming.write(&bytes).await?,
                Ok(None) => break,
                Err(e) => {
                    incoming.abandon().await?;
                    return Err(refusal(e));
                }
            }
        }
        posted.files.push((name, incoming.finish().await?));
    }
    Ok(())
}

/// A part's next data, counted as given back by the parser.
async fn chunk(
    part: &mut multer::Field<'_>,
    taken: &AtomicUsize,
) -> Result<Option<axum::body::Bytes>, multer::Error> {
    let data = part.chunk().await?;
    if let Some(data) = &data {
        taken.fetch_add(data.len(), Ordering::Relaxed);
    }
    Ok(data)
}

/// A multipart body that could not be read: the layer's refusal it carries (too large, too
/// slow, the budget full, broken off), else a malformed body.
fn refusal(error: multer::Error) -> AppError {
    match error {
        multer::Error::StreamReadFailed(_) => body::why(&error).into(),
        _ => AppError::BadRequest,
    }
}

/// The files an answer brought, removed when the request ends without the answer recorded
/// (refused, stale, a link that answers nothing): every early return is covered, and the
/// cron's sweep covers a process killed before it.
pub struct Unkept {
    db: Db,
    files: Vec<Stored>,
}

impl Unkept {
    pub fn new(db: &Db, files: Vec<Stored>) -> Self {
        Self {
            db: db.clone(),
            files,
        }
    }

    /// The answer was recorded, and keeps its files.
    pub fn kept(mut self) {
        self.files.clear();
    }
}

impl Drop for Unkept {
    fn drop(&mut self) {
        if self.files.is_empty() {
            return;
        }
        let (db, files) = (self.db.clone(), std::mem::take(&mut self.files));
        tokio::spawn(async move {
            if let Err(e) = crate::domain::files::discard(&db, &files).await {
                tracing::warn!(error = %e, "files of an answer not recorded were not removed; the sweep will");
            }
        });
    }
}
