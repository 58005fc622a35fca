//! Parsing of quantities with units: rates, times and sizes.
//!
//! Every quantity a user writes in a scenario goes through this module exactly once, at the
//! edge; everything past it works on the integer newtypes of `dcsim_core::units`.
//!
//! Numbers are parsed as **exact decimals** (never through `f64`): `"1.5Gbps"` is exactly
//! 1 500 000 000 bit/s and `"0.001ms"` exactly 1 000 000 ps. A value that is not a whole number
//! of the base unit (picoseconds, bits per second, bytes) is rejected rather than rounded.
//!
//! | quantity | base unit | accepted units |
//! |---|---|---|
//! | rate | bit/s | `bps`, `Kbps`, `Mbps`, `Gbps`, `Tbps`, the same with `b/s` (`100Gb/s`) or with the prefix alone (`100G`); prefixes are case-insensitive |
//! | time | ps | `ps`, `ns`, `us`, `µs`, `μs`, `ms`, `s` (a unit is required) |
//! | size | byte | `B`, `KB`/`kB` (10³), `MB` (10⁶), `GB` (10⁹), `KiB` (2¹⁰), `MiB` (2²⁰), `GiB` (2³⁰); no unit = bytes |
//!
//! Whitespace between the number and the unit is allowed (`"100 Gbps"`). Signs, exponents and
//! digit separators are not.
//!
//! ```
//! use dcsim_cli::units::{parse_duration, parse_rate, parse_size};
//!
//! assert_eq!(parse_rate("100Gb/s").unwrap().get(), 100_000_000_000);
//! assert_eq!(parse_duration("0.001ms").unwrap().as_ps(), 1_000_000);
//! assert_eq!(parse_size("32MiB").unwrap().get(), 32 << 20);
//! assert_eq!(parse_duration("1000").unwrap_err().to_string(), "`1000` needs a unit, e.g. \"1us\"");
//! ```

use std::fmt;

use dcsim_core::units::{BitsPerSec, Bytes, Duration, PS_PER_MS, PS_PER_NS, PS_PER_SEC, PS_PER_US};

/// Why a quantity could not be parsed. The messages are written to follow
/// "field `x`: ", so they do not repeat the field name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// The text was empty.
    #[error("empty value; expected a number with a unit, e.g. {example}")]
    Empty {
        /// An example of a valid value.
        example: &'static str,
    },
    /// The number had a minus sign.
    #[error("`{text}` is negative; expected a non-negative value")]
    Negative {
        /// The text as written.
        text: String,
    },
    /// No digits where the number should be.
    #[error("`{text}` does not start with a number; expected e.g. {example}")]
    BadNumber {
        /// The text as written.
        text: String,
        /// An example of a valid value.
        example: &'static str,
    },
    /// A unit is required but none was given.
    #[error("`{text}` needs a unit, e.g. {example}")]
    MissingUnit {
        /// The text as written.
        text: String,
        /// An example of a valid value.
        example: &'static str,
    },
    /// The unit is not one of the accepted ones.
    #[error("unknown unit `{unit}` in `{text}`; expected one of {expected}")]
    UnknownUnit {
        /// The unit as written.
        unit: String,
        /// The whole text.
        text: String,
        /// The accepted units.
        expected: &'static str,
    },
    /// The value is not a whole number of the base unit.
    #[error("`{text}` is not a whole number of {base}")]
    TooPrecise {
        /// The text as written.
        text: String,
        /// The base unit ("picoseconds", "bits per second", "bytes").
        base: &'static str,
    },
    /// The value does not fit in 64 bits of the base unit.
    #[error("`{text}` is too large")]
    Overflow {
        /// The text as written.
        text: String,
    },
    /// A time beyond [`dcsim_core::units::TIME_LIMIT`] (2^62 ps, about 53 days).
    #[error("`{text}` is beyond the time limit of {}", dcsim_core::units::TIME_LIMIT_TEXT)]
    TooLong {
        /// The text as written.
        text: String,
    },
}

const RATE_EXAMPLE: &str = "\"100Gbps\"";
const TIME_EXAMPLE: &str = "\"1us\"";
const SIZE_EXAMPLE: &str = "\"1MB\"";
const RATE_UNITS: &str = "bps, Kbps, Mbps, Gbps, Tbps (or Gb/s, or G alone)";
const TIME_UNITS: &str = "ps, ns, us, µs, ms, s";
const SIZE_UNITS: &str = "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB (or none for bytes)";

/// A non-negative decimal number split into its digits and the count of fractional digits:
/// `12.50` is `(1250, 2)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Decimal {
    digits: u128,
    scale: u32,
}

