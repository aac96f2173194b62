//! Variables whose value changes which program a command runs or what it does once running
//! (`PATH`, `HOME`, `LD_PRELOAD`, `GIT_DIR`, `BASH_ENV`, `PYTHONPATH`, `EXECIGNORE`, …); every
//! variable bash itself gives such a meaning is checked against bash by [`super::bash_names`].
//!
//! A script that sets one of them for later commands (a bare assignment, `export`, `read`,
//! `printf -v`, a `for` variable, `${X:=…}`) is unresolved: `PATH=.:$PATH; git status` runs
//! the repository's `./git`, and `HOME=$PWD; git status` its `.gitconfig`. A prefix assignment
//! (`PATH=. git status`) stays in the command's key, so no rule written for `git status` matches.
//!
//! Key decision: a broad list by prefix and by suffix, not a handful of names. A name missed
//! here is a bypass; a name listed needlessly costs an approval prompt.

/// Exact names.
const NAMES: &[&str] = &[
    "PATH",
    "HOME",
    "IFS",
    "ENV",
    "CDPATH",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "GLOBIGNORE",
    "FIGNORE",
    "HISTFILE",
    "HOSTALIASES",
    "INPUTRC",
    "MAIL",
    "MAILPATH",
    "OLDPWD",
    "POSIXLY_CORRECT",
    "SHELL",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "MANPAGER",
    "BROWSER",
    "TMPDIR",
    "TERMINFO",
    "ZDOTDIR",
    "LESSOPEN",
    "LESSCLOSE",
    "LESSKEY",
    "GCONV_PATH",
    "LOCPATH",
    "NLSPATH",
    "CLASSPATH",
    "MAKEFLAGS",
    "MAKEFILES",
    "MFLAGS",
    "CC",
    "CXX",
    "CPP",
    "LD",
    "AR",
    "RUSTC",
    "RUSTDOC",
    "RUSTFLAGS",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTDOCFLAGS",
    "GOFLAGS",
    "GOPATH",
    "GOROOT",
    "GOPROXY",
    "GOTOOLCHAIN",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "MAVEN_OPTS",
    "GRADLE_OPTS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "SSH_AUTH_SOCK",
    "OPENSSL_CONF",
    "OPENSSL_ENGINES",
    "CURL_HOME",
    "WGETRC",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "TZDIR",
    // Command lookup skips what EXECIGNORE matches: with an empty PATH entry, `git` is ./git.
    "EXECIGNORE",
    // `$"…"` is translated from the catalog these select, and the translation is expanded.
    "TEXTDOMAIN",
    "TEXTDOMAINDIR",
    "PS0",
    "POSIX_PEDANTIC",
    "POSIX_PEDANDTIC",
    "PWD",
    "DIRSTACK",
];

/// Prefixes (case-sensitive, as the programs that read them are).
const PREFIXES: &[&str] = &[
    "LD_",
    "DYLD_",
    "BASH_",
    "GIT_",
    "PYTHON",
    "PIP_",
    "NODE_",
    "NPM_",
    "npm_",
    "YARN_",
    "PERL",
    "RUBY",
    "GEM_",
    "BUNDLE",
    "XDG_",
    "CARGO_",
    "RUSTUP_",
    "MALLOC_",
    "GLIBC_",
    "DOTNET_",
    "LUA_",
    "PHP",
    "COMPOSER",
    "DOCKER_",
    "KUBE",
    "AWS_",
    "GNUPG",
    "GPG_",
    "SSH_",
    "PKG_CONFIG",
    "CMAKE_",
    "CONDA",
    "VIRTUAL_ENV",
    "JAVA_",
    "GRADLE_",
    "R_",
    "JULIA_",
    "DENO_",
    "BUN_",
    "LC_",
    "LANG",
    "TERM",
    "HIST",
    "COMP_",
    "READLINE",
];

/// Suffixes that name a program, a search path or options for one.
const SUFFIXES: &[&str] = &[
    "_OPTIONS", "_OPTS", "_FLAGS", "FLAGS", "_PATH", "PATH", "_HOME", "_DIR", "_CONFIG", "_CONF",
    "RC", "_WRAPPER", "_EDITOR", "_PAGER", "_SHELL", "_ASKPASS", "_PROGRAM", "_COMMAND", "_CMD",
    "_HOOK", "_HOOKS", "_EXEC", "_BIN", "_PRELOAD", "_LIBRARY", "_LIBS", "_PLUGINS",
];

/// Whether setting `name` can change what later commands run or do.
pub fn changes_commands(name: &str) -> bool {
    NAMES.contains(&name)
        || PREFIXES.iter().any(|p| name.starts_with(p))
        || SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// A plain variable name (`[A-Za-z_][A-Za-z0-9_]*`).
pub fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A variable name, or a name with a literal decimal subscript (`a[3]`): the only forms whose
/// use as a name evaluates nothing (bash evaluates a subscript as arithmetic, and arithmetic
/// runs the command substitutions in the values it reads).
pub fn is_inert_name(s: &str) -> bool {
    match s.split_once('[') {
        None => is_name(s),
        Some((name, rest)) => {
            is_name(name)
                && rest
                    .strip_suffix(']')
                    .is_some_and(|i| !i.is_empty() && i.chars().all(|c| c.is_ascii_digit()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_change_commands() {
        for n in [
            "PATH",
            "HOME",
            "IFS",
            "BASH_ENV",
            "LD_PRELOAD",
            "GIT_DIR",
            "GIT_CONFIG_GLOBAL",
            "PYTHONPATH",
            "NODE_OPTIONS",
            "PERL5OPT",
            "RUBYOPT",
            "XDG_CONFIG_HOME",
            "CARGO_HOME",
            "RUSTC_WRAPPER",
            "PS4",
            "PROMPT_COMMAND",
            "LESSOPEN",
            "GCONV_PATH",
            "MY_TOOL_PATH",
            "EXECIGNORE",
            "TEXTDOMAIN",
            "TEXTDOMAINDIR",
            "LANGUAGE",
            "LC_MESSAGES",
        ] {
            assert!(changes_commands(n), "{n}");
        }
        for n in ["x", "f", "count", "name", "RESULT", "i", "msg"] {
            assert!(!changes_commands(n), "{n}");
        }
    }

    #[test]
    fn inert_names() {
        for (s, want) in [
            ("x", true),
            ("_a1", true),
            ("a[3]", true),
            ("a[i]", false),
            ("a[$(touch x)]", false),
            ("1x", false),
            ("", false),
            ("a[]", false),
        ] {
            assert_eq!(is_inert_name(s), want, "{s}");
        }
    }
}
