//! Names from files, made safe to print: a tensor or file name is whatever bytes its author
//! chose, and control characters in it (`\x1b[2J` clears the screen) would act on the
//! terminal instead of being read.

use std::borrow::Cow;

/// `text` with every control character written as an escape: `\x1b` for the ASCII ones
/// (and DEL), `\u{9b}` for the others. Text without any is returned as it is.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !c.is_control() {
            out.push(c);
        } else if c.is_ascii() {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert_eq!(printable("model.layers.0.weight"), "model.layers.0.weight");
        assert_eq!(printable("a\x1b[2Jb"), "a\\x1b[2Jb");
        assert_eq!(printable("tab\tnew\nline\x7f"), "tab\\x09new\\x0aline\\x7f");
        assert_eq!(printable("csi\u{9b}31m é→"), "csi\\u{9b}31m é→");
    }
}
