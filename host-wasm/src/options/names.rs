//! Misspelt option names: `createJobRunner({ intervalMS: 500 })` would
//! otherwise run with the default interval and say nothing.
//!
//! An own enumerable key that is not an option but is close to one is
//! refused with a `TypeError` naming the option it was probably meant to be.
//! "Close" is: the same name but for letter case, or an edit distance
//! (optimal string alignment: insertions, deletions, substitutions and swaps
//! of two neighbouring letters, each counting 1) of at most 2 — at most 1
//! when the option's name has 4 letters or fewer (`name`, `now`), so that a
//! short key of the user's own is not taken for one of them. Keys far from
//! every option are left alone: neither refused nor read.

/// The option names `createJobRunner` reads ([`super::read`]: a name added
/// there belongs here too), in the order a near miss is matched against (the
/// first of equally close names wins).
pub const KNOWN: [&str; 14] = [
    "name",
    "intervalMs",
    "claim",
    "perform",
    "heartbeat",
    "heartbeatEveryMs",
    "heartbeatSkewMs",
    "staleAfterMs",
    "backoff",
    "batchLimit",
    "concurrency",
    "logger",
    "now",
    "onEvent",
];

/// The option `key` is probably a misspelling of, or `None` when `key` is an
/// option itself or far from every option.
pub fn near_miss(key: &str) -> Option<&'static str> {
    near_miss_of(key, &KNOWN)
}

/// The name of `names` that `key` is probably a misspelling of (by the rule
/// above; the first of equally close names wins), or `None` when `key` is one
/// of them or far from all. Other option objects (the lease policy) use it
/// with their own names.
pub fn near_miss_of(key: &str, names: &[&'static str]) -> Option<&'static str> {
    if names.contains(&key) {
        return None;
    }
    let key: Vec<char> = key.chars().collect();
    let mut best: Option<(usize, &'static str)> = None;
    for &known in names {
        let target: Vec<char> = known.chars().collect();
        // Option names are ASCII: no Unicode case tables in the module.
        let same_but_case = key.len() == target.len()
            && key
                .iter()
                .zip(&target)
                .all(|(a, b)| a.eq_ignore_ascii_case(b));
        let distance = if same_but_case {
            0
        } else {
            distance(&key, &target)
        };
        let limit = if target.len() <= 4 { 1 } else { 2 };
        if distance <= limit && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, known));
        }
    }
    best.map(|(_, known)| known)
}

/// Optimal string alignment distance between `a` and `b` (in chars).
fn distance(a: &[char], b: &[char]) -> usize {
    // Three rows of the classic table: two back, one back, this one.
    let width = b.len() + 1;
    let mut rows = [(0..width).collect::<Vec<usize>>(), Vec::new(), Vec::new()];
    rows[1] = rows[0].clone();
    rows[2] = rows[0].clone();
    for i in 1..=a.len() {
        let [before, previous, current] = &mut rows;
        current[0] = i;
        for j in 1..width {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(before[j - 2] + 1);
            }
            current[j] = d;
        }
        rows.rotate_left(1);
    }
    // After the last rotation the row just computed is in the middle.
    rows[1][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(a: &str, b: &str) -> usize {
        distance(
            &a.chars().collect::<Vec<_>>(),
            &b.chars().collect::<Vec<_>>(),
        )
    }

    #[test]
    fn distance_counts_edits_and_neighbour_swaps() {
        assert_eq!(d("intervalMs", "intervalMs"), 0);
        assert_eq!(d("intervalMS", "intervalMs"), 1);
        assert_eq!(d("inetrvalMs", "intervalMs"), 1);
        assert_eq!(d("interval", "intervalMs"), 2);
        assert_eq!(d("", "now"), 3);
        assert_eq!(d("kitten", "sitting"), 3);
    }

    #[test]
    fn a_case_slip_or_a_small_typo_names_the_option() {
        assert_eq!(near_miss("intervalMS"), Some("intervalMs"));
        assert_eq!(near_miss("INTERVALMS"), Some("intervalMs"));
        assert_eq!(near_miss("staleAfterMS"), Some("staleAfterMs"));
        assert_eq!(near_miss("concurency"), Some("concurrency"));
        assert_eq!(near_miss("heartbeatEvreyMs"), Some("heartbeatEveryMs"));
        assert_eq!(near_miss("onevent"), Some("onEvent"));
        assert_eq!(near_miss("nmae"), Some("name"));
        assert_eq!(near_miss("Now"), Some("now"));
    }

    #[test]
    fn options_and_far_away_keys_are_left_alone() {
        for known in KNOWN {
            assert_eq!(near_miss(known), None, "{known}");
        }
        for other in [
            "id",
            "on",
            "queue",
            "timeoutMs",
            "logLevel",
            "metadata",
            "nm",
        ] {
            assert_eq!(near_miss(other), None, "{other}");
        }
    }
}
