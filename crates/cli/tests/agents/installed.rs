//! Where an install script put pinned npm packages (`scripts/install-agents`: the agents;
//! `scripts/install-conformance`: the MCP conformance suite), and whether a test may run, skip
//! or must fail.
//!
//! The script writes `target/<dir>/installed.sha256` (the digest of the lock file it installed)
//! last, or `target/<dir>/registry-unreachable` when npm's registry did not answer. The only
//! skip is that second case, with the script's message. Anything else that is missing or of
//! another version is a failure under `CI`; elsewhere (a bare `cargo test`) it is a skip that
//! names the command to run, since the tests cannot install a gigabyte of agents themselves.

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)] // test helper: a failure should panic loudly

use std::path::{Path, PathBuf};

/// The installed packages, at the pinned versions.
pub struct Installed {
    bin: PathBuf,
}

/// One set of pinned packages: `crates/cli/tests/<dir>/package{,-lock}.json`, installed by
/// `scripts/<script>` into `target/<dir>`.
pub struct Pins {
    pub dir: &'static str,
    pub script: &'static str,
}

/// Claude Code, Codex, Gemini CLI and opencode.
pub const AGENTS: Pins = Pins {
    dir: "agents",
    script: "install-agents",
};

/// The MCP conformance suite and the Node it runs under.
pub const CONFORMANCE: Pins = Pins {
    dir: "conformance",
    script: "install-conformance",
};

impl Installed {
    /// The agents, or `None` after printing why the test skips. Panics where skipping is not
    /// allowed (under `CI` with no record of an unreachable registry).
    pub fn find() -> Option<Self> {
        Self::find_pins(&AGENTS)
    }

    /// The packages `pins` names, as [`Installed::find`] does for the agents.
    pub fn find_pins(pins: &Pins) -> Option<Self> {
        let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
        let dest = workspace.join("target").join(pins.dir);
        let script = pins.script;
        let lock_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests")
            .join(pins.dir);
        if let Ok(why) = std::fs::read_to_string(dest.join("registry-unreachable")) {
            eprintln!("skipped: {}", why.trim());
            return None;
        }
        match check(&dest, &lock_dir) {
            Ok(()) => Some(Self {
                bin: dest.join("node_modules/.bin"),
            }),
            Err(problem) if std::env::var_os("CI").is_some() => {
                panic!("{problem}; run scripts/{script} (scripts/install-test-deps runs it)")
            }
            Err(problem) => {
                eprintln!(
                    "skipped: {problem}; run scripts/{script} (scripts/install-test-deps runs it)"
                );
                None
            }
        }
    }

    /// The executable a package links into `node_modules/.bin`.
    pub fn bin(&self, name: &str) -> PathBuf {
        self.bin.join(name)
    }
}

/// Every pinned package is installed at its pinned version, from the committed lock.
fn check(dest: &Path, pins: &Path) -> Result<(), String> {
    let lock = std::fs::read(pins.join("package-lock.json")).unwrap();
    let want = sha256_hex(&lock);
    let stamp = std::fs::read_to_string(dest.join("installed.sha256")).unwrap_or_default();
    if stamp.trim() != want {
        return Err(format!(
            "the packages are not installed from the committed lock at {}",
            dest.display()
        ));
    }
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(pins.join("package.json")).unwrap()).unwrap();
    for (package, version) in manifest["dependencies"].as_object().unwrap() {
        let installed = dest.join("node_modules").join(package).join("package.json");
        let got = std::fs::read(&installed)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v["version"].as_str().map(str::to_owned));
        if got.as_deref() != version.as_str() {
            return Err(format!(
                "{package} {version} is not installed (found {got:?} at {})",
                installed.display()
            ));
        }
    }
    Ok(())
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
