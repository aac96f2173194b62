//! Standard input and output as an async byte stream pair, on the reactor when they allow it.
//!
//! Tokio's `stdin()`/`stdout()` hand every read and every write to a blocking thread: two
//! thread hand-offs per request, which cost more than a whole cheap tool call. MCP hosts
//! connect us through pipes (tokio, Python's asyncio, Rust hosts) or socketpairs (Node's
//! libuv), and both can be polled by the reactor instead:
//!
//! - A pipe is reopened through `/proc/self/fd/N`, which gives a new open file description of
//!   the same pipe: it is made non-blocking without touching the description the host (or
//!   anything else sharing it) holds.
//! - A socket cannot be reopened; its own description is made non-blocking, and made blocking
//!   again when the stream is dropped. A socket is ours alone in practice (the host keeps the
//!   other end of the pair).
//! - Anything else (a terminal, a file, `/dev/null`) falls back to tokio's blocking-thread
//!   stdio: a terminal's description is shared with the shell, which must never see it turn
//!   non-blocking.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::net::UnixStream as StdUnixStream;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::UnixStream;
use tokio::net::unix::pipe;

/// How standard input or output is being read or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdioKind {
    /// A pipe, reopened non-blocking and polled by the reactor.
    Pipe,
    /// A socket, switched to non-blocking for as long as we hold it and polled by the reactor.
    Socket,
    /// Anything else, read and written on tokio's blocking threads.
    Blocking,
}

/// A standard stream: a pipe or a socket on the reactor, or `B` on blocking threads.
pub enum StdStream<P, B> {
    Pipe(P),
    Socket(UnixStream, RestoreBlocking),
    Blocking(B),
}

/// Standard input as an async reader.
pub type StdinReader = StdStream<pipe::Receiver, tokio::io::Stdin>;

/// Standard output as an async writer.
pub type StdoutWriter = StdStream<pipe::Sender, tokio::io::Stdout>;

/// Makes a socket's open file description blocking again when dropped.
pub struct RestoreBlocking(StdUnixStream);

impl Drop for RestoreBlocking {
    fn drop(&mut self) {
        let _ = self.0.set_nonblocking(false);
    }
}

impl StdinReader {
    /// Standard input, on the reactor when it is a pipe or a socket. Must be called within a
    /// tokio runtime.
    pub fn open() -> Self {
        Self::over(io::stdin().as_fd()).unwrap_or_else(|| Self::Blocking(tokio::io::stdin()))
    }

    /// `fd` on the reactor, or `None` when it is neither a pipe nor a socket.
    fn over(fd: BorrowedFd<'_>) -> Option<Self> {
        Self::on_reactor(fd, false, pipe::Receiver::from_file)
    }
}

impl StdoutWriter {
    /// Standard output, on the reactor when it is a pipe or a socket. Must be called within a
    /// tokio runtime.
    pub fn open() -> Self {
        Self::over(io::stdout().as_fd()).unwrap_or_else(|| Self::Blocking(tokio::io::stdout()))
    }

    /// `fd` on the reactor, or `None` when it is neither a pipe nor a socket.
    fn over(fd: BorrowedFd<'_>) -> Option<Self> {
        Self::on_reactor(fd, true, pipe::Sender::from_file)
    }
}

impl<P, B> StdStream<P, B> {
    /// `fd` as a pipe (reopened for reading or `write`, then converted by `pipe`) or a socket;
    /// `None` when it is neither, or cannot be set up.
    fn on_reactor(
        fd: BorrowedFd<'_>,
        write: bool,
        pipe: impl FnOnce(File) -> io::Result<P>,
    ) -> Option<Self> {
        match kind_of(fd)? {
            StdioKind::Pipe => reopen(fd, write).and_then(pipe).ok().map(Self::Pipe),
            StdioKind::Socket => socket(fd).ok().map(|(s, r)| Self::Socket(s, r)),
            StdioKind::Blocking => None,
        }
    }

    pub fn kind(&self) -> StdioKind {
        match self {
            Self::Pipe(_) => StdioKind::Pipe,
            Self::Socket(..) => StdioKind::Socket,
            Self::Blocking(_) => StdioKind::Blocking,
        }
    }
}

/// `Pipe` or `Socket` for what the reactor can poll; `None` for the rest.
fn kind_of(fd: BorrowedFd<'_>) -> Option<StdioKind> {
    let file = File::from(fd.try_clone_to_owned().ok()?);
    let kind = file.metadata().ok()?.file_type();
    if kind.is_fifo() {
        Some(StdioKind::Pipe)
    } else if kind.is_socket() {
        Some(StdioKind::Socket)
    } else {
        None
    }
}

