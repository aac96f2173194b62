//! Which inherited environment variables a child may see.
//!
//! A model-driven shell can print its environment (`env`, `echo $GITHUB_TOKEN`) into output the
//! model reads and the store retains, so credentials the agent itself was started with must not
//! reach it. The child inherits the parent's environment minus [`DEFAULT_ENV_DENY`] and whatever
//! the operator adds; names the operator explicitly passes through win over the denylist, and
//! names tackle's own configuration holds as secrets ([`EnvPolicy::withhold`]: webhook URLs,
//! bearer tokens, MCP credentials, the server's own token) win over everything.
//!
//! Key decision: the built-in list is generous (a name that *looks* like a credential is
//! withheld) and exceptions are exact, named, harmless variables ([`DEFAULT_ENV_KEEP`]). A
//! command that needs a withheld variable gets it through `[bash] env_pass`; the alternative,
//! a short list of known vendor names, misses every credential nobody thought to list.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::sync::Mutex;

/// Variables never passed to a child unless explicitly let through. Names are matched
/// case-insensitively; `*` matches any run of characters.
pub const DEFAULT_ENV_DENY: &[&str] = &[
    // Passwords and passphrases: PGPASSWORD, MYSQL_PWD, SMTP_PASS, GPG_PASSPHRASE.
    "*PASSWORD*",
    "*PASSWD*",
    "*PASSPHRASE*",
    "*_PWD",
    "*_PASS",
    // Secrets and keys: SECRET_KEY, CLIENT_SECRET, OPENAI_KEY, AWS_ACCESS_KEY(_ID), *_API_KEY.
    "*SECRET*",
    "*_KEY",
    "*_KEYS",
    "*_KEY_*",
    "*APIKEY*",
    "*ACCESSKEY*",
    "*PRIVATE_KEY*",
    // Tokens of every kind: GITHUB_TOKEN, VAULT_TOKEN, CI_JOB_JWT, *_PAT.
    "*TOKEN*",
    "*JWT*",
    "*_PAT",
    // Credentials and authentication: GOOGLE_APPLICATION_CREDENTIALS, DOCKER_AUTH_CONFIG,
    // NPM_CONFIG__AUTH, *_OAUTH_*; the ssh and gpg agents are credentials too (a command with
    // SSH_AUTH_SOCK can sign in as the user wherever the user's keys open a door).
    "*CREDENTIAL*",
    "*_AUTH",
    "*_AUTH_*",
    "AUTH_*",
    "*OAUTH*",
    "*AUTHORIZATION*",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "KRB5CCNAME",
    // Sessions and cookies: AWS_SESSION_TOKEN, *_SESSION_KEY, *_COOKIE.
    "*_SESSION",
    "*_SESSION_*",
    "*COOKIE*",
    // URLs and connection strings that carry credentials: DATABASE_URL, SENTRY_DSN, webhooks.
    "*DATABASE_URL*",
    "*_DSN",
    "*CONNECTION_STRING*",
    "*WEBHOOK*",
];

/// Harmless variables a built-in pattern would catch, passed through by name: the working
/// directory, and session descriptors that carry no secret. Patterns the operator adds
/// (`[bash] env_deny`) still withhold them.
pub const DEFAULT_ENV_KEEP: &[&str] = &[
    "PWD",
    "OLDPWD",
    "TOKENIZERS_PARALLELISM",
    "XDG_SESSION_ID",
    "XDG_SESSION_TYPE",
    "XDG_SESSION_CLASS",
    "XDG_SESSION_DESKTOP",
    "DESKTOP_SESSION",
    "DBUS_SESSION_BUS_ADDRESS",
];

/// The inherited environment minus a denylist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvPolicy {
    /// Name patterns removed from the child's environment.
    pub deny: Vec<String>,
    /// Exact names passed through even when a deny pattern matches them.
    pub pass: Vec<String>,
    /// Exact names always removed, even when `pass` names them: the variables tackle's own
    /// configuration holds as secrets (an alert webhook URL and token, an MCP server's
    /// credentials, the HTTP server's bearer token).
    pub withhold: Vec<String>,
}

impl Default for EnvPolicy {
    fn default() -> Self {
        Self {
            deny: DEFAULT_ENV_DENY.iter().map(|s| (*s).to_owned()).collect(),
            pass: Vec::new(),
            withhold: Vec::new(),
        }
    }
}

