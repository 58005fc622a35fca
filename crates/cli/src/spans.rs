//! Source positions in a TOML document: byte offsets to `line:column`, and byte spans to the
//! dotted path of the key or value there (`flows.list[3].dst`), so that every error can name
//! the field it is about even when the TOML parser itself only reports a position.

use std::fmt;
use std::ops::Range;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A 1-based line and column (in characters) in a text file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineCol {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub col: usize,
}

impl fmt::Display for LineCol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// The line and column of byte `offset` in `text` (clamped to the text's end).
pub fn line_col(text: &str, offset: usize) -> LineCol {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before[line_start..].chars().count() + 1;
    LineCol { line, col }
}

/// The key/value structure of a TOML document with the span of every value that has one
/// (tables created implicitly by a dotted header such as `[[flows.list]]` have none).
#[derive(Debug, Default)]
pub struct KeyTree {
    root: Vec<(String, Item)>,
}

/// A value and its span, if the parser gave one.
#[derive(Debug)]
struct Item {
    span: Option<Range<usize>>,
    node: Node,
}

#[derive(Debug)]
enum Node {
    Leaf,
    Table(Vec<(String, Item)>),
    Array(Vec<Item>),
}

impl KeyTree {
    /// Parses `text`; a document that does not parse gives an empty tree (its error is
    /// reported by the typed parse).
    pub fn parse(text: &str) -> KeyTree {
        match toml::from_str::<Item>(text) {
            Ok(Item { node: Node::Table(root), .. }) => KeyTree { root },
            _ => KeyTree::default(),
        }
    }

    /// The span of the value at the table path `keys` (e.g. `["switch", "ecn_map"]`; an array
    /// element is named by its index: `["queue", "0", "kind"]`); for an implicit table or an
    /// array of tables, the range covering its contents.
    pub fn span_of(&self, keys: &[&str]) -> Option<Range<usize>> {
        let (first, rest) = keys.split_first()?;
        let mut item = &self.root.iter().find(|(k, _)| k == first)?.1;
        for key in rest {
            match &item.node {
                Node::Table(entries) => item = &entries.iter().find(|(k, _)| k == key)?.1,
                // An array element by its index (`["queue", "2", "kind"]`).
                Node::Array(items) => item = items.get(key.parse::<usize>().ok()?)?,
                Node::Leaf => return None,
            }
        }
        item.extent()
    }

    /// The dotted path (`flows.list[3].dst`) of the innermost value whose span contains
    /// `span`, or of the key at `span` (unknown-key errors point at the key). `text` is the
    /// document the tree was parsed from.
    pub fn path_at(&self, text: &str, span: &Range<usize>) -> Option<String> {
        // No tree: the document did not parse (a number out of range, a duplicate key). If it
        // parses with the bare token at the span (up to the next space, comma, bracket or
        // comment) made a `0`, padded with spaces so that every offset stays, the token was a
        // value that the parser refused (an integer beyond 64 bits): its place in that tree
        // names it. A token followed by `=` or `.` is a key, not a value: no path.
        if self.root.is_empty() {
            let rest = text.get(span.start..)?;
            let len = rest.find(|c: char| c.is_whitespace() || ",]}#".contains(c));
            let len = len.unwrap_or(rest.len());
            let token = &rest[..len];
            let next = rest[len..].trim_start_matches([' ', '\t']).chars().next();
            if token.is_empty()
                || token.contains(['"', '\'', '[', '{', '='])
                || matches!(next, Some('=' | '.'))
            {
                return None;
            }
            let end = span.start + len;
            let patched =
                format!("{}0{}{}", &text[..span.start], " ".repeat(len - 1), &text[end..]);
            let tree = KeyTree::parse(&patched);
            let zero = span.start..span.start + 1;
            return if tree.root.is_empty() { None } else { tree.path_at(&patched, &zero) };
        }
        let mut path = String::new();
        find_in_table(&self.root, text, span, &mut path);
        if path.is_empty() {
            None
        } else {
            Some(path)
        }
    }
}

