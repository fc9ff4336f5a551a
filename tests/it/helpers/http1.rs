//! A tight HTTP/1.1 client over one keep-alive `TcpStream`: GETs one at a time or pipelined,
//! answers read by status and `Content-Length`. Shared by the memory and process tests and the
//! load harness (benches/load.rs takes this file by `#[path]`), which need far more requests a
//! second than a general client gives in a debug build. Loopback only: it is pointed at servers
//! the caller started.
// Each of the two crates that build this file uses only part of it.
#![allow(dead_code)]

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    /// Bytes of `buf` already consumed by parsed responses.
    start: usize,
    host: String,
    /// The body length of the last answer read.
    pub last_body_len: usize,
}

impl Conn {
    pub fn connect(addr: SocketAddr) -> io::Result<Self> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        Ok(Self {
            stream,
            buf: Vec::with_capacity(64 * 1024),
            start: 0,
            host: addr.to_string(),
            last_body_len: 0,
        })
    }

    fn request(&self, out: &mut Vec<u8>, path: &str) {
        out.extend_from_slice(b"GET ");
        out.extend_from_slice(path.as_bytes());
        out.extend_from_slice(b" HTTP/1.1\r\nHost: ");
        out.extend_from_slice(self.host.as_bytes());
        out.extend_from_slice(b"\r\nAccept-Language: en\r\n\r\n");
    }

    /// One GET, waiting for its answer; returns the status.
    pub fn get(&mut self, path: &str) -> io::Result<u16> {
        let mut out = Vec::with_capacity(128 + path.len());
        self.request(&mut out, path);
        self.stream.write_all(&out)?;
        self.read_response()
    }

    /// Sends `paths` pipelined, `depth` requests in flight at a time, and calls `seen` with
    /// each answer's status in order.
    pub fn pipeline<I, S>(
        &mut self,
        paths: I,
        depth: usize,
        mut seen: impl FnMut(u16),
    ) -> io::Result<()>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut paths = paths.into_iter().peekable();
        let mut out = Vec::with_capacity(depth * 160);
        while paths.peek().is_some() {
            out.clear();
            let mut sent = 0;
            for path in paths.by_ref().take(depth) {
                self.request(&mut out, path.as_ref());
                sent += 1;
            }
            self.stream.write_all(&out)?;
            for _ in 0..sent {
                seen(self.read_response()?);
            }
        }
        Ok(())
    }

    fn fill(&mut self) -> io::Result<()> {
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        } else if self.start > 32 * 1024 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        let len = self.buf.len();
        self.buf.resize(len + 32 * 1024, 0);
        let n = self.stream.read(&mut self.buf[len..])?;
        self.buf.truncate(len + n);
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "server closed the connection",
            ));
        }
        Ok(())
    }

    fn read_response(&mut self) -> io::Result<u16> {
        // Offsets are kept relative to `start`: `fill` may move the unread bytes down.
        let head_len = loop {
            if let Some(i) = find(&self.buf[self.start..], b"\r\n\r\n") {
                break i + 4;
            }
            self.fill()?;
        };
        let head_end = self.start + head_len;
        let head = std::str::from_utf8(&self.buf[self.start..head_end]).map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidData, "response head is not UTF-8")
        })?;
        let status = head
            .get(9..12)
            .and_then(|s| s.parse::<u16>().ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no status line"))?;
        let mut length = 0usize;
        for line in head.split("\r\n").skip(1) {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "chunked answers are not read",
                ));
            }
        }
        while self.buf.len() < self.start + head_len + length {
            self.fill()?;
        }
        self.start += head_len + length;
        self.last_body_len = length;
        Ok(status)
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