/// Splits `text` into a decimal number and the (trimmed) unit that follows it.
fn split_number<'a>(text: &'a str, example: &'static str) -> Result<(Decimal, &'a str), UnitError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(UnitError::Empty { example });
    }
    if t.starts_with('-') {
        return Err(UnitError::Negative { text: text.to_string() });
    }
    let end = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(end);
    let bad = || UnitError::BadNumber { text: text.to_string(), example };
    let (int_part, frac_part) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if (int_part.is_empty() && frac_part.is_empty()) || frac_part.contains('.') {
        return Err(bad());
    }
    let mut digits: u128 = 0;
    let mut scale = 0u32;
    let overflow = || UnitError::Overflow { text: text.to_string() };
    for (i, c) in int_part.chars().chain(frac_part.chars()).enumerate() {
        let d = c.to_digit(10).ok_or_else(bad)?;
        digits =
            digits.checked_mul(10).and_then(|v| v.checked_add(d as u128)).ok_or_else(overflow)?;
        if i >= int_part.len() {
            scale += 1;
        }
    }
    Ok((Decimal { digits, scale }, unit.trim()))
}

/// `number * factor` in the base unit, exactly.
fn scale_exact(n: Decimal, factor: u64, text: &str, base: &'static str) -> Result<u64, UnitError> {
    let overflow = || UnitError::Overflow { text: text.to_string() };
    let num = n.digits.checked_mul(factor as u128).ok_or_else(overflow)?;
    let den = 10u128.checked_pow(n.scale).ok_or_else(overflow)?;
    if num % den != 0 {
        return Err(UnitError::TooPrecise { text: text.to_string(), base });
    }
    u64::try_from(num / den).map_err(|_| overflow())
}

/// Parses a link or pacing rate such as `"100Gbps"`, `"100Gb/s"`, `"100G"`, `"25Mbps"` or
/// `"1.5Gbps"` into bits per second.
pub fn parse_rate(text: &str) -> Result<BitsPerSec, UnitError> {
    let (n, unit) = split_number(text, RATE_EXAMPLE)?;
    if unit.is_empty() {
        return Err(UnitError::MissingUnit { text: text.to_string(), example: RATE_EXAMPLE });
    }
    let unknown = || UnitError::UnknownUnit {
        unit: unit.to_string(),
        text: text.to_string(),
        expected: RATE_UNITS,
    };
    let mut chars = unit.chars();
    let first = chars.next().ok_or_else(unknown)?;
    let (factor, rest) = match first.to_ascii_lowercase() {
        'k' => (1_000, chars.as_str()),
        'm' => (1_000_000, chars.as_str()),
        'g' => (1_000_000_000, chars.as_str()),
        't' => (1_000_000_000_000, chars.as_str()),
        _ => (1, unit),
    };
    let suffix_ok = match rest {
        "bps" | "b/s" | "bit/s" => true,
        "" => factor != 1,
        _ => false,
    };
    if !suffix_ok {
        return Err(unknown());
    }
    scale_exact(n, factor, text, "bits per second").map(BitsPerSec)
}

/// Parses a time or duration such as `"1us"`, `"1µs"`, `"1000ns"`, `"0.001ms"`, `"2s"` or
/// `"500ps"` into picoseconds. A unit is required. Times beyond
/// [`dcsim_core::units::TIME_LIMIT`] (2^62 ps, about 53 days) are rejected, so that no sum
/// of validated times can overflow.
pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    let (n, unit) = split_number(text, TIME_EXAMPLE)?;
    let factor = match unit {
        "" => return Err(UnitError::MissingUnit { text: text.to_string(), example: TIME_EXAMPLE }),
        "ps" => 1,
        "ns" => PS_PER_NS,
        "us" | "µs" | "μs" => PS_PER_US,
        "ms" => PS_PER_MS,
        "s" => PS_PER_SEC,
        _ => {
            return Err(UnitError::UnknownUnit {
                unit: unit.to_string(),
                text: text.to_string(),
                expected: TIME_UNITS,
            })
        }
    };
    let ps = scale_exact(n, factor, text, "picoseconds")?;
    if ps > dcsim_core::units::TIME_LIMIT.as_ps() {
        return Err(UnitError::TooLong { text: text.to_string() });
    }
    Ok(Duration(ps))
}

