//! A real SMTP server on loopback (`mailin-embedded`, in a thread of its own) that keeps every
//! message it is given, and the little reading of a message the mail tests need.

use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};

use base64::Engine;
use mailin_embedded::{Handler, Response, Server, SslConfig, response};

/// One message as the server took it: its envelope's recipients and its raw text.
#[derive(Clone, Debug)]
pub struct Received {
    pub to: Vec<String>,
    pub raw: String,
}

#[derive(Clone)]
struct Keep {
    kept: Arc<Mutex<Vec<Received>>>,
    to: Vec<String>,
    data: Vec<u8>,
}

impl Handler for Keep {
    fn data_start(&mut self, _domain: &str, _from: &str, _is8bit: bool, to: &[String]) -> Response {
        self.to = to.to_vec();
        self.data.clear();
        response::OK
    }

    fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.data.extend_from_slice(buf);
        Ok(())
    }

    fn data_end(&mut self) -> Response {
        self.kept.lock().unwrap().push(Received {
            to: std::mem::take(&mut self.to),
            raw: String::from_utf8_lossy(&self.data).into_owned(),
        });
        response::OK
    }
}

/// The server: where it listens and what it was given.
pub struct Smtp {
    pub addr: SocketAddr,
    kept: Arc<Mutex<Vec<Received>>>,
}

impl Smtp {
    /// Starts a server on a free loopback port.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        Self::on(listener)
    }

    /// Starts a server on a port a test chose (one where no server answered before).
    pub fn on(listener: TcpListener) -> Self {
        let addr = listener.local_addr().unwrap();
        let kept = Arc::new(Mutex::new(Vec::new()));
        let mut server = Server::new(Keep {
            kept: kept.clone(),
            to: Vec::new(),
            data: Vec::new(),
        });
        server
            .with_name("mail.test")
            .with_ssl(SslConfig::None)
            .unwrap()
            .with_num_threads(2)
            .with_tcp_listener(listener);
        std::thread::spawn(move || {
            let _ = server.serve().map_err(|e| e.to_string());
        });
        Self { addr, kept }
    }

    pub fn url(&self) -> String {
        format!("smtp://{}", self.addr)
    }

    /// Every message given so far, oldest first.
    /// What was received; each checked to carry the headers mail systems expect of Orchestra's
    /// emails (`Received::expected_headers`), whichever test made it.
    pub fn received(&self) -> Vec<Received> {
        let got = self.kept.lock().unwrap().clone();
        for email in &got {
            email.expected_headers();
        }
        got
    }
}

impl Received {
    /// A header's value (unfolded), by its name.
    pub fn header(&self, name: &str) -> Option<String> {
        let head = self.raw.split("\r\n\r\n").next()?;
        let unfolded = head.replace("\r\n ", " ").replace("\r\n\t", " ");
        unfolded.lines().find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }

    /// Asserts the headers every email of Orchestra's carries: a `Message-ID` of a hash and a
    /// host (no link, token or address), a `Date`, and `Auto-Submitted: auto-generated`.
    pub fn expected_headers(&self) {
        let id = self.header("Message-ID").expect("a Message-ID");
        let (left, host) = id
            .strip_prefix('<')
            .and_then(|i| i.strip_suffix('>'))
            .and_then(|i| i.split_once('@'))
            .unwrap_or_else(|| panic!("Message-ID {id}"));
        assert!(
            left.len() == 32 && left.chars().all(|c| c.is_ascii_hexdigit()) && !host.is_empty(),
            "Message-ID {id}"
        );
        assert!(
            !self.header("Date").unwrap_or_default().is_empty(),
            "a Date"
        );
        assert_eq!(
            self.header("Auto-Submitted").as_deref(),
            Some("auto-generated")
        );
    }

    /// The decoded subject (RFC 2047 words, base64 or Q, joined).
    pub fn subject(&self) -> String {
        decode_words(&self.header("Subject").unwrap_or_default())
    }

