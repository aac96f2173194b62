//! The memory budget's checks: natives placed before every operation that can allocate, in
//! one go, more than a small multiple of what it was given, each asking the meter
//! ([`super::memory`]) whether the result fits before it is built.
//!
//! Those operations, found by reading jaq-core, jaq-std and jaq-json: string repetition
//! (`"a" * 1e12`, proportional to a number), integer products (`. * .` squares a big
//! integer's size), concatenation and merging (`. + .` doubles), splitting (`/`, `split`,
//! `splits`, `explode`, regex matching: a value per piece), serialising (`tojson`,
//! `tostring`, string interpolation, the output itself: proportional to the value's size as
//! text, which sharing makes exponential in what it holds: `[., .]` twice per step), parsing
//! (`fromjson`), and the escaping formats (`@html` ×6, `@sh` ×4, `@uri` ×3, `@base64`).
//! Everything else either builds at most a copy of its input or goes through a definition
//! call, a generator step or an array element, where [`super::memory::over`] is read.
//!
//! `+`, `*` and `/` (and `+=`, `*=`, `/=`) are rewritten to [`ADD`], [`MUL`] and [`DIV`],
//! natives taking both operands as variables, which jaq binds in the order it evaluates an
//! arithmetic operator (left outer, right inner), so the outputs and their order are
//! unchanged. Elements of `[f]` pass through [`ELEM`]; string interpolation parts through
//! [`TEXT`]; the other guarded natives are renamed `__tackle_raw_<name>` and reached through
//! a definition under the builtin's name that checks first ([`WRAPPERS`]).

use std::mem::size_of;

use jaq_core::native::{Fun, v};
use jaq_json::{Num, Val};
use jaq_std::ValT as _;

use super::{D, Exceeded, memory};

pub(super) const ADD: &str = "__tackle_add";
pub(super) const MUL: &str = "__tackle_mul";
pub(super) const DIV: &str = "__tackle_div";
pub(super) const ELEM: &str = "__tackle_elem";
pub(super) const TEXT: &str = "__tackle_text";

/// Integers are bounded at this many bits (jq's own numbers end at about 2^1024).
pub const MAX_INT_BITS: u64 = 1 << 20;

/// Bytes one value slot takes in an array.
const SLOT: usize = size_of::<Val>();
/// Bytes one string piece takes: its slot, its boxed `Bytes`, the allocator's header.
const PIECE: usize = SLOT + 48;
/// Bytes one regex match takes as jaq builds it (an object of offset, length, string,
/// captures and name, and its array).
const MATCH: usize = 512;

/// The guarded natives of jaq, renamed, and the definitions that reach them after the check.
pub(super) const WRAPPERS: &[(&str, usize, &str, &str)] = &[
    (
        "tojson",
        0,
        "__tackle_raw_tojson",
        "def tojson: __tackle_text | __tackle_raw_tojson;",
    ),
    (
        "fromjson",
        0,
        "__tackle_raw_fromjson",
        "def fromjson: __tackle_json_text | __tackle_raw_fromjson;",
    ),
    (
        "explode",
        0,
        "__tackle_raw_explode",
        "def explode: __tackle_grow(-1) | __tackle_raw_explode;",
    ),
    (
        "indices",
        1,
        "__tackle_raw_indices",
        "def indices($i): __tackle_grow(-1) | __tackle_raw_indices($i);",
    ),
    (
        "escape_html",
        0,
        "__tackle_raw_escape_html",
        "def escape_html: __tackle_grow(6) | __tackle_raw_escape_html;",
    ),
    (
        "escape_sh",
        0,
        "__tackle_raw_escape_sh",
        "def escape_sh: __tackle_grow(4) | __tackle_raw_escape_sh;",
    ),
    (
        "encode_uri",
        0,
        "__tackle_raw_encode_uri",
        "def encode_uri: __tackle_grow(3) | __tackle_raw_encode_uri;",
    ),
    (
        "encode_base64",
        0,
        "__tackle_raw_encode_base64",
        "def encode_base64: __tackle_grow(2) | __tackle_raw_encode_base64;",
    ),
    (
        "matches",
        2,
        "__tackle_raw_matches",
        "def matches($re; $flags): __tackle_regex($flags) | __tackle_raw_matches($re; $flags);",
    ),
    (
        "split_matches",
        2,
        "__tackle_raw_split_matches",
        "def split_matches($re; $flags): __tackle_regex($flags) | \
         __tackle_raw_split_matches($re; $flags);",
    ),
    (
        "split_",
        2,
        "__tackle_raw_split_",
        "def split_($re; $flags): __tackle_regex($flags) | __tackle_raw_split_($re; $flags);",
    ),
    (
        "strftime",
        1,
        "__tackle_raw_strftime",
        "def strftime($f): __tackle_time_format($f) | __tackle_raw_strftime($f);",
    ),
    (
        "strptime",
        1,
        "__tackle_raw_strptime",
        "def strptime($f): __tackle_time_format($f) | __tackle_raw_strptime($f);",
    ),
];

