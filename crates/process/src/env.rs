//! Which inherited environment variables a child may see.
//!
//! A model-driven shell can print its environment (`env`, `echo $GITHUB_TOKEN`) into output the
//! model reads and the store retains, so credentials the agent itself was started with must not
//! reach it. The child inherits the parent's environment minus [`DEFAULT_ENV_DENY`] and whatever
//! the operator adds; names the operator explicitly passes through win over the denylist.

use std::ffi::{OsStr, OsString};

/// Variables never passed to a child unless explicitly let through. Names are matched
/// case-insensitively; `*` matches any run of characters.
pub const DEFAULT_ENV_DENY: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_OPENAI_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "XAI_API_KEY",
    "HF_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITLAB_TOKEN",
    "NPM_TOKEN",
    "CARGO_REGISTRY_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "DATABASE_URL",
    "SSH_AUTH_SOCK",
    "*_API_KEY",
    "*_APIKEY",
    "*_TOKEN",
    "*_SECRET*",
    "*_PASSWORD",
    "*_PASSWD",
    "*_CREDENTIALS",
    "*_PRIVATE_KEY",
];

/// The inherited environment minus a denylist.
#[derive(Clone, Debug)]
pub struct EnvPolicy {
    /// Name patterns removed from the child's environment.
    pub deny: Vec<String>,
    /// Exact names passed through even when a deny pattern matches them.
    pub pass: Vec<String>,
}

impl Default for EnvPolicy {
    fn default() -> Self {
        Self {
            deny: DEFAULT_ENV_DENY.iter().map(|s| (*s).to_owned()).collect(),
            pass: Vec::new(),
        }
    }
}

impl EnvPolicy {
    /// Whether a variable of this name is withheld from children.
    pub fn denies(&self, name: &str) -> bool {
        if self.pass.iter().any(|p| p.eq_ignore_ascii_case(name)) {
            return false;
        }
        self.deny.iter().any(|p| glob_match(p, name))
    }

    /// The environment a child gets, from `vars` (normally `std::env::vars_os()`). A name that
    /// is not UTF-8 is kept only if it matches nothing when read lossily.
    pub fn filter(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Vec<(OsString, OsString)> {
        vars.into_iter()
            .filter(|(k, _)| !self.denies(&OsStr::to_string_lossy(k)))
            .collect()
    }
}

/// `*`-only glob, ASCII case-insensitive: `*` matches any (possibly empty) run of characters.
/// Runs once per inherited variable and pattern on every spawn, so it allocates nothing.
fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi].eq_ignore_ascii_case(&t[ti]) {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_withheld_and_ordinary_variables_kept() {
        let policy = EnvPolicy::default();
        let cases = [
            ("ANTHROPIC_API_KEY", true),
            ("OPENAI_API_KEY", true),
            ("GEMINI_API_KEY", true),
            ("GITHUB_TOKEN", true),
            ("AWS_SECRET_ACCESS_KEY", true),
            ("MY_SERVICE_TOKEN", true),
            ("my_service_token", true),
            ("DB_SECRET", true),
            ("DB_SECRET_FILE", true),
            ("STRIPE_API_KEY", true),
            ("PATH", false),
            ("HOME", false),
            ("LANG", false),
            ("CARGO_HOME", false),
            ("TOKENIZERS_PARALLELISM", false),
            ("TERM", false),
        ];
        for (name, denied) in cases {
            assert_eq!(policy.denies(name), denied, "{name}");
        }
    }

    #[test]
    fn pass_overrides_and_extra_patterns_apply() {
        let policy = EnvPolicy {
            deny: vec!["*_TOKEN".into(), "CORP_*".into()],
            pass: vec!["CI_JOB_TOKEN".into()],
        };
        assert!(!policy.denies("CI_JOB_TOKEN"));
        assert!(policy.denies("OTHER_TOKEN"));
        assert!(policy.denies("CORP_VPN"));
        let kept = policy.filter([
            (OsString::from("A_TOKEN"), OsString::from("x")),
            (OsString::from("PATH"), OsString::from("/bin")),
        ]);
        assert_eq!(kept, vec![(OsString::from("PATH"), OsString::from("/bin"))]);
    }

    #[test]
    fn glob_matching() {
        for (p, t, m) in [
            ("*", "", true),
            ("A*B", "AB", true),
            ("A*B", "AxxB", true),
            ("A*B", "AxxBx", false),
            ("*_SECRET*", "X_SECRET", true),
            ("*_SECRET*", "SECRET", false),
            ("*_token", "MY_TOKEN", true),
        ] {
            assert_eq!(glob_match(p, t), m, "{p} {t}");
        }
    }
}
