//! A finding's metrics, typed: counts are JSON integers everywhere (`11`, never `11.0`),
//! measured values are rounded to a millionth, and a value that is not a number (a ratio of
//! zero to zero) is left out instead of becoming `null`.

use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub struct Metrics(BTreeMap<String, serde_json::Value>);

impl Metrics {
    pub fn new() -> Self {
        Metrics::default()
    }

    /// A count of things (calls, connections, bytes): an integer (any unsigned type; a
    /// negative number is no count and is left out).
    pub fn count<N: TryInto<u64>>(&mut self, name: &str, n: N) -> &mut Self {
        if let Ok(n) = n.try_into() {
            self.0.insert(name.to_string(), serde_json::Value::from(n));
        }
        self
    }

    /// A measured or derived quantity (seconds, rates, shares, averages), rounded to 1e-6.
    pub fn value(&mut self, name: &str, v: f64) -> &mut Self {
        let r = (v * 1e6).round() / 1e6;
        if let Some(n) = serde_json::Number::from_f64(r) {
            self.0.insert(name.to_string(), serde_json::Value::Number(n));
        }
        self
    }

    /// A value only when there is one.
    pub fn value_opt(&mut self, name: &str, v: Option<f64>) -> &mut Self {
        if let Some(v) = v {
            self.value(name, v);
        }
        self
    }

    /// Text (an errno, a syscall name).
    pub fn text(&mut self, name: &str, s: &str) -> &mut Self {
        self.0.insert(name.to_string(), serde_json::Value::from(s));
        self
    }

    /// Any other JSON value (a list of directories).
    pub fn json(&mut self, name: &str, v: serde_json::Value) -> &mut Self {
        self.0.insert(name.to_string(), v);
        self
    }

    pub fn build(&mut self) -> BTreeMap<String, serde_json::Value> {
        std::mem::take(&mut self.0)
    }
}

/// A rule's few metrics as a list (`[("calls", n.into()), ("share", v.into())]`), each value as
/// given.
impl<const N: usize> From<[(&str, serde_json::Value); N]> for Metrics {
    fn from(list: [(&str, serde_json::Value); N]) -> Metrics {
        Metrics(list.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_integers_values_rounded_nan_left_out() {
        let m = Metrics::new().count("calls", 11).value("share", 1.0 / 3.0).value("bad", f64::NAN).build();
        let j = serde_json::to_string(&m).expect("json");
        assert_eq!(j, r#"{"calls":11,"share":0.333333}"#);
    }
}
