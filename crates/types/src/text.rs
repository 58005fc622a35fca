//! Plain-text input helpers shared by the readers of line-oriented files (reference topology,
//! flow and CDF files), so that their errors can name a column.

/// The whitespace-separated tokens of `line`, each with the 1-based column (in characters)
/// where it starts.
///
/// ```
/// assert_eq!(dcsim_types::text::tokens("  0 64  1e3"), vec![(3, "0"), (5, "64"), (9, "1e3")]);
/// ```
pub fn tokens(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start: Option<(usize, usize)> = None; // (column, byte offset)
    for (col, (byte, c)) in line.char_indices().enumerate() {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some((col + 1, byte)),
            (true, Some((sc, sb))) => {
                out.push((sc, &line[sb..byte]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some((sc, sb)) = start {
        out.push((sc, &line[sb..]));
    }
    out
}