impl EnvPolicy {
    /// Whether a variable of this name is withheld from children.
    pub fn denies(&self, name: &str) -> bool {
        if self.withhold.iter().any(|w| w.eq_ignore_ascii_case(name)) {
            return true;
        }
        if self.pass.iter().any(|p| p.eq_ignore_ascii_case(name)) {
            return false;
        }
        let kept = DEFAULT_ENV_KEEP
            .iter()
            .any(|k| k.eq_ignore_ascii_case(name));
        self.deny
            .iter()
            .filter(|p| !(kept && DEFAULT_ENV_DENY.contains(&p.as_str())))
            .any(|p| glob_match(p, name))
    }

    /// Withhold `name` whatever `pass` says (see [`EnvPolicy::withhold`]).
    pub fn withhold(&mut self, name: &str) {
        if !self.withhold.iter().any(|w| w == name) {
            self.withhold.push(name.to_owned());
        }
    }

    /// The environment a child gets, from `vars` (normally `std::env::vars_os()`). A name that
    /// is not UTF-8 is kept only if it matches nothing when read lossily.
    pub fn filter(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Vec<(OsString, OsString)> {
        let mut decided = DECIDED.lock().unwrap_or_else(|p| p.into_inner());
        let at = match decided.iter().position(|d| &d.policy == self) {
            Some(at) => at,
            None => {
                if decided.len() == MOST_POLICIES {
                    decided.remove(0);
                }
                decided.push(Decided {
                    policy: self.clone(),
                    names: HashMap::new(),
                });
                decided.len() - 1
            }
        };
        let names = &mut decided[at].names;
        vars.into_iter()
            .filter(|(k, _)| {
                let denied = match names.get(k.as_os_str()) {
                    Some(&denied) => denied,
                    None => {
                        let denied = self.denies(&OsStr::to_string_lossy(k));
                        if names.len() < MOST_NAMES {
                            names.insert(k.clone(), denied);
                        }
                        denied
                    }
                };
                !denied
            })
            .collect()
    }
}

/// What [`EnvPolicy::denies`] answered, per policy and name. Every spawn filters the whole
/// inherited environment, and matching each name against the forty-odd patterns costs tens of
/// microseconds a spawn (measured: a fifth of what `bash -c true` costs in all); the answer is
/// a function of the policy and the name alone, and a process has few policies and few names.
static DECIDED: Mutex<Vec<Decided>> = Mutex::new(Vec::new());
/// Policies remembered (the oldest is forgotten first).
const MOST_POLICIES: usize = 8;
/// Names remembered per policy; past this, the rest are matched every time.
const MOST_NAMES: usize = 4096;

struct Decided {
    policy: EnvPolicy,
    names: HashMap<OsString, bool>,
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

    /// One variable name a line: `withheld` or `passed` under the default policy.
    const DEFAULT_CASES: &str = "
        withheld ANTHROPIC_API_KEY
        withheld OPENAI_API_KEY
        withheld OPENAI_KEY
        withheld GEMINI_API_KEY
        withheld GOOGLE_APPLICATION_CREDENTIALS
        withheld AWS_ACCESS_KEY
        withheld AWS_ACCESS_KEY_ID
        withheld AWS_SECRET_ACCESS_KEY
        withheld AWS_SESSION_TOKEN
        withheld GITHUB_TOKEN
        withheld GH_TOKEN
        withheld CI_JOB_TOKEN
        withheld CI_JOB_JWT
        withheld CI_JOB_JWT_V2
        withheld VAULT_TOKEN
        withheld ACCESSTOKEN
        withheld TOKEN
        withheld HF_TOKEN
        withheld MY_SERVICE_TOKEN
        withheld my_service_token
        withheld PGPASSWORD
        withheld MYSQL_PWD
        withheld MYSQL_ROOT_PASSWORD
        withheld REDIS_PASSWD
        withheld SMTP_PASS
        withheld GPG_PASSPHRASE
        withheld SECRET_KEY
        withheld DJANGO_SECRET_KEY
        withheld CLIENT_SECRET
        withheld DB_SECRET
        withheld DB_SECRET_FILE
        withheld STRIPE_API_KEY
        withheld SENDGRID_APIKEY
        withheld SIGNING_KEYS
        withheld SSH_PRIVATE_KEY
        withheld DOCKER_AUTH_CONFIG
        withheld NPM_CONFIG__AUTH
        withheld AUTH_HEADER
        withheld GOOGLE_OAUTH_CLIENT
        withheld PROXY_AUTHORIZATION
        withheld SSH_AUTH_SOCK
        withheld GPG_AGENT_INFO
        withheld KRB5CCNAME
        withheld GITHUB_PAT
        withheld RAILS_SESSION
        withheld APP_SESSION_KEY
        withheld BROWSER_COOKIE
        withheld DATABASE_URL
        withheld READONLY_DATABASE_URL
        withheld SENTRY_DSN
        withheld AZURE_CONNECTION_STRING
        withheld SLACK_WEBHOOK
        withheld ONCALL_WEBHOOK_URL
        passed PATH
        passed HOME
        passed PWD
        passed OLDPWD
        passed LANG
        passed LC_ALL
        passed TERM
        passed SHELL
        passed USER
        passed CARGO_HOME
        passed RUSTUP_HOME
        passed TOKENIZERS_PARALLELISM
        passed GIT_AUTHOR_NAME
        passed GIT_AUTHOR_EMAIL
        passed XDG_SESSION_ID
        passed XDG_SESSION_TYPE
        passed XDG_RUNTIME_DIR
        passed XDG_CONFIG_HOME
        passed DESKTOP_SESSION
        passed DBUS_SESSION_BUS_ADDRESS
        passed KEYBOARD_LAYOUT
        passed MONKEY
        passed PASSAGE
        passed EDITOR
        passed SSH_CONNECTION
        passed TACKLE_HEADLESS
    ";