    /// The decoded part of this content type (`text/plain`, `text/html`), looked for inside
    /// nested multiparts too (an outcome's receipts make the message `multipart/mixed`).
    pub fn part(&self, content_type: &str) -> String {
        parts(&self.raw)
            .into_iter()
            .find(|(head, _)| head.contains(&format!("content-type: {content_type}")))
            .map(|(_, body)| body)
            .unwrap_or_else(|| panic!("no {content_type} part in the message"))
    }

    /// The attached files: (file name, decoded text).
    pub fn attachments(&self) -> Vec<(String, String)> {
        parts(&self.raw)
            .into_iter()
            .filter_map(|(head, body)| {
                let (_, after) = head.split_once("filename=")?;
                let name = after
                    .trim_start_matches('"')
                    .split(['"', ';', '\r'])
                    .next()?;
                Some((name.to_owned(), body))
            })
            .collect()
    }

    /// The doorway link the text part carries, as a path (`/interaction/…`).
    pub fn link_path(&self) -> String {
        let text = self.part("text/plain");
        let start = text.find("/interaction/").expect("a link in the email");
        text[start..].split_whitespace().next().unwrap().to_owned()
    }
}

/// The leaf parts of a MIME entity (its head and body as sent): each part's lowercased head and
/// decoded body, multiparts opened on their own boundary, depth first.
fn parts(entity: &str) -> Vec<(String, String)> {
    let Some((head, body)) = entity.split_once("\r\n\r\n") else {
        return Vec::new();
    };
    let unfolded = head.replace("\r\n ", " ").replace("\r\n\t", " ");
    let lower = unfolded.to_ascii_lowercase();
    if lower.contains("content-type: multipart/") {
        let boundary = unfolded.split_once("boundary=").and_then(|(_, after)| {
            Some(
                after
                    .trim_start_matches('"')
                    .split(['"', ';', '\r', '\n'])
                    .next()?
                    .to_owned(),
            )
        });
        // Split on the boundary after a line's end: a text part may hold a "--" line of its own
        // (the signature's separator).
        let separator = format!("\r\n--{}", boundary.unwrap_or_default());
        let body = format!("\r\n{body}");
        return body
            .split(separator.as_str())
            .skip(1)
            .flat_map(|part| parts(part.trim_start_matches("\r\n")))
            .collect();
    }
    let body = body.trim_end_matches("--").trim_end();
    let decoded = if lower.contains("content-transfer-encoding: base64") {
        let joined: String = body.split_whitespace().collect();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(joined)
            .unwrap();
        String::from_utf8(bytes).unwrap()
    } else if lower.contains("content-transfer-encoding: quoted-printable") {
        quoted_printable(body)
    } else {
        body.replace("\r\n", "\n")
    };
    vec![(lower, decoded)]
}

fn quoted_printable(body: &str) -> String {
    let joined = body.replace("=\r\n", "");
    let bytes = joined.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'=' && i + 3 <= bytes.len() {
            if let Ok(b) = u8::from_str_radix(&joined[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap().replace("\r\n", "\n")
}

fn decode_words(value: &str) -> String {
    let mut out = String::new();
    // Whitespace between two encoded words is not part of the text (RFC 2047, 6.2).
    let mut after_encoded = false;
    for word in value.split_whitespace() {
        let Some(inner) = word.strip_prefix("=?").and_then(|w| w.strip_suffix("?=")) else {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(word);
            after_encoded = false;
            continue;
        };
        if !out.is_empty() && !after_encoded {
            out.push(' ');
        }
        after_encoded = true;
        let mut parts = inner.splitn(3, '?');
        let (_charset, encoding, text) = (parts.next(), parts.next(), parts.next().unwrap_or(""));
        let bytes = match encoding.map(str::to_ascii_uppercase).as_deref() {
            Some("B") => base64::engine::general_purpose::STANDARD
                .decode(text)
                .unwrap(),
            _ => quoted_printable(&text.replace('_', " ")).into_bytes(),
        };
        out.push_str(&String::from_utf8(bytes).unwrap());
    }
    out
}
