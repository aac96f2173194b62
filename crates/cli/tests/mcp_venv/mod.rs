//! The MCP and ACP Python SDKs' venv at `target/mcp-venv` (`scripts/install-test-deps` builds it), shared by the MCP tests.
//! Under `CI` a missing venv fails with the command to fix it; elsewhere it is built on first use.

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)] // test helper: a failure should panic loudly

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The venv's python, with `mcp` and `acp` importable.
pub fn venv_python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-venv");
            let python = venv.join("bin/python");
            let ready = |p: &PathBuf| {
                Command::new(p)
                    .args(["-c", "import mcp.client.session, acp"])
                    .status()
                    .is_ok_and(|s| s.success())
            };
            if ready(&python) {
                return python;
            }
            if std::env::var_os("CI").is_some() {
                panic!(
                    "the MCP Python SDK venv is missing at {}; run scripts/install-test-deps, which builds it",
                    venv.display()
                );
            }
            let built = Command::new("python3")
                .args(["-m", "venv"])
                .arg(&venv)
                .status()
                .is_ok_and(|s| s.success())
                && Command::new(venv.join("bin/pip"))
                    .args([
                        "install",
                        "-q",
                        "mcp==2.3.0",
                        "agent-client-protocol==0.12.1",
                    ])
                    .status()
                    .is_ok_and(|s| s.success());
            assert!(
                built && ready(&python),
                "could not build the MCP Python SDK venv at {}",
                venv.display()
            );
            python
        })
        .clone()
}
