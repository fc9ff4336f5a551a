//! Participants' emails: their contacts, checked when an instance starts; the SMTP
//! server they go through; what an email says; and the sender that signs each link when it
//! sends. See docs/delivery.md.
//!
//! An address is personal data: it is shown to administrators and to the API token that gave
//! it, and never written to a log line (rows and errors that hold one print without it).

pub mod admin;
mod code;
pub mod compose;
pub mod notice;
pub mod send;

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use lettre::message::Mailbox;
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};

use crate::domain::workflow::{Definition, Participant};
use crate::i18n::{Lang, Message};
use crate::store::mails::{ContactRow, Kind, MailQuota};

/// The longest address kept (RFC 5321's path limit).
pub const MAX_EMAIL: usize = 254;
/// The longest display name kept, in characters.
pub const MAX_NAME: usize = 100;

/// What an API token's request that emails links is held to: the links-per-instance daily cap
/// (a `"send"`), and the hourly quotas of link emails per address and per token.
#[derive(Clone, Copy, Debug)]
pub struct ApiMail<'a> {
    pub keys: &'a crate::domain::keys::SiteKeys,
    pub token: i64,
    pub daily_cap: u64,
    pub per_address: u64,
    pub per_token: u64,
}

impl ApiMail<'_> {
    /// The quota entry of emails to `addresses`: each address by its keyed hash (of its
    /// lowercase form), never in clear.
    pub fn quota<'e>(&self, addresses: impl IntoIterator<Item = &'e str>) -> MailQuota {
        MailQuota {
            token: self.token,
            per_token: self.per_token,
            addresses: addresses
                .into_iter()
                .map(|a| self.keys.keyed_hash("mail-quota", &a.trim().to_lowercase()))
                .collect(),
            per_address: self.per_address,
        }
    }
}

/// A participant's contact as it was typed or sent, before it is checked.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ContactInput {
    pub participant: String,
    pub email: String,
    pub name: String,
    pub lang: String,
}

/// By hand: the address stays out of any log line.
impl fmt::Debug for ContactInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContactInput")
            .field("participant", &self.participant)
            .field("lang", &self.lang)
            .finish_non_exhaustive()
    }
}

/// Which part of a contact a refusal is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The participant it names is not one of the workflow's.
    Participant,
    Email,
    Name,
    Lang,
}

impl Part {
    pub fn as_str(self) -> &'static str {
        match self {
            Part::Participant => "participant",
            Part::Email => "email",
            Part::Name => "name",
            Part::Lang => "lang",
        }
    }
}

/// A contact refused: whose, which part, and the words for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContactRefusal {
    pub participant: String,
    pub part: Part,
    pub participants: String,
}

impl ContactRefusal {
    pub fn message(&self) -> Message {
        match self.part {
            Part::Participant => Message::new("contact-participant-unknown")
                .arg("participant", self.participant.clone())
                .arg("participants", self.participants.clone()),
            Part::Email => Message::new("contact-email-invalid").arg("max", MAX_EMAIL.to_string()),
            Part::Name => Message::new("contact-name-invalid").arg("max", MAX_NAME.to_string()),
            Part::Lang => Message::new("contact-lang-invalid"),
        }
    }
}

/// Whether an address is one an email can be sent to: `local@domain`, as lettre parses it, at
/// most `MAX_EMAIL` bytes.
pub fn valid_email(email: &str) -> bool {
    email.len() <= MAX_EMAIL && email.parse::<lettre::Address>().is_ok()
}

