//! Exact decimal expansions of binary values, for printing and parsing.
//!
//! # The problem
//!
//! Printing and parsing both have to decide, exactly, on which side of a *rounding boundary* a
//! decimal number lies. A boundary of one of this crate's formats is the midpoint between two
//! adjacent values (or the overflow threshold above the largest one): a number `B * 2^E` with an
//! odd `B` of at most 12 bits (`2M + 1` or `4M - 1` for a significand `M` of at most 11 bits)
//! and `-134 <= E <= 126` (bf16's smallest subnormal 2^-133 and E8M0's largest value 2^127 set
//! the range; the values themselves lie within it too, but for 2^127). Such a number is a finite
//! decimal, because `2^-k = 5^k / 10^k`:
//!
//! * for `E >= 0` it is the integer `B * 2^E`;
//! * for `E < 0` it is the integer `B * 5^-E` divided by `10^-E`.
//!
//! The integer has at most `12 + 134 * log2(5) < 324` bits, at most 98 decimal digits, so a
//! fixed-size array holds every expansion the crate ever needs: there is no allocation, and no
//! approximation anywhere.
//!
//! # How the expansion is computed
//!
//! [`Decimal::from_binary`] keeps the integer in base `10^9` (each `u32` limb holds nine decimal
//! digits) and multiplies it by `5^13` or `2^29` at a time, both below `2^32`. A limb times such
//! a factor plus the carry stays below `10^9 * 2^32 + 2^32 < 2^63`, so every step is an exact
//! `u64` computation; reading the limbs out as nine digits each gives the digits of the integer,
//! and the power of ten is a shift of the decimal point. Trailing zero bits of the significand
//! are dropped first, which only shortens the work.
//!
//! # Shortest digits
//!
//! Printing wants the shortest decimal that rounds back to a value `v` (see `display.rs` for the
//! rounding interval `[low, high]` of a value, whose ends are boundaries as above). With the
//! exact expansions of `v`, `low` and `high` in hand, [`shortest`] tries `k = 1, 2, ...`
//! significant digits: the decimals with `k` digits nearest to `v` are `v` truncated to `k`
//! digits (`floor`) and that plus one unit in its last place (`ceil`). Every `k`-digit decimal in
//! the interval lies between them or farther from `v`, and the interval is connected and
//! contains `v`, so if neither is inside, no `k`-digit decimal is (a decimal of `k` digits just
//! above a power of ten, such as `10^p` itself, is a multiple of the same unit and is found as
//! `ceil`; one just below `v`'s power of ten would put `10^p` itself in the interval, which is
//! `floor` for `k = 1`). When both are inside, the one nearer to `v` wins; the distances are
//! read off the discarded digits (compared with `5000...`), and an exact tie goes to the even
//! last digit. The search ends at the latest at `k = len(v)`, where `floor == v`.
//!
//! All comparisons are digit by digit on normalised expansions (no leading or trailing zeros,
//! the decimal point kept as an exponent), which is exact by construction.

use core::cmp::Ordering;

/// Limbs of the base-`10^9` integer; `16 * 9 = 144` digits, more than the 128 that the
/// largest supported input (`2^64 * 5^160`) needs.
const LIMBS: usize = 16;
/// The limb base.
const BASE: u64 = 1_000_000_000;
/// Most significant digits a [`Decimal`] holds.
pub(crate) const MAX_DIGITS: usize = LIMBS * 9;
/// Smallest binary exponent [`Decimal::from_binary`] supports (after dropping trailing zero bits
/// of the significand).
pub(crate) const MIN_BINARY_EXP: i32 = -160;
/// Largest binary exponent [`Decimal::from_binary`] supports.
pub(crate) const MAX_BINARY_EXP: i32 = 240;

