//! What the jq engine offers a filter: an explicit allowlist of jaq's builtins, by name and
//! arity, and nothing else.
//!
//! jaq's standard library has builtins that reach outside the value they are given: `env`
//! (tackle's whole environment: API keys, tokens), `halt` and `halt_error` (jaq ends the
//! process: every MCP client with it), `debug` and `stderr` (tackle's log), `localtime` and
//! `strflocaltime` (`TZ` and `/etc/localtime`). The engine is built from [`OFFERED`]: a
//! native or definition of jaq-core, jaq-std or jaq-json whose name and arity are not listed
//! is left out, so a new jaq version cannot add a builtin silently (a test lists what the
//! engine offers and fails on any name its table of jq's builtins does not carry).
//! Builtins that allocate in proportion to their input are offered through a definition
//! that checks the memory budget first ([`super::guards::WRAPPERS`]). A filter naming a
//! refused builtin gets [`refusal`]'s message, which says why.
//!
//! Decisions on time: `now` reads the clock (no secret, no file) and is offered; `mktime`,
//! `gmtime`, `strftime`, `strptime`, `todate`, `fromdate` compute in UTC and are offered,
//! except that a format may not name a zone (`%Q` would look it up in the system's time zone
//! database); `localtime` and `strflocaltime` read tackle's time zone and are refused.

use jaq_core::load::parse::Def;
use jaq_core::native::Fun;

use super::{D, guards};

/// jaq's builtins the engine offers as they are, natives and definitions, by name and arity.
pub(super) const OFFERED: &[(&str, usize)] = &[
    // jaq-core natives (`range/3` is replaced by a bounded one)
    ("error_empty", 0),
    ("path", 1),
    ("path_value", 1),
    ("keys_unsorted", 0),
    ("key_values", 0),
    ("first", 1),
    ("last", 1),
    ("limit", 2),
    ("skip", 2),
    // jaq-core definitions
    ("empty", 0),
    ("error", 0),
    ("error", 1),
    ("true", 0),
    ("false", 0),
    ("not", 0),
    ("select", 1),
    ("tostring", 0),
    ("range", 2),
    ("range", 1),
    ("repeat", 1),
    ("recurse", 1),
    ("recurse", 0),
    ("recurse", 2),
    ("while", 2),
    ("until", 2),
    ("paths", 0),
    ("paths", 1),
    ("getpath", 1),
    ("setpath", 2),
    ("delpaths", 1),
    ("map", 1),
    ("map_values", 1),
    ("walk", 1),
    ("del", 1),
    ("first", 0),
    ("last", 0),
    ("nth", 1),
    ("nth", 2),
    ("join", 1),
    ("combinations", 0),
    ("combinations", 1),
    ("to_entries", 0),
    ("from_entries", 0),
    ("with_entries", 1),
    ("isempty", 1),
    ("all", 0),
    ("all", 1),
    ("all", 2),
    ("any", 0),
    ("any", 1),
    ("any", 2),
    // jaq-std natives
    ("floor", 0),
    ("round", 0),
    ("ceil", 0),
    ("utf8bytelength", 0),
    ("implode", 0),
    ("ascii_downcase", 0),
    ("ascii_upcase", 0),
    ("reverse", 0),
    ("sort", 0),
    ("sort_by", 1),
    ("group_by", 1),
    ("min_by_or_empty", 1),
    ("max_by_or_empty", 1),
    ("startswith", 1),
    ("endswith", 1),
    ("ltrimstr", 1),
    ("rtrimstr", 1),
    ("trim", 0),
    ("ltrim", 0),
    ("rtrim", 0),
    ("now", 0),
    ("unescape_html", 0),
    ("decode_uri", 0),
    ("decode_base64", 0),
    ("fromdateiso8601", 0),
    ("todateiso8601", 0),
    ("gmtime", 0),
    ("mktime", 0),
    // jaq-std math natives
    ("acos", 0),
    ("acosh", 0),
    ("asin", 0),
    ("asinh", 0),
    ("atan", 0),
    ("atanh", 0),
    ("cbrt", 0),
    ("cos", 0),
    ("cosh", 0),
    ("erf", 0),
    ("erfc", 0),
    ("exp", 0),
    ("exp10", 0),
    ("exp2", 0),
    ("expm1", 0),
    ("fabs", 0),
    ("frexp", 0),
    ("ilogb", 0),
    ("j0", 0),
    ("j1", 0),
    ("lgamma", 0),
    ("log", 0),
    ("log10", 0),
    ("log1p", 0),
    ("log2", 0),
    ("modf", 0),
    ("nearbyint", 0),
    ("rint", 0),
    ("sin", 0),
    ("sinh", 0),
    ("sqrt", 0),
    ("tan", 0),
    ("tanh", 0),
    ("tgamma", 0),
    ("trunc", 0),
    ("y0", 0),
    ("y1", 0),
    ("atan2", 2),
    ("copysign", 2),
    ("fdim", 2),
    ("fmax", 2),
    ("fmin", 2),
    ("fmod", 2),
    ("hypot", 2),
    ("jn", 2),
    ("ldexp", 2),
    ("nextafter", 2),
    ("pow", 2),
    ("remainder", 2),
    ("scalbln", 2),
    ("yn", 2),
    ("fma", 3),
    // jaq-std definitions
    ("null", 0),
    ("isboolean", 0),
    ("isnumber", 0),
    ("isstring", 0),
    ("isarray", 0),
    ("isobject", 0),
    ("nan", 0),
    ("infinite", 0),
    ("isnan", 0),
    ("isinfinite", 0),
    ("isfinite", 0),
    ("isnormal", 0),
    ("abs", 0),
    ("logb", 0),
    ("significand", 0),
    ("pow10", 0),
    ("drem", 2),
    ("nexttoward", 2),
    ("scalb", 2),
    ("gamma", 0),
    ("type", 0),
    ("values", 0),
    ("nulls", 0),
    ("booleans", 0),
    ("numbers", 0),
    ("finites", 0),
    ("normals", 0),
    ("strings", 0),
    ("arrays", 0),
    ("objects", 0),
    ("iterables", 0),
    ("scalars", 0),
    ("add", 0),
    ("add", 1),
    ("min_by", 1),
    ("max_by", 1),
    ("min", 0),
    ("max", 0),
    ("unique_by", 1),
    ("unique", 0),
    ("pick", 1),
    ("keys", 0),
    ("flatten", 0),
    ("flatten", 1),
    ("capture_of_match", 0),
    ("test", 1),
    ("test", 2),
    ("scan_", 2),
    ("scan", 1),
    ("scan", 2),
    ("match", 1),
    ("match", 2),
    ("capture", 1),
    ("capture", 2),
    ("split", 1),
    ("split", 2),
    ("splits", 1),
    ("splits", 2),
    ("sub", 2),
    ("sub", 3),
    ("gsub", 2),
    ("gsub", 3),
    ("todate", 0),
    ("fromdate", 0),
    ("@sh", 0),
    ("@text", 0),
    ("@html", 0),
    ("@htmld", 0),
    ("@uri", 0),
    ("@urid", 0),
    ("@base64", 0),
    ("@base64d", 0),
    // jaq-json natives and definitions
    ("length", 0),
    ("contains", 1),
    ("has", 1),
    ("bsearch", 1),
    ("tobytes", 0),
    ("totype", 2),
    ("tonumber", 0),
    ("toboolean", 0),
    ("transpose", 0),
    ("in", 1),
    ("inside", 1),
    ("index", 1),
    ("rindex", 1),
    ("@json", 0),
];