/// A new open file description of the pipe behind `fd`. `O_NONBLOCK` keeps the open itself
/// from waiting: a pipe whose other end is gone opens for reading at once (and reads EOF), and
/// fails for writing (`ENXIO`), which falls back to the blocking path.
fn reopen(fd: BorrowedFd<'_>, write: bool) -> io::Result<File> {
    OpenOptions::new()
        .read(!write)
        .write(write)
        .custom_flags(libc::O_NONBLOCK)
        .open(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

fn socket(fd: BorrowedFd<'_>) -> io::Result<(UnixStream, RestoreBlocking)> {
    let std = StdUnixStream::from(fd.try_clone_to_owned()?);
    let restore = RestoreBlocking(std.try_clone()?);
    std.set_nonblocking(true)?;
    Ok((UnixStream::from_std(std)?, restore))
}

impl<P: AsyncRead + Unpin, B: AsyncRead + Unpin> AsyncRead for StdStream<P, B> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Pipe(p) => Pin::new(p).poll_read(cx, buf),
            Self::Socket(s, _) => Pin::new(s).poll_read(cx, buf),
            Self::Blocking(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl<P: AsyncWrite + Unpin, B: AsyncWrite + Unpin> AsyncWrite for StdStream<P, B> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Pipe(p) => Pin::new(p).poll_write(cx, data),
            Self::Socket(s, _) => Pin::new(s).poll_write(cx, data),
            Self::Blocking(s) => Pin::new(s).poll_write(cx, data),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Pipe(p) => Pin::new(p).poll_flush(cx),
            Self::Socket(s, _) => Pin::new(s).poll_flush(cx),
            Self::Blocking(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Pipe(p) => Pin::new(p).poll_shutdown(cx),
            // Shutting down the write side would tell the host we are gone; dropping the
            // stream at exit is enough.
            Self::Socket(_, _) => Poll::Ready(Ok(())),
            Self::Blocking(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Whether the open file description behind `fd` is non-blocking.
    fn nonblocking(fd: BorrowedFd<'_>) -> bool {
        // SAFETY: F_GETFL on a descriptor we hold open reads its flags and changes nothing.
        let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
        assert!(flags >= 0, "fcntl failed");
        flags & libc::O_NONBLOCK != 0
    }

    #[tokio::test]
    async fn a_pipe_is_reopened_on_the_reactor_and_the_original_stays_blocking() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let mut rx = StdinReader::over(reader.as_fd()).expect("a pipe is polled");
        assert_eq!(rx.kind(), StdioKind::Pipe);
        assert!(
            !nonblocking(reader.as_fd()),
            "the inherited description was changed"
        );
        writer.write_all(b"hello\n").unwrap();
        drop(writer);
        let mut got = String::new();
        rx.read_to_string(&mut got).await.unwrap();
        assert_eq!(got, "hello\n");

        let (mut reader, writer) = std::io::pipe().unwrap();
        let mut tx = StdoutWriter::over(writer.as_fd()).expect("a pipe is polled");
        assert_eq!(tx.kind(), StdioKind::Pipe);
        assert!(!nonblocking(writer.as_fd()));
        tx.write_all(b"out\n").await.unwrap();
        drop((tx, writer));
        let mut got = String::new();
        std::io::Read::read_to_string(&mut reader, &mut got).unwrap();
        assert_eq!(got, "out\n");
    }

    #[tokio::test]
    async fn a_socket_is_made_non_blocking_while_held_and_blocking_again_after() {
        let (ours, mut theirs) = StdUnixStream::pair().unwrap();
        let mut rx = StdinReader::over(ours.as_fd()).expect("a socket is polled");
        assert_eq!(rx.kind(), StdioKind::Socket);
        assert!(nonblocking(ours.as_fd()));
        theirs.write_all(b"ping").unwrap();
        let mut buf = [0u8; 4];
        rx.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"ping");
        drop(rx);
        assert!(!nonblocking(ours.as_fd()), "blocking mode was not restored");
    }

    #[tokio::test]
    async fn a_regular_file_is_left_to_the_blocking_path() {
        let file = tempfile::tempfile().unwrap();
        assert!(StdinReader::over(file.as_fd()).is_none());
        assert!(StdoutWriter::over(file.as_fd()).is_none());
        assert!(kind_of(file.as_fd()).is_none());
    }
}