impl Item {
    /// The item's span, or for a value without one (an implicit table, an array of tables) the
    /// smallest range covering its children's spans.
    fn extent(&self) -> Option<Range<usize>> {
        if let Some(s) = &self.span {
            return Some(s.clone());
        }
        let children: Vec<Range<usize>> = match &self.node {
            Node::Leaf => Vec::new(),
            Node::Table(entries) => entries.iter().filter_map(|(_, v)| v.extent()).collect(),
            Node::Array(items) => items.iter().filter_map(Item::extent).collect(),
        };
        let start = children.iter().map(|r| r.start).min()?;
        let end = children.iter().map(|r| r.end).max()?;
        Some(start..end)
    }
}

/// Whether `item` contains `span`: its own span does, or one of its children's. (A table's own
/// span covers its header and keys, not the sub-tables declared after it: `[flows]` does not
/// cover a later `[[flows.list]]`, which is nonetheless inside `flows`.)
fn item_contains(item: &Item, span: &Range<usize>) -> bool {
    let own = item.span.as_ref().is_some_and(|s| s.start <= span.start && span.end <= s.end);
    own || match &item.node {
        Node::Leaf => false,
        Node::Table(entries) => entries.iter().any(|(_, v)| item_contains(v, span)),
        Node::Array(items) => items.iter().any(|v| item_contains(v, span)),
    }
}

fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    if is_bare_key(key) {
        path.push_str(key);
    } else {
        path.push_str(&format!("{key:?}"));
    }
}

fn is_bare_key(key: &str) -> bool {
    !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Descends into the entry whose value contains `span`. When none does, the span may be a key
/// of this table, so its text is appended if it looks like one.
fn find_in_table(entries: &[(String, Item)], text: &str, span: &Range<usize>, path: &mut String) {
    for (k, v) in entries {
        if item_contains(v, span) {
            push_key(path, k);
            descend(v, text, span, path);
            return;
        }
    }
    if let Some(key) = text.get(span.clone()) {
        let unquoted = key.trim_matches('"').trim_matches('\'');
        // A table's own header (`[topologyx]`, unknown) is already the path's last key.
        let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
        let in_header = text[line_start..span.start].trim_start().starts_with('[');
        let last = path.rsplit('.').next().unwrap_or("");
        if in_header && last.trim_matches('"') == unquoted {
            return;
        }
        if entries.iter().any(|(k, _)| k == unquoted) || is_bare_key(key) {
            push_key(path, unquoted);
        }
    }
}

fn descend(item: &Item, text: &str, span: &Range<usize>, path: &mut String) {
    match &item.node {
        Node::Leaf => {}
        Node::Table(entries) => find_in_table(entries, text, span, path),
        Node::Array(items) => {
            for (i, it) in items.iter().enumerate() {
                if item_contains(it, span) {
                    path.push_str(&format!("[{i}]"));
                    descend(it, text, span, path);
                    return;
                }
            }
        }
    }
}

// The toml deserializer hands out a value's span when asked for a struct with these names
// (the protocol behind `toml::Spanned`). Asking for it directly lets a value without a span
// (an implicit table) fall back to an ordinary map instead of failing as `Spanned` would.
const SPANNED_NAME: &str = "$__serde_spanned_private_Spanned";
const SPANNED_START: &str = "$__serde_spanned_private_start";
const SPANNED_END: &str = "$__serde_spanned_private_end";
const SPANNED_VALUE: &str = "$__serde_spanned_private_value";
const SPANNED_FIELDS: &[&str] = &[SPANNED_START, SPANNED_END, SPANNED_VALUE];

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_struct(SPANNED_NAME, SPANNED_FIELDS, ItemVisitor)
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ItemVisitor).map(|i| i.node)
    }
}

struct ItemVisitor;

fn leaf() -> Item {
    Item { span: None, node: Node::Leaf }
}

