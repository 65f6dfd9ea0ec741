//! Tensor name patterns: `*` and `?` globs, matched in linear time.

/// Whether `name` matches the glob `pattern`: `*` any run of characters (dots included), `?`
/// any one character, everything else itself.
pub fn glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // Iterative matching with one backtrack point (the last `*`): linear in practice, never
    // exponential.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("*", "anything.at.all"));
        assert!(glob("*norm*", "model.layers.0.input_layernorm.weight"));
        assert!(glob("lm_head.?eight", "lm_head.weight"));
        assert!(!glob("*.bias", "layer.bias.x"));
        assert!(glob("a*b*c", "aXbYbZc"));
        assert!(!glob("a*b*c", "aXbYbZ"));
        assert!(glob("", ""));
        assert!(!glob("", "x"));
        // Many stars on a long name stay fast.
        assert!(!glob(&"*a".repeat(50), &"a".repeat(40)));
    }
}
