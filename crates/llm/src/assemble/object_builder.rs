//! A JSON object built while its text streams in, fragment by fragment, so a tool call's
//! arguments are a [`Value`] the moment its last delta arrives instead of being parsed after
//! the stream ends.
//!
//! Only the plain grammar is taken: a root object, strings (escapes split anywhere across
//! fragments), numbers, literals, nesting to [`MAX_DEPTH`]. Anything else (a syntax error, a
//! root that is not an object, deeper nesting, a lone surrogate escape) makes the builder
//! give up, and the caller parses the whole text with `serde_json` instead, which decides what
//! the text is and why. So the builder never has to agree with `serde_json` on an error, only
//! never accept what it would refuse, and build the same value for what it takes: numbers are
//! handed to `serde_json` token by token for that reason, and keys repeat as `Map::insert`
//! repeats them.

use serde_json::{Map, Value};

/// Nesting deeper than this is left to `serde_json` (whose own limit is higher).
pub(crate) const MAX_DEPTH: usize = 64;

/// An open array or object.
#[derive(Debug)]
enum Open {
    Array(Vec<Value>),
    Object {
        map: Map<String, Value>,
        /// The key whose value is being read.
        key: Option<String>,
    },
}

/// What a `\` escape has read so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Escape {
    None,
    /// Just after `\`.
    Start,
    /// Inside `\uXXXX`: the digits read and their value; `high` is the leading surrogate a
    /// trailing one must follow.
    Hex {
        digits: u8,
        code: u32,
        high: Option<u32>,
    },
    /// A leading surrogate was read: `\` must come next, then `u`.
    LowBackslash {
        high: u32,
    },
    LowU {
        high: u32,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Before the root object.
    Root,
    /// A value is due (after `:` or `,` in an array).
    Value,
    /// After `[`: a value or `]`.
    ValueOrClose,
    /// After `{`: a key or `}`.
    KeyOrClose,
    /// After `,` in an object.
    Key,
    /// After a key.
    Colon,
    /// After a value inside an array or object.
    CommaOrClose,
    /// Inside a string (a key when `key`).
    Str {
        key: bool,
        escape: Escape,
    },
    Number,
    /// Inside `true`, `false` or `null`: the bytes still due.
    Literal {
        rest: &'static [u8],
        value: Literal,
    },
    /// The root object closed: only whitespace may follow.
    Done,
    /// Not the plain grammar; the caller parses the text instead.
    GaveUp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Literal {
    True,
    False,
    Null,
}

/// Builds one JSON object from its text in fragments.
#[derive(Debug)]
pub(crate) struct ObjectBuilder {
    state: State,
    open: Vec<Open>,
    /// The string or number being read.
    token: String,
    root: Option<Map<String, Value>>,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_number_byte(b: u8) -> bool {
    matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
}

impl ObjectBuilder {
    pub fn new() -> Self {
        Self {
            state: State::Root,
            open: Vec::new(),
            token: String::new(),
            root: None,
        }
    }

    /// Whether the text so far left the plain grammar.
    pub fn gave_up(&self) -> bool {
        self.state == State::GaveUp
    }

    /// Reads the next fragment of the text.
    pub fn feed(&mut self, fragment: &str) {
        let bytes = fragment.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            at = match self.state {
                State::GaveUp => return,
                State::Str {
                    key,
                    escape: Escape::None,
                } => self.string_run(fragment, at, key),
                State::Number => self.number_run(fragment, at),
                _ => {
                    self.byte(bytes[at]);
                    at + 1
                }
            };
        }
    }

    /// The object, when the text was exactly one (whitespace around it allowed).
    pub fn finish(self) -> Option<Map<String, Value>> {
        match self.state {
            State::Done => self.root,
            _ => None,
        }
    }

    fn give_up(&mut self) {
        self.state = State::GaveUp;
        self.open.clear();
        self.token = String::new();
        self.root = None;
    }

    /// Copies the plain run of a string from `at` up to its next quote, escape or control
    /// byte (all ASCII, so every cut is a char boundary); returns where it stopped.
    fn string_run(&mut self, fragment: &str, at: usize, key: bool) -> usize {
        let bytes = fragment.as_bytes();
        let end = memchr::memchr2(b'"', b'\\', &bytes[at..]).map_or(bytes.len(), |n| at + n);
        let run = &bytes[at..end];
        // JSON strings carry no raw control bytes; checked over the whole run at once.
        if run.iter().fold(false, |seen, &b| seen | (b < 0x20)) {
            self.give_up();
            return bytes.len();
        }
        self.token.push_str(&fragment[at..end]);
        if end == bytes.len() {
            return end;
        }
        if bytes[end] == b'"' {
            self.string_done(key);
        } else {
            self.state = State::Str {
                key,
                escape: Escape::Start,
            };
        }
        end + 1
    }

    fn number_run(&mut self, fragment: &str, at: usize) -> usize {
        let bytes = fragment.as_bytes();
        let end = bytes[at..]
            .iter()
            .position(|&b| !is_number_byte(b))
            .map_or(bytes.len(), |n| at + n);
        self.token.push_str(&fragment[at..end]);
        if end < bytes.len() {
            self.number_done();
        }
        end
    }

    fn number_done(&mut self) {
        match serde_json::from_str::<Value>(&self.token) {
            Ok(number @ Value::Number(_)) => {
                self.token.clear();
                self.value(number);
            }
            _ => self.give_up(),
        }
    }

    fn string_done(&mut self, key: bool) {
        let text = std::mem::take(&mut self.token);
        if key {
            if let Some(Open::Object { key: slot, .. }) = self.open.last_mut() {
                *slot = Some(text);
            }
            self.state = State::Colon;
        } else {
            self.value(Value::String(text));
        }
    }

    /// A finished value: into the open array or object, or the end of the root.
    fn value(&mut self, value: Value) {
        match self.open.last_mut() {
            Some(Open::Array(items)) => items.push(value),
            Some(Open::Object { map, key }) => {
                if let Some(key) = key.take() {
                    map.insert(key, value);
                }
            }
            None => return self.give_up(),
        }
        self.state = State::CommaOrClose;
    }

    fn open(&mut self, open: Open) {
        if self.open.len() >= MAX_DEPTH {
            return self.give_up();
        }
        self.state = match open {
            Open::Array(_) => State::ValueOrClose,
            Open::Object { .. } => State::KeyOrClose,
        };
        self.open.push(open);
    }

    fn close(&mut self, closer: u8) {
        let value = match (self.open.pop(), closer) {
            (Some(Open::Array(items)), b']') => Value::Array(items),
            (Some(Open::Object { map, key: None }), b'}') => {
                if self.open.is_empty() {
                    self.root = Some(map);
                    self.state = State::Done;
                    return;
                }
                Value::Object(map)
            }
            _ => return self.give_up(),
        };
        self.value(value);
    }

    /// Starts the value `b` opens.
    fn start_value(&mut self, b: u8) {
        match b {
            b'{' => self.open(Open::Object {
                map: Map::new(),
                key: None,
            }),
            b'[' => self.open(Open::Array(Vec::new())),
            b'"' => {
                self.state = State::Str {
                    key: false,
                    escape: Escape::None,
                }
            }
            b'-' | b'0'..=b'9' => {
                self.token.push(char::from(b));
                self.state = State::Number;
            }
            b't' => self.literal(b"rue", Literal::True),
            b'f' => self.literal(b"alse", Literal::False),
            b'n' => self.literal(b"ull", Literal::Null),
            _ => self.give_up(),
        }
    }

    fn literal(&mut self, rest: &'static [u8], value: Literal) {
        self.state = State::Literal { rest, value };
    }

    /// One byte outside a string's plain run or a number.
    fn byte(&mut self, b: u8) {
        match self.state {
            State::Str { key, escape } => self.escape(b, key, escape),
            State::Literal { rest, value } => match rest.split_first() {
                Some((&want, rest)) if want == b => {
                    if rest.is_empty() {
                        self.value(match value {
                            Literal::True => Value::Bool(true),
                            Literal::False => Value::Bool(false),
                            Literal::Null => Value::Null,
                        });
                    } else {
                        self.state = State::Literal { rest, value };
                    }
                }
                _ => self.give_up(),
            },
            _ if is_space(b) => {}
            State::Root if b == b'{' => self.open(Open::Object {
                map: Map::new(),
                key: None,
            }),
            State::Value => self.start_value(b),
            State::ValueOrClose if b == b']' => self.close(b),
            State::ValueOrClose => self.start_value(b),
            State::KeyOrClose if b == b'}' => self.close(b),
            State::KeyOrClose | State::Key if b == b'"' => {
                self.state = State::Str {
                    key: true,
                    escape: Escape::None,
                }
            }
            State::Colon if b == b':' => self.state = State::Value,
            State::CommaOrClose => match (b, self.open.last()) {
                (b',', Some(Open::Array(_))) => self.state = State::Value,
                (b',', Some(Open::Object { .. })) => self.state = State::Key,
                (b']' | b'}', _) => self.close(b),
                _ => self.give_up(),
            },
            _ => self.give_up(),
        }
    }

    /// One byte of an escape (or the byte after a leading surrogate).
    fn escape(&mut self, b: u8, key: bool, escape: Escape) {
        let next = match escape {
            Escape::None => return self.give_up(),
            Escape::Start => {
                let plain = match b {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    b'u' => {
                        return self.set_escape(
                            key,
                            Escape::Hex {
                                digits: 0,
                                code: 0,
                                high: None,
                            },
                        );
                    }
                    _ => return self.give_up(),
                };
                self.token.push(plain);
                Escape::None
            }
            Escape::Hex { digits, code, high } => {
                let Some(digit) = char::from(b).to_digit(16) else {
                    return self.give_up();
                };
                let code = code * 16 + digit;
                if digits < 3 {
                    Escape::Hex {
                        digits: digits + 1,
                        code,
                        high,
                    }
                } else {
                    match (high, code) {
                        (None, 0xD800..=0xDBFF) => Escape::LowBackslash { high: code },
                        (Some(high), 0xDC00..=0xDFFF) => {
                            let joined = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00);
                            match char::from_u32(joined) {
                                Some(c) => self.token.push(c),
                                None => return self.give_up(),
                            }
                            Escape::None
                        }
                        (None, _) => match char::from_u32(code) {
                            Some(c) => {
                                self.token.push(c);
                                Escape::None
                            }
                            None => return self.give_up(),
                        },
                        (Some(_), _) => return self.give_up(),
                    }
                }
            }
            Escape::LowBackslash { high } if b == b'\\' => Escape::LowU { high },
            Escape::LowU { high } if b == b'u' => Escape::Hex {
                digits: 0,
                code: 0,
                high: Some(high),
            },
            Escape::LowBackslash { .. } | Escape::LowU { .. } => return self.give_up(),
        };
        self.set_escape(key, next);
    }

    fn set_escape(&mut self, key: bool, escape: Escape) {
        self.state = State::Str { key, escape };
    }
}

#[cfg(test)]
#[path = "object_builder_tests.rs"]
mod tests;
