//! The one reading path for files tackle reads for itself rather than for a tool call:
//! settings, MCP configuration, instructions files, the trust store, login tokens, inbox
//! messages, replay scripts, the window cache, agent type files.
//!
//! A repository (or a mistake) can put anything at those names: a symlink to `/dev/zero` (an
//! endless read), a FIFO (an open or read that never returns), a socket, a directory, a link out
//! of the project, a file of gigabytes. Every such file is therefore read the same way: opened
//! non-blocking (`O_NONBLOCK | O_NOCTTY`, so no FIFO or device can stall the open), with the
//! type checked on the open handle (`fstat`: a regular file or a refusal, never a read of
//! anything else), and at most `cap + 1` bytes read, so a file over its kind's cap is refused
//! (or, for kinds that say so, cut) without the rest ever being allocated. Devices, FIFOs and
//! sockets are refused from a `stat` before the open as well, so a device is never opened at all
//! (the handle's check is the one that counts: the name can change in between).
//!
//! Two ways in: [`OwnFile::read_in`] for a file inside the project, through the [`Root`] handle
//! (a link inside the project to another in-project file is followed; a link out is refused,
//! as every open beneath the root refuses it), and [`OwnFile::read_at`] for the user's own
//! files (the XDG config directory, a file named on the command line), where links are the
//! user's to make and are followed, but the same non-blocking, regular-only, capped read applies.
//!
//! Rejected: `std::fs::read_to_string` with a size check first. The size of `/dev/zero` is 0,
//! a FIFO blocks the open before any check runs, and a file can grow between a `stat` and the
//! read; only the open handle's type and a bounded read say what was read.

use std::fmt;
use std::io::{self, Read as _};
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::Path;

use crate::root::READ_FLAGS;
use crate::{FsError, ReadOptions, ReadTarget, Root};

/// What to do with a file over its kind's cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverCap {
    /// Refuse it: a file read whole (settings, JSON) cannot be used in part.
    Refuse,
    /// Keep the first `cap` bytes and say so ([`OwnBytes::cut`]): text shown as it is
    /// (instructions), of which the start is useful.
    Cut,
}

/// A kind of file tackle reads for itself: its name in messages and the most read of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwnFile {
    /// How messages name the kind: `settings`, `mcp config`, ….
    pub what: &'static str,
    /// The most bytes read.
    pub cap: u64,
    pub over_cap: OverCap,
}

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

impl OwnFile {
    /// `config.toml`, the user's and the project's `.agents/config.toml`.
    pub const SETTINGS: OwnFile = OwnFile::refusing("settings", MIB);
    /// `mcp.json`, the user's and the project's `.agents/mcp.json`.
    pub const MCP_CONFIG: OwnFile = OwnFile::refusing("mcp config", MIB);
    /// The user's `trust.json`: a record per trusted root, each a few hundred bytes.
    pub const TRUST_STORE: OwnFile = OwnFile::refusing("trust store", 8 * MIB);
    /// A login token record of an MCP server (`<config dir>/oauth/`).
    pub const LOGIN_TOKEN: OwnFile = OwnFile::refusing("login token", 256 * KIB);
    /// `AGENTS.md`/`CLAUDE.md`: the start is sent to the model, the rest cut with a note.
    pub const INSTRUCTIONS: OwnFile = OwnFile {
        what: "instructions",
        cap: 32 * KIB,
        over_cap: OverCap::Cut,
    };
    /// A message left in a waiting session's inbox (`tackle sessions message`).
    pub const INBOX_MESSAGE: OwnFile = OwnFile::refusing("inbox message", MIB);
    /// A replay script (`--model replay:<file>`): scripted turns, recorded streams.
    pub const REPLAY: OwnFile = OwnFile::refusing("replay file", 256 * MIB);
    /// The windows local servers named (`$XDG_CACHE_HOME/tackle/windows.json`): a few hundred
    /// entries of a few hundred bytes at most.
    pub const WINDOW_CACHE: OwnFile = OwnFile::refusing("window cache", MIB);
    /// An agent type file (`.agents/agents/*.md`, `.claude/agents/*.md`, the user's
    /// `agents/*.md`): a frontmatter and a system prompt, which a few KiB hold.
    pub const AGENT_TYPE: OwnFile = OwnFile::refusing("agent type", 256 * KIB);
    /// A skill's `SKILL.md`: a frontmatter and instructions the format asks to keep under 500
    /// lines; four times that is room for any real skill.
    pub const SKILL: OwnFile = OwnFile::refusing("skill", 256 * KIB);
    /// A file a skill bundles (`references/x.md`, `scripts/y.py`), read whole by the `skill`
    /// tool when the model asks for it; longer ones are read with read_file's paging.
    pub const SKILL_FILE: OwnFile = OwnFile::refusing("skill file", MIB);
    /// What the user vouched for in the sealed posture (`$XDG_CONFIG_HOME/tackle/sealed.json`).
    pub const VOUCHES: OwnFile = OwnFile::refusing("sealed vouches", MIB);

