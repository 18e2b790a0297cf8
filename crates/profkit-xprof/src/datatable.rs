//! The Google Charts DataTable JSON xprof's tools return (xprof's `DataTable::ToJson`): columns,
//! rows of cells, custom properties, written as nlohmann's JSON library writes them (object keys
//! sorted, no spaces, numbers as its `dump` prints doubles).

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One cell's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// A number cell.
    Number(f64),
    /// A text cell.
    Text(String),
    /// A boolean cell.
    Bool(bool),
}

/// A column: id, type (`number`, `string`, `boolean`) and label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// The column's id.
    pub id: String,
    /// Its type.
    pub kind: String,
    /// What the page shows as its header.
    pub label: String,
    /// The column's custom properties (`p`, such as a `role` of `tooltip`).
    pub properties: BTreeMap<String, String>,
}

/// A DataTable.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DataTable {
    /// The columns, in order.
    pub columns: Vec<Column>,
    /// The rows, each a cell per column.
    pub rows: Vec<Vec<Cell>>,
    /// The table's custom properties (`p`).
    pub properties: BTreeMap<String, String>,
}

impl DataTable {
    /// Adds a column.
    pub fn column(&mut self, id: &str, kind: &str, label: &str) {
        self.columns.push(Column {
            id: id.to_owned(),
            kind: kind.to_owned(),
            label: label.to_owned(),
            properties: BTreeMap::new(),
        });
    }

    /// Adds a column with a `role` property (`tooltip`, `interval`).
    pub fn column_with_role(&mut self, id: &str, kind: &str, label: &str, role: &str) {
        self.column(id, kind, label);
        if let Some(c) = self.columns.last_mut() {
            c.properties.insert("role".to_owned(), role.to_owned());
        }
    }

    /// The table as xprof writes it.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        out.push_str("{\"cols\":[");
        for (i, c) in self.columns.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"id\":");
            write_str(&mut out, &c.id);
            out.push_str(",\"label\":");
            write_str(&mut out, &c.label);
            if !c.properties.is_empty() {
                out.push_str(",\"p\":");
                write_properties(&mut out, &c.properties);
            }
            out.push_str(",\"type\":");
            write_str(&mut out, &c.kind);
            out.push('}');
        }
        out.push(']');
        if !self.properties.is_empty() {
            out.push_str(",\"p\":");
            write_properties(&mut out, &self.properties);
        }
        out.push_str(",\"rows\":[");
        for (i, row) in self.rows.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"c\":[");
            for (j, cell) in row.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                out.push_str("{\"v\":");
                match cell {
                    Cell::Number(v) => write_number(&mut out, *v),
                    Cell::Text(s) => write_str(&mut out, s),
                    Cell::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                }
                out.push('}');
            }
            out.push_str("]}");
        }
        out.push_str("]}");
        out
    }
}

/// Custom properties as a JSON object, keys in order.
fn write_properties(out: &mut String, properties: &BTreeMap<String, String>) {
    out.push('{');
    for (i, (k, v)) in properties.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_str(out, k);
        out.push(':');
        write_str(out, v);
    }
    out.push('}');
}

/// A string as nlohmann escapes it: `"` and `\`, the short escapes for control characters
/// that have one, `\u00XX` for the others; everything else as UTF-8.
pub fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

pub use crate::number::write_number;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_json() {
        let mut t = DataTable::default();
        t.column("rank", "number", "Rank");
        t.column("name", "string", "Name");
        t.rows
            .push(vec![Cell::Number(1.0), Cell::Text("a\"b\n\u{1}".into())]);
        t.properties.insert("task_type".into(), "Training".into());
        t.properties
            .insert("architecture_type".into(), "Unknown".into());
        assert_eq!(
            t.to_json(),
            r#"{"cols":[{"id":"rank","label":"Rank","type":"number"},{"id":"name","label":"Name","type":"string"}],"p":{"architecture_type":"Unknown","task_type":"Training"},"rows":[{"c":[{"v":1.0},{"v":"a\"b\n\u0001"}]}]}"#
        );
    }
}
