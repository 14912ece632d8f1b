//! Release metadata: the free-form key-value pairs of a release.

use std::fmt;
use std::ops::Index;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Free-form release metadata. Keys are kept as given, unknown keys included;
/// entries sorted by key make every serialisation of it identical. Read and
/// written as a JSON object of strings, a key given twice keeping its last
/// value, as a map does.
///
/// A graph holds tens of thousands of these, each with the same handful of
/// keys: the entries sit in one slice of exactly their number, each key's
/// text held once in the process (see `intern`). As a
/// `BTreeMap<String, String>` they took a node of some 540 bytes and a copy
/// of every key per release, a quarter of an engine's heap.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Metadata(Box<[Entry]>);

type Entry = (Arc<str>, Box<str>);

/// The iterator of [`Metadata::iter`].
pub type Iter<'a> = std::iter::Map<std::slice::Iter<'a, Entry>, fn(&'a Entry) -> (&'a str, &'a str)>;

impl Metadata {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.find(key).ok().map(|index| &*self.0[index].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// The entries in key order.
    pub fn iter(&self) -> Iter<'_> {
        let as_strs: fn(&Entry) -> (&str, &str) = |(key, value)| (key, value);
        self.0.iter().map(as_strs)
    }

    /// Sets the value under `key`; returns the value it replaces.
    pub fn insert(&mut self, key: &str, value: impl Into<Box<str>>) -> Option<Box<str>> {
        match self.find(key) {
            Ok(index) => Some(std::mem::replace(&mut self.0[index].1, value.into())),
            Err(index) => {
                let mut entries = std::mem::take(&mut self.0).into_vec();
                entries.reserve_exact(1);
                entries.insert(index, (intern(key), value.into()));
                self.0 = entries.into_boxed_slice();
                None
            }
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<Box<str>> {
        let index = self.find(key).ok()?;
        let mut entries = std::mem::take(&mut self.0).into_vec();
        let (_, value) = entries.remove(index);
        // Shrunk in place rather than copied exact: removals are made on a
        // request's passing copy of the graph (the arch filter), or seldom.
        self.0 = entries.into_boxed_slice();
        Some(value)
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(other, _)| (**other).cmp(key))
    }

    /// Entries in any order; of a key given twice, the last value stays.
    fn from_entries(mut entries: Vec<Entry>) -> Self {
        // Stable: the values of one key stay in the order given.
        entries.sort_by(|(a, _), (b, _)| a.cmp(b));
        entries.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                std::mem::swap(&mut later.1, &mut earlier.1);
            }
            same
        });
        // Copied into a slice of exactly their number: mimalloc answers a
        // shrink to at least half a block with the same block, so
        // `into_boxed_slice` would keep the room the vector grew to.
        Self(entries.drain(..).collect())
    }
}

impl fmt::Debug for Metadata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Index<&str> for Metadata {
    type Output = str;

    fn index(&self, key: &str) -> &str {
        self.get(key).expect("no entry found for key")
    }
}

impl<K: AsRef<str>, V: Into<Box<str>>> FromIterator<(K, V)> for Metadata {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(entries: I) -> Self {
        Self::from_entries(
            entries
                .into_iter()
                .map(|(key, value)| (intern(key.as_ref()), value.into()))
                .collect(),
        )
    }
}

impl<'a> IntoIterator for &'a Metadata {
    type Item = (&'a str, &'a str);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl Serialize for Metadata {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for Metadata {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MetadataVisitor;

        impl<'de> Visitor<'de> for MetadataVisitor {
            type Value = Metadata;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Metadata, A::Error> {
                let mut entries = Vec::new();
                while let Some((SharedKey(key), value)) = map.next_entry()? {
                    entries.push((key, value));
                }
                Ok(Metadata::from_entries(entries))
            }
        }

        deserializer.deserialize_map(MetadataVisitor)
    }
}

/// A key read straight into its shared copy, without a `String` of its own.
struct SharedKey(Arc<str>);

impl<'de> Deserialize<'de> for SharedKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;

        impl Visitor<'_> for KeyVisitor {
            type Value = SharedKey;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<SharedKey, E> {
                Ok(SharedKey(intern(key)))
            }
        }

        deserializer.deserialize_str(KeyVisitor)
    }
}

/// The keys of all metadata, each text held once: whatever keys upstream
/// writes (`url` and graph-data's own are in no list of ours), one table for
/// every graph and revision.
///
/// The keys come from our own upstream (Graph API documents, graph-data,
/// release images): a few dozen. Still, a revision can drop keys and bring
/// others, so the set does not keep what no metadata holds any more: when it
/// has doubled since its last sweep, the keys only it holds leave it. It
/// holds at most [`FEWEST_KEPT`] keys or twice those in use at that sweep.
#[derive(Default)]
struct Keys {
    shared: foldhash::HashSet<Arc<str>>,
    sweep_at: usize,
}

/// The size below which the set is not swept.
const FEWEST_KEPT: usize = 64;

static KEYS: LazyLock<Mutex<Keys>> = LazyLock::new(Mutex::default);

