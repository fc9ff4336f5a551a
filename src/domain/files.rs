//! Files a visitor uploads with a form: which kinds a field takes, what a file is by its first
//! bytes (never by its name or the type its sender claims), and the name it is kept under.
//!
//! A file is served to someone other than who sent it, so its kind is decided here, once, from
//! its content: an HTML page named `.pdf` is markup, and markup is no kind a field takes.
//! Nothing here opens a file's insides: an archive is known by its first header alone.

use serde::{Deserialize, Serialize};

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
    fn a_name_is_its_last_part_without_controls() {
        assert_eq!(clean_name("../../x"), "x");
        assert_eq!(clean_name("C:\\Users\\me\\receipt.pdf"), "receipt.pdf");
        assert_eq!(clean_name("a\r\nSet-Cookie: x.pdf"), "aSet-Cookie: x.pdf");
        assert_eq!(clean_name("../.."), "file");
        assert_eq!(clean_name(".htaccess"), "htaccess");
        assert_eq!(clean_name("reçu été.pdf"), "reçu été.pdf");
    }
}