/// A non-negative decimal number `0.d1 d2 ... dn * 10^point` held exactly.
///
/// Normalised: `d1 != 0` and `dn != 0`, or `n == 0` for zero (whose `point` is 0). Two
/// normalised decimals are equal exactly when their digits and points are.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decimal {
    /// The digits `d1 ... dn` (values 0 to 9), most significant first; the rest is unused.
    digits: [u8; MAX_DIGITS],
    /// `n`, the number of significant digits.
    len: usize,
    /// The power of ten of the position just left of `d1`: the value is below `10^point` and
    /// at least `10^(point - 1)`.
    point: i32,
}

/// An integer in base `10^9`, least significant limb first.
struct Big {
    limbs: [u32; LIMBS],
    len: usize,
}

impl Big {
    /// The integer `x`.
    fn new(mut x: u64) -> Self {
        let mut big = Big {
            limbs: [0; LIMBS],
            len: 0,
        };
        while x > 0 {
            big.limbs[big.len] = (x % BASE) as u32;
            big.len += 1;
            x /= BASE;
        }
        big
    }

    /// Multiplies by `m` in place. Exact while the product has at most [`MAX_DIGITS`] digits,
    /// which the callers' exponent ranges guarantee; beyond that the top is dropped rather than
    /// panicking (a debug build asserts).
    fn mul_small(&mut self, m: u32) {
        let mut carry = 0u64;
        for limb in &mut self.limbs[..self.len] {
            // < 10^9 * 2^32 + 2^32 < 2^63: no overflow.
            let t = *limb as u64 * m as u64 + carry;
            *limb = (t % BASE) as u32;
            carry = t / BASE;
        }
        while carry > 0 {
            debug_assert!(self.len < LIMBS, "decimal expansion out of range");
            if self.len == LIMBS {
                break;
            }
            self.limbs[self.len] = (carry % BASE) as u32;
            self.len += 1;
            carry /= BASE;
        }
    }
}

impl Decimal {
    /// Zero.
    pub(crate) const ZERO: Decimal = Decimal {
        digits: [0; MAX_DIGITS],
        len: 0,
        point: 0,
    };

    /// The exact decimal expansion of `sig * 2^exp`.
    ///
    /// Exact for every `sig` once its trailing zero bits are moved into `exp`, as long as the
    /// resulting `exp` lies in `MIN_BINARY_EXP..=MAX_BINARY_EXP`; every value and rounding
    /// boundary of every format of the crate (and every such boundary as an f64) does, with a
    /// wide margin. (Outside that range the result would lose its top digits; it never panics.)
    pub(crate) fn from_binary(sig: u64, exp: i32) -> Decimal {
        if sig == 0 {
            return Decimal::ZERO;
        }
        let tz = sig.trailing_zeros();
        let sig = sig >> tz;
        let exp = exp + tz as i32;
        debug_assert!((MIN_BINARY_EXP..=MAX_BINARY_EXP).contains(&exp));
        let mut big = Big::new(sig);
        // value = big * 10^-tens
        let tens = if exp >= 0 {
            let mut left = exp as u32;
            while left > 0 {
                let step = if left < 29 { left } else { 29 };
                big.mul_small(1 << step);
                left -= step;
            }
            0
        } else {
            let mut left = exp.unsigned_abs();
            while left > 0 {
                let step = if left < 13 { left } else { 13 };
                big.mul_small(5u32.pow(step));
                left -= step;
            }
            exp.unsigned_abs() as i32
        };
        let mut out = Decimal::ZERO;
        // The top limb without its leading zeros, every other limb as nine digits.
        let mut started = false;
        for i in (0..big.len).rev() {
            let limb = big.limbs[i];
            let mut div = BASE as u32 / 10;
            while div > 0 {
                let d = (limb / div % 10) as u8;
                div /= 10;
                if d != 0 || started {
                    started = true;
                    out.digits[out.len] = d;
                    out.len += 1;
                }
            }
        }
        out.point = out.len as i32 - tens;
        out.trim();
        out
    }

    /// Removes trailing zero digits (the value is unchanged); zero gets `point` 0.
    fn trim(&mut self) {
        while self.len > 0 && self.digits[self.len - 1] == 0 {
            self.len -= 1;
        }
        if self.len == 0 {
            self.point = 0;
        }
    }