    #[test]
    fn secrets_are_withheld_and_ordinary_variables_kept() {
        let policy = EnvPolicy::default();
        let mut count = 0;
        for line in DEFAULT_CASES
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
        {
            let (want, name) = line.split_once(' ').unwrap();
            let withheld = match want {
                "withheld" => true,
                "passed" => false,
                other => panic!("bad case line {line:?}: {other}"),
            };
            assert_eq!(policy.denies(name), withheld, "{line}");
            count += 1;
        }
        assert!(count > 70, "the table is read ({count} cases)");
    }

    #[test]
    fn pass_overrides_and_extra_patterns_apply() {
        let policy = EnvPolicy {
            deny: vec!["*_TOKEN".into(), "CORP_*".into()],
            pass: vec!["CI_JOB_TOKEN".into()],
            withhold: vec![],
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
    fn withheld_names_beat_pass_and_keep() {
        let mut policy = EnvPolicy::default();
        policy.pass.push("ONCALL_URL".into());
        policy.pass.push("PLAIN".into());
        policy.withhold("ONCALL_URL");
        policy.withhold("PWD");
        assert!(policy.denies("ONCALL_URL"), "withhold beats pass");
        assert!(
            policy.denies("oncall_url"),
            "names match case-insensitively"
        );
        assert!(policy.denies("PWD"), "withhold beats the keep list");
        assert!(!policy.denies("PLAIN"));
        policy.withhold("ONCALL_URL");
        assert_eq!(policy.withhold.len(), 2, "withholding twice records once");
    }

    #[test]
    fn remembered_answers_are_per_policy() {
        let var = |k: &str| (OsString::from(k), OsString::from("v"));
        let env = || [var("CORP_VPN"), var("PATH"), var("GITHUB_TOKEN")];
        let names = |kept: Vec<(OsString, OsString)>| -> Vec<String> {
            kept.into_iter()
                .map(|(k, _)| k.to_string_lossy().into_owned())
                .collect()
        };
        let default = EnvPolicy::default();
        let mut corp = EnvPolicy::default();
        corp.deny.push("CORP_*".into());
        let mut open = EnvPolicy::default();
        open.pass.push("GITHUB_TOKEN".into());
        // Twice each, interleaved: the second answers come from what the first remembered.
        for _ in 0..2 {
            assert_eq!(names(default.filter(env())), ["CORP_VPN", "PATH"]);
            assert_eq!(names(corp.filter(env())), ["PATH"]);
            assert_eq!(
                names(open.filter(env())),
                ["CORP_VPN", "PATH", "GITHUB_TOKEN"]
            );
        }
        // More policies than are remembered: each still answers for itself.
        for i in 0..(MOST_POLICIES + 2) {
            let mut p = EnvPolicy::default();
            p.deny.push(format!("X{i}"));
            let extra = (OsString::from(format!("X{i}")), OsString::from("v"));
            assert_eq!(names(p.filter([extra, var("PATH")])), ["PATH"], "{i}");
        }
        assert_eq!(names(corp.filter(env())), ["PATH"]);
    }

    #[test]
    fn the_keep_list_exempts_only_from_built_in_patterns() {
        let mut policy = EnvPolicy::default();
        assert!(!policy.denies("XDG_SESSION_TYPE"));
        policy.deny.push("XDG_*".into());
        assert!(
            policy.denies("XDG_SESSION_TYPE"),
            "an operator pattern holds"
        );
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
