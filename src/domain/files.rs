//! Files a visitor uploads with a form: which kinds a field takes, what a file is by its first
//! bytes (never by its name or the type its sender claims), and the name it is kept under.
//!
//! A file is served to someone other than who sent it, so its kind is decided here, once, from
//! its content: an HTML page named `.pdf` is markup, and markup is no kind a field takes.
//! Nothing here opens a file's insides: an archive is known by its first header alone.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::i18n::Message;
use crate::store::Db;
use crate::store::files::{self as stored, CHUNK};

/// The kinds of file a `(file)` field can take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Pdf,
    Image,
    Text,
    Office,
    Zip,
}

impl Kind {
    /// Every kind, in the order the docs list them.
    pub const ALL: [Kind; 5] = [Self::Pdf, Self::Image, Self::Text, Self::Office, Self::Zip];
    /// What a field takes when its definition names no kind: documents people send, nothing a
    /// browser would run and no archive.
    pub const SAFE: [Kind; 4] = [Self::Pdf, Self::Image, Self::Text, Self::Office];

    pub fn parse(word: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(word))
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Pdf => "pdf",
            Self::Image => "image",
            Self::Text => "text",
            Self::Office => "office",
            Self::Zip => "zip",
        }
    }

    /// What a browser's file picker is told to offer for this kind (`accept`).
    pub fn accept(self) -> &'static str {
        match self {
            Self::Pdf => ".pdf,application/pdf",
            Self::Image => "image/png,image/jpeg,image/gif,image/webp",
            Self::Text => ".txt,.csv,text/plain",
            Self::Office => ".doc,.docx,.xls,.xlsx,.ppt,.pptx,.odt,.ods,.odp",
            Self::Zip => ".zip,application/zip",
        }
    }

    /// The kinds' names, for an error that says what is allowed.
    pub fn names() -> String {
        Self::ALL.map(Self::name).join(", ")
    }
}

/// What a file is, by its first bytes: its kind and the media type it is served as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sniffed {
    pub kind: Kind,
    pub media_type: &'static str,
}

/// How many of a file's first bytes `sniff` wants (fewer when the file is shorter).
pub const SNIFF_BYTES: usize = 64 << 10;

/// What `head`, a file's first bytes (at most `SNIFF_BYTES`, all of it when shorter), is; `None`
/// for anything that is none of the kinds, markup above all.
pub fn sniff(head: &[u8]) -> Option<Sniffed> {
    let is = |kind, media_type| Some(Sniffed { kind, media_type });
    if head.starts_with(b"%PDF-") {
        return is(Kind::Pdf, "application/pdf");
    }
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        return is(Kind::Image, "image/png");
    }
    if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return is(Kind::Image, "image/jpeg");
    }
    if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        return is(Kind::Image, "image/gif");
    }
    if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
        return is(Kind::Image, "image/webp");
    }
    if head.starts_with(&[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]) {
        return is(Kind::Office, "application/vnd.ms-office");
    }
    if head.starts_with(b"PK\x03\x04") {
        return Some(zipped(head));
    }
    text(head).then_some(Sniffed {
        kind: Kind::Text,
        media_type: "text/plain; charset=utf-8",
    })
}