    /// Every kind, for tables that must cover them all.
    pub const ALL: [OwnFile; 12] = [
        OwnFile::SETTINGS,
        OwnFile::MCP_CONFIG,
        OwnFile::TRUST_STORE,
        OwnFile::LOGIN_TOKEN,
        OwnFile::INSTRUCTIONS,
        OwnFile::INBOX_MESSAGE,
        OwnFile::REPLAY,
        OwnFile::WINDOW_CACHE,
        OwnFile::AGENT_TYPE,
        OwnFile::SKILL,
        OwnFile::SKILL_FILE,
        OwnFile::VOUCHES,
    ];

    const fn refusing(what: &'static str, cap: u64) -> OwnFile {
        OwnFile {
            what,
            cap,
            over_cap: OverCap::Refuse,
        }
    }

    /// Reads `rel` (a root-relative name such as `.agents/config.toml`) through `root`.
    /// `Ok(None)` when nothing is there. A symlink is followed only while it stays beneath the
    /// root; a file with more than one hard link is refused as every confined read refuses it.
    pub fn read_in(self, root: &Root, rel: &str) -> Result<Option<OwnBytes>, OwnFileError> {
        let fail = |problem| self.error(rel, problem);
        let rel_path = root.resolve(rel).map_err(|e| fail(Problem::from_fs(e)))?;
        match root.open_read_file(&rel_path, ReadOptions::default()) {
            Ok(ReadTarget::File { file, meta }) => self.read_open(file, meta.len(), rel).map(Some),
            Ok(ReadTarget::Dir(_)) => Err(fail(Problem::NotRegular {
                kind: "a directory",
            })),
            Err(FsError::NotFound { .. }) => {
                // A dangling link is a file someone meant to be there: say so, never read past it.
                match root.metadata(&rel_path) {
                    Ok(Some(m)) if m.kind == crate::EntryKind::Symlink => {
                        Err(fail(Problem::DanglingLink))
                    }
                    _ => Ok(None),
                }
            }
            Err(e) => Err(fail(Problem::from_fs(e))),
        }
    }

    /// Reads the user's own file at `path`, following links (the user's to make). `Ok(None)`
    /// when nothing is there.
    pub fn read_at(self, path: &Path) -> Result<Option<OwnBytes>, OwnFileError> {
        let shown = path.display().to_string();
        let fail = |problem| self.error(&shown, problem);
        // Look first so that a device, FIFO or socket is refused without being opened.
        let before = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return match std::fs::symlink_metadata(path) {
                    Ok(m) if m.file_type().is_symlink() => Err(fail(Problem::DanglingLink)),
                    _ => Ok(None),
                };
            }
            Err(e) => return Err(fail(Problem::from_io(e))),
        };
        if !before.is_file() {
            return Err(fail(Problem::NotRegular {
                kind: describe(before.file_type()),
            }));
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(READ_FLAGS)
            .open(path)
            .map_err(|e| fail(Problem::from_io(e)))?;
        let meta = file.metadata().map_err(|e| fail(Problem::from_io(e)))?;
        if !meta.is_file() {
            return Err(fail(Problem::NotRegular {
                kind: describe(meta.file_type()),
            }));
        }
        self.read_open(file, meta.len(), &shown).map(Some)
    }

    /// At most `cap + 1` bytes of an open regular file whose `fstat` said `len`.
    fn read_open(
        self,
        file: std::fs::File,
        len: u64,
        shown: &str,
    ) -> Result<OwnBytes, OwnFileError> {
        if len > self.cap && self.over_cap == OverCap::Refuse {
            return Err(self.error(
                shown,
                Problem::TooLarge {
                    size: Some(len),
                    cap: self.cap,
                },
            ));
        }
        let want = len.min(self.cap).saturating_add(1);
        // The capacity is bounded by the cap, never by what the file claims.
        let mut bytes = Vec::with_capacity(usize::try_from(want).unwrap_or(usize::MAX));
        file.take(self.cap.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| self.error(shown, Problem::from_io(e)))?;
        let over = bytes.len() as u64 > self.cap;
        match (over, self.over_cap) {
            (false, _) => Ok(OwnBytes { bytes, cut: false }),
            // It grew past the cap after the fstat.
            (true, OverCap::Refuse) => Err(self.error(
                shown,
                Problem::TooLarge {
                    size: None,
                    cap: self.cap,
                },
            )),
            (true, OverCap::Cut) => {
                bytes.truncate(usize::try_from(self.cap).unwrap_or(usize::MAX));
                Ok(OwnBytes { bytes, cut: true })
            }
        }
    }

    fn error(self, shown: &str, problem: Problem) -> OwnFileError {
        OwnFileError {
            kind: self,
            path: shown.to_owned(),
            problem,
        }
    }
}

