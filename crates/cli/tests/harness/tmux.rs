//! A terminal for tests of what needs one (`tackle chat`, the approval prompt): a tmux server
//! of its own (a socket per instance) running one shell line in a detached pane, driven with
//! `send-keys` and read with `capture-pane`, polled until the expected text is on screen or a
//! deadline passes. Killed on drop.

use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long any one expected screen may take to appear, unless a test says otherwise.
pub const DEADLINE: Duration = Duration::from_secs(60);
/// Between two looks at the screen.
const POLL: Duration = Duration::from_millis(50);
/// The pane's session name.
const SESSION: &str = "t";

pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Runs `line` in a 120×50 pane; the session ends when it does.
    pub fn start(line: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let socket = format!(
            "tackle-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let t = Self { socket };
        let out = t.tmux(&[
            "new-session",
            "-d",
            "-s",
            SESSION,
            "-x",
            "120",
            "-y",
            "50",
            line,
        ]);
        assert!(out.status.success(), "tmux new-session: {out:?}");
        t
    }

    /// `tackle chat --model <model>` in `project` (`replay:<file>` for a scripted model).
    pub fn chat(project: &super::Project, model: &str) -> Self {
        Self::start(&format!(
            "cd '{root}' && exec env XDG_CONFIG_HOME='{xdg}' XDG_CACHE_HOME='{cache}' '{bin}' --root '{root}' chat --model '{model}'",
            root = project.path().display(),
            xdg = project.xdg().display(),
            cache = project.cache_home().display(),
            bin = super::tackle_binary().display(),
        ))
    }

    /// Runs `line` and keeps the pane open after it, with `tackle exited <code>` on screen.
    pub fn start_keeping(line: &str) -> Self {
        Self::start(&format!("{line}; echo \"tackle exited $?\"; exec cat"))
    }

    fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("running tmux (scripts/install-test-deps installs it)")
    }

    pub fn screen(&self) -> String {
        let out = self.tmux(&["capture-pane", "-p", "-t", SESSION]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen with the colours tmux draws it in, as escape sequences.
    pub fn screen_escaped(&self) -> String {
        let out = self.tmux(&["capture-pane", "-p", "-e", "-t", SESSION]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen once it shows every one of `needles`.
    pub fn wait_for(&self, needles: &[&str]) -> String {
        self.wait_for_within(needles, DEADLINE)
    }

    pub fn wait_for_within(&self, needles: &[&str], limit: Duration) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            // The chat wraps long lines at word boundaries: a needle may span a wrap.
            let flowing = flow(&screen);
            if needles
                .iter()
                .all(|n| screen.contains(n) || flowing.contains(&flow(n)))
            {
                return screen;
            }
            assert!(
                start.elapsed() < limit,
                "waited for {needles:?}; the screen is:\n{screen}"
            );
            std::thread::sleep(POLL);
        }
    }

    pub fn type_line(&self, text: &str) {
        self.keys(&["-l", text]);
        self.keys(&["Enter"]);
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", SESSION];
        args.extend_from_slice(keys);
        assert!(self.tmux(&args).status.success());
    }

    /// Waits for the program to leave (the session ends with it).
    pub fn wait_gone(&self) {
        let start = Instant::now();
        while self.tmux(&["has-session", "-t", SESSION]).status.success() {
            assert!(
                start.elapsed() < DEADLINE,
                "the program did not leave; the screen is:\n{}",
                self.screen()
            );
            std::thread::sleep(POLL);
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

/// Text with every run of whitespace (line ends included) made one space.
fn flow(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
