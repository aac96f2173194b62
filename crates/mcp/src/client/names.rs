//! Model-facing names for remote tools: `mcp__<server>__<tool>`, sanitized to
//! `^[A-Za-z0-9_-]{1,64}$` (several model APIs reject dots and long names).
//!
//! Key decision: a name that had to be changed (characters replaced, or cut to 64 bytes), or
//! that collides with one already taken, gets a short suffix hashed from the exact server and
//! tool names, so the same configuration always yields the same names.

use std::collections::BTreeSet;

const MAX: usize = 64;

/// The sanitized name of `tool` on `server`, unique within `taken` (which it joins).
pub fn model_name(server: &str, tool: &str, taken: &mut BTreeSet<String>) -> String {
    let raw = format!("mcp__{server}__{tool}");
    let clean: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut name = if clean == raw && clean.len() <= MAX && !taken.contains(&clean) {
        clean.clone()
    } else {
        with_suffix(&clean, &format!("{server}\0{tool}"), 0)
    };
    let mut salt = 1;
    while taken.contains(&name) {
        name = with_suffix(&clean, &format!("{server}\0{tool}"), salt);
        salt += 1;
    }
    taken.insert(name.clone());
    name
}

fn with_suffix(clean: &str, identity: &str, salt: u32) -> String {
    let hash = fnv1a(format!("{identity}\0{salt}").as_bytes());
    let suffix = format!("_{:06x}", hash & 0xff_ffff);
    let keep = MAX - suffix.len();
    // `clean` is ASCII, so any byte index is a char boundary.
    let head = &clean[..clean.len().min(keep)];
    format!("{head}{suffix}")
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(n: &str) -> bool {
        (1..=64).contains(&n.len())
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    }

    #[test]
    fn names_are_valid_stable_and_unique() {
        let mut taken = BTreeSet::new();
        assert_eq!(
            model_name("gh", "create_issue", &mut taken),
            "mcp__gh__create_issue"
        );
        let dotted = model_name("gh", "repo.list", &mut taken);
        assert!(dotted.starts_with("mcp__gh__repo_list_"), "{dotted}");
        // `repo_list` would be taken by the sanitized `repo.list` only if it had no suffix.
        let plain = model_name("gh", "repo_list", &mut taken);
        assert_eq!(plain, "mcp__gh__repo_list");
        let long = model_name("gh", &"x".repeat(100), &mut taken);
        assert_eq!(long.len(), 64);
        for n in &taken {
            assert!(valid(n), "{n}");
        }
        // Same input, same output.
        let mut again = BTreeSet::new();
        assert_eq!(model_name("gh", "repo.list", &mut again), dotted);
        // A collision is resolved by a different suffix.
        let mut t = BTreeSet::new();
        let a = model_name("s", "t", &mut t);
        t.insert("mcp__s__t_x".into());
        let b = model_name("s", "t", &mut t);
        assert_ne!(a, b);
        assert!(valid(&b));
    }
}