/// Checks the contacts given at a start against the workflow's participants: each names one of
/// them (once), has a valid address, a name of at most `MAX_NAME` characters without control
/// characters, and a language Orchestra speaks (`en` when none is given). A contact with no
/// address is no contact (a form's blank row). Every refusal is returned, each naming its part.
pub fn check(
    definition: &Definition,
    given: &[ContactInput],
) -> Result<Vec<ContactRow>, Vec<ContactRefusal>> {
    let names = definition
        .participants()
        .iter()
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let mut rows: Vec<ContactRow> = Vec::new();
    let mut refusals = Vec::new();
    for c in given {
        let email = c.email.trim();
        let name = c.name.trim();
        if email.is_empty() && name.is_empty() {
            continue;
        }
        let participant: String = c.participant.trim().chars().take(40).collect();
        let refuse = |part| ContactRefusal {
            participant: participant.clone(),
            part,
            participants: names.clone(),
        };
        let known = Participant::parse(&participant)
            .is_some_and(|p| definition.participants().contains(&&p));
        if !known || rows.iter().any(|r| r.participant == participant) {
            refusals.push(refuse(Part::Participant));
            continue;
        }
        if !valid_email(email) {
            refusals.push(refuse(Part::Email));
        }
        if name.chars().count() > MAX_NAME || name.chars().any(char::is_control) {
            refusals.push(refuse(Part::Name));
        }
        let lang = match c.lang.trim() {
            "" => Some(Lang::En),
            code => Lang::from_code(code).filter(|l| l.code() == code),
        };
        let Some(lang) = lang else {
            refusals.push(refuse(Part::Lang));
            continue;
        };
        rows.push(ContactRow {
            participant,
            email: email.to_owned(),
            name: name.to_owned(),
            lang: lang.code().to_owned(),
        });
    }
    if refusals.is_empty() {
        Ok(rows)
    } else {
        Err(refusals)
    }
}

/// How long a claim holds a batch; `outbox::Lease` starts no email that would end past it, and
/// the rest of the batch is handed back.
pub const LEASE: i64 = 120;
/// The longest one email's SMTP exchange may take, whatever the server does.
pub const LONGEST_SEND: Duration = Duration::from_secs(30);
/// Waits before each new try of an email the server did not take (seconds): about two days in
/// all, then the row is `failed`.
pub const BACKOFF: [i64; 8] = [60, 300, 1800, 3600, 7200, 21_600, 43_200, 86_400];

/// When to try again after the `attempts`-th failure (1 for the first), with up to 10% of
/// jitter; `None` once the schedule is spent.
pub fn retry_at(now: i64, attempts: i64, jitter: u8) -> Option<i64> {
    let wait = *BACKOFF.get(usize::try_from(attempts - 1).ok()?)?;
    Some(now + wait + wait * i64::from(jitter) / 2550)
}

/// How long one SMTP exchange may take, connection included.
pub const SMTP_TIMEOUT: Duration = Duration::from_secs(10);

/// The SMTP server emails go through (`ORCHESTRA_SMTP_URL`) and whom they are from
/// (`ORCHESTRA_MAIL_FROM`). The URL may hold a password: this type never prints it.
#[derive(Clone)]
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    /// What this mailer did: the metrics' and the status report's figures.
    pub figures: std::sync::Arc<Figures>,
    pub from: Mailbox,
    /// The server's host and port, for the status report (no user, no password).
    pub server: String,
}

impl fmt::Debug for Mailer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mailer")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// Why the mail settings were refused. Neither says the URL: it may hold a password.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MailerRefusal {
    Url,
    From,
    /// One of the two is set without the other.
    Half,
    /// A password over plain `smtp://` to another machine: it would cross the network in clear.
    PlainPassword,
}

impl MailerRefusal {
    pub fn message(self) -> Message {
        match self {
            MailerRefusal::Url => Message::new("config-env-smtp-url"),
            MailerRefusal::From => Message::new("config-env-mail-from"),
            MailerRefusal::Half => Message::new("config-env-smtp-half"),
            MailerRefusal::PlainPassword => Message::new("config-env-smtp-plain"),
        }
    }
}