/// What [`OwnFile::read_in`] or [`OwnFile::read_at`] read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnBytes {
    pub bytes: Vec<u8>,
    /// The file went on past its kind's cap and was cut there ([`OverCap::Cut`] only).
    pub cut: bool,
}

impl OwnBytes {
    /// The bytes as UTF-8 text, or an error naming the file (`path`, as the caller showed it).
    pub fn into_text(self, kind: OwnFile, path: &str) -> Result<String, OwnFileError> {
        String::from_utf8(self.bytes).map_err(|e| {
            kind.error(
                path,
                Problem::NotUtf8 {
                    at: e.utf8_error().valid_up_to(),
                },
            )
        })
    }
}

/// Why a file tackle reads for itself was not read: the kind, the file and the problem, whose
/// message ends with the fix.
#[derive(Debug, thiserror::Error)]
#[error("{}: {path} {problem}", kind.what)]
pub struct OwnFileError {
    pub kind: OwnFile,
    /// The file as the caller names it (root-relative inside the project, else as given).
    pub path: String,
    pub problem: Problem,
}

/// What was wrong with the file.
#[derive(Debug)]
#[non_exhaustive]
pub enum Problem {
    /// A FIFO, socket, device or directory.
    NotRegular {
        kind: &'static str,
    },
    /// Over `cap`; `size` is what `fstat` said, `None` when it grew past the cap while read.
    TooLarge {
        size: Option<u64>,
        cap: u64,
    },
    /// A symbolic link whose target does not exist.
    DanglingLink,
    /// Symbolic links that lead back to themselves (or too many of them).
    LinkLoop,
    /// A link (or a directory on the way) leads out of the project.
    OutsideRoot,
    /// More than one hard link: another name may be outside the project.
    HardLinked {
        links: u64,
    },
    NotUtf8 {
        at: usize,
    },
    Io(io::Error),
}

impl Problem {
    fn from_io(e: io::Error) -> Problem {
        match e.raw_os_error() {
            Some(libc::ELOOP) => Problem::LinkLoop,
            // Opening a socket fails with ENXIO.
            Some(libc::ENXIO) => Problem::NotRegular { kind: "a socket" },
            Some(libc::EISDIR) => Problem::NotRegular {
                kind: "a directory",
            },
            _ => Problem::Io(e),
        }
    }

    fn from_fs(e: FsError) -> Problem {
        match e {
            FsError::OutsideRoot { .. } => Problem::OutsideRoot,
            FsError::NotRegularFile { kind, .. } => Problem::NotRegular { kind },
            FsError::IsADirectory { .. } => Problem::NotRegular {
                kind: "a directory",
            },
            FsError::HardLinked { links, .. } => Problem::HardLinked { links },
            FsError::Io { source, .. } => Problem::from_io(source),
            other => Problem::Io(io::Error::other(other.to_string())),
        }
    }
}

