//! A connection's deadlines. `Watched`, its socket, notes the first bytes of a head; `Deadline`,
//! polled beside hyper's connection by the connection's task, ends the connection when the
//! deadline of its phase passes:
//!
//! - fresh: the whole first head within the header timeout of the opening;
//! - idle (between requests): the next request's first byte within the idle timeout of the
//!   last answer, which the client must also have taken by then;
//! - head: the rest of a later head within the header timeout of its first byte;
//! - busy: none here; the body has its own deadline (`http::body`) and the handlers theirs.
//!
//! The deadline is a future of the task's own rather than a timer in the socket's reads: hyper
//! does not read again after an answer until the socket is readable (its `read_blocked`), so a
//! timer polled only by reads would never start on an idle connection.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use super::conns::{Conn, Phase};

/// The socket, noting when a head begins to arrive.
pub struct Watched {
    stream: TcpStream,
    conn: Arc<Conn>,
}

impl Watched {
    pub fn new(stream: TcpStream, conn: Arc<Conn>) -> Self {
        Self { stream, conn }
    }

    pub fn into_inner(self) -> TcpStream {
        self.stream
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let read = Pin::new(&mut this.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.conn.head_begins();
        }
        read
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

/// Resolves when the connection's phase has outlived its deadline. Poll it after hyper's
/// connection in the same task (`biased`), so it sees every change of phase hyper made.
pub struct Deadline {
    conn: Arc<Conn>,
    /// Made once per connection and reset for each phase.
    timer: Pin<Box<Sleep>>,
    armed: Armed,
    header: Duration,
    idle: Duration,
}

/// What the timer is set for: a head or an idle wait, after this many answers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Armed {
    Head(u32),
    Idle(u32),
}

impl Deadline {
    /// From the connection's opening: its first head is due within `header`.
    pub fn new(conn: Arc<Conn>, header: Duration, idle: Duration) -> Self {
        Self {
            conn,
            timer: Box::pin(tokio::time::sleep(header)),
            armed: Armed::Head(0),
            header,
            idle,
        }
    }
}

impl Future for Deadline {
    type Output = Phase;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Phase> {
        let this = self.get_mut();
        let answered = this.conn.answered();
        let phase = this.conn.phase();
        let (wanted, after) = match phase {
            Phase::Busy => return Poll::Pending,
            Phase::Fresh | Phase::Head => (Armed::Head(answered), this.header),
            Phase::Idle => (Armed::Idle(answered), this.idle),
        };
        if this.armed != wanted {
            this.timer.as_mut().reset(Instant::now() + after);
            this.armed = wanted;
        }
        this.timer.as_mut().poll(cx).map(|()| phase)
    }
}