impl Mailer {
    /// From `smtps://user:password@host` (TLS from the first byte), `smtp://host:port?tls=required`
    /// (STARTTLS, required), or `smtp://host:port` (in clear: a relay on this machine or a
    /// trusted network; a password is refused there unless the host is a loopback address)
    /// and a `From` such as `Orchestra <orchestra@example.org>`.
    pub fn new(url: &str, from: &str) -> Result<Self, MailerRefusal> {
        let parsed = url::Url::parse(url.trim()).map_err(|_| MailerRefusal::Url)?;
        if !matches!(parsed.scheme(), "smtp" | "smtps") || parsed.host_str().is_none() {
            return Err(MailerRefusal::Url);
        }
        let tls_required = parsed
            .query_pairs()
            .any(|(k, v)| k == "tls" && v == "required");
        // An smtp: URL's host is opaque to the url crate (not a special scheme): an address
        // is read from its text.
        let host = parsed.host_str().unwrap_or_default();
        let loopback = host == "localhost"
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        if parsed.scheme() == "smtp" && parsed.password().is_some() && !tls_required && !loopback {
            return Err(MailerRefusal::PlainPassword);
        }
        let from: Mailbox = from.trim().parse().map_err(|_| MailerRefusal::From)?;
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url.trim())
            .map_err(|_| MailerRefusal::Url)?
            .timeout(Some(SMTP_TIMEOUT))
            .build();
        let server = match parsed.port() {
            Some(port) => format!("{}:{port}", parsed.host_str().unwrap_or_default()),
            None => parsed.host_str().unwrap_or_default().to_owned(),
        };
        Ok(Self {
            transport,
            figures: Default::default(),
            from,
            server,
        })
    }

    /// From `ORCHESTRA_SMTP_URL` and `ORCHESTRA_MAIL_FROM` through `get`; `None` when neither
    /// is set (no email is sent).
    pub fn from_lookup(
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, MailerRefusal> {
        let url = get("ORCHESTRA_SMTP_URL").filter(|v| !v.trim().is_empty());
        let from = get("ORCHESTRA_MAIL_FROM").filter(|v| !v.trim().is_empty());
        match (url, from) {
            (None, None) => Ok(None),
            (Some(url), Some(from)) => Self::new(&url, &from).map(Some),
            _ => Err(MailerRefusal::Half),
        }
    }

    /// Sends one message; the error's kind when it was not taken (never the server's words,
    /// which may quote an address).
    pub async fn send(&self, message: lettre::Message) -> Result<(), &'static str> {
        let outcome = match self.transport.send(message).await {
            Ok(_) => Ok(()),
            Err(e) if e.is_permanent() => Err("refused by the server"),
            Err(e) if e.is_transient() => Err("deferred by the server"),
            Err(e) if e.is_timeout() => Err("timeout"),
            Err(_) => Err("connect"),
        };
        let down = matches!(outcome, Err("timeout" | "connect"));
        self.figures.unreachable.store(down, Ordering::Relaxed);
        outcome
    }

    /// Whether the server answers (the status report's check): a connection and a NOOP.
    pub async fn reachable(&self) -> bool {
        matches!(
            tokio::time::timeout(SMTP_TIMEOUT, self.transport.test_connection()).await,
            Ok(Ok(true))
        )
    }
}

/// A mailer's figures, for the metrics and the status report: each email tried, by kind and
/// by how its try ended, how many were due and waiting after the sender's last run, and
/// whether the server answered the last try.
#[derive(Debug, Default)]
pub struct Figures {
    tried: [[AtomicU64; Tried::ALL.len()]; EMAILED.len()],
    waiting: AtomicU64,
    /// The last SMTP exchange failed to connect or timed out, and none has worked since.
    unreachable: std::sync::atomic::AtomicBool,
    /// Receipts carried by the outcome emails sent.
    pub receipts: crate::domain::receipts::Figures,
}

/// The kinds of rows that are emails (a deadline is a chore, never sent).
pub const EMAILED: [Kind; 5] = [
    Kind::Link,
    Kind::Reminder,
    Kind::Closed,
    Kind::Outcome,
    Kind::Code,
];

/// How one email's try ended, as the metrics count it (in [`Tried::ALL`]'s order: a try's
/// place among a kind's counts is its discriminant).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tried {
    /// The server took it.
    Sent,
    /// Not taken (refused for now, deferred, unreachable, timed out): tried again later.
    Retried,
    /// Not taken, for good: the schedule of tries is spent, or the address cannot be written.
    Failed,
}

