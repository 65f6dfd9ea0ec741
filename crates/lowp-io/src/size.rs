//! Sizes in bytes as people write them (`5GB`, `256MiB`): a shard size on the command line
//! ([`crate::Options::shard_size`]), and every other size the `lowp` command takes. One
//! reading of every unit, each meaning what it says.

use crate::error::Error;

/// Every unit a size may carry (lower case) and its bytes: KB, MB and GB are powers of 1000,
/// KiB, MiB and GiB powers of 1024, and a bare K, M or G is binary too, as memory sizes are
/// usually meant.
const UNITS: [(&str, u64); 11] = [
    ("", 1),
    ("b", 1),
    ("kb", 1_000),
    ("mb", 1_000_000),
    ("gb", 1_000_000_000),
    ("k", 1 << 10),
    ("kib", 1 << 10),
    ("m", 1 << 20),
    ("mib", 1 << 20),
    ("g", 1 << 30),
    ("gib", 1 << 30),
];

/// What every message about a size says a size is.
const SPELLING: &str = "bytes, or a number with KB, MB, GB (10^3, 10^6, 10^9 bytes) or K, KiB, \
                        M, MiB, G, GiB (2^10, 2^20, 2^30 bytes), such as 64MB, 256M, 1.5GiB";

/// Reads a positive size: digits, a decimal fraction allowed where the unit makes it a whole
/// number of bytes (`1.5K` is 1536 bytes; `1.5` is refused), and an optional unit in any case,
/// after optional spaces: `B`; `KB`, `MB`, `GB` (powers of 1000); `K`, `KiB`, `M`, `MiB`, `G`,
/// `GiB` (powers of 1024). Anything else is an [`Error::Invalid`] naming `text` and saying
/// what a size is.
///
/// ```
/// use lowp_io::size::parse_size;
/// assert_eq!(parse_size("64MB").unwrap(), 64_000_000);
/// assert_eq!(parse_size("64MiB").unwrap(), 64 << 20);
/// assert_eq!(parse_size("1.5K").unwrap(), 1536);
/// assert!(parse_size("5 parsecs").is_err());
/// ```
pub fn parse_size(text: &str) -> Result<u64, Error> {
    parse(text).map_err(Error::Invalid)
}

/// [`parse_size`], its message as text.
fn parse(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit = unit.trim().to_ascii_lowercase();
    let not_a_size = || format!("'{text}' is not a size: give {SPELLING}");
    if number.is_empty() {
        return Err(not_a_size());
    }
    let Some(&(_, scale)) = UNITS.iter().find(|(u, _)| *u == unit) else {
        return Err(format!(
            "unknown unit '{unit}' in '{text}': give {SPELLING}"
        ));
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
        return Err(not_a_size());
    }
    let too_large = || format!("'{text}' is too large: at most {} bytes", u64::MAX);
    let digits = |d: &str| -> Result<u128, String> {
        if d.is_empty() {
            return Ok(0);
        }
        d.parse::<u128>().map_err(|_| too_large())
    };
    // The size times 10^(fraction digits), exactly, then divided back.
    let denominator = u32::try_from(fraction.len())
        .ok()
        .and_then(|n| 10u128.checked_pow(n))
        .ok_or_else(too_large)?;
    let scaled = digits(whole)?
        .checked_mul(denominator)
        .and_then(|w| w.checked_add(digits(fraction).ok()?))
        .and_then(|n| n.checked_mul(u128::from(scale)))
        .ok_or_else(too_large)?;
    if scaled % denominator != 0 {
        return Err(format!("'{text}' is not a whole number of bytes"));
    }
    match u64::try_from(scaled / denominator) {
        Ok(0) => Err(format!("'{text}' is not a positive size: give {SPELLING}")),
        Ok(bytes) => Ok(bytes),
        Err(_) => Err(too_large()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_means_what_it_says() {
        for (text, bytes) in [
            ("4096", 4096),
            ("4096b", 4096),
            ("1KB", 1_000),
            ("1kb", 1_000),
            ("1MB", 1_000_000),
            ("1GB", 1_000_000_000),
            ("1K", 1 << 10),
            ("1KiB", 1 << 10),
            ("16k", 16 << 10),
            ("1M", 1 << 20),
            ("1MiB", 1 << 20),
            ("256mib", 256 << 20),
            ("1G", 1 << 30),
            ("1GiB", 1 << 30),
            ("1.5GB", 1_500_000_000),
            ("1.5K", 1536),
            ("0.5M", 1 << 19),
            (".5KB", 500),
            (" 2 GiB ", 2 << 30),
            ("16384G", 1 << 44),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
    }

    #[test]
    fn junk_zero_fractions_of_a_byte_and_overflow_are_refused() {
        for (text, says) in [
            ("", "is not a size"),
            ("K", "is not a size"),
            ("-1K", "is not a size"),
            (".", "is not a size"),
            ("1.2.3M", "is not a size"),
            ("12XB", "unknown unit 'xb'"),
            ("16Q", "256M"),
            ("1T", "unknown unit 't'"),
            ("0", "not a positive size"),
            ("0.0GB", "not a positive size"),
            ("1.5", "not a whole number of bytes"),
            ("0.0001KB", "not a whole number of bytes"),
            ("17179869184G", "too large"),
            ("99999999999999999999999999999999999999999", "too large"),
            ("1.00000000000000000000000000000000000000001", "too large"),
        ] {
            let err = parse_size(text).unwrap_err().to_string();
            assert!(err.contains(says), "{text}: {err}");
            assert!(
                err.contains(&format!("'{text}'")) || text.is_empty(),
                "{err}"
            );
        }
    }
}