fn memory_error<'a>(what: String) -> jaq_core::Exn<'a, Val> {
    super::exceed(Exceeded::Memory);
    jaq_core::Error::str(format!(
        "{what} would take more than the {} MiB the expression's values may hold",
        super::QUERY_MAX_MEMORY_BYTES >> 20
    ))
    .into()
}

/// Fail if the meter is over, or if `need` bytes more would not fit; the error names `what`.
fn room(need: f64, what: impl FnOnce() -> String) -> Result<(), String> {
    if memory::over() || need > memory::headroom() as f64 {
        return Err(what());
    }
    Ok(())
}

fn fits<'a>(need: f64, what: impl FnOnce() -> String) -> Result<(), jaq_core::Exn<'a, Val>> {
    room(need, what).map_err(memory_error)
}

/// What a value holds itself, not counting what it shares: its bytes, slots or entries.
fn shallow(v: &Val) -> f64 {
    (match v {
        Val::TStr(b) | Val::BStr(b) => b.len(),
        Val::Arr(a) => a.len() * SLOT,
        Val::Obj(o) => o.len() * (2 * SLOT + 16),
        Val::Num(n) => int_bits(n).div_ceil(8) as usize,
        Val::Null | Val::Bool(_) => 0,
    }) as f64
}

fn int_bits(n: &Num) -> u64 {
    match n {
        Num::BigInt(i) => i.bits(),
        Num::Int(_) => 64,
        // Decimal literals become integers in arithmetic: about 3.33 bits a digit.
        Num::Dec(s) => (s.len() as u64 * 10).div_ceil(3),
        Num::Float(_) => 0,
    }
}

fn is_int(n: &Num) -> bool {
    matches!(n, Num::Int(_) | Num::BigInt(_))
        || matches!(n, Num::Dec(s) if !s.contains(['.', 'e', 'E']))
}

fn int_fits<'a>(bits: u64) -> Result<(), jaq_core::Exn<'a, Val>> {
    if bits > MAX_INT_BITS {
        super::exceed(Exceeded::Memory);
        return Err(jaq_core::Error::str(format!(
            "an integer of about {bits} bits would be over the {MAX_INT_BITS} bit limit"
        ))
        .into());
    }
    Ok(())
}

fn add<'a>(l: Val, r: Val) -> jaq_core::ValX<'a, Val> {
    match (&l, &r) {
        (Val::Num(x), Val::Num(y)) if is_int(x) && is_int(y) => {
            int_fits(int_bits(x).max(int_bits(y)) + 1)?;
        }
        _ => fits(shallow(&l) + shallow(&r), || "a concatenation".into())?,
    }
    Ok((l + r)?)
}

fn mul<'a>(l: Val, r: Val) -> jaq_core::ValX<'a, Val> {
    match (&l, &r) {
        (Val::Num(x), Val::Num(y)) if is_int(x) && is_int(y) => {
            int_fits(int_bits(x) + int_bits(y))?;
        }
        (s @ (Val::TStr(_) | Val::BStr(_)), n @ Val::Num(_))
        | (n @ Val::Num(_), s @ (Val::TStr(_) | Val::BStr(_))) => {
            let times = n.as_f64().unwrap_or(0.0);
            if times > 0.0 {
                fits(shallow(s) * times.ceil(), || {
                    format!("repeating a string {times} times")
                })?;
            }
        }
        // A deep merge copies `l`'s objects along every path of `r`, shared or not.
        (Val::Obj(_), Val::Obj(_)) => {
            // Each object copied costs about 8 times its text (slots, hashes, indices).
            if let Err(why) = writable(&r, memory::headroom() / 8) {
                return Err(memory_error(format!("a merge ({why})")));
            }
            fits(shallow(&l) + shallow(&r), || "a merge".into())?;
        }
        _ => fits(shallow(&l) + shallow(&r), || "a merge".into())?,
    }
    Ok((l * r)?)
}

