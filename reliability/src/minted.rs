//! Cluster ids as an outsider makes them: valid UUIDs in any number, and
//! ids mined for the lowest public places (a place is a public hash of the
//! id, `rollout_model::ClusterId::place`), the way a review minted ids to
//! be chosen first by a rollout.

use rollout_model::ClusterId;

/// The public place (percent) of `id`; `None` for an id that is not a
/// hyphenated UUID.
pub fn place(id: &str) -> Option<f64> {
    ClusterId::parse(id).map(|id| id.place().percent())
}

/// Ids of one family: the `family` tag (eight hex digits) and a number
/// make a valid UUID, distinct per number.
pub fn id(family: u32, number: u64) -> String {
    format!(
        "{family:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        (number >> 48) & 0xffff,
        (number >> 36) & 0xfff,
        (number >> 24) & 0xfff,
        number & 0xffff_ffff_ffff
    )
}

/// `count` distinct ids of `family`, from `first` on.
pub fn ids(family: u32, first: u64, count: usize) -> Vec<String> {
    (first..first + count as u64)
        .map(|number| id(family, number))
        .collect()
}

/// Ids hashed at most to find ids placed within a range.
const PLACED_TRIES: u64 = 10_000_000;

/// `count` ids of `family` placed within `range` (percent), the first ones
/// found (fewer when the range is too narrow for ten million tries).
pub fn placed_within(family: u32, range: std::ops::Range<f64>, count: usize) -> Vec<String> {
    if range.is_empty() {
        return Vec::new();
    }
    (0..PLACED_TRIES)
        .map(|number| id(family, number))
        .filter(|id| place(id).is_some_and(|place| range.contains(&place)))
        .take(count)
        .collect()
}

/// The `count` ids of the lowest places among `tries` ids of `family`,
/// lowest first, with their places: what hashing `tries` times buys.
pub fn lowest_places(family: u32, tries: u64, count: usize) -> Vec<(String, f64)> {
    let mut best: Vec<(f64, u64)> = Vec::with_capacity(count + 1);
    for number in 0..tries {
        let Some(placed) = place(&id(family, number)) else {
            continue;
        };
        if best.len() < count || placed < best[best.len() - 1].0 {
            let at = best.partition_point(|(kept, _)| *kept < placed);
            best.insert(at, (placed, number));
            best.truncate(count);
        }
    }
    best.into_iter()
        .map(|(placed, number)| (id(family, number), placed))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_valid_and_distinct() {
        let made = ids(0xfeed_0001, 0, 1_000);
        assert!(made.iter().all(|id| ClusterId::parse(id).is_some()), "{made:?}");
        let distinct: std::collections::BTreeSet<&String> = made.iter().collect();
        assert_eq!(distinct.len(), made.len());
    }

    #[test]
    fn mining_finds_places_far_below_what_chance_gives() {
        let mined = lowest_places(0xfeed_0002, 20_000, 3);
        assert_eq!(mined.len(), 3);
        assert!(mined.windows(2).all(|pair| pair[0].1 <= pair[1].1));
        // One in 20,000 ids falls below 0.005% on average: the lowest of
        // 20,000 is well below 0.05%.
        assert!(mined[0].1 < 0.05, "{mined:?}");
        assert_eq!(place(&mined[0].0), Some(mined[0].1));
    }

    #[test]
    fn placed_within_keeps_to_the_range() {
        let placed = placed_within(0xfeed_0003, 40.0..41.0, 5);
        assert_eq!(placed.len(), 5);
        assert!(placed.iter().all(|id| (40.0..41.0).contains(&place(id).unwrap())));
        assert!(placed_within(0xfeed_0003, 40.0..40.0, 1).is_empty());
    }
}