/// An office document is a zip archive whose first entries name its parts; any other zip is
/// an archive. Only the local headers' names are read, never an entry's contents.
fn zipped(head: &[u8]) -> Sniffed {
    let first = first_entry(head).unwrap_or_default();
    let contains = |needle: &[u8]| head.windows(needle.len()).any(|w| w == needle);
    let office = |media_type| Sniffed {
        kind: Kind::Office,
        media_type,
    };
    if first == b"mimetype" {
        // OpenDocument: the media type is the first entry, stored uncompressed right after it.
        let rest = &head[30 + first.len()..];
        for (prefix, media_type) in [
            (
                &b"application/vnd.oasis.opendocument.text"[..],
                "application/vnd.oasis.opendocument.text",
            ),
            (
                b"application/vnd.oasis.opendocument.spreadsheet",
                "application/vnd.oasis.opendocument.spreadsheet",
            ),
            (
                b"application/vnd.oasis.opendocument.presentation",
                "application/vnd.oasis.opendocument.presentation",
            ),
        ] {
            if rest.starts_with(prefix) {
                return office(media_type);
            }
        }
    }
    let ooxml = first == b"[Content_Types].xml"
        || first.starts_with(b"_rels/")
        || first.starts_with(b"docProps/");
    if ooxml {
        if contains(b"word/") {
            return office(
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            );
        }
        if contains(b"xl/") {
            return office("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
        }
        if contains(b"ppt/") {
            return office(
                "application/vnd.openxmlformats-officedocument.presentationml.presentation",
            );
        }
    }
    Sniffed {
        kind: Kind::Zip,
        media_type: "application/zip",
    }
}

/// The name of a zip's first entry, from its local file header.
fn first_entry(head: &[u8]) -> Option<&[u8]> {
    let len = usize::from(u16::from_le_bytes([*head.get(26)?, *head.get(27)?]));
    head.get(30..30 + len)
}

/// Plain text: UTF-8 (a character cut at the sample's end allowed), no control characters but
/// tabs, line ends and form feeds, and no markup: nothing a browser would render as a page.
fn text(head: &[u8]) -> bool {
    let valid = match std::str::from_utf8(head) {
        Ok(s) => s,
        Err(e) if e.error_len().is_none() && head.len() >= SNIFF_BYTES => {
            // Only a character cut by the sample's end.
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or("")
        }
        Err(_) => return false,
    };
    if valid
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\u{c}'))
    {
        return false;
    }
    let start = valid.trim_start_matches(['\u{feff}', ' ', '\t', '\n', '\r', '\u{c}']);
    if start.starts_with('<') {
        return false;
    }
    let lower = valid.to_ascii_lowercase();
    ![
        "<html",
        "<script",
        "<svg",
        "<iframe",
        "<!doctype",
        "<body",
        "<?xml",
    ]
    .iter()
    .any(|tag| lower.contains(tag))
}

/// The name a file is kept and offered under: its last path part (a sender's `../../x` is `x`),
/// without control characters (a newline would split a header), at most 200 characters;
/// `file` when nothing is left.
pub fn clean_name(sent: &str) -> String {
    let last = sent.rsplit(['/', '\\']).next().unwrap_or("");
    let cleaned: String = last
        .chars()
        .filter(|c| !c.is_control() && !matches!(c, '\u{2028}' | '\u{2029}' | '\u{202e}'))
        .take(200)
        .collect();
    let cleaned = cleaned.trim().trim_start_matches('.').trim();
    if cleaned.is_empty() {
        "file".to_owned()
    } else {
        cleaned.to_owned()
    }
}

/// A file kept with an answer, as the answer records it: what the history, the API and the
/// webhook say of it (never its bytes).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stored {
    pub id: i64,
    pub name: String,
    pub size: u64,
    pub media_type: String,
    pub sha256: String,
}

impl Stored {
    /// Its size as a person reads it, in their language: `312 KB`, `2.4 MB`; `2,4 Mo`.
    pub fn size_in(&self, lang: crate::i18n::Lang) -> String {
        size_in(lang, self.size)
    }
}

/// A size in a language's words: whole bytes or KB, or MB with one decimal (`1.5 MB`,
/// `1,5 Mo`).
pub fn size_in(lang: crate::i18n::Lang, bytes: u64) -> String {
    let (number, unit) = if bytes < 1 << 10 {
        (bytes.to_string(), "B")
    } else if bytes < 1 << 20 {
        ((bytes + 512).div_euclid(1 << 10).to_string(), "KB")
    } else if bytes % (1 << 20) == 0 {
        ((bytes >> 20).to_string(), "MB")
    } else {
        (format!("{:.1}", bytes as f64 / f64::from(1 << 20)), "MB")
    };
    crate::i18n::tr(lang, "file-size", &[("size", &number), ("unit", unit)]).replace(
        '.',
        crate::i18n::tr(lang, "decimal-separator", &[]).as_str(),
    )
}

/// A size cap as a message's `size` and `unit` (`file-size`): whole MB or KB, so no decimal
/// separator is needed in any language.
pub fn size_args(message: Message, bytes: u64) -> Message {
    let (size, unit) = if bytes % (1 << 20) == 0 {
        (bytes >> 20, "MB")
    } else if bytes % (1 << 10) == 0 || bytes > 1 << 10 {
        (bytes.div_ceil(1 << 10), "KB")
    } else {
        (bytes, "B")
    };
    message.arg("size", size.to_string()).arg("unit", unit)
}

/// What one uploaded file came to.
#[derive(Debug)]
pub enum Outcome {
    Stored(Stored),
    /// The field's input held no file.
    Empty,
    /// Too large or of a kind the field does not take; nothing of it is kept.
    Refused(Message),
}