fn div<'a>(l: Val, r: Val) -> jaq_core::ValX<'a, Val> {
    if let (Val::TStr(s) | Val::BStr(s), Val::TStr(sep) | Val::BStr(sep)) = (&l, &r) {
        let pieces = if sep.is_empty() {
            s.len()
        } else {
            s.len() / sep.len() + 1
        };
        fits((pieces * PIECE) as f64, || "splitting a string".into())?;
    }
    Ok((l / r)?)
}

/// Why a value cannot be written as text within `cap` bytes and [`super::nesting`]'s depth.
enum Unwritable {
    Long,
    Deep,
}

/// The length of `v` as JSON text, counted without writing it, given up past `cap` bytes or
/// [`super::nesting::MAX_JSON_DEPTH`] levels. Iterative: the value may be deep.
fn text_len(v: &Val, cap: usize) -> Result<usize, Unwritable> {
    let mut len = 0usize;
    let mut todo: Vec<(&Val, usize)> = vec![(v, 0)];
    while let Some((v, depth)) = todo.pop() {
        if depth > super::nesting::MAX_JSON_DEPTH {
            return Err(Unwritable::Deep);
        }
        len += match v {
            Val::Null | Val::Bool(_) => 5,
            Val::Num(Num::BigInt(i)) => (i.bits() as usize * 3).div_ceil(10) + 2,
            Val::Num(Num::Dec(s)) => s.len(),
            Val::Num(_) => 24,
            Val::TStr(b) | Val::BStr(b) => {
                2 + b
                    .iter()
                    .map(|&c| match c {
                        b'"' | b'\\' => 2,
                        0..0x20 | 0x7f => 6,
                        0x80.. => 3,
                        _ => 1,
                    })
                    .sum::<usize>()
            }
            Val::Arr(a) => {
                todo.extend(a.iter().map(|x| (x, depth + 1)));
                2 + a.len()
            }
            Val::Obj(o) => {
                for (k, x) in o.iter() {
                    todo.push((k, depth + 1));
                    todo.push((x, depth + 1));
                }
                2 + 2 * o.len()
            }
        };
        if len > cap {
            return Err(Unwritable::Long);
        }
    }
    Ok(len)
}

/// Check that `v` can be written as JSON text within `cap` bytes (and the meter's headroom);
/// the error says which bound it is over.
pub(super) fn writable(v: &Val, cap: usize) -> Result<usize, String> {
    let cap = cap.min(memory::headroom());
    text_len(v, cap).map_err(|why| match why {
        Unwritable::Long => format!("writing a value as text would take over {cap} bytes"),
        Unwritable::Deep => format!(
            "a value nests arrays and objects more than {} deep, too deep to write as text",
            super::nesting::MAX_JSON_DEPTH
        ),
    })
}

fn check<'a>(r: Result<(), String>, v: Val) -> jaq_core::ValXs<'a, Val> {
    Box::new(std::iter::once(match r {
        Ok(()) => Ok(v),
        Err(what) => Err(memory_error(what)),
    }))
}

