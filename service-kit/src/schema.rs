//! The keys a settings type accepts, learnt from the type itself: its
//! defaults, serialised, name every key (an unset optional key serialises as
//! `null`). One source for what is a known key (unknown ones are refused),
//! which flags exist (one per key), and what the operations doc must list.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

/// The keys of a settings type and their default values.
#[derive(Debug, Clone)]
pub struct Schema {
    defaults: Value,
}

impl Schema {
    /// The schema of `T`, from `T::default()`.
    pub fn of<T: Serialize + Default>() -> Self {
        Self::from_value(&T::default())
    }

    pub fn from_value(settings: &impl Serialize) -> Self {
        Self {
            defaults: serde_json::to_value(settings).expect("settings serialise to JSON"),
        }
    }

    /// Every setting, dotted (`service.port`): the leaves of the defaults.
    /// Tables are opened; a list (of values or of plugin tables) is one
    /// setting.
    pub fn keys(&self) -> BTreeSet<String> {
        let mut keys = BTreeSet::new();
        collect(&self.defaults, &mut String::new(), &mut keys);
        keys
    }

    /// The default at a dotted key, if it is a key or a table (`""`: the
    /// whole settings).
    pub fn default_at(&self, dotted: &str) -> Option<&Value> {
        if dotted.is_empty() {
            return Some(&self.defaults);
        }
        dotted
            .split('.')
            .try_fold(&self.defaults, |value, part| value.as_object()?.get(part))
    }

    /// Whether `dotted` names a table of settings (`service`).
    pub fn is_table(&self, dotted: &str) -> bool {
        self.default_at(dotted).is_some_and(Value::is_object)
    }

    /// The top-level keys that are not tables (`verbosity`, `log_format`,
    /// plugin lists).
    pub fn top_level_values(&self) -> Vec<String> {
        self.defaults
            .as_object()
            .map(|fields| {
                fields
                    .iter()
                    .filter(|(_, value)| !value.is_object())
                    .map(|(name, _)| name.clone())
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn collect(value: &Value, path: &mut String, keys: &mut BTreeSet<String>) {
    let Some(fields) = value.as_object() else {
        keys.insert(path.clone());
        return;
    };
    for (name, child) in fields {
        let length = path.len();
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(name);
        collect(child, path, keys);
        path.truncate(length);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default, Serialize)]
    struct Settings {
        verbosity: u8,
        service: Service,
        plugins: Vec<String>,
    }

    #[derive(Default, Serialize)]
    struct Service {
        port: u16,
        timeout: Option<u64>,
    }

    #[test]
    fn every_leaf_is_a_key_and_lists_are_leaves() {
        let schema = Schema::of::<Settings>();
        assert_eq!(
            schema.keys().into_iter().collect::<Vec<_>>(),
            ["plugins", "service.port", "service.timeout", "verbosity"]
        );
        assert!(schema.is_table("service"));
        assert!(!schema.is_table("service.port"));
        assert_eq!(schema.default_at("service.timeout"), Some(&Value::Null));
        let mut top_level = schema.top_level_values();
        top_level.sort();
        assert_eq!(top_level, ["plugins", "verbosity"]);
    }
}