    /// The significant digits, most significant first (empty for zero).
    pub(crate) fn digits(&self) -> &[u8] {
        &self.digits[..self.len]
    }

    /// The decimal exponent: the value is `0.d1 d2 ... * 10^point`.
    pub(crate) fn point(&self) -> i32 {
        self.point
    }

    /// Whether the value is zero.
    pub(crate) fn is_zero(&self) -> bool {
        self.len == 0
    }

    /// Compares two decimals exactly.
    pub(crate) fn cmp(&self, other: &Decimal) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            (false, false) => {}
        }
        // Normalised: the one with the higher leading position is larger.
        if self.point != other.point {
            return self.point.cmp(&other.point);
        }
        // Same position: lexicographic, a shorter expansion padded with zeros. Since neither
        // ends in a zero, after a common prefix the longer one is larger.
        self.digits().cmp(other.digits())
    }

    /// Compares the decimal `0.D * 10^point` with `self`, where `digits` yields the digits of
    /// `D` (values 0 to 9), starting with a nonzero one. Any number of digits may follow, in
    /// particular trailing zeros; the comparison is exact and stops early where it can.
    pub(crate) fn cmp_digits_with(
        &self,
        mut digits: impl Iterator<Item = u8>,
        point: i64,
    ) -> Ordering {
        if self.is_zero() {
            return Ordering::Greater;
        }
        if point != self.point as i64 {
            return point.cmp(&(self.point as i64));
        }
        for &mine in self.digits() {
            match digits.next() {
                // The given number ended: padded with zeros it is smaller (`mine` and the rest
                // of `self` cannot all be zero, as `self` ends in a nonzero digit).
                None => return Ordering::Less,
                Some(d) if d != mine => return d.cmp(&mine),
                Some(_) => {}
            }
        }
        // `self` ended; the given number is larger if any further digit is nonzero.
        if digits.any(|d| d != 0) {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    }

    /// The first `k` digits (`1 <= k < len`) truncated: the largest `k`-digit decimal at or
    /// below `self`, at `self`'s position.
    fn truncated(&self, k: usize) -> Decimal {
        let mut out = *self;
        out.len = k;
        out.trim();
        out
    }

    /// The truncation to `k` digits plus one unit in its `k`-th digit: the smallest `k`-digit
    /// decimal above `self` (when digits beyond the `k`-th are discarded, as here).
    fn truncated_up(&self, k: usize) -> Decimal {
        let mut out = *self;
        out.len = k;
        let mut i = k;
        loop {
            if i == 0 {
                // All nines: 0.99..9 * 10^p + unit = 0.1 * 10^(p+1).
                out.digits[0] = 1;
                out.len = 1;
                out.point += 1;
                return out;
            }
            i -= 1;
            if out.digits[i] == 9 {
                out.digits[i] = 0;
            } else {
                out.digits[i] += 1;
                break;
            }
        }
        out.trim();
        out
    }
}