/// A file arriving for a field: its bytes are stored a chunk at a time as they come, hashed on
/// the way, and its kind is decided by its first bytes before any of them is stored. Past its
/// cap or of a wrong kind, what was stored is removed and the rest is read and dropped, so the
/// form's other fields still arrive and come back to the visitor.
pub struct Incoming<'a> {
    db: &'a Db,
    id: i64,
    name: String,
    max_bytes: u64,
    kinds: &'a [Kind],
    /// Bytes not yet stored: up to `SNIFF_BYTES` before the kind is known, then up to a chunk.
    pending: Vec<u8>,
    sniffed: Option<Sniffed>,
    seq: i64,
    size: u64,
    hash: Sha256,
    refused: Option<Message>,
}

impl<'a> Incoming<'a> {
    /// Begins storing a file sent under `name` for a field of `instance`'s step.
    pub async fn begin(
        db: &'a Db,
        instance: i64,
        step: i64,
        field: &str,
        name: &str,
        rule: (u64, &'a [Kind]),
        now: i64,
    ) -> Result<Self, Error> {
        let name = clean_name(name);
        let id = stored::begin(db, instance, step, field, &name, now).await?;
        Ok(Self {
            db,
            id,
            name,
            max_bytes: rule.0,
            kinds: rule.1,
            pending: Vec::new(),
            sniffed: None,
            seq: 0,
            size: 0,
            hash: Sha256::new(),
            refused: None,
        })
    }

    /// Takes the next bytes of the file.
    pub async fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if self.refused.is_some() {
            return Ok(());
        }
        self.size += bytes.len() as u64;
        if self.size > self.max_bytes {
            let message = size_args(Message::new("field-file-too-large"), self.max_bytes);
            return self.refuse(message).await;
        }
        self.hash.update(bytes);
        self.pending.extend_from_slice(bytes);
        if self.sniffed.is_none() && self.pending.len() >= SNIFF_BYTES && !self.sniff().await? {
            return Ok(());
        }
        while self.sniffed.is_some() && self.pending.len() >= CHUNK {
            stored::put_chunk(self.db, self.id, self.seq, &self.pending[..CHUNK]).await?;
            self.seq += 1;
            self.pending.drain(..CHUNK);
        }
        Ok(())
    }

    /// The file as it ended: stored, empty, or refused (and removed).
    pub async fn finish(mut self) -> Result<Outcome, Error> {
        if let Some(why) = self.refused.take() {
            return Ok(Outcome::Refused(why));
        }
        if self.size == 0 {
            stored::discard(self.db, self.id).await?;
            return Ok(Outcome::Empty);
        }
        if self.sniffed.is_none() && !self.sniff().await? {
            return Ok(Outcome::Refused(
                self.refused
                    .take()
                    .unwrap_or_else(|| Message::new("field-file-kind")),
            ));
        }
        self.flush().await?;
        let media_type = self.sniffed.map_or("", |s| s.media_type);
        let sha256 = hex::encode(self.hash.finalize_reset());
        stored::finish(self.db, self.id, media_type, self.size as i64, &sha256).await?;
        Ok(Outcome::Stored(Stored {
            id: self.id,
            name: std::mem::take(&mut self.name),
            size: self.size,
            media_type: media_type.to_owned(),
            sha256,
        }))
    }

    /// Removes what was stored of a file whose upload was cut off.
    pub async fn abandon(self) -> Result<(), Error> {
        Ok(stored::discard(self.db, self.id).await?)
    }

    /// Decides the kind from the bytes held; `false` (and the file refused) when the field does
    /// not take it.
    async fn sniff(&mut self) -> Result<bool, Error> {
        match sniff(&self.pending) {
            Some(found) if self.kinds.contains(&found.kind) => {
                self.sniffed = Some(found);
                Ok(true)
            }
            _ => {
                let kinds: Vec<&str> = self.kinds.iter().map(|k| k.name()).collect();
                self.refuse(Message::new("field-file-kind").arg("kinds", kinds.join(", ")))
                    .await?;
                Ok(false)
            }
        }
    }

    async fn flush(&mut self) -> Result<(), Error> {
        for piece in self.pending.chunks(CHUNK) {
            stored::put_chunk(self.db, self.id, self.seq, piece).await?;
            self.seq += 1;
        }
        self.pending.clear();
        Ok(())
    }

    async fn refuse(&mut self, why: Message) -> Result<(), Error> {
        self.refused = Some(why);
        self.pending = Vec::new();
        stored::discard(self.db, self.id).await?;
        Ok(())
    }
}

