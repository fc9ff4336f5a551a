//! Raw HTTP/1.1 over TCP from many loopback addresses, as attackers and honest visitors send it
//! to the real server: a connection bound to an address of its own (Linux answers all of
//! 127.0.0.0/8, so each flooding client can have one), an answer read by its head, an honest
//! visitor timed on a thread of its own. Shared by the connection tests and the sieges.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// A CSRF nonce cookie of the right shape, so the sign-in form's body is read (not refused
/// for want of the cookie, which needs no read at all).
pub const NONCE: &str =
    "orchestra_csrf=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/// The `i`-th flooding client address: 127.0.1.1, 127.0.1.2, …
pub fn source(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(127, 0, 1 + (i / 250) as u8, 1 + (i % 250) as u8)
}

pub async fn connect_from(server: SocketAddr, source: Ipv4Addr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("a socket");
    socket
        .bind(SocketAddr::from((source, 0)))
        .expect("bind a loopback address");
    socket.connect(server).await.expect("connect")
}

/// One answer as it came: its status and head (names in lower case), and its body.
#[derive(Debug, Default)]
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Answer {
    pub fn parse(bytes: &[u8]) -> Option<Self> {
        let text = String::from_utf8_lossy(bytes);
        let (head, body) = text.split_once("\r\n\r\n")?;
        let status = head.split(' ').nth(1)?.parse().ok()?;
        Some(Self {
            status,
            head: head.to_ascii_lowercase(),
            body: body.to_owned(),
        })
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.head
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
    }

    /// The site's security headers, and the themed page (or the API's JSON).
    pub fn assert_ours(&self, what: &str) {
        assert_eq!(
            self.header("x-content-type-options"),
            Some("nosniff"),
            "{what}"
        );
        assert!(
            self.header("content-security-policy")
                .is_some_and(|v| v.contains("frame-ancestors 'none'")),
            "{what}: {}",
            self.head
        );
        assert_eq!(self.header("x-frame-options"), Some("deny"), "{what}");
        let html = self
            .body
            .contains("<link rel=\"stylesheet\" href=\"/static/style.css\">");
        let json = self.body.starts_with("{\"error\":");
        assert!(html || json, "{what}: not a themed page: {}", self.body);
    }

    pub fn lang(&self) -> Option<&str> {
        let at = self.body.find("<html lang=\"")? + 12;
        self.body.get(at..at + 2)
    }
}

/// Reads until the server closes, `limit` at most; returns what came.
pub async fn read_to_close(stream: &mut TcpStream, limit: Duration) -> Vec<u8> {
    let mut got = Vec::new();
    let _ = tokio::time::timeout(limit, async {
        let mut buf = vec![0; 16 * 1024];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    got
}

/// Whether `got` holds a whole answer: `None` while more is to come; once its head has come, the
/// answer when its body has come too, or `None` inside when it is not one with a
/// `Content-Length`.
fn whole(got: &[u8]) -> Option<Option<Answer>> {
    let end = got.windows(4).position(|w| w == b"\r\n\r\n")?;
    let Some((answer, length)) = Answer::parse(got).and_then(|answer| {
        let length: usize = answer.header("content-length")?.parse().ok()?;
        Some((answer, length))
    }) else {
        return Some(None);
    };
    (got.len() >= end + 4 + length).then_some(Some(answer))
}

/// Reads one answer whose body has a `Content-Length`, leaving the connection open.
pub async fn read_one(stream: &mut TcpStream) -> Option<Answer> {
    let mut got = Vec::new();
    let mut buf = vec![0; 16 * 1024];
    loop {
        if let Some(done) = whole(&got) {
            return done;
        }
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
}

pub fn get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: orchestra.test\r\nAccept-Language: en\r\n\r\n")
}

/// An honest visitor from 127.0.0.1 on a new connection: the sign-in page's status, and how
/// long it took from connecting to the end of the answer. On a thread of its own with blocking
/// sockets, as another machine would be: the flooding tasks' turns on the test's runtime are
/// not counted in its time.
pub async fn honest(server: SocketAddr) -> (u16, Duration) {
    tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let started = Instant::now();
        let visit = || -> Option<u16> {
            let mut stream =
                std::net::TcpStream::connect_timeout(&server, Duration::from_secs(5)).ok()?;
            stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
            stream.write_all(get("/admin/login").as_bytes()).ok()?;
            let mut got = Vec::new();
            let mut buf = vec![0; 16 * 1024];
            loop {
                if let Some(done) = whole(&got) {
                    return done.map(|answer| answer.status);
                }
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => return None,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
        };
        (visit().unwrap_or(0), started.elapsed())
    })
    .await
    .expect("an honest visitor")
}

/// `n` honest visitors one after another: the worst time, after asserting each got the page.
pub async fn honest_visitors(server: SocketAddr, n: usize) -> Duration {
    let mut worst = Duration::ZERO;
    for i in 0..n {
        let (status, took) = honest(server).await;
        assert_eq!(
            status, 200,
            "honest visitor {i} was not answered (after {took:?})"
        );
        worst = worst.max(took);
    }
    worst
}

/// Sends `bytes` while reading what comes back, until the head of an answer has come or
/// nothing has for `wait`: a client that reads while it sends. Returns what came.
pub async fn send_reading_the_head(
    stream: &mut TcpStream,
    bytes: &[u8],
    wait: Duration,
) -> Vec<u8> {
    let (mut reader, mut writer) = stream.split();
    let (_, got) = tokio::join!(writer.write_all(bytes), async {
        let mut got = Vec::new();
        let mut buf = vec![0; 4096];
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            match tokio::time::timeout(wait, reader.read(&mut buf)).await {
                Ok(Ok(n)) if n > 0 => got.extend_from_slice(&buf[..n]),
                _ => break,
            }
        }
        got
    });
    got
}