/// Builtins a filter may name that the engine does not offer, and why (any arity).
const REFUSED: &[(&str, &str)] = &[
    ("env", ENVIRONMENT),
    ("$ENV", ENVIRONMENT),
    (
        "halt",
        "the filter may not end tackle's process; use error(msg) to fail",
    ),
    (
        "halt_error",
        "the filter may not end tackle's process; use error(msg) to fail",
    ),
    ("input", NO_INPUT),
    ("inputs", NO_INPUT),
    ("input_filename", NO_INPUT),
    ("input_line_number", NO_INPUT),
    ("debug", LOG),
    ("stderr", LOG),
    ("debug_empty", LOG),
    ("stderr_empty", LOG),
    (
        "localtime",
        "the filter may not read tackle's time zone; use gmtime (UTC)",
    ),
    (
        "strflocaltime",
        "the filter may not read tackle's time zone; use strftime (UTC)",
    ),
    ("$__loc__", "the filter may not read where it is defined"),
    ("$__prog_args", PROCESS),
    ("get_search_list", PROCESS),
    ("get_prog_origin", PROCESS),
    ("get_jq_origin", PROCESS),
    ("modulemeta", PROCESS),
];

const ENVIRONMENT: &str = "the filter may not read tackle's environment";
const NO_INPUT: &str =
    "the filter runs over one document and may not read further input or its source";
const LOG: &str = "the filter may not write to tackle's log or stderr; return the value as an \
                   output instead";
const PROCESS: &str = "the filter may not read tackle's arguments or files";

/// Why the engine does not offer `name` (a filter or `$variable`), if it is a refused builtin.
pub fn refusal(name: &str) -> Option<String> {
    REFUSED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, why)| format!("json_query: `{n}` is not offered: {why}"))
}

fn offered(name: &str, arity: usize) -> bool {
    OFFERED.contains(&(name, arity))
}

/// jaq's natives the engine offers: the allowlisted ones, guarded ones renamed for their
/// checking definitions, and tackle's own (`extra`: the bounded generators and the checks).
pub(super) fn natives(extra: impl IntoIterator<Item = Fun<D>>) -> Vec<Fun<D>> {
    let jaq = jaq_core::funs::<D>()
        .chain(jaq_std::funs::<D>())
        .chain(jaq_json::funs::<D>());
    jaq.filter_map(|(name, arity, f)| {
        if offered(name, arity.len()) {
            return Some((name, arity, f));
        }
        guards::WRAPPERS
            .iter()
            .find(|(n, a, _, _)| *n == name && *a == arity.len())
            .map(|(_, _, raw, _)| (*raw, arity, f))
    })
    .chain(guards::funs())
    .chain(extra)
    .collect()
}

type Defs = Vec<Def<&'static str>>;

/// jaq's definitions the engine offers, in jaq's order (later ones build on earlier ones):
/// the checking definitions of guarded natives first, then each allowlisted definition, or
/// the bounded replacement `replace` gives for it.
pub(super) fn definitions(
    replace: impl Fn(&Def<&'static str>) -> Option<Def<&'static str>>,
) -> Defs {
    let wrappers = guards::WRAPPERS.iter().flat_map(|(name, _, _, def)| {
        let parsed = jaq_core::load::parse(def, |p| p.defs());
        debug_assert!(parsed.is_some(), "the wrapper of {name} parses");
        parsed.unwrap_or_default()
    });
    let jaq = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs())
        .filter(|d| offered(d.name, d.args.len()))
        .map(|d| replace(&d).unwrap_or(d));
    wrappers.chain(jaq).collect()
}