/// Removes files that arrived with an answer that was not recorded.
pub async fn discard(db: &Db, files: &[Stored]) -> Result<(), Error> {
    for file in files {
        stored::discard(db, file.id).await?;
    }
    Ok(())
}

/// How long an arriving file may wait for its answer before the sweep removes it: longer than
/// any body may take to arrive.
pub const ARRIVING_SECS: i64 = 24 * 3600;

/// What binds a download address to the link it is under and the file it names: a keyed
/// hash of both, 128 bits, so one changed character anywhere refuses it.
pub fn download_mac(keys: &crate::domain::keys::SiteKeys, link: &str, file: i64) -> String {
    let mut full = keys.keyed_hash("file-download", &format!("{link}\0{file}"));
    full.truncate(32);
    full
}

pub fn download_mac_matches(
    keys: &crate::domain::keys::SiteKeys,
    link: &str,
    file: i64,
    mac: &str,
) -> bool {
    use subtle::ConstantTimeEq;
    download_mac(keys, link, file)
        .as_bytes()
        .ct_eq(mac.as_bytes())
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_what_its_bytes_say_whatever_its_name() {
        assert_eq!(sniff(b"%PDF-1.7\n...").map(|s| s.kind), Some(Kind::Pdf));
        assert_eq!(
            sniff(b"\x89PNG\r\n\x1a\n....").map(|s| s.media_type),
            Some("image/png")
        );
        assert_eq!(
            sniff(b"Invoice 42\ntotal 1250,50\n").map(|s| s.kind),
            Some(Kind::Text)
        );
        for markup in [
            &b"<!DOCTYPE html><html><script>alert(1)</script>"[..],
            b"  <html>",
            b"\xef\xbb\xbf<svg onload=alert(1)>",
            b"Dear sir,\n<script>alert(1)</script>",
            b"<?xml version=\"1.0\"?>",
        ] {
            assert_eq!(sniff(markup), None, "{}", String::from_utf8_lossy(markup));
        }
        assert_eq!(sniff(b"\x00\x01\x02binary"), None);
        assert_eq!(sniff(b"MZ\x90\x00 an executable"), None);
    }

    fn zip_with_first_entry(name: &str, then: &[u8]) -> Vec<u8> {
        let mut out = b"PK\x03\x04".to_vec();
        out.extend_from_slice(&[0; 22]);
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(then);
        out
    }

    #[test]
    fn an_archive_is_known_by_its_first_header_and_an_office_document_by_its_parts() {
        let docx = zip_with_first_entry(
            "[Content_Types].xml",
            b"....PK\x03\x04....word/document.xml",
        );
        assert_eq!(
            sniff(&docx).map(|s| (s.kind, s.media_type)),
            Some((
                Kind::Office,
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
            ))
        );
        let odt = zip_with_first_entry("mimetype", b"application/vnd.oasis.opendocument.text");
        assert_eq!(sniff(&odt).map(|s| s.kind), Some(Kind::Office));
        let other = zip_with_first_entry("bomb.bin", b"\x00\x00");
        assert_eq!(sniff(&other).map(|s| s.kind), Some(Kind::Zip));
        assert_eq!(
            sniff(b"PK\x03\x04").map(|s| s.kind),
            Some(Kind::Zip),
            "a header cut short"
        );
    }

    #[test]
    fn a_size_reads_in_the_readers_language() {
        use crate::i18n::Lang;
        let line = |lang, bytes| size_in(lang, bytes).replace(['\u{2068}', '\u{2069}'], "");
        assert_eq!(line(Lang::En, 40 << 10), "40 KB");
        assert_eq!(line(Lang::Fr, 40 << 10), "40 Ko");
        assert_eq!(line(Lang::En, 3 << 19), "1.5 MB");
        assert_eq!(line(Lang::Fr, 3 << 19), "1,5 Mo");
        assert_eq!(line(Lang::Fr, 10 << 20), "10 Mo");
    }

    #[test]
    fn a_name_is_its_last_part_without_controls() {
        assert_eq!(clean_name("../../x"), "x");
        assert_eq!(clean_name("C:\\Users\\me\\receipt.pdf"), "receipt.pdf");
        assert_eq!(clean_name("a\r\nSet-Cookie: x.pdf"), "aSet-Cookie: x.pdf");
        assert_eq!(clean_name("../.."), "file");
        assert_eq!(clean_name(".htaccess"), "htaccess");
        assert_eq!(clean_name("reçu été.pdf"), "reçu été.pdf");
    }
}
