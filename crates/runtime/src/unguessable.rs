//! Ids that name something a client may ask for by id, and so must not be guessable: MCP call
//! ids (which `retrieve_raw` takes), approval handles, session ids.
//!
//! 128 bits, as hex, from the thread's ChaCha12 generator (rand's `ThreadRng`: seeded from the
//! operating system's generator and reseeded from it every 64 KiB of output), a generator fit for
//! keys, without a system call per id (two per tool call). A sequential id (`mcp-1`, `mcp-2`)
//! let one client of a server name another's calls; one a client cannot predict is a
//! capability held only by whoever was given it, as an artifact's digest is.

/// `<prefix>-<32 hex digits>`.
pub fn unguessable_id(prefix: &str) -> String {
    use rand::Rng as _;
    let mut bytes = [0u8; 16];
    // It panics when the operating system's generator fails at a (re)seed: ids that could
    // collide or be predicted would hand one client another's output, so that is not a
    // condition to run on.
    rand::rng().fill_bytes(&mut bytes);
    format!("{prefix}-{}", hex::encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_long_distinct_and_prefixed() {
        let ids: std::collections::HashSet<String> =
            (0..1000).map(|_| unguessable_id("mcp")).collect();
        assert_eq!(ids.len(), 1000);
        for id in &ids {
            let hex = id.strip_prefix("mcp-").unwrap();
            assert_eq!(hex.len(), 32);
            assert!(hex.bytes().all(|b| b.is_ascii_hexdigit()));
        }
    }
}
