//! Administrators' own emails: an invitation and a reset link (the one-time link of
//! `domain::admins`), and the notice that a password or a second factor changed. Queued in
//! `admin_mails`, claimed by lease and tried on the participants' schedule (`send::retry_at`),
//! by the same runs as participants' emails (`send::run_until`). The link is derived again
//! from the site keys and the row's nonce when it is sent, and is never stored or logged.

use askama::Template;

use super::Mailer;
use super::compose::{mailbox, message, message_id};
use super::{LEASE, LONGEST_SEND, retry_at};
use crate::domain::admins::{About, opened, token_of};
use crate::domain::outbox::{Lease, Stop};
use crate::domain::site::Snapshot;
use crate::error::Error;
use crate::i18n::{Lang, tr};
use crate::store::{self, Db, admin_mails};

/// Rows claimed per run.
const BATCH: i64 = 20;

/// What one run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Run {
    pub claimed: u64,
    pub sent: u64,
    pub retried: u64,
    pub failed: u64,
    pub skipped: u64,
}

/// Sends the administrators' emails due at `now`, handing back what it has not begun once
/// `stop` is set or its claim leaves no room for another exchange.
pub async fn run_until(
    db: &Db,
    site: &Snapshot,
    mailer: &Mailer,
    now: i64,
    stop: &Stop,
) -> Result<Run, Error> {
    let claimed = admin_mails::claim(db, now, LEASE, BATCH).await?;
    let lease = Lease::new(LEASE);
    let mut run = Run {
        claimed: claimed.len() as u64,
        ..Run::default()
    };
    let mut claimed = claimed.into_iter();
    while let Some(m) = claimed.next() {
        if stop.is_set() || !lease.room_for(LONGEST_SEND) {
            let rest: Vec<i64> = std::iter::once(m.id).chain(claimed.map(|m| m.id)).collect();
            store::queue::release(db, store::queue::Table::AdminMails, rest).await?;
            break;
        }
        let now = now.max(store::now());
        let Some(about) = About::parse(&m.kind) else {
            admin_mails::finish(db, m.id, "failed", now, Some("unknown kind"), false).await?;
            run.failed += 1;
            continue;
        };
        let url = match about.link() {
            Some(link) => {
                let token = token_of(&site.keys, &m.nonce);
                // A link spent, replaced or expired while it waited is not sent.
                let live = opened(db, &site.keys, link, &token).await?.is_some();
                if !live {
                    admin_mails::finish(db, m.id, "skipped", now, None, false).await?;
                    run.skipped += 1;
                    continue;
                }
                Some(format!(
                    "{}{}{token}",
                    site.settings.base_url.trim_end_matches('/'),
                    link.path()
                ))
            }
            None => None,
        };
        let lang = Lang::from_code(&m.lang).unwrap_or_default();
        let Some(to) = mailbox(&m.email, &m.name) else {
            admin_mails::finish(db, m.id, "failed", now, Some("address"), true).await?;
            run.failed += 1;
            continue;
        };
        let letter = Letter {
            about,
            lang,
            site: &site.settings.site_name,
            name: &m.name,
            url: url.as_deref(),
            expires: m.expires_at.unwrap_or(now),
        };
        // Its own space of Message-IDs: a participant's row of the same number is another email.
        let id = message_id(&site.keys, -m.id, &site.settings.base_url, &mailer.from);
        let outcome = match message(
            mailer.from.clone(),
            to,
            &id,
            letter.subject(),
            letter.bodies(),
        ) {
            Ok(message) => tokio::time::timeout(LONGEST_SEND, mailer.send(message))
                .await
                .unwrap_or(Err("timeout")),
            Err(e) => Err(e),
        };
        match outcome {
            Ok(()) => {
                admin_mails::finish(db, m.id, "sent", now, None, true).await?;
                tracing::info!(admin = ?m.admin_id, kind = about.as_str(), "an administrator's email was sent");
                run.sent += 1;
            }
            Err(error) => {
                let jitter = crate::domain::keys::random_bytes()[0];
                match retry_at(now, m.attempts + 1, jitter) {
                    Some(at) => {
                        admin_mails::finish(db, m.id, "pending", at, Some(error), true).await?;
                        run.retried += 1;
                    }
                    None => {
                        admin_mails::finish(db, m.id, "failed", now, Some(error), true).await?;
                        run.failed += 1;
                    }
                }
                tracing::info!(admin = ?m.admin_id, kind = about.as_str(), error, "an administrator's email was not sent");
            }
        }
    }
    Ok(run)
}

/// What an administrator's email says.
struct Letter<'a> {
    about: About,
    lang: Lang,
    site: &'a str,
    name: &'a str,
    url: Option<&'a str>,
    expires: i64,
}

struct Words {
    greeting: String,
    intro: String,
    action: String,
    expires: String,
    footer: String,
    colon: String,
}

#[derive(Template)]
#[template(path = "mail/admin.txt")]
struct Text<'a> {
    w: &'a Words,
    url: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "mail/admin.html")]
struct Html<'a> {
    w: &'a Words,
    url: Option<&'a str>,
    lang: &'a str,
    title: &'a str,
}

impl Letter<'_> {
    fn args(&self) -> [(&str, &str); 2] {
        [("site", self.site), ("name", self.name)]
    }

    fn subject(&self) -> String {
        let id = format!("mail-admin-{}-subject", self.about.as_str());
        tr(self.lang, &id, &self.args())
    }

    fn bodies(&self) -> (String, String) {
        let (lang, args) = (self.lang, self.args());
        let w = Words {
            greeting: tr(lang, "mail-greeting", &[("name", self.name)]),
            intro: tr(
                lang,
                &format!("mail-admin-{}-intro", self.about.as_str()),
                &args,
            ),
            action: match self.about.link() {
                Some(_) => tr(
                    lang,
                    &format!("mail-admin-{}-action", self.about.as_str()),
                    &[],
                ),
                None => String::new(),
            },
            expires: tr(
                lang,
                "mail-admin-expires",
                &[("expires", &super::compose::date_words(lang, self.expires))],
            ),
            footer: tr(lang, "mail-admin-footer", &args),
            colon: tr(lang, "mail-colon", &[]),
        };
        let text = Text {
            w: &w,
            url: self.url,
        }
        .render()
        .unwrap_or_default();
        let html = Html {
            w: &w,
            url: self.url,
            lang: lang.code(),
            title: &self.subject(),
        }
        .render()
        .unwrap_or_default();
        (text, html)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_email_has_its_words_in_each_language() {
        for lang in Lang::ALL {
            for about in About::ALL {
                let letter = Letter {
                    about,
                    lang,
                    site: "Acme",
                    name: "ada",
                    url: about.link().map(|_| "https://x.example/setup/invite/t"),
                    expires: 1_797_097_620,
                };
                let subject = letter.subject();
                assert!(
                    subject.contains("Acme") && !subject.contains("mail-admin"),
                    "{subject}"
                );
                let (text, html) = letter.bodies();
                assert!(
                    !text.contains("mail-admin") && !html.contains("mail-admin"),
                    "{text}"
                );
                assert_eq!(text.contains("https://x.example"), about.link().is_some());
            }
        }
    }
}