/// Parses a byte count such as `"32MiB"`, `"32MB"` (10⁶ bytes each), `"4KiB"`, `"1000B"` or
/// `"1000"` (no unit = bytes); the units run from `B` to `TB` and `TiB`.
pub fn parse_size(text: &str) -> Result<Bytes, UnitError> {
    let (n, unit) = split_number(text, SIZE_EXAMPLE)?;
    let factor: u64 = match unit {
        "" | "B" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        _ => {
            return Err(UnitError::UnknownUnit {
                unit: unit.to_string(),
                text: text.to_string(),
                expected: SIZE_UNITS,
            })
        }
    };
    scale_exact(n, factor, text, "bytes").map(Bytes)
}

/// Formats picoseconds as nanoseconds with up to three decimals, trailing zeros and a trailing
/// `.` removed: 12 240 000 ps is `12240`, 83 840 ps is `83.84`.
pub fn format_ps_as_ns(ps: u64) -> String {
    let whole = ps / PS_PER_NS;
    let frac = ps % PS_PER_NS;
    if frac == 0 {
        return whole.to_string();
    }
    let s = format!("{whole}.{frac:03}");
    s.trim_end_matches('0').to_string()
}

/// A human-readable duration for summaries: `12.24 µs`, `3 ms`, `1.5 s`.
pub struct HumanDuration(pub Duration);

