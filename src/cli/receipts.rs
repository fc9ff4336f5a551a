//! `orchestra receipt verify FILE`: checks a receipt's signature against the site's published
//! keys, prints what it says in the reader's language, and says whether the history still
//! holds its answer. Exit 0 when the signature is good, 1 when it is not (or the file cannot
//! be read); any input gets a plain message, never a panic.

use std::io::Read;

use super::Out;
use crate::domain::mail::compose::date_words;
use crate::domain::receipts::{self, Claims, Standing};
use crate::i18n::{Message, tr};
use crate::store::{self, Db};

/// The most read of a receipt file: a receipt of the largest answer is far smaller.
const MOST: u64 = 1 << 20;

pub(super) async fn verify(out: &Out, db: &Db, file: &str) -> Result<i32, sqlx::Error> {
    let mut bytes = Vec::new();
    let read = if file == "-" {
        std::io::stdin().take(MOST).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(file).and_then(|f| f.take(MOST).read_to_end(&mut bytes))
    };
    if read.is_err() {
        eprintln!(
            "{}",
            Message::new("cli-receipt-unreadable")
                .arg("file", file)
                .render(out.lang)
        );
        return Ok(1);
    }
    // Bytes that are not text are no receipt: said as such, not as a file that cannot be read.
    let text = String::from_utf8_lossy(&bytes);
    let keys = store::receipts::public_keys(db).await?;
    let (claims, kid) = match receipts::verify(&text, &keys) {
        Ok(verified) => verified,
        Err(invalid) => {
            eprintln!("{}", tr(out.lang, invalid.message_id(), &[]));
            return Ok(1);
        }
    };
    println!(
        "{}",
        Message::new("cli-receipt-valid")
            .arg("kid", kid)
            .render(out.lang)
    );
    for (label, value) in lines(out, &claims) {
        println!(
            "{}",
            Message::new("cli-receipt-line")
                .arg("label", label)
                .arg("value", value)
                .render(out.lang)
        );
    }
    let standing = receipts::standing(db, &claims).await.map_err(|e| match e {
        crate::error::Error::Db(e) => e,
        other => sqlx::Error::Protocol(other.to_string()),
    })?;
    let said = match standing {
        Standing::Matches => "cli-receipt-matches",
        Standing::Erased => "cli-receipt-erased",
        Standing::Differs => "cli-receipt-differs",
        Standing::Absent => "cli-receipt-absent",
    };
    println!("{}", tr(out.lang, said, &[]));
    Ok(0)
}

/// The claims as label and value lines, labels in the reader's language.
fn lines(out: &Out, c: &Claims) -> Vec<(String, String)> {
    let t = |id: &str| tr(out.lang, id, &[]);
    let mut lines = vec![
        (t("cli-receipt-id"), c.jti.clone()),
        (t("cli-receipt-issuer"), c.iss.clone()),
        (t("cli-receipt-issued"), date_words(out.lang, c.iat)),
        (t("cli-receipt-instance"), c.instance.to_string()),
        (
            t("cli-receipt-step"),
            format!("{} · {}", c.step.number, c.step.title),
        ),
        (t("cli-receipt-round"), c.round.to_string()),
        (t("cli-receipt-participant"), c.participant.clone()),
        (
            t("cli-receipt-answered"),
            date_words(out.lang, c.answered_at),
        ),
        (
            t("cli-receipt-link"),
            c.link_record
                .map_or_else(|| t("cli-receipt-link-none"), |l| l.to_string()),
        ),
        (t("cli-receipt-sha256"), c.answer_sha256.clone()),
        (t("cli-receipt-fields"), c.fields.len().to_string()),
    ];
    for f in &c.fields {
        let value = match (&f.file, &f.value) {
            (Some(file), _) => Message::new("cli-receipt-file")
                .arg("name", file.name.clone())
                .arg("sha256", file.sha256.clone())
                .render(out.lang),
            (None, Some(value)) => value.clone(),
            (None, None) => String::new(),
        };
        let label = if f.label.is_empty() {
            &f.name
        } else {
            &f.label
        };
        lines.push((format!("  {label}"), value));
    }
    lines
}
