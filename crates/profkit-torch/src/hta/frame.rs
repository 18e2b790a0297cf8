//! A result as HTA returns it: a pandas DataFrame's columns and rows, printed as a plain text
//! table or given as records.

use std::fmt::Write;

/// One cell.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// An integer column's value.
    Int(i64),
    /// A float column's value (NaN where pandas has NaN).
    Float(f64),
    /// A string.
    Str(String),
}

impl Value {
    fn text(&self) -> String {
        match self {
            // Kernel names run to hundreds of characters: cut in text (records keep them).
            Value::Str(s) if s.chars().count() > 60 => {
                format!("{}...", s.chars().take(57).collect::<String>())
            }
            Value::Int(i) => i.to_string(),
            Value::Float(f) if f.is_nan() => "NaN".to_owned(),
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{f:.1}"),
            Value::Float(f) => format!("{f}"),
            Value::Str(s) => s.clone(),
        }
    }

    fn json(&self) -> serde_json::Value {
        match self {
            Value::Int(i) => (*i).into(),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map_or(serde_json::Value::Null, serde_json::Value::Number),
            Value::Str(s) => s.clone().into(),
        }
    }
}

/// A DataFrame: named columns, rows of cells.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frame {
    /// The columns, HTA's names.
    pub columns: Vec<String>,
    /// The rows.
    pub rows: Vec<Vec<Value>>,
}

impl Frame {
    pub(crate) fn new(columns: &[&str]) -> Frame {
        Frame {
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    /// The rows as records (`DataFrame.to_dict("records")`).
    pub fn records(&self) -> serde_json::Value {
        self.rows
            .iter()
            .map(|row| {
                self.columns
                    .iter()
                    .zip(row)
                    .map(|(c, v)| (c.clone(), v.json()))
                    .collect::<serde_json::Map<_, _>>()
                    .into()
            })
            .collect::<Vec<serde_json::Value>>()
            .into()
    }

    /// A text table: a header, then a line per row, columns right-aligned two spaces apart
    /// (strings left-aligned, cut to 60 characters).
    pub fn text(&self) -> String {
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(Value::text).collect())
            .collect();
        let widths: Vec<usize> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                cells
                    .iter()
                    .filter_map(|r| r.get(i))
                    .map(|s| s.chars().count())
                    .chain([c.chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let left: Vec<bool> = (0..self.columns.len())
            .map(|i| {
                self.rows
                    .first()
                    .is_some_and(|r| matches!(r.get(i), Some(Value::Str(_))))
            })
            .collect();
        let mut out = String::new();
        let line = |out: &mut String, values: &[String]| {
            let mut s = String::new();
            for (i, v) in values.iter().enumerate() {
                let w = widths.get(i).copied().unwrap_or(0);
                if i > 0 {
                    s.push_str("  ");
                }
                if left.get(i).copied().unwrap_or(false) {
                    let _ = write!(s, "{v:<w$}");
                } else {
                    let _ = write!(s, "{v:>w$}");
                }
            }
            out.push_str(s.trim_end());
            out.push('\n');
        };
        line(&mut out, &self.columns);
        for r in &cells {
            line(&mut out, r);
        }
        out
    }
}