/// The decimal with the fewest significant digits in the interval from `low` to `high` (each end
/// included when its flag says so); among those of that length, the one nearest to `v`, an exact
/// tie going to the even last digit. `v` must lie inside the interval (it is then the answer at
/// the latest when all its digits are needed). See the module documentation for why the search
/// is exhaustive.
pub(crate) fn shortest(
    v: &Decimal,
    low: &Decimal,
    low_inclusive: bool,
    high: &Decimal,
    high_inclusive: bool,
) -> Decimal {
    let above_low = |c: &Decimal| match c.cmp(low) {
        Ordering::Greater => true,
        Ordering::Equal => low_inclusive,
        Ordering::Less => false,
    };
    let below_high = |c: &Decimal| match c.cmp(high) {
        Ordering::Less => true,
        Ordering::Equal => high_inclusive,
        Ordering::Greater => false,
    };
    for k in 1..v.len {
        let floor = v.truncated(k);
        let ceil = v.truncated_up(k);
        match (above_low(&floor), below_high(&ceil)) {
            (false, false) => continue,
            (true, false) => return floor,
            (false, true) => return ceil,
            (true, true) => {
                // v - floor = 0.r * unit, with r the discarded digits v[k..]; compare with 1/2.
                let rest = &v.digits()[k..];
                let up = match rest[0].cmp(&5) {
                    Ordering::Greater => true,
                    Ordering::Less => false,
                    // `rest` ends in a nonzero digit, so more than one digit means above 1/2.
                    Ordering::Equal if rest.len() > 1 => true,
                    Ordering::Equal => v.digits()[k - 1] % 2 == 1,
                };
                return if up { ceil } else { floor };
            }
        }
    }
    *v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks the expansion of `sig * 2^exp` against the expected digits and point.
    fn check(sig: u64, exp: i32, digits: &[u8], point: i32) {
        let d = Decimal::from_binary(sig, exp);
        assert_eq!((d.digits(), d.point()), (digits, point), "{sig} * 2^{exp}");
    }

    #[test]
    fn expansions() {
        check(1, 0, &[1], 1);
        check(5, -1, &[2, 5], 1);
        check(1, -1, &[5], 0);
        check(1, -4, &[6, 2, 5], -1);
        check(1 << 20, -30, &[9, 7, 6, 5, 6, 2, 5], -3);
        check(100, 0, &[1], 3);
        check(65504, 0, &[6, 5, 5, 0, 4], 5);
        let d = Decimal::from_binary(1, 127);
        assert_eq!(d.point(), 39);
        assert_eq!(d.digits()[..5], [1, 7, 0, 1, 4]);
        // 2^-134 has 94 significant digits: 5^134 is 94 digits long.
        let d = Decimal::from_binary(1, -134);
        assert_eq!(d.digits().len(), 94);
        assert_eq!(d.point(), 94 - 134);
        // The largest supported inputs.
        let d = Decimal::from_binary(u64::MAX, MIN_BINARY_EXP);
        assert!(d.digits().len() <= MAX_DIGITS);
        assert_eq!(d.digits()[..3], [1, 2, 6]);
        let d = Decimal::from_binary(u64::MAX, MAX_BINARY_EXP);
        assert_eq!(d.digits()[..3], [3, 2, 5]);
    }

    #[test]
    fn comparisons() {
        let a = Decimal::from_binary(3, -1); // 1.5
        let b = Decimal::from_binary(25, -4); // 1.5625
        assert_eq!(a.cmp(&b), Ordering::Less);
        assert_eq!(b.cmp(&a), Ordering::Greater);
        assert_eq!(a.cmp(&a), Ordering::Equal);
        assert_eq!(Decimal::ZERO.cmp(&a), Ordering::Less);
        assert_eq!(
            a.cmp_digits_with([1, 5, 0, 0].into_iter(), 1),
            Ordering::Equal
        );
        assert_eq!(
            a.cmp_digits_with([1, 5, 0, 1].into_iter(), 1),
            Ordering::Greater
        );
        assert_eq!(a.cmp_digits_with([1, 4, 9].into_iter(), 1), Ordering::Less);
        assert_eq!(a.cmp_digits_with([1].into_iter(), 1), Ordering::Less);
        assert_eq!(a.cmp_digits_with([1].into_iter(), 2), Ordering::Greater);
    }

    #[test]
    fn shortest_digits() {
        // f16 0.0999755859375 = 1638 * 2^-14, interval [3275, 3277] * 2^-15, closed.
        let v = Decimal::from_binary(1638, -14);
        let lo = Decimal::from_binary(3275, -15);
        let hi = Decimal::from_binary(3277, -15);
        let s = shortest(&v, &lo, true, &hi, true);
        assert_eq!((s.digits(), s.point()), (&[1u8][..], 0));
        // Rounding up with a carry: 9.96 in [9.9, 10.05] gives 10.
        let v = Decimal::from_binary(996, 0);
        let lo = Decimal::from_binary(990, 0);
        let hi = Decimal::from_binary(1005, 0);
        let s = shortest(&v, &lo, true, &hi, true);
        assert_eq!((s.digits(), s.point()), (&[1u8][..], 4));
    }
}
