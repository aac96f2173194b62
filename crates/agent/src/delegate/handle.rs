//! Handles: the short names a tree's children go by (`explore_1a2b3c4d`), made when the child
//! session is created and unique within its tree. A full session id names a child too; the
//! tree resolves both ([`crate::delegate::Tree`]).

/// `<agent_type>_<8 lowercase hex>`, not among `taken`.
pub fn new_handle(agent_type: &str, taken: impl Fn(&str) -> bool) -> String {
    use rand::RngExt as _;
    loop {
        let suffix: u32 = rand::rng().random();
        let handle = format!("{agent_type}_{suffix:08x}");
        if !taken(&handle) {
            return handle;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_is_the_type_and_eight_hex_digits_never_a_taken_one() {
        let first = new_handle("explore", |_| false);
        let (ty, hex) = first.rsplit_once('_').unwrap();
        assert_eq!(ty, "explore");
        assert_eq!(hex.len(), 8);
        assert!(
            hex.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        let mut seen = vec![first];
        for _ in 0..200 {
            let h = new_handle("code-reviewer", |h| seen.iter().any(|s| s == h));
            assert!(!seen.contains(&h));
            seen.push(h);
        }
    }
}
