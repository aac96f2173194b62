//! `[delegation]` checked into the tree's [`Limits`]: how deep delegated children may nest
//! (`max_depth`, 0 turns delegation off) and how many may run at once in one tree
//! (`max_running`, at least 1). An untrusted project may lower either, never raise it
//! (`trust::classify`).

use tackle_agent::delegate::Limits;

use crate::bail;
use crate::settings::Settings;

pub fn limits(settings: &Settings) -> crate::Result<Limits> {
    let running = &settings.delegation_max_running;
    if running.value == 0 {
        bail!(
            "[delegation] max_running = 0 ({}) lets no child run; set at least 1, or turn \
             delegation off with max_depth = 0",
            running.origin
        );
    }
    Ok(Limits {
        max_depth: settings.delegation_max_depth.value,
        max_running: running.value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::LoadedFile;

    fn with(text: &str) -> crate::Result<Limits> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, text).unwrap();
        let mut s = Settings::defaults(1, 1);
        s.apply_file(&LoadedFile::load(&path)?.unwrap());
        limits(&s)
    }

    /// `(max_depth, max_running)`, or the words of the refusal.
    type Outcome = Result<(u32, u32), &'static str>;

    /// One row per file: the limits, or the words of its refusal.
    #[test]
    fn delegation_is_checked_as_the_table_says() {
        let rows: &[(&str, Outcome)] = &[
            ("", Ok((2, 4))),
            ("[delegation]\n", Ok((2, 4))),
            ("[delegation]\nmax_depth = 0\n", Ok((0, 4))),
            ("[delegation]\nmax_depth = 5\nmax_running = 1\n", Ok((5, 1))),
            (
                "[delegation]\nmax_running = 0\n",
                Err("config.toml:2) lets no child run; set at least 1"),
            ),
            ("[delegation]\nmax_depth = -1\n", Err("config.toml:2")),
            (
                "[delegation]\nmax_running = \"four\"\n",
                Err("config.toml:2"),
            ),
            (
                "[delegation]\nmax_dept = 1\n",
                Err("unknown key `max_dept`; did you mean `max_depth`?"),
            ),
        ];
        for (text, want) in rows {
            match (with(text), want) {
                (Ok(got), Ok((depth, running))) => assert_eq!(
                    got,
                    Limits {
                        max_depth: *depth,
                        max_running: *running
                    },
                    "{text:?}"
                ),
                (Err(e), Err(words)) => assert!(e.to_string().contains(words), "{text:?}: {e}"),
                (got, want) => panic!("{text:?}: {got:?}, want {want:?}"),
            }
        }
    }
}