impl fmt::Display for HumanDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0.as_ps();
        if ps == 0 {
            return f.write_str("0 s");
        }
        let (div, unit) = if ps >= PS_PER_SEC {
            (PS_PER_SEC, "s")
        } else if ps >= PS_PER_MS {
            (PS_PER_MS, "ms")
        } else if ps >= PS_PER_US {
            (PS_PER_US, "µs")
        } else if ps >= PS_PER_NS {
            (PS_PER_NS, "ns")
        } else {
            (1, "ps")
        };
        let v = ps as f64 / div as f64;
        let s = format!("{v:.3}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        write!(f, "{s} {unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        let g100 = BitsPerSec::gbps(100);
        for s in ["100Gbps", "100Gb/s", "100G", "100 Gbps", "100gbps", "0.1Tbps", "100000Mbps"] {
            assert_eq!(parse_rate(s), Ok(g100), "{s}");
        }
        assert_eq!(parse_rate("25Mbps"), Ok(BitsPerSec::mbps(25)));
        assert_eq!(parse_rate("1.5Gbps"), Ok(BitsPerSec(1_500_000_000)));
        assert_eq!(parse_rate("7bps"), Ok(BitsPerSec(7)));
        assert_eq!(parse_rate("10Kb/s"), Ok(BitsPerSec(10_000)));
        assert_eq!(parse_rate("0Gbps"), Ok(BitsPerSec(0)));
    }

    #[test]
    fn rate_errors() {
        assert!(matches!(parse_rate("100"), Err(UnitError::MissingUnit { .. })));
        assert!(matches!(parse_rate("-1Gbps"), Err(UnitError::Negative { .. })));
        assert!(matches!(parse_rate("100GBps"), Err(UnitError::UnknownUnit { .. })));
        assert!(matches!(parse_rate("100 furlongs"), Err(UnitError::UnknownUnit { .. })));
        assert!(matches!(parse_rate("0.5bps"), Err(UnitError::TooPrecise { .. })));
        assert!(matches!(parse_rate("Gbps"), Err(UnitError::BadNumber { .. })));
        assert!(matches!(parse_rate("1.2.3Gbps"), Err(UnitError::BadNumber { .. })));
        assert!(matches!(parse_rate(""), Err(UnitError::Empty { .. })));
        assert!(matches!(parse_rate("99999999999Tbps"), Err(UnitError::Overflow { .. })));
    }

    #[test]
    fn times() {
        let us = Duration::from_us(1);
        for s in ["1us", "1µs", "1μs", "1000ns", "0.001ms", "1000000ps", "0.000001s", "1 us"] {
            assert_eq!(parse_duration(s), Ok(us), "{s}");
        }
        assert_eq!(parse_duration("2s"), Ok(Duration(2 * PS_PER_SEC)));
        assert_eq!(parse_duration("500ps"), Ok(Duration(500)));
        assert_eq!(parse_duration("0.5ns"), Ok(Duration(500)));
        assert_eq!(parse_duration("83.84ns"), Ok(Duration(83_840)));
        assert_eq!(parse_duration(".5us"), Ok(Duration(500_000)));
        assert_eq!(parse_duration("5.us"), Ok(Duration(5_000_000)));
        assert_eq!(parse_duration("0s"), Ok(Duration(0)));
    }

    #[test]
    fn time_errors() {
        assert!(matches!(parse_duration("1000"), Err(UnitError::MissingUnit { .. })));
        assert!(matches!(parse_duration("-1us"), Err(UnitError::Negative { .. })));
        assert!(matches!(parse_duration("0.1ps"), Err(UnitError::TooPrecise { .. })));
        assert!(matches!(parse_duration("1.0001ns"), Err(UnitError::TooPrecise { .. })));
        assert!(matches!(parse_duration("1min"), Err(UnitError::UnknownUnit { .. })));
        assert!(matches!(parse_duration("1e3ns"), Err(UnitError::UnknownUnit { .. })));
        assert!(matches!(parse_duration("."), Err(UnitError::BadNumber { .. })));
        assert!(matches!(parse_duration("99999999999s"), Err(UnitError::Overflow { .. })));
        assert_eq!(
            parse_duration("10000000s").unwrap_err().to_string(),
            "`10000000s` is beyond the time limit of 2^62 ps (4611686.018427387904 s, about 53 \
             days)"
        );
        assert_eq!(parse_duration("4611686.018427387904s").unwrap().as_ps(), 1 << 62);
        assert!(matches!(parse_duration("4611686.018427387905s"), Err(UnitError::TooLong { .. })));
        let e = parse_duration("1000").unwrap_err().to_string();
        assert_eq!(e, "`1000` needs a unit, e.g. \"1us\"");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("32MiB"), Ok(Bytes(32 << 20)));
        assert_eq!(parse_size("32MB"), Ok(Bytes(32_000_000)));
        assert_eq!(parse_size("4KiB"), Ok(Bytes(4096)));
        assert_eq!(parse_size("400KB"), Ok(Bytes(400_000)));
        assert_eq!(parse_size("400kB"), Ok(Bytes(400_000)));
        assert_eq!(parse_size("1000B"), Ok(Bytes(1000)));
        assert_eq!(parse_size("1000"), Ok(Bytes(1000)));
        assert_eq!(parse_size("2TB"), Ok(Bytes(2_000_000_000_000)));
        assert_eq!(parse_size("1TiB"), Ok(Bytes(1 << 40)));
        assert_eq!(parse_size("1.5KB"), Ok(Bytes(1500)));
        assert_eq!(parse_size("2GiB"), Ok(Bytes(2 << 30)));
        assert!(matches!(parse_size("1.5B"), Err(UnitError::TooPrecise { .. })));
        assert!(matches!(parse_size("1Mb"), Err(UnitError::UnknownUnit { .. })));
        assert!(matches!(parse_size("-5B"), Err(UnitError::Negative { .. })));
    }

    /// Every combination of a few mantissas and every unit agrees with integer arithmetic.
    #[test]
    fn exhaustive_small_values_match_integer_arithmetic() {
        let time_units = [("ps", 1u64), ("ns", PS_PER_NS), ("us", PS_PER_US), ("ms", PS_PER_MS)];
        for v in 0..2_000u64 {
            for (u, f) in time_units {
                assert_eq!(parse_duration(&format!("{v}{u}")), Ok(Duration(v * f)));
            }
            // v/1000 of a unit: exact thousandths.
            let s = format!("{}.{:03}ns", v / 1000, v % 1000);
            assert_eq!(parse_duration(&s), Ok(Duration(v)), "{s}");
            assert_eq!(parse_size(&format!("{v}KiB")), Ok(Bytes(v * 1024)));
            assert_eq!(parse_rate(&format!("{v}Mbps")), Ok(BitsPerSec(v * 1_000_000)));
        }
    }

    #[test]
    fn ns_formatting() {
        assert_eq!(format_ps_as_ns(12_240_000), "12240");
        assert_eq!(format_ps_as_ns(83_840), "83.84");
        assert_eq!(format_ps_as_ns(1), "0.001");
        assert_eq!(format_ps_as_ns(1_500), "1.5");
        assert_eq!(format_ps_as_ns(0), "0");
        for ps in [0u64, 7, 999, 1000, 123_456_789] {
            let back = parse_duration(&format!("{}ns", format_ps_as_ns(ps))).unwrap();
            assert_eq!(back.as_ps(), ps);
        }
    }

    #[test]
    fn human_durations() {
        assert_eq!(HumanDuration(Duration::from_ns(12_240)).to_string(), "12.24 µs");
        assert_eq!(HumanDuration(Duration::from_ms(3)).to_string(), "3 ms");
        assert_eq!(HumanDuration(Duration(5)).to_string(), "5 ps");
        assert_eq!(HumanDuration(Duration::ZERO).to_string(), "0 s");
    }
}