impl<'de> Visitor<'de> for ItemVisitor {
    type Value = Item;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any TOML value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Item, E> {
        Ok(leaf())
    }
    fn visit_i64<E>(self, _: i64) -> Result<Item, E> {
        Ok(leaf())
    }
    fn visit_u64<E>(self, _: u64) -> Result<Item, E> {
        Ok(leaf())
    }
    fn visit_f64<E>(self, _: f64) -> Result<Item, E> {
        Ok(leaf())
    }
    fn visit_str<E>(self, _: &str) -> Result<Item, E> {
        Ok(leaf())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Item, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == SPANNED_START && entries.is_empty() {
                let start: usize = map.next_value()?;
                let _ = map.next_key::<String>()?;
                let end: usize = map.next_value()?;
                let _ = map.next_key::<String>()?;
                let node: Node = map.next_value()?;
                return Ok(Item { span: Some(start..end), node });
            }
            entries.push((key, map.next_value::<Item>()?));
        }
        Ok(Item { span: None, node: Node::Table(entries) })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Item, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Item>()? {
            items.push(item);
        }
        Ok(Item { span: None, node: Node::Array(items) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "[simulation]\nseed = 1\n\n[[flows.list]]\nsrc = 0\n\n[[flows.list]]\nsrc = 1\ndst = \"x\"\n[cc]\n\"odd key\" = 3\n";

    fn span_of(needle: &str) -> Range<usize> {
        let start = DOC.find(needle).expect("needle in DOC");
        start..start + needle.len()
    }

    #[test]
    fn line_and_column() {
        assert_eq!(line_col(DOC, 0), LineCol { line: 1, col: 1 });
        assert_eq!(line_col(DOC, span_of("seed").start), LineCol { line: 2, col: 1 });
        assert_eq!(line_col(DOC, span_of("\"x\"").start), LineCol { line: 9, col: 7 });
        assert_eq!(line_col("aµb", 3), LineCol { line: 1, col: 3 });
        assert_eq!(line_col("ab", 99), LineCol { line: 1, col: 3 });
    }

    #[test]
    fn paths() {
        let t = KeyTree::parse(DOC);
        assert_eq!(t.path_at(DOC, &span_of("seed")).as_deref(), Some("simulation.seed"));
        assert_eq!(t.path_at(DOC, &span_of("\"x\"")).as_deref(), Some("flows.list[1].dst"));
        assert_eq!(t.path_at(DOC, &span_of("dst")).as_deref(), Some("flows.list[1].dst"));
        assert_eq!(t.path_at(DOC, &span_of("\"odd key\"")).as_deref(), Some("cc.\"odd key\""));
        assert_eq!(t.path_at(DOC, &span_of("[cc]")).as_deref(), Some("cc"));
        let src1 = DOC.find("src = 1").expect("src = 1");
        assert_eq!(t.path_at(DOC, &(src1..src1 + 3)).as_deref(), Some("flows.list[1].src"));
        assert_eq!(t.path_at(DOC, &(src1 + 6..src1 + 7)).as_deref(), Some("flows.list[1].src"));
        assert_eq!(t.path_at(DOC, &span_of("[simulation]")).as_deref(), Some("simulation"));
        assert_eq!(
            t.span_of(&["simulation", "seed"]),
            Some(span_of("1\n\n[[")).map(|r| r.start..r.start + 1)
        );
        // An explicit table's sub-tables declared after it are found too.
        let doc = "[flows]\nmax_flows = 3\n\n[[flows.list]]\nsrc = 0\nstart = true\n";
        let t2 = KeyTree::parse(doc);
        let at = doc.find("true").expect("true");
        assert_eq!(t2.path_at(doc, &(at..at + 4)).as_deref(), Some("flows.list[0].start"));
        // A document that does not parse, for an integer beyond 64 bits: the value is named
        // by its place once it is read as 0 (the message had no field).
        for (doc, path) in [
            ("[[flows.list]]\nsrc = 0\nsize = 99999999999999999999\n", "flows.list[0].size"),
            ("[nic]\nrto_retries = 1e999999999999\n", "nic.rto_retries"),
            ("flows = { list = [{ src = 99999999999999999999 }] }\n", "flows.list[0].src"),
        ] {
            let e = toml::from_str::<toml::Table>(doc).expect_err("beyond 64 bits");
            let span = e.span().expect("a span");
            let t3 = KeyTree::parse(doc);
            assert_eq!(t3.path_at(doc, &span).as_deref(), Some(path), "{doc}: {span:?}");
        }
        // A duplicate key has no such place.
        let dup = "[nic]\nmtu = 1\nmtu = 2\n";
        let e = toml::from_str::<toml::Table>(dup).expect_err("a duplicate key");
        assert_eq!(KeyTree::parse(dup).path_at(dup, &e.span().expect("a span")), None);
        let flows = t.span_of(&["flows"]).expect("implicit table has an extent");
        assert_eq!(&DOC[flows.start..flows.start + 14], "[[flows.list]]");
        assert_eq!(t.span_of(&["flows", "nope"]), None);
    }
}