impl Tried {
    pub const ALL: [Tried; 3] = [Tried::Sent, Tried::Retried, Tried::Failed];

    pub fn as_str(self) -> &'static str {
        match self {
            Tried::Sent => "sent",
            Tried::Retried => "retried",
            Tried::Failed => "failed",
        }
    }
}

impl Figures {
    /// Counts one email's try, as soon as it ended.
    fn count(&self, kind: Kind, tried: Tried) {
        if let Some(k) = EMAILED.iter().position(|&e| e == kind) {
            self.tried[k][tried as usize].fetch_add(1, Ordering::Relaxed);
        }
    }

    fn waiting(&self, n: i64) {
        self.waiting
            .store(u64::try_from(n).unwrap_or(0), Ordering::Relaxed);
    }

    /// Whether the SMTP server did not answer the last try.
    pub fn unreachable(&self) -> bool {
        self.unreachable.load(Ordering::Relaxed)
    }

    /// The emails of `kind` whose try ended as `tried`.
    pub fn tried(&self, kind: Kind, tried: Tried) -> u64 {
        EMAILED
            .iter()
            .position(|&e| e == kind)
            .map_or(0, |k| self.tried[k][tried as usize].load(Ordering::Relaxed))
    }

    /// (sent, retried, failed) of every kind, and waiting.
    pub fn read(&self) -> (u64, u64, u64, u64) {
        let all = |t| EMAILED.iter().map(|&k| self.tried(k, t)).sum();
        (
            all(Tried::Sent),
            all(Tried::Retried),
            all(Tried::Failed),
            self.waiting.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smtp_settings_are_refused_without_repeating_them() {
        let from = "Orchestra <orchestra@example.org>";
        assert!(Mailer::new("smtps://u:p@mail.example.org", from).is_ok());
        assert!(Mailer::new("smtp://u:p@mail.example.org:587?tls=required", from).is_ok());
        assert!(Mailer::new("smtp://127.0.0.1:2525", from).is_ok());
        assert!(Mailer::new("smtp://u:p@127.0.0.1:2525", from).is_ok());
        assert_eq!(
            Mailer::new("smtp://u:p@mail.example.org", from).err(),
            Some(MailerRefusal::PlainPassword)
        );
        assert_eq!(
            Mailer::new("http://mail.example.org", from).err(),
            Some(MailerRefusal::Url)
        );
        assert_eq!(
            Mailer::new("smtps://mail.example.org", "not an address").err(),
            Some(MailerRefusal::From)
        );
        let get = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert!(Mailer::from_lookup(get(&[])).unwrap().is_none());
        assert_eq!(
            Mailer::from_lookup(get(&[("ORCHESTRA_SMTP_URL", "smtp://127.0.0.1:25")])).err(),
            Some(MailerRefusal::Half)
        );
        let mailer = Mailer::from_lookup(get(&[
            (
                "ORCHESTRA_SMTP_URL",
                "smtps://user:hunter2@mail.example.org:465",
            ),
            ("ORCHESTRA_MAIL_FROM", "orchestra@example.org"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(mailer.server, "mail.example.org:465");
        assert!(!format!("{mailer:?}").contains("hunter2"));
        for refusal in [
            MailerRefusal::Url,
            MailerRefusal::From,
            MailerRefusal::Half,
            MailerRefusal::PlainPassword,
        ] {
            for lang in Lang::ALL {
                let text = refusal.message().render(lang);
                assert!(text.contains("ORCHESTRA_"), "{text}");
            }
        }
    }

    #[test]
    fn a_contact_prints_without_its_address() {
        let c = ContactInput {
            participant: "legal".into(),
            email: "ada@example.org".into(),
            name: "Ada".into(),
            lang: "fr".into(),
        };
        assert!(!format!("{c:?}").contains("ada@example.org"));
        let row = ContactRow {
            participant: "legal".into(),
            email: "ada@example.org".into(),
            name: "Ada".into(),
            lang: "fr".into(),
        };
        assert!(!format!("{row:?}").contains("ada@example.org"));
    }
}