impl OwnFileError {
    /// A stable snake_case name of the problem, for tests and tables.
    pub fn code(&self) -> &'static str {
        match self.problem {
            Problem::NotRegular { .. } => "not_a_regular_file",
            Problem::TooLarge { .. } => "too_large",
            Problem::DanglingLink => "dangling_link",
            Problem::LinkLoop => "link_loop",
            Problem::OutsideRoot => "outside_root",
            Problem::HardLinked { .. } => "hard_linked",
            Problem::NotUtf8 { .. } => "not_utf8",
            Problem::Io(_) => "io_error",
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::NotRegular { kind } => write!(
                f,
                "is not a regular file ({kind}); remove it or replace it with a file"
            ),
            Problem::TooLarge {
                size: Some(size),
                cap,
            } => write!(
                f,
                "is {size} bytes, over the cap of {cap} bytes read of it; make it smaller or remove it"
            ),
            Problem::TooLarge { size: None, cap } => write!(
                f,
                "grew past the cap of {cap} bytes while it was read; make it smaller or remove it"
            ),
            Problem::DanglingLink => write!(
                f,
                "is a symbolic link to nothing; remove it or point it at a file"
            ),
            Problem::LinkLoop => write!(
                f,
                "is a loop of symbolic links; remove it or replace it with a file"
            ),
            Problem::OutsideRoot => write!(
                f,
                "leads out of the project through a symbolic link; replace the link with the file itself"
            ),
            Problem::HardLinked { links } => write!(
                f,
                "has {links} hard links, so it may also be a file outside the project; replace it with a copy of its own"
            ),
            Problem::NotUtf8 { at } => write!(f, "is not UTF-8 text (byte {at}); save it as UTF-8"),
            Problem::Io(e) => write!(f, "could not be read ({e}); check its permissions"),
        }
    }
}