/// The checks, and the arithmetic operators that check first.
pub(super) fn funs() -> impl Iterator<Item = Fun<D>> {
    use jaq_core::native::run;
    let arith: [jaq_core::native::Filter<jaq_core::RunPtr<D>>; 3] = [
        (ADD, v(2), |mut cv| {
            let r = cv.0.pop_var();
            let l = cv.0.pop_var();
            Box::new(std::iter::once(add(l, r)))
        }),
        (MUL, v(2), |mut cv| {
            let r = cv.0.pop_var();
            let l = cv.0.pop_var();
            Box::new(std::iter::once(mul(l, r)))
        }),
        (DIV, v(2), |mut cv| {
            let r = cv.0.pop_var();
            let l = cv.0.pop_var();
            Box::new(std::iter::once(div(l, r)))
        }),
    ];
    let checks: [jaq_core::native::Filter<jaq_core::RunPtr<D>>; 6] = [
        // An element of `[f]`: the array grows by a slot.
        (ELEM, v(0), |cv| {
            if super::deadline_check().is_err() {
                return Box::new(std::iter::once(Err(super::step_error())));
            }
            let r = if memory::over() {
                Err("the values built so far".to_owned())
            } else {
                Ok(())
            };
            check(r, cv.1)
        }),
        (TEXT, v(0), |cv| {
            let r = writable(&cv.1, usize::MAX).map(drop);
            check(r, cv.1)
        }),
        // A string or array transformed into `k` times its size (`-1`: a value per item).
        ("__tackle_grow", v(1), |mut cv| {
            let k = cv.0.pop_var().as_f64().unwrap_or(1.0);
            let need = match &cv.1 {
                Val::TStr(b) | Val::BStr(b) if k < 0.0 => (b.len() * PIECE) as f64,
                Val::Arr(a) if k < 0.0 => (a.len() * SLOT) as f64,
                v => shallow(v) * k,
            };
            check(room(need, || "the result".into()), cv.1)
        }),
        // A regex over a string: with `g`, up to a match per byte.
        ("__tackle_regex", v(1), |mut cv| {
            let flags = cv.0.pop_var();
            let global = flags.as_utf8_bytes().is_some_and(|f| f.contains(&b'g'));
            let per = if global { shallow(&cv.1) + 1.0 } else { 2.0 };
            check(room(per * MATCH as f64, || "the matches".into()), cv.1)
        }),
        ("__tackle_json_text", v(0), |cv| {
            if let Val::TStr(b) | Val::BStr(b) = &cv.1
                && let Err(super::nesting::OverLimit(why)) = super::nesting::check_json(b)
            {
                // Not a budget spent but text refused, as inline data is: an error the
                // filter sees (and may `try`), naming the bound.
                let error = jaq_core::Error::str(format!("fromjson: the JSON text {why}"));
                return Box::new(std::iter::once(Err(jaq_core::Exn::from(error))));
            }
            let r = match &cv.1 {
                Val::TStr(_) | Val::BStr(_) => {
                    room(shallow(&cv.1) * 16.0, || "parsing the text".into())
                }
                _ => Ok(()),
            };
            check(r, cv.1)
        }),
        // A time format: at most a few dozen bytes a directive; no zone name looked up in
        // the system's time zone database (`%Q`).
        ("__tackle_time_format", v(1), |mut cv| {
            let f = cv.0.pop_var();
            let r = match f.as_utf8_bytes() {
                Some(b) if names_a_zone(b) => {
                    return Box::new(std::iter::once(Err(jaq_core::Error::str(
                        "time formats may not name zones (%Q): the filter may not read the \
                         system's time zone database",
                    )
                    .into())));
                }
                Some(b) => room(b.len() as f64 * 32.0, || "a formatted time".into()),
                None => Ok(()),
            };
            check(r, cv.1)
        }),
    ];
    arith.into_iter().chain(checks).map(|f| run::<D>(f))
}

/// Whether a strftime/strptime format has a `%Q` directive (flags and width may come
/// between: `%-Q`, `%:Q`, `%10Q`).
fn names_a_zone(f: &[u8]) -> bool {
    let mut i = 0;
    while i < f.len() {
        if f[i] == b'%' {
            i += 1;
            while i < f.len() && (b"-_0^#:".contains(&f[i]) || f[i].is_ascii_digit()) {
                i += 1;
            }
            if f.get(i) == Some(&b'Q') {
                return true;
            }
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_len_matches_what_jaq_writes() {
        let docs = [
            r#"{"a": [1, 2.5, "x\"y\n\u0001é"], "b": null, "c": {"d": true}}"#,
            "[[[]], {}, \"\"]",
            "\"plain\"",
        ];
        for doc in docs {
            let v = jaq_json::read::parse_single(doc.as_bytes()).unwrap();
            let written = v.to_string().len();
            let counted = text_len(&v, usize::MAX).ok().unwrap();
            assert!(counted >= written, "{doc}: {counted} < {written}");
            assert!(counted <= written * 3 + 64, "{doc}: {counted} vs {written}");
        }
    }

    #[test]
    fn zone_directives_are_found() {
        for (f, zone) in [
            ("%Y-%m-%d", false),
            ("%Q", true),
            ("%:Q", true),
            ("%-10Q", true),
            ("%%Q", false),
            ("%H:%M %Z", false),
        ] {
            assert_eq!(names_a_zone(f.as_bytes()), zone, "{f}");
        }
    }
}