/// The shared copy of `key`.
fn intern(key: &str) -> Arc<str> {
    let mut keys = KEYS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(shared) = keys.shared.get(key) {
        return Arc::clone(shared);
    }
    if keys.shared.len() >= keys.sweep_at {
        // A count of one is the set's own: other copies are made from a
        // holder's, or here under the lock.
        keys.shared.retain(|key| Arc::strong_count(key) > 1);
        keys.sweep_at = FEWEST_KEPT.max(2 * keys.shared.len());
    }
    let shared = Arc::<str>::from(key);
    keys.shared.insert(Arc::clone(&shared));
    shared
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    type Oracle = BTreeMap<String, String>;

    /// Keys from a small pool, so that operations and documents meet the
    /// same keys again, and arbitrary ones.
    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "",
                "url",
                "io.openshift.upgrades.graph.release.channels",
                "a",
                "ab",
                "é"
            ])
            .prop_map(str::to_owned),
            "\\PC{0,12}",
        ]
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(String, String),
        Remove(String),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (key(), "\\PC{0,8}").prop_map(|(key, value)| Op::Insert(key, value)),
            key().prop_map(Op::Remove),
        ]
    }

    /// A JSON object with these entries, as written (keys may repeat).
    fn object(entries: &[(String, serde_json::Value)]) -> String {
        let members: Vec<String> = entries
            .iter()
            .map(|(key, value)| format!("{}:{value}", serde_json::Value::from(key.as_str())))
            .collect();
        format!("{{{}}}", members.join(","))
    }

    fn agrees(metadata: &Metadata, oracle: &Oracle, probes: &[String]) -> Result<(), TestCaseError> {
        let entries: Vec<(&str, &str)> = metadata.iter().collect();
        let expected: Vec<(&str, &str)> = oracle.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        prop_assert_eq!(entries, expected);
        prop_assert_eq!(metadata.len(), oracle.len());
        prop_assert_eq!(metadata.is_empty(), oracle.is_empty());
        for probe in probes {
            prop_assert_eq!(metadata.get(probe), oracle.get(probe).map(String::as_str));
            prop_assert_eq!(metadata.contains_key(probe), oracle.contains_key(probe));
        }
        prop_assert_eq!(serde_json::to_string(metadata)?, serde_json::to_string(oracle)?);
        prop_assert_eq!(format!("{metadata:?}"), format!("{oracle:?}"));
        Ok(())
    }

    proptest! {
        #[test]
        fn operations_agree_with_a_map(ops in prop::collection::vec(op(), 0..24), probes in prop::collection::vec(key(), 0..6)) {
            let mut metadata = Metadata::new();
            let mut oracle = Oracle::new();
            for op in ops {
                match op {
                    Op::Insert(key, value) => prop_assert_eq!(
                        metadata.insert(&key, value.as_str()).map(String::from),
                        oracle.insert(key, value)
                    ),
                    Op::Remove(key) => prop_assert_eq!(
                        metadata.remove(&key).map(String::from),
                        oracle.remove(&key)
                    ),
                }
                agrees(&metadata, &oracle, &probes)?;
                prop_assert_eq!(&metadata.clone(), &metadata);
            }
        }

        #[test]
        fn collecting_agrees_with_a_map(entries in prop::collection::vec((key(), "\\PC{0,8}"), 0..12)) {
            let metadata: Metadata = entries.iter().map(|(k, v)| (k, v.as_str())).collect();
            let oracle: Oracle = entries.iter().cloned().collect();
            let probes: Vec<String> = entries.into_iter().map(|(key, _)| key).collect();
            agrees(&metadata, &oracle, &probes)?;
        }

        #[test]
        fn reading_json_agrees_with_a_map(
            entries in prop::collection::vec((key(), prop_oneof![
                8 => "\\PC{0,8}".prop_map(serde_json::Value::from),
                1 => any::<i32>().prop_map(serde_json::Value::from),
                1 => Just(serde_json::Value::Null),
            ]), 0..12),
        ) {
            let json = object(&entries);
            let metadata = serde_json::from_str::<Metadata>(&json);
            let oracle = serde_json::from_str::<Oracle>(&json);
            match (metadata, oracle) {
                (Ok(metadata), Ok(oracle)) => {
                    let probes: Vec<String> = entries.into_iter().map(|(key, _)| key).collect();
                    agrees(&metadata, &oracle, &probes)?;
                    let read_back: Metadata = serde_json::from_str(&serde_json::to_string(&metadata)?)?;
                    prop_assert_eq!(read_back, metadata);
                }
                (metadata, oracle) => prop_assert_eq!(
                    metadata.map(|_| ()).map_err(|error| error.to_string()),
                    oracle.map(|_| ()).map_err(|error| error.to_string())
                ),
            }
        }
    }

    #[test]
    fn not_an_object_is_refused_as_a_map_refuses_it() {
        for json in [r#""text""#, "[]", "1", r#"{"k":["v"]}"#] {
            assert_eq!(
                serde_json::from_str::<Metadata>(json).unwrap_err().to_string(),
                serde_json::from_str::<Oracle>(json).unwrap_err().to_string()
            );
        }
    }

    #[test]
    fn releases_share_their_keys() {
        let one: Metadata = serde_json::from_str(r#"{"url": "a"}"#).unwrap();
        let mut other = Metadata::new();
        other.insert("url", "b");
        assert!(Arc::ptr_eq(&one.0[0].0, &other.0[0].0));
    }

    #[test]
    fn keys_no_metadata_holds_leave_the_set() {
        let shared = |key: &str| KEYS.lock().unwrap().shared.contains(key);
        let held = Metadata::from_iter([("keys-leave-0", "v")]);
        assert!(shared("keys-leave-0"));
        drop(held);
        for n in 1..=4 * FEWEST_KEPT {
            drop(Metadata::from_iter([(format!("keys-leave-{n}"), "v")]));
        }
        assert!(!shared("keys-leave-0"));
    }
}