fn describe(ft: std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_block_device() || ft.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::path::PathBuf;

    const KIND: OwnFile = OwnFile::refusing("settings", 64);
    const CUT: OwnFile = OwnFile {
        what: "instructions",
        cap: 64,
        over_cap: OverCap::Cut,
    };

    /// Every hostile form a file can take, made at `at`; `outside` is a real file outside the
    /// root.
    #[derive(Clone, Copy, Debug)]
    enum Form {
        DevZero,
        DevUrandom,
        Fifo,
        Socket,
        Directory,
        Oversized,
        LinkOut,
        Dangling,
        LinkLoop,
        LinkInside,
        Regular,
    }

    const FORMS: [Form; 11] = [
        Form::DevZero,
        Form::DevUrandom,
        Form::Fifo,
        Form::Socket,
        Form::Directory,
        Form::Oversized,
        Form::LinkOut,
        Form::Dangling,
        Form::LinkLoop,
        Form::LinkInside,
        Form::Regular,
    ];

    fn make(form: Form, at: &Path, outside: &Path) -> Option<std::os::unix::net::UnixListener> {
        use std::os::unix::fs::symlink;
        let mut keep = None;
        match form {
            Form::DevZero => symlink("/dev/zero", at).unwrap(),
            Form::DevUrandom => symlink("/dev/urandom", at).unwrap(),
            Form::Fifo => {
                let c = std::ffi::CString::new(at.as_os_str().as_encoded_bytes()).unwrap();
                // SAFETY: a valid NUL-terminated path.
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            }
            Form::Socket => keep = Some(std::os::unix::net::UnixListener::bind(at).unwrap()),
            Form::Directory => std::fs::create_dir(at).unwrap(),
            Form::Oversized => std::fs::write(at, vec![b'#'; 65]).unwrap(),
            Form::LinkOut => symlink(outside, at).unwrap(),
            Form::Dangling => symlink("missing-target", at).unwrap(),
            Form::LinkLoop => {
                let other = at.with_extension("loop");
                symlink(&other, at).unwrap();
                symlink(at, &other).unwrap();
            }
            Form::LinkInside => {
                let real = at.with_extension("real");
                std::fs::write(&real, "inside").unwrap();
                symlink(real.file_name().unwrap(), at).unwrap();
            }
            Form::Regular => std::fs::write(at, "plain").unwrap(),
        }
        keep
    }

    struct Setup {
        _dir: tempfile::TempDir,
        root: PathBuf,
        outside: PathBuf,
    }

    fn setup() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        std::fs::create_dir_all(root.join(".agents")).unwrap();
        let outside = dir.path().join("outside.toml");
        std::fs::write(&outside, "outside").unwrap();
        Setup {
            root,
            outside,
            _dir: dir,
        }
    }

    fn outcome(r: Result<Option<OwnBytes>, OwnFileError>) -> String {
        match r {
            Ok(Some(b)) => format!("read {}", String::from_utf8_lossy(&b.bytes)),
            Ok(None) => "absent".to_owned(),
            Err(e) => e.code().to_owned(),
        }
    }

    #[test]
    fn every_form_inside_the_project_is_read_or_refused_without_blocking() {
        for form in FORMS {
            let s = setup();
            let _keep = make(form, &s.root.join(".agents/config.toml"), &s.outside);
            let root = Root::open(&s.root).unwrap();
            let got = KIND.read_in(&root, ".agents/config.toml");
            let want = match form {
                Form::DevZero | Form::DevUrandom | Form::LinkOut => "outside_root",
                Form::Fifo | Form::Socket | Form::Directory => "not_a_regular_file",
                Form::Oversized => "too_large",
                Form::Dangling => "dangling_link",
                Form::LinkLoop => "link_loop",
                Form::LinkInside => "read inside",
                Form::Regular => "read plain",
            };
            if let Err(e) = &got {
                assert!(
                    e.to_string().starts_with("settings: .agents/config.toml "),
                    "{e}"
                );
            }
            assert_eq!(outcome(got), want, "{form:?}");
        }
    }

    #[test]
    fn every_form_of_a_users_file_is_read_or_refused_without_blocking() {
        for form in FORMS {
            let s = setup();
            let path = s.root.join("config.toml");
            let _keep = make(form, &path, &s.outside);
            let got = KIND.read_at(&path);
            let want = match form {
                Form::Fifo | Form::Socket | Form::Directory | Form::DevZero | Form::DevUrandom => {
                    "not_a_regular_file"
                }
                Form::Oversized => "too_large",
                Form::Dangling => "dangling_link",
                Form::LinkLoop => "link_loop",
                // The user's links are the user's own.
                Form::LinkOut => "read outside",
                Form::LinkInside => "read inside",
                Form::Regular => "read plain",
            };
            if let Err(e) = &got {
                let text = e.to_string();
                assert!(
                    text.starts_with(&format!("settings: {} ", path.display())),
                    "{text}"
                );
            }
            assert_eq!(outcome(got), want, "{form:?}");
        }
    }

    #[test]
    fn messages_name_the_kind_the_size_the_cap_and_the_fix() {
        let s = setup();
        let root = Root::open(&s.root).unwrap();
        let _keep = make(
            Form::Oversized,
            &s.root.join(".agents/config.toml"),
            &s.outside,
        );
        let e = KIND.read_in(&root, ".agents/config.toml").unwrap_err();
        assert_eq!(
            e.to_string(),
            "settings: .agents/config.toml is 65 bytes, over the cap of 64 bytes read of it; make it smaller or remove it"
        );
        let _keep = make(Form::Fifo, &s.root.join(".agents/mcp.json"), &s.outside);
        let e = OwnFile::MCP_CONFIG
            .read_in(&root, ".agents/mcp.json")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "mcp config: .agents/mcp.json is not a regular file (a FIFO); remove it or replace it with a file"
        );
    }

    #[test]
    fn a_cut_kind_keeps_the_start_of_a_long_file() {
        let s = setup();
        let root = Root::open(&s.root).unwrap();
        std::fs::write(s.root.join("AGENTS.md"), vec![b'a'; 65]).unwrap();
        let got = CUT.read_in(&root, "AGENTS.md").unwrap().unwrap();
        assert_eq!((got.bytes.len(), got.cut), (64, true));
        std::fs::write(s.root.join("AGENTS.md"), vec![b'a'; 64]).unwrap();
        let got = CUT.read_in(&root, "AGENTS.md").unwrap().unwrap();
        assert_eq!((got.bytes.len(), got.cut), (64, false));
    }

    #[test]
    fn text_that_is_not_utf8_is_named() {
        let bytes = OwnBytes {
            bytes: vec![b'a', 0xff],
            cut: false,
        };
        let e = bytes.into_text(KIND, "x.toml").unwrap_err();
        assert_eq!(
            e.to_string(),
            "settings: x.toml is not UTF-8 text (byte 1); save it as UTF-8"
        );
    }
}
