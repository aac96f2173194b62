//! Every builtin of jq's manual (1.6's `builtins` output, the 1.7 and 1.8 additions, the
//! `@format`s and the `$`variables), and every builtin jaq adds, as a row: offered (a call
//! and its output), refused (the call fails with the refusal naming it) or absent (jaq has
//! no such builtin; the call fails as undefined). The engine's own list of what it offers
//! is checked against the table, so a builtin a new jaq version brings fails the test until
//! it is given a row.

use std::time::Duration;

use tackle_tool::ToolError;

use super::{INVALID_FILTER, engine, offered_builtins, run_bounded};

enum Want {
    /// Offered: the call's output (one compact JSON line per output).
    Out(&'static str),
    /// Refused with a message naming it.
    Refused,
    /// Not in jaq, so not in the engine.
    Absent,
}
use Want::{Absent, Out, Refused};

/// (name/arity, call, input, want).
const TABLE: &[(&str, &str, &str, Want)] = &[
    // jq 1.6 `builtins`
    ("IN/1", "IN(1, 2)", "2", Absent),
    ("IN/2", "IN(1; 1)", "null", Absent),
    ("INDEX/1", "INDEX(.a)", "null", Absent),
    ("INDEX/2", "INDEX(.[]; .)", "null", Absent),
    ("JOIN/2", "JOIN({}; .)", "null", Absent),
    ("JOIN/3", "JOIN({}; .; .)", "null", Absent),
    ("JOIN/4", "JOIN({}; .; .; .)", "null", Absent),
    ("acos/0", "1 | acos", "null", Out("0.0")),
    ("acosh/0", "1 | acosh", "null", Out("0.0")),
    ("add/0", "add", "[1,2]", Out("3")),
    ("all/0", "all", "[true,false]", Out("false")),
    ("all/1", "all(. > 0)", "[1,2]", Out("true")),
    ("all/2", "all(.[]; . > 1)", "[1,2]", Out("false")),
    ("any/0", "any", "[true,false]", Out("true")),
    ("any/1", "any(. > 1)", "[1,2]", Out("true")),
    ("any/2", "any(.[]; . > 2)", "[1,2]", Out("false")),
    ("arrays/0", "[.[] | arrays]", "[1,[2]]", Out("[[2]]")),
    (
        "ascii_downcase/0",
        "ascii_downcase",
        "\"aBc\"",
        Out("\"abc\""),
    ),
    ("ascii_upcase/0", "ascii_upcase", "\"aBc\"", Out("\"ABC\"")),
    ("asin/0", "0 | asin", "null", Out("0.0")),
    ("asinh/0", "0 | asinh", "null", Out("0.0")),
    ("atan/0", "0 | atan", "null", Out("0.0")),
    ("atan2/2", "atan2(0; 1)", "null", Out("0.0")),
    ("atanh/0", "0 | atanh", "null", Out("0.0")),
    ("booleans/0", "[.[] | booleans]", "[1,true]", Out("[true]")),
    ("bsearch/1", "bsearch(2)", "[1,2,3]", Out("1")),
    ("builtins/0", "builtins", "null", Absent),
    (
        "capture/1",
        "capture(\"(?<x>b)\")",
        "\"abc\"",
        Out("{\"x\":\"b\"}"),
    ),
    (
        "capture/2",
        "capture(\"(?<x>B)\"; \"i\")",
        "\"abc\"",
        Out("{\"x\":\"b\"}"),
    ),
    ("cbrt/0", "27 | cbrt", "null", Out("3.0")),
    ("ceil/0", "1.2 | ceil", "null", Out("2")),
    (
        "combinations/0",
        "[combinations]",
        "[[1,2],[3]]",
        Out("[[1,3],[2,3]]"),
    ),
    (
        "combinations/1",
        "[combinations(2)]",
        "[0,1]",
        Out("[[0,0],[0,1],[1,0],[1,1]]"),
    ),
    ("contains/1", "contains(\"b\")", "\"abc\"", Out("true")),
    ("copysign/2", "copysign(1; -2)", "null", Out("-1.0")),
    ("cos/0", "0 | cos", "null", Out("1.0")),
    ("cosh/0", "0 | cosh", "null", Out("1.0")),
    ("debug/0", "debug", "1", Refused),
    ("del/1", "del(.a)", "{\"a\":1,\"b\":2}", Out("{\"b\":2}")),
    (
        "delpaths/1",
        "delpaths([[\"a\"]])",
        "{\"a\":1,\"b\":2}",
        Out("{\"b\":2}"),
    ),
    ("drem/2", "drem(5; 3)", "null", Out("-1.0")),
    ("empty/0", "[empty]", "null", Out("[]")),
    ("endswith/1", "endswith(\"c\")", "\"abc\"", Out("true")),
    ("env/0", "env", "null", Refused),
    ("erf/0", "0 | erf", "null", Out("0.0")),
    ("erfc/0", "0 | erfc", "null", Out("1.0")),
    ("error/0", "try error catch .", "\"e\"", Out("\"e\"")),
    ("error/1", "try error(\"e\") catch .", "null", Out("\"e\"")),
    ("exp/0", "0 | exp", "null", Out("1.0")),
    ("exp10/0", "2 | exp10", "null", Out("100.0")),
    ("exp2/0", "3 | exp2", "null", Out("8.0")),
    ("explode/0", "explode", "\"ab\"", Out("[97,98]")),
    ("expm1/0", "0 | expm1", "null", Out("0.0")),
    ("fabs/0", "-2 | fabs", "null", Out("2.0")),
    ("fdim/2", "fdim(5; 3)", "null", Out("2.0")),
    ("finites/0", "[.[] | finites]", "[1,null]", Out("[1]")),
    ("first/0", "first", "[1,2]", Out("1")),
    ("first/1", "first(range(5; 9))", "null", Out("5")),
    ("flatten/0", "flatten", "[1,[2,[3]]]", Out("[1,2,3]")),
    ("flatten/1", "flatten(1)", "[1,[2,[3]]]", Out("[1,2,[3]]")),
    ("floor/0", "1.7 | floor", "null", Out("1")),
    ("fma/3", "fma(2; 3; 4)", "null", Out("10.0")),
    ("fmax/2", "fmax(1; 2)", "null", Out("2.0")),
    ("fmin/2", "fmin(1; 2)", "null", Out("1.0")),
    ("fmod/2", "fmod(7; 3)", "null", Out("1.0")),
    ("format/1", "format(\"text\")", "1", Absent),
    ("frexp/0", "8 | frexp", "null", Out("[0.5,4]")),
    (
        "from_entries/0",
        "from_entries",
        "[{\"key\":\"a\",\"value\":1}]",
        Out("{\"a\":1}"),
    ),
    (
        "fromdate/0",
        "fromdate",
        "\"2015-03-05T23:51:47Z\"",
        Out("1425599507"),
    ),
    (
        "fromdateiso8601/0",
        "fromdateiso8601",
        "\"2015-03-05T23:51:47Z\"",
        Out("1425599507"),
    ),
    (
        "fromjson/0",
        "fromjson",
        "\"[1,{\\\"a\\\":2}]\"",
        Out("[1,{\"a\":2}]"),
    ),
    ("fromstream/1", "fromstream(tostream)", "[1]", Absent),
    ("gamma/0", "5 | gamma", "null", Out("24.0")),
    ("get_jq_origin/0", "get_jq_origin", "null", Refused),
    ("get_prog_origin/0", "get_prog_origin", "null", Refused),
    ("get_search_list/0", "get_search_list", "null", Refused),
    (
        "getpath/1",
        "getpath([\"a\",\"b\"])",
        "{\"a\":{\"b\":5}}",
        Out("5"),
    ),
    (
        "gmtime/0",
        "gmtime",
        "1425599507",
        Out("[2015,2,5,23,51,47,4,63]"),
    ),
    (
        "group_by/1",
        "group_by(. % 2)",
        "[1,2,3]",
        Out("[[2],[1,3]]"),
    ),
    ("gsub/2", "gsub(\"a\"; \"b\")", "\"aa\"", Out("\"bb\"")),
    (
        "gsub/3",
        "gsub(\"A\"; \"b\"; \"i\")",
        "\"aa\"",
        Out("\"bb\""),
    ),
    ("halt/0", "halt", "null", Refused),
    ("halt_error/0", "halt_error", "\"bye\"", Refused),
    ("halt_error/1", "halt_error(5)", "\"bye\"", Refused),
    ("has/1", "has(\"a\")", "{\"a\":1}", Out("true")),
    ("hypot/2", "hypot(3; 4)", "null", Out("5.0")),
    ("implode/0", "implode", "[97,98]", Out("\"ab\"")),
    ("in/1", "in({\"a\":1})", "\"a\"", Out("true")),
    ("index/1", "index(\"b\")", "\"abcb\"", Out("1")),
    ("indices/1", "indices(1)", "[0,1,1]", Out("[1,2]")),
    ("infinite/0", "infinite > 1e308", "null", Out("true")),
    ("input/0", "input", "null", Refused),
    ("input_filename/0", "input_filename", "null", Refused),
    ("input_line_number/0", "input_line_number", "null", Refused),
    ("inputs/0", "[inputs]", "null", Refused),
    ("inside/1", "inside(\"abc\")", "\"b\"", Out("true")),
    ("isempty/1", "isempty(empty)", "null", Out("true")),
    ("isfinite/0", "1 | isfinite", "null", Out("true")),
    ("isinfinite/0", "infinite | isinfinite", "null", Out("true")),
    ("isnan/0", "nan | isnan", "null", Out("true")),
    ("isnormal/0", "1 | isnormal", "null", Out("true")),
    (
        "iterables/0",
        "[.[] | iterables]",
        "[1,[2],{}]",
        Out("[[2],{}]"),
    ),
    ("j0/0", "0 | j0", "null", Out("1.0")),
    ("j1/0", "0 | j1", "null", Out("0.0")),
    ("jn/2", "jn(0; 0)", "null", Out("1.0")),
    ("join/1", "join(\"-\")", "[\"a\",1]", Out("\"a-1\"")),
    ("keys/0", "keys", "{\"b\":1,\"a\":2}", Out("[\"a\",\"b\"]")),
    (
        "keys_unsorted/0",
        "keys_unsorted",
        "{\"b\":1,\"a\":2}",
        Out("[\"b\",\"a\"]"),
    ),
    ("last/0", "last", "[1,2]", Out("2")),
    ("last/1", "last(range(5; 9))", "null", Out("8")),
    ("ldexp/2", "ldexp(3; 2)", "null", Out("12.0")),
    ("leaf_paths/0", "[leaf_paths]", "[1]", Absent),
    ("length/0", "length", "[1,2]", Out("2")),
    ("lgamma/0", "1 | lgamma", "null", Out("0.0")),
    ("lgamma_r/0", "1 | lgamma_r", "null", Absent),
    ("limit/2", "[limit(2; .[])]", "[1,2,3]", Out("[1,2]")),
    ("localtime/0", "localtime", "0", Refused),
    ("log/0", "1 | log", "null", Out("0.0")),
    ("log10/0", "100 | log10", "null", Out("2.0")),
    ("log1p/0", "0 | log1p", "null", Out("0.0")),
    ("log2/0", "8 | log2", "null", Out("3.0")),
    ("logb/0", "8 | logb", "null", Out("3.0")),
    ("ltrimstr/1", "ltrimstr(\"a\")", "\"abc\"", Out("\"bc\"")),
    ("map/1", "map(. + 1)", "[1,2]", Out("[2,3]")),
    (
        "map_values/1",
        "map_values(. + 1)",
        "{\"a\":1}",
        Out("{\"a\":2}"),
    ),
    ("match/1", "match(\"b\") | .offset", "\"abc\"", Out("1")),
    (
        "match/2",
        "[match(\"b\"; \"g\") | .offset]",
        "\"abcb\"",
        Out("[1,3]"),
    ),
    ("max/0", "max", "[1,3,2]", Out("3")),
    (
        "max_by/1",
        "max_by(.a)",
        "[{\"a\":1},{\"a\":2}]",
        Out("{\"a\":2}"),
    ),
    ("min/0", "min", "[2,1,3]", Out("1")),
    (
        "min_by/1",
        "min_by(.a)",
        "[{\"a\":1},{\"a\":2}]",
        Out("{\"a\":1}"),
    ),
    (
        "mktime/0",
        "mktime",
        "[2015,2,5,23,51,47,4,63]",
        Out("1425599507"),
    ),
    ("modf/0", "3.5 | modf", "null", Out("[0.5,3.0]")),
    ("modulemeta/0", "modulemeta", "\"m\"", Refused),
    ("nan/0", "nan | isnan", "null", Out("true")),
    ("nearbyint/0", "2.5 | nearbyint", "null", Out("3.0")),
    ("nextafter/2", "nextafter(1; 1)", "null", Out("1.0")),
    ("nexttoward/2", "nexttoward(1; 1)", "null", Out("1.0")),
    ("normals/0", "[.[] | normals]", "[0,1]", Out("[1]")),
    ("not/0", "not", "false", Out("true")),
    ("now/0", "now > 1e9", "null", Out("true")),
    ("nth/1", "nth(1)", "[5,6]", Out("6")),
    ("nth/2", "nth(1; 5, 6, 7)", "null", Out("6")),
    ("nulls/0", "[.[] | nulls]", "[1,null]", Out("[null]")),
    ("numbers/0", "[.[] | numbers]", "[1,\"a\"]", Out("[1]")),
    ("objects/0", "[.[] | objects]", "[1,{}]", Out("[{}]")),
    ("path/1", "path(.a[0])", "null", Out("[\"a\",0]")),
    (
        "paths/0",
        "[paths]",
        "{\"a\":[1]}",
        Out("[[\"a\"],[\"a\",0]]"),
    ),
    (
        "paths/1",
        "[paths(numbers)]",
        "{\"a\":[1]}",
        Out("[[\"a\",0]]"),
    ),
    ("pow/2", "pow(2; 10)", "null", Out("1024.0")),
    ("pow10/0", "2 | pow10", "null", Out("100.0")),
    ("range/1", "[range(3)]", "null", Out("[0,1,2]")),
    ("range/2", "[range(1; 3)]", "null", Out("[1,2]")),
    ("range/3", "[range(0; 5; 2)]", "null", Out("[0,2,4]")),
    ("recurse/0", "[recurse]", "[[1]]", Out("[[[1]],[1],1]")),
    ("recurse/1", "[recurse(.[]?)]", "[1]", Out("[[1],1]")),
    ("recurse/2", "[recurse(. * 2; . < 5)]", "1", Out("[1,2,4]")),
    ("recurse_down/0", "recurse_down", "[1]", Absent),
    ("remainder/2", "remainder(5; 3)", "null", Out("-1.0")),
    // jaq's repeat applies f to the same input each time (jq's feeds each output back).
    ("repeat/1", "[limit(3; repeat(. * 2))]", "1", Out("[2,2,2]")),
    ("reverse/0", "reverse", "[1,2]", Out("[2,1]")),
    ("rindex/1", "rindex(\"b\")", "\"abcb\"", Out("3")),
    ("rint/0", "2.5 | rint", "null", Out("2.0")),
    ("round/0", "2.5 | round", "null", Out("3")),
    ("rtrimstr/1", "rtrimstr(\"c\")", "\"abc\"", Out("\"ab\"")),
    ("scalars/0", "[.[] | scalars]", "[1,[2]]", Out("[1]")),
    ("scalars_or_empty/0", "scalars_or_empty", "1", Absent),
    ("scalb/2", "scalb(3; 2)", "null", Out("12.0")),
    ("scalbln/2", "scalbln(3; 2)", "null", Out("12.0")),
    ("scan/1", "[scan(\"b\")]", "\"abcb\"", Out("[\"b\",\"b\"]")),
    ("select/1", "[.[] | select(. > 1)]", "[1,2]", Out("[2]")),
    ("setpath/2", "setpath([\"a\"]; 1)", "{}", Out("{\"a\":1}")),
    ("significand/0", "8 | significand", "null", Out("1.0")),
    ("sin/0", "0 | sin", "null", Out("0.0")),
    ("sinh/0", "0 | sinh", "null", Out("0.0")),
    ("sort/0", "sort", "[2,1]", Out("[1,2]")),
    ("sort_by/1", "sort_by(-.)", "[1,2]", Out("[2,1]")),
    ("split/1", "split(\",\")", "\"a,b\"", Out("[\"a\",\"b\"]")),
    (
        "split/2",
        "split(\", *\"; null)",
        "\"a, b\"",
        Out("[\"a\",\"b\"]"),
    ),
    (
        "splits/1",
        "[splits(\",\")]",
        "\"a,b\"",
        Out("[\"a\",\"b\"]"),
    ),
    (
        "splits/2",
        "[splits(\"B\"; \"i\")]",
        "\"abc\"",
        Out("[\"a\",\"c\"]"),
    ),
    ("sqrt/0", "9 | sqrt", "null", Out("3.0")),
    ("startswith/1", "startswith(\"a\")", "\"abc\"", Out("true")),
    ("stderr/0", "stderr", "1", Refused),
    ("strflocaltime/1", "strflocaltime(\"%H\")", "0", Refused),
    (
        "strftime/1",
        "strftime(\"%Y-%m-%dT%H:%M:%SZ\")",
        "1425599507",
        Out("\"2015-03-05T23:51:47Z\""),
    ),
    ("strings/0", "[.[] | strings]", "[1,\"a\"]", Out("[\"a\"]")),
    (
        "strptime/1",
        "strptime(\"%Y-%m-%d\") | .[0:3]",
        "\"2015-03-05\"",
        Out("[2015,2,5]"),
    ),
    ("sub/2", "sub(\"a\"; \"b\")", "\"aa\"", Out("\"ba\"")),
    (
        "sub/3",
        "sub(\"A\"; \"b\"; \"gi\")",
        "\"aa\"",
        Out("\"bb\""),
    ),
    ("tan/0", "0 | tan", "null", Out("0.0")),
    ("tanh/0", "0 | tanh", "null", Out("0.0")),
    ("test/1", "test(\"b\")", "\"abc\"", Out("true")),
    ("test/2", "test(\"B\"; \"i\")", "\"abc\"", Out("true")),
    ("tgamma/0", "5 | tgamma", "null", Out("24.0")),
    (
        "to_entries/0",
        "to_entries",
        "{\"a\":1}",
        Out("[{\"key\":\"a\",\"value\":1}]"),
    ),
    (
        "todate/0",
        "todate",
        "1425599507",
        Out("\"2015-03-05T23:51:47Z\""),
    ),
    (
        "todateiso8601/0",
        "todateiso8601",
        "1425599507",
        Out("\"2015-03-05T23:51:47Z\""),
    ),
    ("tojson/0", "tojson", "[1,\"a\"]", Out("\"[1,\\\"a\\\"]\"")),
    ("tonumber/0", "tonumber", "\"12\"", Out("12")),
    ("tostream/0", "[tostream]", "[1]", Absent),
    ("tostring/0", "tostring", "[1]", Out("\"[1]\"")),
    (
        "transpose/0",
        "transpose",
        "[[1,2],[3]]",
        Out("[[1,3],[2,null]]"),
    ),
    ("trunc/0", "1.7 | trunc", "null", Out("1.0")),
    ("truncate_stream/1", "truncate_stream(1)", "1", Absent),
    ("type/0", "type", "{}", Out("\"object\"")),
    ("unique/0", "unique", "[2,1,2]", Out("[1,2]")),
    (
        "unique_by/1",
        "unique_by(length)",
        "[\"a\",\"b\",\"cc\"]",
        Out("[\"a\",\"cc\"]"),
    ),
    ("until/2", "until(. > 100; . * 2)", "1", Out("128")),
    ("utf8bytelength/0", "utf8bytelength", "\"é\"", Out("2")),
    ("values/0", "[.[] | values]", "[1,null]", Out("[1]")),
    (
        "walk/1",
        "walk(if type == \"number\" then . + 1 else . end)",
        "[1,[2]]",
        Out("[2,[3]]"),
    ),
    ("while/2", "[while(. < 8; . * 2)]", "1", Out("[1,2,4]")),
    (
        "with_entries/1",
        "with_entries(.value += 1)",
        "{\"a\":1}",
        Out("{\"a\":2}"),
    ),
    ("y0/0", "1 | y0 | . > 0", "null", Out("true")),
    ("y1/0", "1 | y1 | . < 0", "null", Out("true")),
    ("yn/2", "yn(1; 1) | . < 0", "null", Out("true")),
    // jq 1.7 and 1.8 additions
    ("abs/0", "-3 | abs", "null", Out("3")),
    ("add/1", "add(.[].a)", "[{\"a\":1},{\"a\":2}]", Out("3")),
    ("ascii/0", "65 | ascii", "null", Absent),
    ("debug/1", "debug(\"msg\")", "1", Refused),
    (
        "getpath/1 (missing)",
        "getpath([\"x\",\"y\"])",
        "{}",
        Out("null"),
    ),
    ("have_decnum/0", "have_decnum", "null", Absent),
    (
        "have_literal_numbers/0",
        "have_literal_numbers",
        "null",
        Absent,
    ),
    ("ltrim/0", "ltrim", "\"  a \"", Out("\"a \"")),
    ("pick/1", "pick(.a)", "{\"a\":1,\"b\":2}", Out("{\"a\":1}")),
    ("rtrim/0", "rtrim", "\"  a \"", Out("\"  a\"")),
    (
        "scan/2",
        "[scan(\"B\"; \"i\")]",
        "\"abcb\"",
        Out("[\"b\",\"b\"]"),
    ),
    ("skip/2", "[skip(1; .[])]", "[1,2,3]", Out("[2,3]")),
    (
        "splits/1 (regex)",
        "[splits(\", *\")]",
        "\"a, b\"",
        Out("[\"a\",\"b\"]"),
    ),
    ("toarray/0", "toarray", "1", Absent),
    ("toboolean/0", "toboolean", "\"true\"", Out("true")),
    ("trim/0", "trim", "\"  a \"", Out("\"a\"")),
    ("trimstr/1", "trimstr(\"a\")", "\"aba\"", Absent),
    ("getpath/1 (array)", "getpath([1])", "[5,6]", Out("6")),
    (
        "error/1 (null)",
        "try error(null) catch .",
        "null",
        Out("null"),
    ),
    ("isvalid/1", "isvalid(1)", "null", Absent),
    ("dateadd/2", "dateadd(\"seconds\"; 1)", "0", Absent),
    ("datesub/2", "datesub(\"seconds\"; 1)", "0", Absent),
    ("date/0", "date", "0", Absent),
    (
        "input_line_number/0 (again)",
        "[input_line_number]",
        "null",
        Refused,
    ),
    ("$ENV", "$ENV.PATH", "null", Refused),
    ("$ENV (object)", "$ENV", "null", Refused),
    ("$__loc__", "$__loc__", "null", Refused),
    ("$__prog_args", "$__prog_args", "null", Refused),
    // formats
    ("@text", "@text", "[1]", Out("\"[1]\"")),
    ("@json", "@json", "[1]", Out("\"[1]\"")),
    ("@html", "@html", "\"<&>\"", Out("\"&lt;&amp;&gt;\"")),
    ("@uri", "@uri", "\"a b\"", Out("\"a%20b\"")),
    ("@csv", "@csv", "[1,\"a\"]", Absent),
    ("@tsv", "@tsv", "[1,\"a\"]", Absent),
    ("@sh", "@sh", "\"it's\"", Out("\"'it'\\\\''s'\"")),
    ("@base64", "@base64", "\"hi\"", Out("\"aGk=\"")),
    ("@base64d", "@base64d", "\"aGk=\"", Out("\"hi\"")),
    ("@base32", "@base32", "\"hi\"", Absent),
    ("@base32d", "@base32d", "\"NBUQ====\"", Absent),
    ("@urid", "@urid", "\"a%20b\"", Out("\"a b\"")),
    ("@htmld (jaq)", "@htmld", "\"&lt;\"", Out("\"<\"")),
    (
        "@text \"\\(.)\"",
        "@base64 \"x\\(.)\"",
        "\"hi\"",
        Out("\"xaGk=\""),
    ),
    // jaq's own builtins (helpers of its definitions, and extras)
    (
        "error_empty/0",
        "[try error_empty catch .]",
        "\"e\"",
        Out("[\"e\"]"),
    ),
    (
        "path_value/1",
        "[path_value(.a)]",
        "{\"a\":1}",
        Out("[[[\"a\"],1]]"),
    ),
    (
        "key_values/0",
        "key_values",
        "{\"a\":1}",
        Out("[[\"a\",1]]"),
    ),
    ("min_by_or_empty/1", "[min_by_or_empty(.)]", "[]", Out("[]")),
    ("max_by_or_empty/1", "max_by_or_empty(.)", "[1,2]", Out("2")),
    ("true/0", "true", "null", Out("true")),
    ("false/0", "false", "null", Out("false")),
    ("null/0", "null", "1", Out("null")),
    ("isboolean/0", "isboolean", "true", Out("true")),
    ("isnumber/0", "isnumber", "1", Out("true")),
    ("isstring/0", "isstring", "\"a\"", Out("true")),
    ("isarray/0", "isarray", "[]", Out("true")),
    ("isobject/0", "isobject", "{}", Out("true")),
    ("ilogb/0", "8 | ilogb", "null", Out("3")),
    ("unescape_html/0", "unescape_html", "\"&lt;\"", Out("\"<\"")),
    ("escape_html/0", "escape_html", "\"<\"", Out("\"&lt;\"")),
    ("decode_uri/0", "decode_uri", "\"a%20b\"", Out("\"a b\"")),
    ("encode_uri/0", "encode_uri", "\"a b\"", Out("\"a%20b\"")),
    (
        "decode_base64/0",
        "decode_base64",
        "\"aGk=\"",
        Out("\"hi\""),
    ),
    (
        "encode_base64/0",
        "encode_base64",
        "\"hi\"",
        Out("\"aGk=\""),
    ),
    ("escape_sh/0", "escape_sh", "\"a'b\"", Out("\"a'\\\\''b\"")),
    (
        "matches/2",
        "matches(\"b\"; \"\") | length",
        "\"abc\"",
        Out("1"),
    ),
    (
        "split_matches/2",
        "split_matches(\"b\"; \"g\") | length",
        "\"abc\"",
        Out("3"),
    ),
    (
        "split_/2",
        "split_(\"b\"; \"g\")",
        "\"abc\"",
        Out("[\"a\",\"c\"]"),
    ),
    (
        "capture_of_match/0",
        "[match(\"(?<x>b)\")] | .[0].captures | capture_of_match",
        "\"abc\"",
        Out("{\"x\":\"b\"}"),
    ),
    (
        "scan_/2",
        "[scan_(\"b\"; \"g\")]",
        "\"abcb\"",
        Out("[\"b\",\"b\"]"),
    ),
    ("tobytes/0", "tobytes | length", "\"ab\"", Out("2")),
    (
        "totype/2",
        "totype(isnumber; error(\"x\"))",
        "\"3\"",
        Out("3"),
    ),
    ("debug_empty/0", "debug_empty", "1", Refused),
    ("stderr_empty/0", "stderr_empty", "1", Refused),
];

/// Through the filter thread, as execute runs it.
fn run(filter: &str, json: &str) -> Result<String, ToolError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let c = rt.block_on(run_bounded(
        filter.to_owned(),
        json.as_bytes().to_vec(),
        None,
        Duration::from_secs(5),
    ))?;
    match c.output {
        tackle_tool::CompletionOutput::Single(s) => Ok(s),
        other => panic!("{other:?}"),
    }
}

