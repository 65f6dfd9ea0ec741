//! The header of a `.npy` file: a Python dict literal such as
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }`, read and written here.
//!
//! The reader is a recursive descent over the small part of Python's literal syntax that
//! NumPy writes (strings, integers, `True`/`False`/`None`, tuples, lists, dicts). Every byte
//! is looked at once (no backtracking, no second pass) and the nesting is capped, so a hostile
//! header costs time linear in its length and a bounded stack, whatever its brackets; and the
//! length itself is capped at [`MAX_HEADER_LEN`]. A parser that backtracks doubles its time
//! with each level of `{'descr': [[...]]}`: 1.8 s at 20 levels, 7.6 s at 22, hours at 30.

use std::fmt::Write as _;

/// The deepest nesting of brackets accepted (a structured dtype of structured dtypes nests a
/// few levels; NumPy itself writes nothing near this).
pub(crate) const MAX_NESTING: usize = 32;

/// The longest header accepted, in bytes: NumPy's own limit (`max_header_size`, 10,000 bytes
/// in `numpy.lib.format`), past which `np.load` refuses a file unless it is trusted with
/// `allow_pickle=True`. Plain dtypes need a small fraction of it (a 64-dimension shape of
/// 20-digit sizes is under 1,500 bytes); only structured dtypes with hundreds of fields come
/// near it.
pub(crate) const MAX_HEADER_LEN: u64 = 10_000;

/// Refuses a header longer than [`MAX_HEADER_LEN`], before any of it is read or parsed.
pub(crate) fn check_len(len: u64) -> Result<(), String> {
    if len > MAX_HEADER_LEN {
        return Err(format!(
            "the .npy header is {len} bytes, more than the {MAX_HEADER_LEN} NumPy accepts"
        ));
    }
    Ok(())
}

/// What a `.npy` header says about its array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    /// The dtype's type string as written (`<f4`), or `structured` for a list of fields.
    pub descr: String,
    /// The plain dtype, when it is not structured.
    pub plain: Option<TypeStr>,
    /// Bytes per element, or `None` when the array holds Python objects (pickled data).
    pub item_size: Option<u64>,
    /// Whether the data is in Fortran (column-major) order.
    pub fortran_order: bool,
    /// The array's shape.
    pub shape: Vec<u64>,
}

/// A plain NumPy type string such as `<f4`: byte order, kind and size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TypeStr {
    /// `<` little-endian, `>` big-endian, `|` not applicable, `=` native.
    pub byte_order: char,
    /// NumPy's kind character: `f` float, `i`/`u` integers, `b` bool, `c` complex, ...
    pub kind: char,
    /// Bytes per element (`None` for objects).
    pub size: Option<u64>,
}

/// A Python literal, as far as NumPy headers use them.
#[derive(Debug)]
enum Value {
    Str(String),
    Int(u64),
    Bool(bool),
    None,
    /// A tuple or a list (NumPy headers use them alike).
    Seq(Vec<Value>),
    Dict(Vec<(Value, Value)>),
}

/// Parses the header text (the bytes between the length field and the data), in time linear
/// in its length, which is at most [`MAX_HEADER_LEN`].
pub(crate) fn parse(text: &[u8]) -> Result<Header, String> {
    check_len(text.len() as u64)?;
    let text = std::str::from_utf8(text)
        .map_err(|_| "invalid .npy header: not ASCII/UTF-8 text".to_string())?;
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    let value = p
        .value(0)
        .map_err(|e| format!("invalid .npy header: {e}"))?;
    p.skip_space();
    if p.i != p.s.len() {
        return Err(format!(
            "invalid .npy header: unexpected text after the dictionary at byte {}",
            p.i
        ));
    }
    let Value::Dict(entries) = value else {
        return Err("invalid .npy header: not a dictionary".to_string());
    };
    let get = |key: &str| {
        entries
            .iter()
            .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
            .map(|(_, v)| v)
            .ok_or_else(|| format!("invalid .npy header: no '{key}' key"))
    };
    let fortran_order = match get("fortran_order")? {
        Value::Bool(b) => *b,
        _ => return Err("invalid .npy header: 'fortran_order' is not True or False".into()),
    };
    let shape = match get("shape")? {
        Value::Seq(dims) => dims
            .iter()
            .map(|d| match d {
                Value::Int(n) => Ok(*n),
                _ => Err("invalid .npy header: 'shape' holds a non-integer".to_string()),
            })
            .collect::<Result<Vec<u64>, String>>()?,
        _ => return Err("invalid .npy header: 'shape' is not a tuple".into()),
    };
    let descr = get("descr")?;
    let (descr, plain, item_size) = match descr {
        Value::Str(s) => {
            let ts = type_str(s)?;
            (s.clone(), Some(ts), ts.size)
        }
        Value::Seq(_) => ("structured".to_string(), None, field_size(descr, 0)?),
        _ => return Err("invalid .npy header: 'descr' is neither a string nor a list".into()),
    };
    Ok(Header {
        descr,
        plain,
        item_size,
        fortran_order,
        shape,
    })
}

/// Reads a type string: an optional byte order, a kind, a size (a count of characters for
/// `U`, of bytes otherwise; absent for objects) and, for dates, a unit in brackets.
fn type_str(s: &str) -> Result<TypeStr, String> {
    let bad = || format!("invalid .npy header: unknown dtype '{s}'");
    let mut chars = s.chars().peekable();
    let byte_order = match chars.peek() {
        Some(&c @ ('<' | '>' | '|' | '=')) => {
            chars.next();
            c
        }
        _ => '|',
    };
    let kind = chars.next().ok_or_else(bad)?;
    let rest: String = chars.collect();
    let digits = rest.split('[').next().unwrap_or("");
    if kind == 'O' {
        return Ok(TypeStr {
            byte_order,
            kind,
            size: None,
        });
    }
    if !"biufcmMSaUV".contains(kind) || digits.is_empty() {
        return Err(bad());
    }
    let count: u64 = digits.parse().map_err(|_| bad())?;
    let size = if kind == 'U' {
        count.checked_mul(4).ok_or_else(bad)?
    } else {
        count
    };
    Ok(TypeStr {
        byte_order,
        kind,
        size: Some(size),
    })
}

/// Bytes per element of a structured dtype (a list of `(name, dtype[, shape])` fields), or
/// `None` if any field holds objects.
fn field_size(descr: &Value, depth: usize) -> Result<Option<u64>, String> {
    let too_large = || "invalid .npy header: a structured dtype too large".to_string();
    match descr {
        Value::Str(s) => Ok(type_str(s)?.size),
        Value::Seq(fields) if depth < MAX_NESTING => {
            let mut total = 0u64;
            for field in fields {
                let Value::Seq(parts) = field else {
                    return Err("invalid .npy header: a field is not a tuple".into());
                };
                let (Some(dtype), count) = (parts.get(1), parts.get(2)) else {
                    return Err("invalid .npy header: a field has no dtype".into());
                };
                let Some(size) = field_size(dtype, depth + 1)? else {
                    return Ok(None);
                };
                let count = match count {
                    None => 1,
                    Some(Value::Int(n)) => *n,
                    Some(Value::Seq(dims)) => dims.iter().try_fold(1u64, |n, d| match d {
                        Value::Int(d) => n.checked_mul(*d).ok_or_else(too_large),
                        _ => Err("invalid .npy header: a field's shape is not integers".into()),
                    })?,
                    Some(_) => return Err("invalid .npy header: a field's shape is bad".into()),
                };
                let bytes = size.checked_mul(count).ok_or_else(too_large)?;
                total = total.checked_add(bytes).ok_or_else(too_large)?;
            }
            Ok(Some(total))
        }
        _ => Err("invalid .npy header: 'descr' is malformed".into()),
    }
}

/// A cursor over the header's bytes.
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.s.get(self.i).copied()
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        let at = self.i;
        match self.peek() {
            None => Err("the text ends where a value should be".into()),
            Some(b'{' | b'(' | b'[') if depth >= MAX_NESTING => {
                Err(format!("brackets nest deeper than {MAX_NESTING} levels"))
            }
            Some(b'{') => self.dict(depth + 1),
            Some(b'(') => self.seq(b')', depth + 1),
            Some(b'[') => self.seq(b']', depth + 1),
            Some(q @ (b'\'' | b'"')) => self.string(q),
            Some(c) if c.is_ascii_digit() => self.int(),
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.i;
                while self.i < self.s.len() && self.s[self.i].is_ascii_alphanumeric() {
                    self.i += 1;
                }
                match &self.s[start..self.i] {
                    b"True" => Ok(Value::Bool(true)),
                    b"False" => Ok(Value::Bool(false)),
                    b"None" => Ok(Value::None),
                    _ => Err(format!("unexpected word at byte {at}")),
                }
            }
            Some(c) => Err(format!(
                "unexpected character {:?} at byte {}",
                c as char, self.i
            )),
        }
    }

    /// Items separated by commas (a trailing one allowed) up to `close`.
    fn items(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Result<(), String>,
    ) -> Result<(), String> {
        self.i += 1; // the opening bracket
        loop {
            if self.peek() == Some(close) {
                self.i += 1;
                return Ok(());
            }
            item(self)?;
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(c) if c == close => {}
                _ => {
                    return Err(format!(
                        "expected ',' or '{}' at byte {}",
                        close as char, self.i
                    ));
                }
            }
        }
    }

    fn seq(&mut self, close: u8, depth: usize) -> Result<Value, String> {
        let mut out = Vec::new();
        self.items(close, |p| {
            out.push(p.value(depth)?);
            Ok(())
        })?;
        Ok(Value::Seq(out))
    }

    fn dict(&mut self, depth: usize) -> Result<Value, String> {
        let mut out = Vec::new();
        self.items(b'}', |p| {
            let key = p.value(depth)?;
            if p.peek() != Some(b':') {
                return Err(format!("expected ':' at byte {}", p.i));
            }
            p.i += 1;
            out.push((key, p.value(depth)?));
            Ok(())
        })?;
        Ok(Value::Dict(out))
    }

    fn string(&mut self, quote: u8) -> Result<Value, String> {
        let start = self.i;
        self.i += 1;
        let mut out = Vec::new();
        while let Some(&c) = self.s.get(self.i) {
            self.i += 1;
            match c {
                b'\\' => {
                    let &escaped = self
                        .s
                        .get(self.i)
                        .ok_or_else(|| format!("unterminated string at byte {start}"))?;
                    self.i += 1;
                    out.push(escaped);
                }
                c if c == quote => {
                    return String::from_utf8(out)
                        .map(Value::Str)
                        .map_err(|_| format!("a string at byte {start} is not UTF-8"));
                }
                c => out.push(c),
            }
        }
        Err(format!("unterminated string at byte {start}"))
    }

    fn int(&mut self) -> Result<Value, String> {
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
            self.i += 1;
        }
        let digits = std::str::from_utf8(&self.s[start..self.i]).unwrap_or_default();
        let n = digits
            .parse::<u64>()
            .map_err(|_| format!("the integer at byte {start} is too large"))?;
        // Python 2 wrote long integers with a suffix: `(3L, 4L)`.
        if self.s.get(self.i) == Some(&b'L') {
            self.i += 1;
        }
        Ok(Value::Int(n))
    }
}

/// A whole `.npy` preamble and header for a plain dtype, as NumPy writes it: magic, version
/// 1.0 (2.0 when the header needs more than 65,535 bytes), the dict, and spaces and a newline
/// up to a multiple of 64 bytes, so the data starts aligned.
pub(crate) fn write(descr: &str, fortran_order: bool, shape: &[u64]) -> Vec<u8> {
    let mut dict = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': (",
        if fortran_order { "True" } else { "False" }
    );
    for (i, d) in shape.iter().enumerate() {
        let _ = write!(dict, "{}{d}", if i == 0 { "" } else { ", " });
    }
    dict.push_str(if shape.len() == 1 { ",), }" } else { "), }" });
    let with_padding = |prefix: usize| {
        let unpadded = prefix + dict.len() + 1;
        dict.len() + 1 + (64 - unpadded % 64) % 64
    };
    let (version, prefix) = if with_padding(10) <= u16::MAX as usize {
        (1u8, 10)
    } else {
        (2u8, 12)
    };
    let header_len = with_padding(prefix);
    let mut out = b"\x93NUMPY".to_vec();
    out.extend([version, 0]);
    if version == 1 {
        out.extend((header_len as u16).to_le_bytes());
    } else {
        out.extend((header_len as u32).to_le_bytes());
    }
    out.extend(dict.as_bytes());
    out.resize(prefix + header_len - 1, b' ');
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_numpy_writes() {
        let h = parse(b"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }  \n").unwrap();
        assert_eq!(h.descr, "<f4");
        assert_eq!(
            h.plain,
            Some(TypeStr {
                byte_order: '<',
                kind: 'f',
                size: Some(4)
            })
        );
        assert_eq!(
            (h.item_size, h.fortran_order, h.shape),
            (Some(4), false, vec![3, 4])
        );
        let h = parse(b"{\"descr\":\">f2\",\"fortran_order\":True,\"shape\":(7L,)}").unwrap();
        assert_eq!(
            (h.item_size, h.fortran_order, h.shape),
            (Some(2), true, vec![7])
        );
        let h = parse(b"{'descr': '|O', 'fortran_order': False, 'shape': (), }").unwrap();
        assert_eq!((h.item_size, h.shape), (None, vec![]));
        let h = parse(b"{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }").unwrap();
        assert_eq!(h.item_size, Some(12));
        let h = parse(b"{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (2,), }").unwrap();
        assert_eq!(h.item_size, Some(8));
    }

    #[test]
    fn structured_dtypes_add_their_fields() {
        let h = parse(
            b"{'descr': [('x', '<f4'), ('y', [('a', '<i2'), ('b', '|u1', (3,))]), ('', '|V1')], \
              'fortran_order': False, 'shape': (5,), }",
        )
        .unwrap();
        assert_eq!(
            (h.descr.as_str(), h.plain, h.item_size),
            ("structured", None, Some(10))
        );
        let h =
            parse(b"{'descr': [('o', '|O')], 'fortran_order': False, 'shape': (1,), }").unwrap();
        assert_eq!(h.item_size, None);
    }

    #[test]
    fn malformed_headers_say_what_is_wrong() {
        let cases: [(&[u8], &str); 9] = [
            (
                b"{'descr': '<f4', 'shape': (2,), }",
                "no 'fortran_order' key",
            ),
            (
                b"{'descr': '<f4', 'fortran_order': 1, 'shape': (2,), }",
                "not True or False",
            ),
            (
                b"{'descr': '<q9', 'fortran_order': False, 'shape': (2,), }",
                "unknown dtype",
            ),
            (
                b"{'descr': '<f4', 'fortran_order': False, 'shape': ('a',), }",
                "non-integer",
            ),
            (
                b"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)",
                "expected ','",
            ),
            (b"{'descr': '<f4", "unterminated string"),
            (b"[1, 2]", "not a dictionary"),
            (b"{} {}", "unexpected text"),
            (b"{'shape': (99999999999999999999,)}", "too large"),
        ];
        for (text, want) in cases {
            let err = parse(text).unwrap_err();
            assert!(
                err.contains(want),
                "{}: {err}",
                String::from_utf8_lossy(text)
            );
        }
    }

    /// `f()` run on a thread, failing (not hanging) if it takes more than 10 s: linear parsing
    /// answers in microseconds, a backtracking parser takes hours on these headers.
    fn within_10_s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (send, recv) = std::sync::mpsc::channel();
        std::thread::spawn(move || send.send(f()));
        recv.recv_timeout(std::time::Duration::from_secs(10))
            .expect("parsing took over 10 s: is the parser exponential?")
    }

    /// A hostile header: `descr` nested `depth` brackets deep.
    fn nested(depth: usize) -> String {
        format!(
            "{{'descr': {}'<f4'{}, 'fortran_order': False, 'shape': (1,), }}",
            "[".repeat(depth),
            "]".repeat(depth)
        )
    }

    #[test]
    fn deep_nesting_is_refused_at_once() {
        // npyz took 1.8 s at depth 20 and doubled with each level; here one pass that stops
        // at the cap. The dict is one level, so `descr` may nest MAX_NESTING - 1 deep.
        let cases = [
            (20, "a field has no dtype"),
            (30, "a field has no dtype"),
            (MAX_NESTING - 1, "a field has no dtype"),
            (MAX_NESTING, "brackets nest deeper than 32 levels"),
            (MAX_NESTING + 1, "brackets nest deeper than 32 levels"),
            (4_000, "brackets nest deeper than 32 levels"),
            (5_000, "more than the 10000 NumPy accepts"),
        ];
        for (depth, want) in cases {
            let err = within_10_s(move || parse(nested(depth).as_bytes())).unwrap_err();
            assert!(err.contains(want), "depth {depth}: {err}");
        }
        let ok = format!("{}1{}", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
        let mut p = Parser {
            s: ok.as_bytes(),
            i: 0,
        };
        assert!(p.value(0).is_ok());
    }

    #[test]
    fn headers_past_numpys_limit_are_refused() {
        let pad = |n: usize| {
            let mut h = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }".to_string();
            h.extend(std::iter::repeat_n(' ', n - h.len()));
            h
        };
        assert!(parse(pad(MAX_HEADER_LEN as usize).as_bytes()).is_ok());
        let err = parse(pad(MAX_HEADER_LEN as usize + 1).as_bytes()).unwrap_err();
        assert!(err.contains("10001 bytes, more than the 10000"), "{err}");
    }

    #[test]
    fn writes_what_numpy_writes() {
        // Bytes of `np.save` (NumPy 2.x) for float32 arrays of these shapes.
        let cases: [(&[u64], bool, &str); 3] = [
            (
                &[3],
                false,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
            ),
            (
                &[2, 1],
                true,
                "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1), }",
            ),
            (
                &[],
                false,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
            ),
        ];
        for (shape, fortran, dict) in cases {
            let out = write("<f4", fortran, shape);
            assert_eq!(out.len(), 128);
            assert_eq!(&out[..8], b"\x93NUMPY\x01\x00");
            assert_eq!(u16::from_le_bytes([out[8], out[9]]), 118);
            assert!(out[10..].starts_with(dict.as_bytes()));
            assert!(out[10 + dict.len()..127].iter().all(|&b| b == b' '));
            assert_eq!(out[127], b'\n');
            let back = parse(&out[10..]).unwrap();
            assert_eq!(
                (back.shape.as_slice(), back.fortran_order),
                (shape, fortran)
            );
        }
        // 90,000 bytes of shape: past version 1.0's 65,535, so written as version 2.0, as
        // NumPy does (and, as NumPy does by default, refused when read back).
        let huge: Vec<u64> = vec![1; 30_000];
        let out = write("<f2", false, &huge);
        assert_eq!(&out[6..8], &[2, 0]);
        assert_eq!(out.len() % 64, 0);
        let len = u32::from_le_bytes(out[8..12].try_into().unwrap()) as usize;
        assert_eq!(12 + len, out.len());
        assert!(parse(&out[12..]).unwrap_err().contains("NumPy accepts"));
    }
}