/// The name a row's label gives (`splits/1 (regex)` → `splits`, `$ENV (object)` → `$ENV`).
fn row_name(label: &str) -> &str {
    label.split(['/', ' ']).next().unwrap_or(label)
}

#[test]
fn every_builtin_of_jq_is_offered_refused_or_absent_as_its_row_says() {
    let mut wrong = Vec::new();
    for (label, call, input, want) in TABLE {
        let got = run(call, input);
        let name = row_name(label);
        let ok = match (want, &got) {
            (Out(text), Ok(out)) => out == &format!("{text}\n"),
            (Refused, Err(e)) => {
                e.code == INVALID_FILTER
                    && e.message.contains(&format!("`{name}` is not offered: "))
            }
            (Absent, Err(e)) => {
                e.code == INVALID_FILTER
                    && e.message.contains("undefined")
                    && e.message.contains(name.trim_start_matches(['@', '$']))
                    && !e.message.contains("is not offered")
            }
            _ => false,
        };
        if !ok {
            wrong.push(format!("{label}: `{call}` on {input}: {got:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} rows disagree:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// What the engine offers is what the table says it offers: a builtin without a row (a new
/// jaq version's) fails here, and so does a row saying offered for a builtin left out.
#[test]
fn the_engine_offers_exactly_the_rows_marked_offered() {
    let rows: Vec<(&str, usize, &Want)> = TABLE
        .iter()
        .filter_map(|(label, _, _, want)| {
            let (name, rest) = label.split_once('/')?;
            let arity = rest.split(' ').next()?.parse().ok()?;
            Some((name, arity, want))
        })
        .chain(
            TABLE
                .iter()
                .filter(|(label, ..)| label.starts_with('@'))
                .map(|(label, _, _, want)| (row_name(label), 0, want)),
        )
        .collect();
    let offered = offered_builtins();
    let unlisted: Vec<String> = offered
        .iter()
        .filter(|(n, a)| {
            !rows
                .iter()
                .any(|(rn, ra, w)| rn == n && ra == a && matches!(w, Out(_)))
        })
        .map(|(n, a)| format!("{n}/{a}"))
        .collect();
    assert!(
        unlisted.is_empty(),
        "the engine offers builtins the table does not mark offered: {unlisted:?}"
    );
    let missing: Vec<String> = rows
        .iter()
        .filter(|(n, a, w)| {
            matches!(w, Out(_)) && !offered.iter().any(|(on, oa)| on == n && oa == a)
        })
        .map(|(n, a, _)| format!("{n}/{a}"))
        .collect();
    assert!(
        missing.is_empty(),
        "rows marked offered that the engine lacks: {missing:?}"
    );
    // Nothing refused is offered under any arity.
    for (label, _, _, want) in TABLE {
        if matches!(want, Refused) {
            let name = row_name(label);
            assert!(
                !offered.iter().any(|(n, _)| n == name),
                "{name} is refused but offered"
            );
            assert!(engine::refusal(name).is_some(), "{name} has no refusal");
        }
    }
}
